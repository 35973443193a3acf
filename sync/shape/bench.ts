/**
 * Shape service benchmarks (results go in BENCHMARKS.md):
 *   npm run bench:shapes [-- --rows 100000 --writes 200 --clients 1000]
 *
 * Starts a private Postgres 15 cluster (durable settings) and the standalone shape server as a child
 * process (`npm run shape-server`'s code), then measures, with the real @electric-sql/client:
 * 1. initial sync of a `--rows`-row table into a `Shape` (seconds, rows/s);
 * 2. write→change latency: single-row INSERTs committed one at a time on a live shape, time from
 *    before the INSERT until the ShapeStream delivers the change (p50/p95/max, ms);
 * 3. `--clients` live long-poll requests held at once (server RSS before/after, MiB) and the time
 *    for one write to reach all of them.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { Shape, ShapeStream, type Row } from '@electric-sql/client';
import pg from 'pg';
import { startPgCluster } from '../pg/cluster';

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

async function main(): Promise<void> {
  const ROWS = arg('rows', 100_000);
  const WRITES = arg('writes', 200);
  const CLIENTS = arg('clients', 1000);
  const root = mkdtempSync(join(tmpdir(), 'ai-shape-bench-'));
  chmodSync(root, 0o711); // the server may run as the postgres OS user
  const cluster = await startPgCluster({ dataDir: join(root, 'pg') }).catch((e: Error) => {
    rmSync(root, { recursive: true, force: true });
    throw e;
  });
  const db = new pg.Client({ connectionString: cluster.url });
  await db.connect();
  let child: ReturnType<typeof spawn> | null = null;
  try {
    await db.query(`CREATE TABLE bench_rows (id int PRIMARY KEY, org_id uuid NOT NULL, title text NOT NULL, n int, at timestamptz)`);
    await db.query(
      `INSERT INTO bench_rows SELECT g, '0190a3c4-1111-7000-8000-000000000001', 'row number ' || g, g % 97, '2026-01-01'::timestamptz + g * interval '1 minute' FROM generate_series(1, $1) g`,
      [ROWS],
    );
    await db.query(`CREATE TABLE bench_live (id int PRIMARY KEY, t text)`);

    child = spawn(
      process.execPath,
      ['--import', 'tsx', 'sync/shape/server.ts', '--database-url', cluster.url, '--port', '0', '--storage-dir', join(root, 'shapes')],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let childErr = '';
    child.stderr!.on('data', (d: Buffer) => (childErr += d.toString()));
    const base = await new Promise<string>((res, rej) => {
      let out = '';
      child!.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /listening on (http:\/\/[\d.:]+)/.exec(out);
        if (m) res(m[1]!);
      });
      child!.once('exit', (code) => rej(new Error(`shape server exited (${code}): ${childErr}`)));
    });
    const url = `${base}/v1/shape`;
    const ac = new AbortController();

    // 1. Initial sync.
    const t0 = performance.now();
    const shape = new Shape(new ShapeStream<Row>({ url, params: { table: 'bench_rows' }, signal: ac.signal }));
    const rows = await shape.rows;
    const initialS = (performance.now() - t0) / 1000;
    if (rows.length !== ROWS) throw new Error(`initial sync returned ${rows.length} rows, expected ${ROWS}`);
    const rssAfterInitial = rssMiB(child.pid!);

    // 2. Write → change latency.
    const live = new ShapeStream<Row>({ url, params: { table: 'bench_live' }, signal: ac.signal });
    const arrived = new Map<number, number>();
    const waiters = new Map<number, () => void>();
    live.subscribe((msgs) => {
      for (const m of msgs) {
        if ('key' in m && m.headers.operation === 'insert') {
          const id = Number(m.value.id);
          arrived.set(id, performance.now());
          waiters.get(id)?.();
        }
      }
    });
    await new Promise<void>((r) => {
      const u = live.subscribe(() => {
        if (live.isUpToDate) {
          u();
          r();
        }
      });
      if (live.isUpToDate) r();
    });
    const lat: number[] = [];
    for (let i = 1; i <= WRITES; i++) {
      const got = new Promise<void>((r) => waiters.set(i, r));
      const ts = performance.now();
      await db.query(`INSERT INTO bench_live VALUES ($1, 'x')`, [i]);
      await got;
      lat.push(arrived.get(i)! - ts);
    }

    // 3. Held long-polls.
    const rssBefore = rssMiB(child.pid!);
    const first = await fetch(`${url}?table=bench_live&offset=-1`);
    await first.arrayBuffer();
    const handle = first.headers.get('electric-handle')!;
    const offset = first.headers.get('electric-offset')!;
    const pollAc = new AbortController();
    let answered = 0;
    let withChange = 0;
    const polls = Array.from({ length: CLIENTS }, () =>
      fetch(`${url}?table=bench_live&offset=${offset}&handle=${handle}&live=true`, { signal: pollAc.signal })
        .then((r) => r.json() as Promise<{ key?: string }[]>)
        .then((b) => {
          answered++;
          if (b.some((m) => m.key !== undefined)) withChange++;
        }),
    );
    await new Promise((r) => setTimeout(r, 3000));
    const heldEarly = CLIENTS - answered;
    const rssHeld = rssMiB(child.pid!);
    const tw = performance.now();
    await db.query(`INSERT INTO bench_live VALUES ($1, 'fan-out')`, [WRITES + 1]);
    await Promise.all(polls);
    const fanoutMs = performance.now() - tw;
    ac.abort();

    const result = {
      machine: `${cpus().length} vCPU (${cpus()[0]?.model.trim()}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM, Node ${process.version}, PostgreSQL ${cluster.major}`,
      date: new Date().toISOString(),
      initialSync: { rows: ROWS, seconds: +initialS.toFixed(2), rowsPerSecond: Math.round(ROWS / initialS), serverRssMiB: +rssAfterInitial.toFixed(0) },
      writeToChangeMs: { writes: WRITES, p50: +pct(lat, 50).toFixed(1), p95: +pct(lat, 95).toFixed(1), max: +Math.max(...lat).toFixed(1) },
      longPolls: {
        clients: CLIENTS,
        heldAfter3s: heldEarly,
        serverRssMiBBefore: +rssBefore.toFixed(0),
        serverRssMiBHeld: +rssHeld.toFixed(0),
        perClientKiB: +(((rssHeld - rssBefore) * 1024) / CLIENTS).toFixed(1),
        oneWriteToAllMs: +fanoutMs.toFixed(0),
        receivedChange: withChange,
      },
    };
    console.log(JSON.stringify(result, null, 2));
  } finally {
    child?.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    await db.end();
    await cluster.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

main().catch((e: Error) => {
  console.error(`bench:shapes failed: ${e.stack ?? e.message}`);
  process.exit(1);
});
