/**
 * Shape service memory with many large shapes (results go in BENCHMARKS.md):
 *   npm run bench:shapes:memory [-- --rows 73000 --shapes 32]
 *
 * The issue 12 review's case: 32 shapes over one table of ~73,000 rows as wide as `session_load`
 * (~400 bytes of JSON a row), each shape a different `where` (`id <> $i`) so none is shared.
 * Starts a private Postgres 15 cluster and the standalone shape server as a child process
 * (`npm run shape-server`'s code), creates the shapes one by one and reads each to its end over
 * HTTP (offset -1, then the offsets the server returns, 4 MiB pages), then prints the server's RSS
 * (MiB, from /proc) before and after, the shape logs' size on disk, and the RSS after the server
 * restarts and resumes the same shapes from disk.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startPgCluster } from '../pg/cluster';

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : NaN;
}

function duMiB(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) if (e.isFile()) n += statSync(join(e.parentPath, e.name)).size;
  return Math.round(n / 1048576);
}

async function startServer(databaseUrl: string, storage: string): Promise<{ child: ChildProcess; base: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'sync/shape/server.ts', '--database-url', databaseUrl, '--port', '0', '--storage-dir', storage], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const base = await new Promise<string>((res, rej) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/[\d.:]+)/.exec(out);
      if (m) res(m[1]!);
    });
    child.once('exit', (code) => rej(new Error(`shape server exited (${code}): ${err}`)));
  });
  return { child, base };
}

/** Read a shape from offset -1 to up-to-date; returns the number of rows and its handle. */
async function readShape(base: string, where: string, handle?: string): Promise<{ rows: number; handle: string }> {
  let offset = '-1';
  let rows = 0;
  for (;;) {
    const q = new URLSearchParams({ table: 'bench_wide', where, offset, ...(handle ? { handle } : {}) });
    const r = await fetch(`${base}/v1/shape?${q}`);
    if (r.status !== 200) throw new Error(`shape answered ${r.status}: ${await r.text()}`);
    const body = (await r.json()) as { key?: string }[];
    rows += body.filter((m) => m.key !== undefined).length;
    handle = r.headers.get('electric-handle')!;
    offset = r.headers.get('electric-offset')!;
    if (r.headers.has('electric-up-to-date')) return { rows, handle };
  }
}

async function main(): Promise<void> {
  const ROWS = arg('rows', 73_000);
  const SHAPES = arg('shapes', 32);
  const root = mkdtempSync(join(tmpdir(), 'ai-shape-mem-'));
  chmodSync(root, 0o711); // the cluster runs as the postgres OS user when we are root
  const cluster = await startPgCluster({ dataDir: join(root, 'pg') });
  const db = new pg.Client({ connectionString: cluster.url });
  await db.connect();
  let server: { child: ChildProcess; base: string } | null = null;
  try {
    // Columns and widths like session_load's (uuid keys, timestamps, numbers, a free-text note).
    await db.query(
      `CREATE TABLE bench_wide (id int PRIMARY KEY, org_id uuid NOT NULL, athlete_id uuid NOT NULL, session_date date NOT NULL,
        kind text NOT NULL, duration_min int, rpe int, load_au int, notes text, created_at timestamptz, updated_at timestamptz, version int)`,
    );
    await db.query(
      `INSERT INTO bench_wide SELECT g, '0190a3c4-1111-7000-8000-000000000001', gen_random_uuid(), '2026-01-01'::date + (g % 300),
        'training', 60 + g % 30, 1 + g % 10, (60 + g % 30) * (1 + g % 10), repeat('session note ', 12) || g,
        now(), now(), 1 FROM generate_series(1, $1) g`,
      [ROWS],
    );
    const storage = join(root, 'shapes');
    server = await startServer(cluster.url, storage);
    const rssStart = rssMiB(server.child.pid!);
    const handles: string[] = [];
    const t0 = performance.now();
    for (let i = 0; i < SHAPES; i++) {
      const { rows, handle } = await readShape(server.base, `id <> ${i + 1}`);
      if (rows !== ROWS - 1) throw new Error(`shape ${i} returned ${rows} rows, expected ${ROWS - 1}`);
      handles.push(handle);
    }
    const seconds = (performance.now() - t0) / 1000;
    const rssAfter = rssMiB(server.child.pid!);
    const onDisk = duMiB(storage);
    server.child.kill('SIGTERM');
    await new Promise((r) => server!.child.once('exit', r));
    server = await startServer(cluster.url, storage);
    const rssResumed = rssMiB(server.child.pid!);
    // A client coming back mid-log reads the tail of each resumed shape from disk.
    const again = await readShape(server.base, 'id <> 1', handles[0]);
    if (again.rows !== ROWS - 1) throw new Error(`resumed shape returned ${again.rows} rows`);
    console.log(
      JSON.stringify(
        {
          machine: { cpus: cpus().length, cpu: cpus()[0]?.model, memGiB: +(totalmem() / 2 ** 30).toFixed(1), node: process.version },
          rows: ROWS,
          shapes: SHAPES,
          createAndReadAllSeconds: +seconds.toFixed(1),
          serverRssMiB: { start: rssStart, afterShapes: rssAfter, perShape: +((rssAfter - rssStart) / SHAPES).toFixed(1), afterRestartResumed: rssResumed },
          logsOnDiskMiB: onDisk,
        },
        null,
        2,
      ),
    );
  } finally {
    server?.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    await db.end();
    await cluster.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

main().catch((e: Error) => {
  console.error(`bench-memory failed: ${e.stack ?? e.message}`);
  process.exit(1);
});
