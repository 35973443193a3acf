/**
 * Benchmark: device sync against a real HQ (issue 12).
 *
 *   npm run bench:sync [-- --rows 100000 --samples 40 --backlog 1000]
 *
 * HQ as `npm run hq` runs it (sync/hq.ts: a private PostgreSQL cluster with durable settings, the
 * demo club, the embedded shape service behind the HQ proxy) in a temp dir, padded with
 * session_load rows so that the physio's org holds `--rows` rows across the synced tables. Then:
 * 1. initial sync of a fresh device file (`DeviceSync.syncOnce`: every shape to up-to-date),
 *    with the longest event-loop block during it (perf_hooks monitorEventLoopDelay, 1 ms resolution);
 * 2. write on device A → visible on device B, both live (`--samples` one-row edits; time from the
 *    local write until B's SQLite row has the value);
 * 3. a backlog of `--backlog` changesets written offline on A, then uploaded by one pass.
 * Prints a JSON summary (machine, date, figures) for BENCHMARKS.md.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pg from 'pg';
import { uuidv7 } from 'uuidv7';
import { DEMO_EMAILS, DEMO_PIN } from '../../models/seed/demo';
import { startHq } from '../../sync/hq';
import { openDb, type Db } from '../data/db';
import { findUserByEmail } from '../data/identity';
import { callVerb, VERBS } from '../services';
import { DeviceSync, syncedTables } from '../sync/engine';
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

async function main(): Promise<void> {
  const rows = arg('rows', 100_000);
  const samples = arg('samples', 40);
  const backlog = arg('backlog', 1000);
  const dir = mkdtempSync(join(tmpdir(), 'ai-sync-bench-'));
  chmodSync(dir, 0o711); // the Postgres OS user must pass through to its data dir
  const quiet = (): void => undefined;
  const hq = await startHq({ dataDir: join(dir, 'hq'), port: 0, demo: true, env: {}, log: quiet });
  const engines: DeviceSync[] = [];
  const dbs: Db[] = [];
  try {
    const url = hq.server.url;
    // Pad HQ with session loads (as the superuser: the bench's setup, not a device write).
    const admin = new pg.Client({ connectionString: hq.cluster!.urlFor('athlete_hq') });
    await admin.connect();
    const org = (await admin.query<{ org_id: string }>(`SELECT org_id FROM app_user WHERE email = $1`, [DEMO_EMAILS.physio])).rows[0]!.org_id;
    let existing = 0;
    for (const t of syncedTables('physio')) {
      const col = t === 'organization' ? 'id' : 'org_id';
      existing += Number((await admin.query<{ n: string }>(`SELECT count(*) AS n FROM ${t} WHERE ${col} = $1`, [org])).rows[0]!.n);
    }
    const athletes = (await admin.query<{ id: string }>(`SELECT id FROM athlete WHERE org_id = $1 AND deleted_at IS NULL`, [org])).rows.map((r) => r.id);
    const pad = Math.max(0, rows - existing);
    const now = new Date().toISOString();
    for (let done = 0; done < pad; done += 1000) {
      const n = Math.min(1000, pad - done);
      const values: unknown[] = [];
      const tuples: string[] = [];
      for (let i = 0; i < n; i++) {
        const b = values.length;
        tuples.push(`($${b + 1}, $${b + 2}, $${b + 3}, $${b + 3}, 1, $${b + 4}, $${b + 5}, 60, 6, 360)`);
        const day = new Date(Date.UTC(2024, 0, 1) + ((done + i) % 700) * 86_400_000).toISOString().slice(0, 10);
        values.push(uuidv7(), org, now, athletes[(done + i) % athletes.length], day);
      }
      await admin.query(
        `INSERT INTO session_load (id, org_id, created_at, updated_at, version, athlete_id, date, duration_min, rpe, load_au) VALUES ${tuples.join(', ')}`,
        values,
      );
    }
    await admin.end();

    const device = async (role: 'physio' | 'doctor'): Promise<{ db: Db; sync: DeviceSync; userId: string }> => {
      const db = openDb(join(dir, `${role}.sqlite`));
      dbs.push(db);
      const sync = await DeviceSync.enrol(db, { hqUrl: url, email: DEMO_EMAILS[role], pin: DEMO_PIN, deviceName: `bench ${role}` }, { pollMs: 20 });
      engines.push(sync);
      return { db, sync, userId: '' };
    };

    // 1. Initial sync of a fresh device.
    const a = await device('physio');
    const h = monitorEventLoopDelay({ resolution: 1 });
    h.enable();
    const t0 = performance.now();
    const initial = await a.sync.syncOnce();
    const initialMs = performance.now() - t0;
    h.disable();
    const synced = Object.values(initial.pulled).reduce((x, y) => x + y, 0);
    a.userId = findUserByEmail(a.db, DEMO_EMAILS.physio)!.id;

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
      callVerb({ db: a.db, userId: a.userId }, VERBS, 'athletes.update', { id: target, notes });
      a.sync.nudge();
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
      callVerb({ db: a.db, userId: a.userId }, VERBS, 'athletes.update', { id: athletes[i % athletes.length]!, notes: `offline ${i}` });
    }
    let uploadedAt = 0;
    const up = new DeviceSync(a.db, { trace: (p) => p === 'upload:recorded' && (uploadedAt = performance.now()) });
    const u0 = performance.now();
    const pass = await up.syncOnce();
    const uploadMs = uploadedAt - u0;

    const out = {
      date: new Date().toISOString(),
      machine: { cpu: cpus()[0]?.model, cores: cpus().length, memGiB: Math.round(totalmem() / 2 ** 30), node: process.version, loadavg: loadavg().map(r1) },
      initial_sync: {
        rows_at_hq: existing + pad,
        rows_applied: synced,
        seconds: r1(initialMs / 100) / 10,
        rows_per_s: Math.round(synced / (initialMs / 1000)),
        longest_event_loop_block_ms: r1(h.max / 1e6),
        event_loop_p99_ms: r1(h.percentile(99) / 1e6),
      },
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
    await hq.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
