/**
 * A private PostgreSQL cluster started from the installed server binaries (`initdb`, `pg_ctl`).
 *
 * Used by `npm run hq` (the embedded default under `.data/hq/` when no DATABASE_URL is given) and
 * by the tests (`sync/testing/pg.ts`). The cluster:
 * - lives entirely in one data directory (the unix socket, `postmaster.pid`, the server log and the
 *   admin credential file all sit inside it);
 * - listens on 127.0.0.1 only, on a free port picked at each start;
 * - has `wal_level=logical` (the shape service's change capture needs it) and room for a few
 *   replication slots and WAL senders;
 * - authenticates TCP connections with SCRAM-SHA-256 (a random admin password generated at
 *   `initdb` and kept in `<dataDir>/admin-credentials.json`, mode 0600), unix-socket connections by
 *   peer (OS user = role name), so nobody else on the machine can log in as the superuser;
 * - runs as an unprivileged OS user: when this process is root, `initdb`/`pg_ctl` run as `postgres`
 *   via `runuser` (PostgreSQL refuses to run as root) and the data directory is owned by it.
 *
 * Starting is idempotent: an existing data directory is reused (not re-initialised) and a server
 * already running on it is adopted (its port is read from `postmaster.pid`).
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { AppError } from '../../models/errors';

/** What went wrong starting or stopping a cluster. */
export type PgClusterErrorKind = 'binaries_missing' | 'unsupported_version' | 'os_user' | 'data_dir' | 'initdb_failed' | 'start_failed' | 'stop_failed';

/**
 * Base class of every error this module throws, an {@link AppError}: `NotConfigured` (HTTP 503)
 * when this machine is not set up for it (binaries, version, OS user, data directory),
 * `Unavailable` when the server would not initialise, start or stop; `kind` says which.
 */
export class PgClusterError extends AppError {
  constructor(
    readonly kind: PgClusterErrorKind,
    message: string,
  ) {
    super({ code: kind === 'initdb_failed' || kind === 'start_failed' || kind === 'stop_failed' ? 'Unavailable' : 'NotConfigured', message, kind });
    this.name = 'PgClusterError';
  }
}

/** The PostgreSQL server binaries (`initdb`, `pg_ctl`, `postgres`) could not be found. */
export class PgBinariesMissingError extends PgClusterError {
  constructor(readonly searched: string[]) {
    super(
      'binaries_missing',
      `PostgreSQL server binaries (initdb, pg_ctl) not found (looked in: ${searched.join(', ') || 'nothing'}). ` +
        'Install PostgreSQL 15 or newer (Debian/Ubuntu: `apt-get install postgresql-15`; macOS: `brew install postgresql@15`), ' +
        'or set PG_BIN to the directory holding initdb and pg_ctl, or give DATABASE_URL to use an existing server.',
    );
    this.name = 'PgBinariesMissingError';
  }
}

/** Oldest major version we start (logical replication with pgoutput streaming and row filters: 15). */
export const MIN_PG_MAJOR = 15;

/** What `startPgCluster` needs. */
export interface PgClusterOptions {
  /** The data directory (created if missing; must be empty or an existing cluster of ours). */
  dataDir: string;
  /** Directory holding initdb/pg_ctl; default: $PG_BIN, then /usr/lib/postgresql/<newest>/bin, then PATH. */
  binDir?: string;
  /** TCP port; default: a free port on 127.0.0.1 picked at each start. */
  port?: number;
  /** OS user to run the server as when this process is root (default `postgres`). Ignored when not root. */
  osUser?: string;
  /** Name of the superuser role created by initdb (default `postgres`). */
  superuser?: string;
  /**
   * Trade durability for speed (fsync, synchronous_commit and full_page_writes off). For throw-away
   * test clusters only: a crash can corrupt the cluster.
   */
  unsafeFast?: boolean;
  /**
   * Stop the server when this process exits (default true): a synchronous `pg_ctl stop` on 'exit',
   * and on SIGINT/SIGTERM when no other handler owns those signals.
   */
  stopOnExit?: boolean;
  /** Extra `postgresql.conf` settings applied at every start (e.g. `{ max_connections: '200' }`). */
  settings?: Record<string, string>;
}

