/**
 * Benchmark: device sync against a real HQ (issue 12).
 *
 *   npm run bench:sync [-- --rows 100000 --samples 40 --backlog 1000] [--only initial]
 *   node --cpu-prof --cpu-prof-dir=DIR --import tsx main/bench/sync.ts --only initial   # device CPU profile
 *
 * HQ runs in its own process (main/bench/sync-hq.child.ts: sync/hq.ts as `npm run hq` runs it, a
 * private PostgreSQL cluster with durable settings, the demo club, the embedded shape service behind
 * the HQ proxy, padded with session_load rows so that the physio's org holds `--rows` rows across
 * the synced tables), so every figure below — and a `--cpu-prof` profile — is the device's own:
 * 1. initial sync of a fresh device file (`DeviceSync.syncOnce`: every shape to up-to-date),
 *    with the longest block of the main thread's event loop during it (perf_hooks
 *    monitorEventLoopDelay, 1 ms resolution; the shape worker, which fetches, parses and applies,
 *    is another thread) and the device process's CPU (all its threads);
 * 2. write on device A → visible on device B, both live (`--samples` one-row edits; time from the
 *    local write until B's SQLite row has the value);
 * 3. a backlog of `--backlog` changesets written offline on A, then uploaded by one pass.
 * `--only initial` stops after 1. Prints a JSON summary (machine, date, figures) for BENCHMARKS.md.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { DEMO_EMAILS, DEMO_PIN } from '../../models/seed/demo';
import { operatorEnrolmentCode } from '../../sync/hq';
import { openDb, type Db } from '../data/db';
import { findUserByEmail } from '../data/identity';
import { callVerb } from '../services';
import { DeviceSync } from '../sync/engine';
import { sqlite } from '../data/sqlite';

function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
}
const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const r1 = (x: number): number => Math.round(x * 10) / 10;

/** Start HQ in a child process; resolves once it is padded and serving. */
function startHqProcess(dir: string, rows: number): Promise<{ proc: ChildProcess; url: string; rows_at_hq: number; athletes: string[] }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'sync-hq.child.ts'), '--dir', dir, '--rows', String(rows)], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  return new Promise((resolve, reject) => {
    proc.once('exit', (code) => reject(new Error(`bench:sync: the HQ process exited (${code}) before it was ready`)));
    createInterface({ input: proc.stdout! }).once('line', (line) =>
      resolve({ proc, ...(JSON.parse(line) as { url: string; rows_at_hq: number; athletes: string[] }) }),
    );
  });
}

async function stopHqProcess(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null) return;
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGTERM');
  await exited;
}

