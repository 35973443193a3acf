/**
 * The whole role × verb matrix. Each cell is written out by hand in main/testing/verb-matrix.ts
 * from domain.md's role map (Y = the call succeeds, N = Forbidden); not derived from the code.
 * Writes are planned (and authorised row by row) but not applied, so cells don't interfere.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../models/errors';
import type { ClinicFixture } from '../testing/clinic-fixture';
import { createClinicFixture } from '../testing/clinic-fixture';
import { EXPECTED, ROLE_ORDER, inputFor } from '../testing/verb-matrix';
import { VERBS, planWrite, runRead } from './index';

let f: ClinicFixture;
beforeAll(() => {
  f = createClinicFixture();
});
afterAll(() => f.close());

describe('role × verb matrix', () => {
  it('covers every registered verb, and nothing else', () => {
    expect(Object.keys(EXPECTED).sort()).toEqual([...VERBS.keys()].sort());
  });

  for (const [verbName, row] of Object.entries(EXPECTED)) {
    const cells = row.split(/\s+/);
    ROLE_ORDER.forEach((role, i) => {
      const expected = cells[i];
      it(`${verbName} as ${role} → ${expected === 'Y' ? 'allowed' : 'Forbidden'}`, () => {
        const verb = VERBS.get(verbName)!;
        const ctx = f.as(f.a.users[role]);
        const input = inputFor(verbName, f.a, role);
        const attempt = () => (verb.kind === 'read' ? runRead(ctx, verb, input) : planWrite(ctx, verb, input));
        if (expected === 'Y') {
          expect(attempt()).toBeTruthy();
        } else {
          let err: unknown;
          try {
            attempt();
          } catch (e) {
            err = e;
          }
          expect(err).toBeInstanceOf(AppError);
          expect((err as AppError).code).toBe('Forbidden');
        }
      });
    });
  }
});
