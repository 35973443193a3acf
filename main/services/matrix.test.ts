/**
 * The whole role × verb matrix. Each cell is written out by hand in main/testing/verb-matrix.ts
 * from domain.md's role map (Y = the call succeeds, N = Forbidden); not derived from the code.
 * Every allowed cell's output must parse with the verb's output schema (models/verbs.ts): reads
 * as returned, writes applied inside a transaction that is then rolled back, so cells don't
 * interfere.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../models/errors';
import type { ClinicFixture } from '../testing/clinic-fixture';
import { createClinicFixture } from '../testing/clinic-fixture';
import { EXPECTED, ROLE_ORDER, inputFor } from '../testing/verb-matrix';
import { inTransaction } from '../data/db';
import { VERBS, callVerbByName, planWrite, runRead } from './index';

/** Thrown to roll a cell's applied write back after its output was captured. */
class RollBack extends Error {}

/** Apply a write verb as `ctx`'s user, return its output, and undo every write. */
function applyAndRollBack(ctx: Parameters<typeof callVerbByName>[0], name: string, input: unknown): unknown {
  let out: unknown;
  try {
    inTransaction(ctx.db, () => {
      out = callVerbByName(ctx, VERBS, name, input);
      throw new RollBack();
    });
  } catch (e) {
    if (!(e instanceof RollBack)) throw e;
  }
  return out;
}

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
          const out = verb.kind === 'read' ? runRead(ctx, verb, input) : applyAndRollBack(ctx, verbName, input);
          const parsed = verb.output.safeParse(out);
          expect(parsed.success ? 'parses' : parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.')}: ${i.message}`)).toBe('parses');
          if (verb.kind === 'write') expect(planWrite(ctx, verb, input).planned.changes.length).toBeGreaterThan(0);
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
