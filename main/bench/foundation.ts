/**
 * Foundation benchmark (issue 2), through the service layer only (callVerb, as a real user):
 *  1. list athletes filtered by squad with 5,000 athletes in the org;
 *  2. insert 100,000 session loads with `workload.logSessionLoads` over whole squads (one
 *     changeset of 100 rows per call: plan, authorise, version checks, activity, outbox, inverse);
 *  3. ACWR for one athlete with 100,000 loads in the table.
 * Reports median and p95 latency per call and rows/s, with the machine and date. Not a test.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openDb } from '../data/db';
import { findUserByEmail } from '../data/identity';
import { addDays, seedAthleteHistory, seedLarge } from '../data/seed';
import type { ServiceContext } from '../services';
import { callVerb } from '../services';
import { median, percentile } from './report';

/** Sizes of one run. Defaults are the issue's figures. */
export interface FoundationBenchOptions {
  /** Athletes in the org. @default 5000 */
  athletes?: number;
  /** Session loads inserted through the service layer. @default 100000 */
  loads?: number;
  /** Athletes per squad (= rows per logSessionLoads call). @default 100 */
  squadSize?: number;
  /** Timed calls for the read benchmarks. @default 200 */
  iterations?: number;
  /** Folder for the temporary database. @default os.tmpdir() */
  tmpDir?: string;
  /** Progress lines (stderr). */
  log?: (line: string) => void;
}

/** Latency statistics of one benchmark, milliseconds. */
export interface Measure {
  name: string;
  calls: number;
  median_ms: number;
  p95_ms: number;
  min_ms: number;
  max_ms: number;
  /** Rows written or returned per second over the whole run, where meaningful. */
  rows_per_s?: number;
  rows?: number;
  total_s?: number;
  note?: string;
}

export interface FoundationBenchResult {
  date: string;
  machine: { cpu: string; cores: number; memory_gib: number; platform: string; node: string; better_sqlite3: string };
  sizes: { athletes: number; squads: number; squad_size: number; loads: number };
  measures: Measure[];
}

/** Median, p95 (nearest rank) and extremes of `xs` (ms). */
export function stats(name: string, xs: number[]): Measure {
  return {
    name,
    calls: xs.length,
    median_ms: round(median(xs)),
    p95_ms: round(percentile(xs, 95)),
    min_ms: round(xs.length ? xs.reduce((a, b) => Math.min(a, b)) : NaN),
    max_ms: round(xs.length ? xs.reduce((a, b) => Math.max(a, b)) : NaN),
  };
}

function round(v: number, dp = 3): number {
  const f = 10 ** dp;
  return Math.round(v * f) / f;
}

function time<T>(fn: () => T): [T, number] {
  const t0 = performance.now();
  const r = fn();
  return [r, performance.now() - t0];
}