async function main(): Promise<void> {
  const rows = arg('rows', 100_000);
  const samples = arg('samples', 40);
  const backlog = arg('backlog', 1000);
  const onlyInitial = process.argv.includes('--only') && process.argv[process.argv.indexOf('--only') + 1] === 'initial';
  const dir = mkdtempSync(join(tmpdir(), 'ai-sync-bench-'));
  chmodSync(dir, 0o711); // the Postgres OS user must pass through to its data dir
  const engines: DeviceSync[] = [];
  const dbs: Db[] = [];
  let hqProc: ChildProcess | null = null;
  try {
    const hq = await startHqProcess(dir, rows);
    hqProc = hq.proc;
    const { url, athletes } = hq;

    const device = async (role: 'physio' | 'doctor'): Promise<{ db: Db; sync: DeviceSync; userId: string }> => {
      const db = openDb(join(dir, `${role}.sqlite`));
      dbs.push(db);
      const sync = await DeviceSync.enrol(
        db,
        {
          hqUrl: url,
          email: DEMO_EMAILS[role],
          pin: DEMO_PIN,
          // As the operator issues one (npm run hq -- enrolment-code), on the child's running cluster.
          code: (await operatorEnrolmentCode({ email: DEMO_EMAILS[role], dataDir: join(dir, 'hq'), env: {} })).code,
          deviceName: `bench ${role}`,
        },
        {},
      );
      engines.push(sync);
      return { db, sync, userId: '' };
    };

    // 1. Initial sync of a fresh device.
    const a = await device('physio');
    const h = monitorEventLoopDelay({ resolution: 1 });
    h.enable();
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const initial = await a.sync.syncOnce();
    const initialMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    h.disable();
    const synced = Object.values(initial.pulled).reduce((x, y) => x + y, 0);
    a.userId = findUserByEmail(a.db, DEMO_EMAILS.physio)!.id;
    const initialOut = {
      rows_at_hq: hq.rows_at_hq,
      rows_applied: synced,
      seconds: r1(initialMs / 100) / 10,
      rows_per_s: Math.round(synced / (initialMs / 1000)),
      // CPU the device process used (HQ runs in its own process): less sensitive to other load than wall time.
      device_cpu_s: r1((cpu.user + cpu.system) / 1e5) / 10,
      longest_event_loop_block_ms: r1(h.max / 1e6),
      event_loop_p99_ms: r1(h.percentile(99) / 1e6),
    };
    const machine = {
      cpu: cpus()[0]?.model,
      cores: cpus().length,
      memGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      loadavg: loadavg().map(r1),
    };
    if (onlyInitial) {
      console.log(JSON.stringify({ date: new Date().toISOString(), machine, initial_sync: initialOut }, null, 2));
      return;
    }

    // 2. A → B, both live.
    const b = await device('doctor');
    await b.sync.syncOnce();
    a.sync.start();
    b.sync.start();
    await new Promise((r) => setTimeout(r, 1000));
    const target = athletes[0]!;
    const lat: number[] = [];
    for (let i = 0; i < samples; i++) {
      const notes = `bench ${i} ${Date.now()}`;
      const s = performance.now();
      // As in the app: the write itself wakes A's uploader (main/data/changesets.ts onOutboxAppended).
      callVerb({ db: a.db, userId: a.userId }, 'athletes.update', { id: target, notes });
      for (;;) {
        if (sqlite(b.db).prepare('SELECT notes FROM athlete WHERE id = ?').pluck().get(target) === notes) break;
        if (performance.now() - s > 30_000) throw new Error(`sample ${i}: B did not see the write within 30 s`);
        await new Promise((r) => setTimeout(r, 2));
      }
      lat.push(performance.now() - s);
      await new Promise((r) => setTimeout(r, 50));
    }
    await a.sync.stop();
    await b.sync.stop();

    // 3. Backlog of offline changesets on A, uploaded by one pass.
    for (let i = 0; i < backlog; i++) {
      callVerb({ db: a.db, userId: a.userId }, 'athletes.update', { id: athletes[i % athletes.length]!, notes: `offline ${i}` });
    }
    let uploadedAt = 0;
    const up = new DeviceSync(a.db, { trace: (p) => p === 'upload:recorded' && (uploadedAt = performance.now()) });
    const u0 = performance.now();
    const pass = await up.syncOnce();
    const uploadMs = uploadedAt - u0;

    const out = {
      date: new Date().toISOString(),
      machine: { ...machine, loadavg: loadavg().map(r1) },
      initial_sync: initialOut,
      a_to_b: { samples: lat.length, p50_ms: r1(pct(lat, 50)), p95_ms: r1(pct(lat, 95)), max_ms: r1(Math.max(...lat)) },
      backlog: {
        changesets: pass.uploaded,
        rejected: pass.rejected,
        upload_seconds: r1(uploadMs / 100) / 10,
        changesets_per_s: Math.round(pass.uploaded / (uploadMs / 1000)),
        whole_pass_seconds: r1(pass.ms / 100) / 10,
      },
    };
    console.log(JSON.stringify(out, null, 2));
  } finally {
    for (const e of engines) await e.stop().catch(() => undefined);
    for (const d of dbs) d.close();
    if (hqProc) await stopHqProcess(hqProc);
    rmSync(dir, { recursive: true, force: true });
  }
}

// Exit when done (the shape client keeps a 60 s timer alive; see main/cli/index.ts).
main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