/** A running cluster. */
export interface PgCluster {
  /** Admin (superuser) connection URL over TCP, e.g. `postgres://postgres:…@127.0.0.1:54321/postgres`. */
  readonly url: string;
  readonly host: '127.0.0.1';
  readonly port: number;
  readonly superuser: string;
  readonly password: string;
  readonly dataDir: string;
  /** The server log file (inside the data dir). */
  readonly logFile: string;
  /** PostgreSQL major version of the binaries, e.g. 15. */
  readonly major: number;
  /** True when this call found the server already running and adopted it. */
  readonly adopted: boolean;
  /** URL for another database on the same server, as the admin role. */
  urlFor(database: string, role?: { user: string; password: string }): string;
  /** Stop the server (`pg_ctl stop -m fast`); resolves when it has exited. Idempotent. */
  stop(): Promise<void>;
}

const CREDENTIALS_FILE = 'admin-credentials.json';
const LOG_FILE = 'server.log';
const UNIX_SOCKET_PATH_MAX = 100; // sun_path is 108 bytes on Linux, 104 on macOS; leave room for ".s.PGSQL.NNNNN"

interface Credentials {
  superuser: string;
  password: string;
}

/** Find the directory holding initdb and pg_ctl. Throws PgBinariesMissingError. */
export function findPgBinDir(explicit?: string): string {
  const candidates: string[] = [];
  if (explicit) candidates.push(explicit);
  else {
    if (process.env.PG_BIN) candidates.push(process.env.PG_BIN);
    const base = '/usr/lib/postgresql';
    if (existsSync(base)) {
      const versions = readdirSync(base)
        .filter((v) => /^\d+$/.test(v))
        .sort((a, b) => Number(b) - Number(a));
      for (const v of versions) candidates.push(join(base, v, 'bin'));
    }
    for (const p of ['/opt/homebrew/opt/postgresql@15/bin', '/usr/local/opt/postgresql@15/bin', '/usr/local/pgsql/bin']) candidates.push(p);
    for (const p of (process.env.PATH ?? '').split(':').filter(Boolean)) candidates.push(p);
  }
  for (const dir of candidates) {
    if (existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) return dir;
  }
  throw new PgBinariesMissingError(explicit ? candidates : candidates.slice(0, 6));
}

/** Major version of the binaries in `binDir` (from `initdb --version`). */
export function pgMajorVersion(binDir: string): number {
  const r = spawnSync(join(binDir, 'initdb'), ['--version'], { encoding: 'utf8' });
  const m = /(\d+)(?:\.\d+)?/.exec(r.stdout ?? '');
  if (r.status !== 0 || !m) throw new PgBinariesMissingError([binDir]);
  return Number(m[1]);
}

/** A free TCP port on 127.0.0.1 (bound and released; the caller must use it promptly). */
export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => res(port));
    });
  });
}

interface OsUser {
  name: string;
  uid: number;
  gid: number;
}

function lookupOsUser(name: string): OsUser {
  const r = spawnSync('id', ['-u', name], { encoding: 'utf8' });
  const g = spawnSync('id', ['-g', name], { encoding: 'utf8' });
  if (r.status !== 0 || g.status !== 0) {
    throw new PgClusterError(
      'os_user',
      `This process runs as root, and PostgreSQL refuses to run as root, but the OS user "${name}" does not exist. ` +
        'Create it (`useradd --system postgres`; the postgresql package does this) or run as an ordinary user.',
    );
  }
  return { name, uid: Number(r.stdout.trim()), gid: Number(g.stdout.trim()) };
}

function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

