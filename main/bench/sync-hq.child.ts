/**
 * The HQ side of `npm run bench:sync`, in its own process, so that the device's figures (time,
 * event-loop blocks, CPU profile) are the device's alone — as in production, where HQ is another
 * machine.
 *
 *   tsx main/bench/sync-hq.child.ts --dir DIR --rows N
 *
 * Starts HQ as `npm run hq` runs it (sync/hq.ts: private PostgreSQL cluster with durable settings,
 * the demo club, the embedded shape service behind the HQ proxy) under DIR/hq, pads the physio's
 * org with session_load rows (as the superuser: the bench's setup, not a device write) until the
 * physio's synced tables hold N rows, then prints one JSON line
 * `{"url", "rows_at_hq", "athletes": [ids]}` on stdout and serves until SIGTERM/SIGINT (stops HQ
 * and its cluster, then exits 0). Any failure: the error on stderr, exit 1.
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { uuidv7 } from 'uuidv7';
import { join } from 'node:path';
import { DEMO_EMAILS } from '../../models/seed/demo';
import { startHq } from '../../sync/hq';
import { syncedTables } from '../sync/engine';

const { values } = parseArgs({ options: { dir: { type: 'string' }, rows: { type: 'string' } } });
if (!values.dir) throw new Error('sync-hq.child: --dir is required');
const rows = Number(values.rows ?? 100_000);

async function main(): Promise<void> {
  const hq = await startHq({ dataDir: join(values.dir!, 'hq'), port: 0, demo: true, env: {}, log: () => undefined });
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    hq.stop().then(
      () => process.exit(0),
      (e: unknown) => {
        console.error(e);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);

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
    const params: unknown[] = [];
    const tuples: string[] = [];
    for (let i = 0; i < n; i++) {
      const b = params.length;
      tuples.push(`($${b + 1}, $${b + 2}, $${b + 3}, $${b + 3}, 1, $${b + 4}, $${b + 5}, 60, 6, 360)`);
      const day = new Date(Date.UTC(2024, 0, 1) + ((done + i) % 700) * 86_400_000).toISOString().slice(0, 10);
      params.push(uuidv7(), org, now, athletes[(done + i) % athletes.length], day);
    }
    await admin.query(
      `INSERT INTO session_load (id, org_id, created_at, updated_at, version, athlete_id, date, duration_min, rpe, load_au) VALUES ${tuples.join(', ')}`,
      params,
    );
  }
  await admin.end();
  process.stdout.write(`${JSON.stringify({ url: hq.server.url, rows_at_hq: existing + pad, athletes })}\n`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
