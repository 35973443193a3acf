/** The "Nothing was saved" summary names fields by the labels the form shows (Form.tsx LabelBook), never by column. */
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ErrorPayload } from '../../../models/errors';
import type { EntryForm } from './Form';

// Form.tsx imports the bridge, which picks its transport at load: give it the preload's shape (never called here).
let F: typeof import('./Form');
beforeAll(async () => {
  (globalThis as { window?: unknown }).window = {
    athleteIntelligence: { call: () => Promise.reject(new Error('not used')), subscribe: () => () => undefined },
  };
  F = await import('./Form');
});
const LabelBook = (...a: ConstructorParameters<typeof import('./Form').LabelBook>) => new F.LabelBook(...a);

const book = (o: Record<string, string>) => LabelBook(o).snapshot();

describe('issueLabel', () => {
  it('takes the whole path, then the control holding a nested path, then the last segment', () => {
    const labels = book({ athlete_id: 'Athlete', per_athlete: 'Athletes in this load', rpe: 'Session RPE', 'a.b': 'Exact' });
    expect(F.issueLabel('athlete_id', labels)).toBe('Athlete');
    expect(F.issueLabel('per_athlete.3.rpe', labels)).toBe('Athletes in this load');
    expect(F.issueLabel('session.rpe', labels)).toBe('Session RPE');
    expect(F.issueLabel('a.b', labels)).toBe('Exact');
    expect(F.issueLabel('athlete_ids.0', book({ athlete_ids: 'Athletes' }))).toBe('Athletes');
  });
  it('is null for a path no field shows', () => {
    expect(F.issueLabel('linked_athlete_id', book({ role: 'Role' }))).toBeNull();
  });
});

describe('issueMatches', () => {
  it('puts a list entry\u2019s issue on the list, never on a top-level field of the same name', () => {
    expect(F.issueMatches('rpe', 'rpe')).toBe(true);
    expect(F.issueMatches('per_athlete.3.rpe', 'per_athlete')).toBe(true);
    expect(F.issueMatches('per_athlete.3.rpe', 'rpe')).toBe(false);
    expect(F.issueMatches('athlete_ids.2', 'athlete_ids')).toBe(true);
    expect(F.issueMatches('plan.rpe', 'rpe')).toBe(true);
    expect(F.issueMatches('athlete_id', 'athlete_ids')).toBe(false);
  });
});

describe('issueLines', () => {
  it('labels each issue, gives the message alone where no field shows it, and merges repeats', () => {
    const lines = F.issueLines(
      [
        { path: 'athlete_ids', message: 'Too small: expected array to have >=1 items' },
        { path: 'athlete_ids.1', message: 'Too small: expected array to have >=1 items' },
        { path: 'budget_cap_usd', message: 'Too big: expected number to be <=100000' },
        { path: 'squad_id', message: 'Invalid option: expected one of …' },
      ],
      book({ athlete_ids: 'Athletes', budget_cap_usd: 'Monthly assistant budget' }),
    );
    expect(lines).toEqual(['Athletes: Too small: at least 1.', 'Monthly assistant budget: Too large: at most 100000.', 'Choose one of the options.']);
    for (const l of lines) expect(l).not.toMatch(/_|athlete ids|squad id/);
  });
});

describe('LabelBook', () => {
  it('tells subscribers of a new label once, and not of the same label again', () => {
    const b = LabelBook();
    let calls = 0;
    const off = b.subscribe(() => calls++);
    const before = b.snapshot();
    b.set('as_of', 'As of');
    b.set('as_of', 'As of');
    expect(calls).toBe(1);
    expect(b.snapshot()).not.toBe(before);
    expect(b.snapshot().get('as_of')).toBe('As of');
    off();
    b.set('kind', 'Report');
    expect(calls).toBe(1);
  });
});

describe('FormMessages', () => {
  it('renders the validation summary with the labels in the form\u2019s book', () => {
    const labels = LabelBook();
    labels.set('athlete_id', 'Athlete');
    labels.set('as_of', 'As of (date)');
    const error: ErrorPayload = {
      code: 'Validation',
      message: 'A athlete_summary report needs athlete_id.',
      issues: [
        { path: 'athlete_id', message: 'Choose the athlete.' },
        { path: 'as_of', message: 'Invalid ISO date' },
      ],
    };
    const form = { name: 'report-generate', labels, state: 'error', error, review: null, done: null } as unknown as EntryForm;
    const html = renderToStaticMarkup(createElement(F.FormMessages, { form }));
    expect(html).toContain('Nothing was saved');
    expect(html).toContain('<li>Athlete: Choose the athlete.</li>');
    expect(html).toContain('<li>As of (date): Enter a date (day, month, year).</li>');
    expect(html).not.toMatch(/athlete id|as of:/i);
  });
});
