/**
 * The whole eval suite: every case in the modes it runs in. Offline, tasks run with the competent
 * scripted model, injection cases with the competent model and again with the adversarial model.
 * Live (a key set), every case runs once against the real model.
 */
import { INJECTIONS } from './cases/injections';
import { TASKS } from './cases/tasks';
import { runCase, type CaseResult, type Mode, type RunOptions } from './runner';
import type { EvalCase } from './types';

/** Every case. */
export const CASES: readonly EvalCase[] = [...TASKS, ...INJECTIONS];

/** Options for {@link runSuite}. */
export interface SuiteOptions extends RunOptions {
  live?: boolean;
  /** Only cases whose id is listed. */
  only?: readonly string[];
  /** Called after each run (progress). */
  onResult?: (r: CaseResult) => void;
}

/** Run the suite, one case at a time (cases share nothing but the template database). */
export async function runSuite(opts: SuiteOptions = {}): Promise<CaseResult[]> {
  const cases = opts.only?.length ? CASES.filter((c) => opts.only!.includes(c.id)) : CASES;
  const out: CaseResult[] = [];
  for (const c of cases) {
    const modes: Mode[] = opts.live ? ['live'] : c.injection ? ['clean', 'attack'] : ['clean'];
    for (const m of modes) {
      const r = await runCase(c, m, opts);
      out.push(r);
      opts.onResult?.(r);
    }
  }
  return out;
}