function machine(): FoundationBenchResult['machine'] {
  const cpus = os.cpus();
  let bs = 'unknown';
  try {
    bs = (JSON.parse(readFileSync(join(process.cwd(), 'node_modules', 'better-sqlite3', 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    // not critical
  }
  return {
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    memory_gib: round(os.totalmem() / 2 ** 30, 1),
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    node: process.version,
    better_sqlite3: bs,
  };
}

/** Run the foundation benchmark on a fresh temporary database and return its figures. */
export function runFoundationBench(opts: FoundationBenchOptions = {}): FoundationBenchResult {
  const nAthletes = opts.athletes ?? 5000;
  const nLoads = opts.loads ?? 100_000;
  const squadSize = opts.squadSize ?? 100;
  const iterations = opts.iterations ?? 200;
  const log = opts.log ?? (() => {});
  const today = '2026-01-31';
  const dir = mkdtempSync(join(opts.tmpDir ?? os.tmpdir(), 'ai-bench-foundation-'));
  const db = openDb(join(dir, 'bench.sqlite'));
  try {
    log(`seeding ${nAthletes} athletes in squads of ${squadSize} (direct inserts, not measured)…`);
    const large = seedLarge(db, { athletes: nAthletes, loads: 0, squadSize, today });
    const physio = findUserByEmail(db, large.emails.physio);
    const coach = findUserByEmail(db, large.emails.coach);
    if (!physio || !coach) throw new Error('benchmark users missing');
    const fixedNow = new Date(`${today}T20:00:00.000Z`);
    const asPhysio: ServiceContext = { db, userId: physio.id, now: () => fixedNow };
    const asCoach: ServiceContext = { db, userId: coach.id, now: () => fixedNow };
    const measures: Measure[] = [];

    // 1. List athletes filtered by squad (one page = the whole squad).
    const listTimes: number[] = [];
    let listed = 0;
    for (let i = 0; i < iterations + 10; i++) {
      const squad = large.squadIds[(i * 7) % large.squadIds.length];
      const [r, ms] = time(() => callVerb(asPhysio, 'athletes.list', { squad_id: squad, limit: squadSize }));
      if (r.athletes.length !== Math.min(squadSize, nAthletes)) throw new Error(`athletes.list returned ${r.athletes.length} rows`);
      if (i >= 10) {
        listTimes.push(ms);
        listed += r.athletes.length;
      }
    }
    const lm = stats(`athletes.list filtered by squad (${squadSize} of ${nAthletes} athletes)`, listTimes);
    lm.rows_per_s = Math.round(listed / (listTimes.reduce((a, b) => a + b, 0) / 1000));
    measures.push(lm);
    log(`list by squad: median ${lm.median_ms} ms, p95 ${lm.p95_ms} ms`);

    // 2. Insert loads through the write path: one logSessionLoads changeset per squad per day.
    const perCall = squadSize;
    const calls = Math.ceil(nLoads / perCall);
    // At least 40 days per squad, so the ACWR athlete has more than the 28 days ACWR needs.
    const days = Math.max(40, Math.ceil(calls / large.squadIds.length));
    const squadsUsed = Math.ceil(calls / days);
    const writeTimes: number[] = [];
    let written = 0;
    log(`inserting ${nLoads} loads: ${calls} logSessionLoads calls (${squadsUsed} squads × ${days} days, ${perCall} rows each)…`);
    const t0 = performance.now();
    for (let c = 0; c < calls; c++) {
      const squad = large.squadIds[Math.floor(c / days)];
      const date = addDays(today, -(c % days));
      const [r, ms] = time(() =>
        callVerb(asCoach, 'workload.logSessionLoads', { squad_id: squad, date, duration_min: 45 + ((c * 15) % 60), rpe: 3 + (c % 6) }),
      );
      written += r.changeset.changes.length;
      writeTimes.push(ms);
      if (opts.log && (c + 1) % 100 === 0) log(`  ${c + 1}/${calls} calls, ${written} rows`);
    }
    const totalS = (performance.now() - t0) / 1000;
    const wm = stats(`workload.logSessionLoads, whole squad per call (${perCall} rows/changeset)`, writeTimes);
    wm.rows = written;
    wm.total_s = round(totalS, 2);
    wm.rows_per_s = Math.round(written / totalS);
    wm.note = `${calls} changesets over ${squadsUsed} squads × ${days} days`;
    measures.push(wm);
    log(`logSessionLoads: ${written} rows in ${wm.total_s} s = ${wm.rows_per_s} rows/s; per call median ${wm.median_ms} ms, p95 ${wm.p95_ms} ms`);

    // 3. ACWR for one athlete with all those loads in the table.
    const athlete = large.athletesBySquad[0]?.[0];
    if (!athlete) throw new Error('no athlete');
    const acwrTimes: number[] = [];
    for (let i = 0; i < iterations + 10; i++) {
      const [r, ms] = time(() => callVerb(asPhysio, 'workload.acwr', { athlete_id: athlete, as_of: today, method: 'both' }));
      if (i === 0 && r.results.some((x) => x.status !== 'ok')) throw new Error(`ACWR not computed: ${JSON.stringify(r.results)}`);
      if (i >= 10) acwrTimes.push(ms);
    }
    const am = stats(`workload.acwr (rolling + EWMA) for one athlete, ${written} loads in the table`, acwrTimes);
    am.note = `athlete has ${days} days of loads`;
    measures.push(am);
    log(`acwr: median ${am.median_ms} ms, p95 ${am.p95_ms} ms`);

    // 3b. Worst case: ACWR for one athlete whose own history holds `nLoads` loads (100 a day;
    // written directly, since 100,000 single-row service calls would only re-measure step 4).
    const heavy = large.athletesBySquad[large.athletesBySquad.length - 1]?.at(-1);
    if (!heavy) throw new Error('no athlete');
    const perDayHeavy = Math.max(1, Math.min(100, Math.floor(nLoads / 60))); // 100/day at full size; ≥ 60 days always
    seedAthleteHistory(db, { orgId: large.orgId, athleteId: heavy, loads: nLoads, perDay: perDayHeavy, today });
    const heavyTimes: number[] = [];
    for (let i = 0; i < Math.min(iterations, 50) + 3; i++) {
      const [r, ms] = time(() => callVerb(asPhysio, 'workload.acwr', { athlete_id: heavy, as_of: today, method: 'both' }));
      if (i === 0 && r.results.some((x) => x.status !== 'ok')) throw new Error(`ACWR not computed: ${JSON.stringify(r.results)}`);
      if (i >= 3) heavyTimes.push(ms);
    }
    const hm = stats(`workload.acwr (rolling + EWMA) for one athlete with ${nLoads} loads of their own`, heavyTimes);
    hm.note = `${Math.ceil(nLoads / perDayHeavy)} days × ${perDayHeavy} loads/day (history written directly)`;
    measures.push(hm);
    log(`acwr (own history of ${nLoads}): median ${hm.median_ms} ms, p95 ${hm.p95_ms} ms`);

    // 4. Per-changeset overhead: one athlete's load per call.
    const singleTimes: number[] = [];
    const squad0 = large.athletesBySquad[0] ?? [];
    for (let i = 0; i < iterations + 10; i++) {
      const a = squad0[i % squad0.length];
      // These days already hold the squad's load (step 2): each is a second session, acknowledged.
      const [, ms] = time(() =>
        callVerb(asCoach, 'workload.logSessionLoads', {
          athlete_id: a,
          date: addDays(today, -(i % 40)),
          duration_min: 30,
          rpe: 4,
          second_session_same_day: true,
        }),
      );
      if (i >= 10) singleTimes.push(ms);
    }
    const sm = stats('workload.logSessionLoads, one athlete per call (1 row/changeset)', singleTimes);
    sm.rows_per_s = Math.round(singleTimes.length / (singleTimes.reduce((x, y) => x + y, 0) / 1000));
    measures.push(sm);
    log(`logSessionLoads single: median ${sm.median_ms} ms, p95 ${sm.p95_ms} ms`);

    return {
      date: new Date().toISOString(),
      machine: machine(),
      sizes: { athletes: nAthletes, squads: large.squadIds.length, squad_size: squadSize, loads: written },
      measures,
    };
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The "Foundation" section of BENCHMARKS.md for a result. */
export function foundationMarkdown(r: FoundationBenchResult): string {
  const m = r.machine;
  const rows = r.measures.map(
    (x) =>
      `| ${x.name} | ${x.calls} | ${x.median_ms} | ${x.p95_ms} | ${x.rows_per_s !== undefined ? x.rows_per_s.toLocaleString('en-US') : '–'} | ${[x.total_s !== undefined ? `${x.rows} rows in ${x.total_s} s` : '', x.note ?? ''].filter(Boolean).join('; ') || '–'} |`,
  );
  return [
    '## Foundation',
    '',
    `Through the service layer (\`callVerb\` as a physio / coach of one org): ${r.sizes.athletes.toLocaleString('en-US')} athletes in ${r.sizes.squads} squads of ${r.sizes.squad_size}; ${r.sizes.loads.toLocaleString('en-US')} session loads inserted with \`workload.logSessionLoads\` (each call one changeset: plan, authorise, version checks, activity, outbox, inverse). Real SQLite file (WAL, synchronous=NORMAL) in the temp folder.`,
    '',
    `Run: \`npm run bench\` (or \`npm run bench -- foundation\`). Measured ${r.date.slice(0, 10)} on ${m.cpu}, ${m.cores} cores, ${m.memory_gib} GiB, ${m.platform}, Node ${m.node}, better-sqlite3 ${m.better_sqlite3}.`,
    '',
    '| benchmark | calls | median ms | p95 ms | rows/s | notes |',
    '| --- | ---: | ---: | ---: | ---: | --- |',
    ...rows,
    '',
  ].join('\n');
}
