/**
 * Measurement: one device token flooding HQ with hand-edited shape `where`s (the issue 12 review's
 * repro: `GET /v1/shape?table=session_load&offset=-1&where=id <> '…$i'` × N).
 *
 *   npx tsx sync/bench/shape-flood.ts [-- --requests 200]
 *
 * Starts the whole HQ as `npm run hq` does (sync/hq.ts: private Postgres in a temp dir, demo club,
 * embedded shape service, the proxy with its shape limits) in this process, enrols the physio, then
 * sends the requests one after another. Prints a JSON summary: answers by status, shapes the
 * shape service holds and on disk, this process's RSS before and after, then the same after the
 * device is revoked and the proxy's sweep ran.
 */
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEMO_EMAILS, DEMO_PIN } from '../../models/seed/demo';
import { operatorEnrolmentCode, startHq } from '../hq';

function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
}
const mb = (): number => Math.round(process.memoryUsage().rss / 1048576);

async function main(): Promise<void> {
  const n = arg('requests', 200);
  const dir = mkdtempSync(join(tmpdir(), 'ai-hq-flood-'));
  chmodSync(dir, 0o711); // the private Postgres runs as another OS user when we are root
  const hq = await startHq({ dataDir: join(dir, 'hq'), port: 0, env: {}, log: () => undefined });
  try {
    const url = hq.server.url;
    const enrol = await fetch(`${url}/v1/devices`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        email: DEMO_EMAILS.physio,
        pin: DEMO_PIN,
        code: (await operatorEnrolmentCode({ email: DEMO_EMAILS.physio, dataDir: join(dir, 'hq'), env: {} })).code,
        name: 'Flood',
      }),
    });
    const dev = (await enrol.json()) as { token: string; device_id: string };
    const auth = { authorization: `Bearer ${dev.token}` };
    const shapesDir = join(dir, 'hq', 'shapes', 'shapes');
    const held = () => ({ service: hq.shapes!.service.stats().shapes, on_disk: readdirSync(shapesDir).length });
    global.gc?.();
    const before = { rss_mb: mb(), ...held() };
    const statuses: Record<string, number> = {};
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      const where = encodeURIComponent(`id <> '00000000-0000-7000-8000-${String(i).padStart(12, '0')}'`);
      const r = await fetch(`${url}/v1/shape?table=session_load&offset=-1&where=${where}`, { headers: auth });
      await r.arrayBuffer();
      statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    }
    const ms = Math.round(performance.now() - t0);
    const after = { rss_mb: mb(), ...held() };
    const del = await fetch(`${url}/v1/devices/${dev.device_id}`, { method: 'DELETE', headers: auth });
    await del.arrayBuffer();
    const released = await hq.server.shapes.sweepShapes();
    global.gc?.();
    const revoked = { released, rss_mb: mb(), ...held() };
    console.log(JSON.stringify({ requests: n, ms, statuses, before, after, after_revoke_and_sweep: revoked }, null, 2));
  } finally {
    await hq.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main().catch((e: Error) => {
  console.error(e);
  process.exit(1);
});
