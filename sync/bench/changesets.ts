/**
 * Benchmark: changesets applied per second through POST /v1/changesets.
 *
 *   npm run bench:hq [-- --changesets 2000 --batch 50 --devices 4]
 *
 * A private Postgres 15 cluster (default durability: fsync and synchronous_commit on) in a temp
 * dir, the admin step, the migrations and the demo club; the HQ server on 127.0.0.1; physio devices
 * enrolled through POST /v1/devices. Each changeset is what a device's outbox holds for one
 * wellness entry (one inserted row), authorised by the models/ rules, version-checked and applied in
 * its own transaction with its activity row and changeset-log row, exactly as in production.
 * Measured: 1 device uploading batches sequentially, then N devices at once. Prints a JSON summary.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { uuidv7 } from 'uuidv7';
import { DEMO_EMAILS, DEMO_PIN } from '../../models/seed/demo';
import type { ChangesetUploadResult } from '../../models/sync';
import { runAdminSetup, withCredentials, withDatabase } from '../pg/admin';
import { startPgCluster } from '../pg/cluster';
import { migrateHq } from '../pg/db';
import { HQ_ROLES } from '../pg/roles';
import { initialiseHq } from '../seed';
import { startHqServer } from '../server';
import { enrolmentCodeFor } from '../testing/enrolment';

function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
}

async function main(): Promise<void> {
  const total = arg('changesets', 2000);
  const batch = arg('batch', 50);
  const devices = arg('devices', 4);
  const dir = mkdtempSync(join(tmpdir(), 'ai-hq-bench-'));
  chmodSync(dir, 0o711);
  const cluster = await startPgCluster({ dataDir: join(dir, 'pg') });
  try {
    const pw = { owner: 'bench-owner', app: 'bench-app', replication: 'bench-repl' };
    await runAdminSetup(cluster.url, 'hq_bench', pw);
    const base = withDatabase(cluster.url, 'hq_bench');
    await migrateHq(withCredentials(base, HQ_ROLES.owner, pw.owner));
    const today = new Date().toISOString().slice(0, 10);
    const init = await initialiseHq(withCredentials(base, HQ_ROLES.owner, pw.owner), { today });
    if (!init.initialised || !init.seeded) throw new Error('seed failed');
    const server = await startHqServer({
      appUrl: withCredentials(base, HQ_ROLES.app, pw.app),
      shapeUrl: 'http://127.0.0.1:9',
      poolSize: Math.max(4, devices * 2),
    });
    try {
      const athlete = init.summary.linkedAthleteId;
      const enrol = async (): Promise<string> => {
        const r = await fetch(`${server.url}/v1/devices`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            email: DEMO_EMAILS.physio,
            pin: DEMO_PIN,
            code: await enrolmentCodeFor(withCredentials(base, HQ_ROLES.app, pw.app), DEMO_EMAILS.physio),
            name: 'bench',
          }),
        });
        return ((await r.json()) as { token: string }).token;
      };
      // Each changeset records its own day (one live wellness row per athlete and day, HQ 0007).
      let days = 0;
      const changeset = () => ({
        changeset_id: uuidv7(),
        verb: 'wellness.record',
        summary: 'Record wellness',
        changes: [
          {
            op: 'insert',
            table: 'wellness',
            id: uuidv7(),
            after: {
              athlete_id: athlete,
              date: new Date(Date.parse(`${today}T00:00:00Z`) - 86_400_000 * (400 + days++)).toISOString().slice(0, 10),
              sleep: 4,
              soreness: 2,
              stress: 2,
              mood: 4,
              fatigue: 2,
              notes: '',
            },
          },
        ],
      });
      const uploadAll = async (token: string, n: number): Promise<number[]> => {
        const latencies: number[] = [];
        for (let done = 0; done < n; done += batch) {
          const body = JSON.stringify({ changesets: Array.from({ length: Math.min(batch, n - done) }, changeset) });
          const t0 = performance.now();
          const r = await fetch(`${server.url}/v1/changesets`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
            body,
          });
          const res = (await r.json()) as ChangesetUploadResult;
          latencies.push(performance.now() - t0);
          if (r.status !== 200 || res.results.some((x) => x.status !== 'applied')) throw new Error(`upload failed: ${JSON.stringify(res).slice(0, 300)}`);
        }
        return latencies;
      };
      const tokens = await Promise.all(Array.from({ length: devices }, enrol));
      await uploadAll(tokens[0]!, batch * 2); // warm-up

      const t1 = performance.now();
      const lat1 = await uploadAll(tokens[0]!, total);
      const s1 = (performance.now() - t1) / 1000;

      const per = Math.ceil(total / devices);
      const t2 = performance.now();
      await Promise.all(tokens.map((t) => uploadAll(t, per)));
      const s2 = (performance.now() - t2) / 1000;

      const sorted = [...lat1].sort((a, b) => a - b);
      const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
      console.log(
        JSON.stringify(
          {
            machine: `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB`,
            postgres: `PostgreSQL ${cluster.major}, default durability`,
            changeset: '1 inserted wellness row + activity row + changeset-log row, RLS, models/ rules',
            one_device: {
              changesets: total,
              batch,
              seconds: +s1.toFixed(2),
              changesets_per_s: Math.round(total / s1),
              batch_ms_p50: Math.round(pct(0.5)),
              batch_ms_p95: Math.round(pct(0.95)),
            },
            concurrent: { devices, changesets: per * devices, seconds: +s2.toFixed(2), changesets_per_s: Math.round((per * devices) / s2) },
          },
          null,
          2,
        ),
      );
    } finally {
      await server.close();
    }
  } finally {
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main().catch((e) => {
  console.error(e);
  process.exit(1);
});