/** Run a binary as `runAs` (via runuser) or as ourselves; resolves with exit code and output. */
function run(
  bin: string,
  args: string[],
  runAs: OsUser | null,
  opts: { timeoutMs?: number; detachedStdio?: boolean } = {},
): Promise<{ code: number; out: string }> {
  const [cmd, argv] = runAs ? ['runuser', ['-u', runAs.name, '--', bin, ...args]] : [bin, args];
  return new Promise((res, rej) => {
    // pg_ctl start leaves the postmaster holding inherited pipes; give it /dev/null instead and read the log file.
    const child = spawn(cmd, argv, { stdio: opts.detachedStdio ? 'ignore' : ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_ALL: 'C' } });
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    const timer = opts.timeoutMs ? setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs) : null;
    child.on('error', (e) => {
      if (timer) clearTimeout(timer);
      rej(e);
    });
    child.on('close', (code) => {
      if (timer) clearTimeout(timer);
      res({ code: code ?? -1, out });
    });
  });
}

function tail(file: string, lines = 20): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no server log)';
  }
}

/** The port and liveness of a server recorded in `postmaster.pid`, or null when none is running. */
function runningServer(dataDir: string, binDir: string, runAs: OsUser | null): number | null {
  const pidFile = join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return null;
  const [cmd, argv] = runAs
    ? ['runuser', ['-u', runAs.name, '--', join(binDir, 'pg_ctl'), 'status', '-D', dataDir]]
    : [join(binDir, 'pg_ctl'), ['status', '-D', dataDir]];
  const st = spawnSync(cmd, argv, { encoding: 'utf8' });
  if (st.status !== 0) return null;
  // postmaster.pid lines: pid, data dir, start time, port, socket dir, listen addr, shmem key, status
  const lines = readFileSync(pidFile, 'utf8').split('\n');
  const port = Number(lines[3]);
  return Number.isInteger(port) && port > 0 ? port : null;
}

function ensureTraversable(dir: string, user: OsUser): void {
  // Every ancestor must be searchable by the server's OS user or it cannot reach its data dir.
  let cur = dirname(dir);
  for (;;) {
    const st = statSync(cur);
    const others = (st.mode & 0o001) !== 0;
    const byOwner = st.uid === user.uid && (st.mode & 0o100) !== 0;
    const byGroup = st.gid === user.gid && (st.mode & 0o010) !== 0;
    if (!others && !byOwner && !byGroup) {
      throw new PgClusterError(
        'data_dir',
        `The PostgreSQL server runs as OS user "${user.name}" but cannot reach ${dir}: ${cur} is not searchable by it (mode ${(st.mode & 0o777).toString(8)}). ` +
          'Choose a data directory under a world-searchable path (e.g. under /tmp or the project folder) or `chmod o+x` that directory.',
      );
    }
    const parent = dirname(cur);
    if (parent === cur) break;
    cur = parent;
  }
}

function readCredentials(dataDir: string): Credentials {
  const file = join(dataDir, CREDENTIALS_FILE);
  try {
    const c = JSON.parse(readFileSync(file, 'utf8')) as Partial<Credentials>;
    if (typeof c.superuser === 'string' && typeof c.password === 'string') return { superuser: c.superuser, password: c.password };
  } catch {
    /* fall through */
  }
  throw new PgClusterError(
    'data_dir',
    `${dataDir} holds a PostgreSQL cluster that was not created by this tool (no readable ${CREDENTIALS_FILE}). ` +
      'Point DATABASE_URL at it instead, or choose an empty directory.',
  );
}

async function initCluster(dataDir: string, binDir: string, runAs: OsUser | null, superuser: string): Promise<Credentials> {
  const password = randomBytes(24).toString('base64url');
  // The password file must be readable by the server's OS user, and by nobody else.
  const pwDir = join(tmpdir(), `ai-pg-pw-${randomBytes(6).toString('hex')}`);
  mkdirSync(pwDir, { mode: 0o700 });
  const pwFile = join(pwDir, 'pw');
  writeFileSync(pwFile, password + '\n', { mode: 0o600 });
  if (runAs) {
    chownSync(pwDir, runAs.uid, runAs.gid);
    chownSync(pwFile, runAs.uid, runAs.gid);
  }
  try {
    const r = await run(
      join(binDir, 'initdb'),
      ['-D', dataDir, '-U', superuser, `--pwfile=${pwFile}`, '--auth-local=peer', '--auth-host=scram-sha-256', '-E', 'UTF8', '--locale=C', '--no-instructions'],
      runAs,
      { timeoutMs: 120_000 },
    );
    if (r.code !== 0) throw new PgClusterError('initdb_failed', `initdb failed for ${dataDir} (exit ${r.code}):\n${r.out.trim()}`);
  } finally {
    rmSync(pwDir, { recursive: true, force: true });
  }
  const creds: Credentials = { superuser, password };
  writeFileSync(join(dataDir, CREDENTIALS_FILE), JSON.stringify(creds) + '\n', { mode: 0o600 });
  if (runAs) chownSync(join(dataDir, CREDENTIALS_FILE), runAs.uid, runAs.gid);
  return creds;
}

function serverSettings(dataDir: string, port: number, opts: PgClusterOptions): string[] {
  const socketDirOk = join(dataDir, '.s.PGSQL.65535').length <= UNIX_SOCKET_PATH_MAX;
  const s: Record<string, string> = {
    listen_addresses: '127.0.0.1',
    port: String(port),
    unix_socket_directories: socketDirOk ? dataDir : '',
    wal_level: 'logical',
    max_wal_senders: '20',
    max_replication_slots: '20',
    // Keep a disconnected slot from filling the disk: Electric's guidance, and the shape service
    // turns an invalidated slot into must-refetch for every shape.
    max_slot_wal_keep_size: '4GB',
    logging_collector: 'off',
    ...(opts.unsafeFast ? { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' } : {}),
    ...opts.settings,
  };
  const out: string[] = [];
  for (const [k, v] of Object.entries(s)) {
    if (!/^[a-z_.]+$/.test(k) || /['\\\s]/.test(v)) throw new PgClusterError('start_failed', `Bad server setting ${k}=${v}`);
    out.push(`-c ${k}=${v === '' ? "''" : v}`);
  }
  return out;
}

/**
 * Start (or adopt) a private PostgreSQL cluster in `opts.dataDir`.
 *
 * @returns the running cluster with an admin connection URL over TCP on 127.0.0.1.
 * @throws PgBinariesMissingError when initdb/pg_ctl are not installed;
 *   PgClusterError (`unsupported_version`, `os_user`, `data_dir`, `initdb_failed`, `start_failed`).
 */
export async function startPgCluster(opts: PgClusterOptions): Promise<PgCluster> {
  const binDir = findPgBinDir(opts.binDir);
  const major = pgMajorVersion(binDir);
  if (major < MIN_PG_MAJOR) {
    throw new PgClusterError(
      'unsupported_version',
      `PostgreSQL ${major} found in ${binDir}; ${MIN_PG_MAJOR} or newer is required (install postgresql-${MIN_PG_MAJOR}).`,
    );
  }
  const dataDir = resolve(opts.dataDir);
  const runAs = isRoot() ? lookupOsUser(opts.osUser ?? 'postgres') : null;

  if (!existsSync(dataDir)) mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (!statSync(dataDir).isDirectory()) throw new PgClusterError('data_dir', `${dataDir} is not a directory.`);
  if (runAs) {
    ensureTraversable(dataDir, runAs);
    chownSync(dataDir, runAs.uid, runAs.gid);
  }
  chmodSync(dataDir, 0o700);

  const initialised = existsSync(join(dataDir, 'PG_VERSION'));
  let creds: Credentials;
  if (initialised) {
    const v = Number(readFileSync(join(dataDir, 'PG_VERSION'), 'utf8').trim());
    if (v !== major) {
      throw new PgClusterError(
        'unsupported_version',
        `${dataDir} holds a PostgreSQL ${v} cluster but the binaries in ${binDir} are ${major}; install postgresql-${v} or set PG_BIN.`,
      );
    }
    creds = readCredentials(dataDir);
  } else {
    if (readdirSync(dataDir).length > 0) {
      throw new PgClusterError('data_dir', `${dataDir} is neither empty nor a PostgreSQL data directory; choose an empty directory.`);
    }
    creds = await initCluster(dataDir, binDir, runAs, opts.superuser ?? 'postgres');
  }

  const logFile = join(dataDir, LOG_FILE);
  let port = runningServer(dataDir, binDir, runAs);
  const adopted = port !== null;
  if (port === null) {
    let lastErr = '';
    for (let attempt = 0; attempt < 3 && port === null; attempt++) {
      const p = opts.port ?? (await freePort());
      const r = await run(
        join(binDir, 'pg_ctl'),
        ['start', '-w', '-t', '60', '-D', dataDir, '-l', logFile, '-o', serverSettings(dataDir, p, opts).join(' ')],
        runAs,
        {
          timeoutMs: 90_000,
          detachedStdio: true,
        },
      );
      if (r.code === 0) port = p;
      else {
        lastErr = tail(logFile);
        if (opts.port !== undefined || !/could not (bind|create)|Address already in use/i.test(lastErr)) break;
      }
    }
    if (port === null) throw new PgClusterError('start_failed', `pg_ctl start failed for ${dataDir}. Server log (${logFile}):\n${lastErr}`);
  }

  const superuser = creds.superuser;
  const password = creds.password;
  const urlFor = (database: string, role?: { user: string; password: string }): string => {
    const u = encodeURIComponent(role?.user ?? superuser);
    const pw = encodeURIComponent(role?.password ?? password);
    return `postgres://${u}:${pw}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
  };

  let stopped = false;
  const stopArgs = ['stop', '-w', '-t', '60', '-m', 'fast', '-D', dataDir];
  const stopSync = (): void => {
    if (stopped) return;
    stopped = true;
    const [cmd, argv] = runAs ? ['runuser', ['-u', runAs.name, '--', join(binDir, 'pg_ctl'), ...stopArgs]] : [join(binDir, 'pg_ctl'), stopArgs];
    spawnSync(cmd, argv, { stdio: 'ignore' });
  };
  // Ctrl-C / SIGTERM end a Node process without 'exit' handlers unless someone listens: when nobody
  // else handles the signal, stop the cluster and re-raise it; otherwise the owner's shutdown ends
  // the process and the 'exit' handler stops the cluster.
  const onSignal = (sig: NodeJS.Signals): void => {
    if (process.listenerCount(sig) > 1) return;
    stopSync();
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    process.kill(process.pid, sig);
  };
  if (opts.stopOnExit !== false) {
    process.once('exit', stopSync);
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  }

  return {
    url: urlFor('postgres'),
    host: '127.0.0.1',
    port,
    superuser,
    password,
    dataDir,
    logFile,
    major,
    adopted,
    urlFor,
    async stop() {
      if (stopped) return;
      stopped = true;
      process.removeListener('exit', stopSync);
      process.removeListener('SIGINT', onSignal);
      process.removeListener('SIGTERM', onSignal);
      if (!existsSync(join(dataDir, 'postmaster.pid'))) return;
      const r = await run(join(binDir, 'pg_ctl'), stopArgs, runAs, { timeoutMs: 90_000 });
      if (r.code !== 0 && existsSync(join(dataDir, 'postmaster.pid'))) {
        throw new PgClusterError('stop_failed', `pg_ctl stop failed for ${dataDir} (exit ${r.code}): ${r.out.trim()}`);
      }
    },
  };
}
