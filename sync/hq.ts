/**
 * `npm run hq`: the HQ server (write API, shape proxy, health) with everything it needs.
 *
 *   npm run hq [-- --port 5180] [--host 127.0.0.1] [--data-dir .data/hq] [--no-demo]
 *   npm run hq -- enrolment-code --as EMAIL [--data-dir .data/hq]
 *   npm run hq -- organisation --of EMAIL [--name NAME] [--budget-cap USD|none] [--data-dir .data/hq]
 *
 * The second form is the operator's: it prints a one-time HQ sign-in code for the account EMAIL
 * (sync/auth/enrolment-codes.ts), e.g. the first owner's, who then issues everyone else's from
 * their own device. The third changes the organisation's name and monthly assistant budget, which
 * HQ holds for every enrolled device (sync/write/organisation.ts). Both reach the same database as
 * the server (the embedded cluster under --data-dir, adopted when the server is running, or
 * DATABASE_URL + HQ_APP_DATABASE_URL).
 *
 * Embedded default (no DATABASE_URL): a private Postgres cluster under `<data-dir>/pg` (installed
 * PostgreSQL binaries, wal_level=logical, run as an unprivileged OS user when we are root; stopped
 * on exit), the admin step (roles, database) with passwords kept in `<data-dir>/roles.json`
 * (mode 0600), the migrations, the demo club on first start, and the embedded shape service
 * (logs under `<data-dir>/shapes`, reachable only through HQ's proxy).
 *
 * With DATABASE_URL: that server. DATABASE_URL is the owner role's URL (migrations, seed);
 * HQ_APP_DATABASE_URL the app role's (every request); HQ_REPLICATION_DATABASE_URL the replication
 * role's (the embedded shape service; not needed with ELECTRIC_URL). HQ_ADMIN_DATABASE_URL, when
 * set, runs the admin step first with those roles' passwords. ELECTRIC_URL (+ ELECTRIC_SECRET)
 * sends shapes to a real Electric service instead of the embedded one (HQ_ELECTRIC_PUBLICATION
 * names the publication it reads, created here; HQ_REPLICATION_SLOT the slot /readyz watches).
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { AppError } from '../models/errors';
import { DEMO_EMAILS, DEMO_ORG_NAME, DEMO_PIN, DEMO_SECOND_ORG_NAME } from '../models/seed/demo';
import { runAdminSetup, withCredentials, withDatabase } from './pg/admin';
import { startPgCluster, type PgCluster } from './pg/cluster';
import { createPool, ensurePublication, migrateHq } from './pg/db';
import { issueOperatorEnrolmentCode, type IssuedEnrolmentCode } from './auth/enrolment-codes';
import { checkOrganisationChange, setOrganisationAsOperator, type OrganisationAtHq, type OrganisationChange } from './write/organisation';
import { HQ_PUBLICATION, HQ_ROLES, type HqRolePasswords } from './pg/roles';
import { initialiseHq } from './seed';
import { startHqServer, type HqServer } from './server';
import { shapeMemoryBudget, startShapeServer, type ShapeServer } from './shape/server';
import { SHAPE_LIMITS, shapeLimitsFromEnv, type ShapeLimits } from './http/shape-registry';

/** The HQ's default port. */
export const HQ_DEFAULT_PORT = 5180;
/** Database name of the embedded installation. */
export const EMBEDDED_DATABASE = 'athlete_hq';
/** Replication slot of the embedded shape service (what /readyz watches). */
export const EMBEDDED_SLOT = 'hq_shapes';

/** Options of {@link startHq}. */
export interface StartHqOptions {
  port?: number;
  host?: string;
  /** Embedded mode's state directory. @default .data/hq */
  dataDir?: string;
  /** Seed the demo club on first start. @default true */
  demo?: boolean;
  /** Environment (DATABASE_URL, HQ_APP_DATABASE_URL, …). @default process.env */
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
}

/** A running HQ with its parts. */
export interface RunningHq {
  server: HqServer;
  shapes: ShapeServer | null;
  cluster: PgCluster | null;
  /** What the database holds, for the banner. */
  database: string;
  seeded: boolean;
  stop(): Promise<void>;
}

/**
 * A configuration error (environment or command line): what is missing and what to set. Code
 * `NotConfigured`; `hq` exits 2 on it.
 */
export class HqConfigError extends AppError {
  constructor(message: string) {
    super({ code: 'NotConfigured', message });
    this.name = 'HqConfigError';
  }
}

function loadOrCreatePasswords(file: string): HqRolePasswords {
  if (existsSync(file)) {
    const p = JSON.parse(readFileSync(file, 'utf8')) as Partial<HqRolePasswords>;
    if (p.owner && p.app && p.replication) return { owner: p.owner, app: p.app, replication: p.replication };
  }
  const p: HqRolePasswords = {
    owner: randomBytes(18).toString('base64url'),
    app: randomBytes(18).toString('base64url'),
    replication: randomBytes(18).toString('base64url'),
  };
  writeFileSync(file, JSON.stringify(p) + '\n', { mode: 0o600 });
  chmodSync(file, 0o600);
  return p;
}

function allowTraverse(dir: string): void {
  const stop = resolve('.');
  for (let d = dir; d === dir || (d.startsWith(stop + '/') && d !== stop); d = dirname(d)) {
    const mode = statSync(d).mode & 0o777;
    if ((mode & 0o001) === 0) chmodSync(d, mode | 0o001);
  }
}

function passwordOf(url: string, name: string): string {
  const p = decodeURIComponent(new URL(url).password);
  if (!p) throw new HqConfigError(`${name} must carry the role's password (postgres://role:password@host/db).`);
  return p;
}

/** Start Postgres (embedded or given), migrate, seed, the shape service and the HQ server. */
export async function startHq(opts: StartHqOptions = {}): Promise<RunningHq> {
  const env = opts.env ?? process.env;
  let shapeMemory: number | undefined;
  try {
    shapeMemory = shapeMemoryBudget(env.SHAPE_MAX_MEMORY_MB);
  } catch (e) {
    throw new HqConfigError((e as Error).message.replace('--max-memory-mb / ', ''));
  }
  let shapeLimits: Partial<ShapeLimits>;
  try {
    shapeLimits = shapeLimitsFromEnv(env);
  } catch (e) {
    throw new HqConfigError((e as Error).message);
  }
  const log = opts.log ?? ((l: string) => console.log(l));
  let cluster: PgCluster | null = null;
  let shapes: ShapeServer | null = null;
  let ownerUrl: string;
  let appUrl: string;
  let replicationUrl: string | null;
  let database: string;
  const dataDir = resolve(opts.dataDir ?? '.data/hq');
  try {
    if (env.DATABASE_URL) {
      ownerUrl = env.DATABASE_URL;
      appUrl = env.HQ_APP_DATABASE_URL ?? '';
      replicationUrl = env.HQ_REPLICATION_DATABASE_URL ?? null;
      if (!appUrl)
        throw new HqConfigError(`With DATABASE_URL (the ${HQ_ROLES.owner} role), set HQ_APP_DATABASE_URL too (the ${HQ_ROLES.app} role the requests run as).`);
      if (!replicationUrl && !env.ELECTRIC_URL)
        throw new HqConfigError(
          `Set HQ_REPLICATION_DATABASE_URL (the ${HQ_ROLES.replication} role) for the embedded shape service, or ELECTRIC_URL to use Electric.`,
        );
      database = decodeURIComponent(new URL(ownerUrl).pathname.slice(1));
      if (env.HQ_ADMIN_DATABASE_URL) {
        await runAdminSetup(env.HQ_ADMIN_DATABASE_URL, database, {
          owner: passwordOf(ownerUrl, 'DATABASE_URL'),
          app: passwordOf(appUrl, 'HQ_APP_DATABASE_URL'),
          replication: replicationUrl ? passwordOf(replicationUrl, 'HQ_REPLICATION_DATABASE_URL') : randomBytes(18).toString('base64url'),
        });
      }
    } else {
      mkdirSync(dataDir, { recursive: true, mode: 0o700 });
      // The server's OS user (postgres, when we are root) must be able to pass through (search,
      // not list) the folders down to its data dir: add o+x to those under the working directory.
      allowTraverse(dataDir);
      cluster = await startPgCluster({ dataDir: join(dataDir, 'pg') });
      const passwords = loadOrCreatePasswords(join(dataDir, 'roles.json'));
      database = EMBEDDED_DATABASE;
      await runAdminSetup(cluster.url, database, passwords);
      const base = withDatabase(cluster.url, database);
      ownerUrl = withCredentials(base, HQ_ROLES.owner, passwords.owner);
      appUrl = withCredentials(base, HQ_ROLES.app, passwords.app);
      replicationUrl = withCredentials(base, HQ_ROLES.replication, passwords.replication);
    }

    const applied = await migrateHq(ownerUrl);
    if (applied.length) log(`hq: migrated (${applied.join(', ')})`);
    const init = await initialiseHq(ownerUrl, { demo: opts.demo !== false });

    let shapeUrl: string;
    let shapeSecret: string | null;
    let slotName: string | null;
    if (env.ELECTRIC_URL) {
      // Electric with ELECTRIC_MANUAL_TABLE_PUBLISHING=true streams only the tables its publication
      // lists; HQ (the tables' owner) creates that publication with the synced tables.
      const publication = env.HQ_ELECTRIC_PUBLICATION ?? 'electric_publication_default';
      if (await ensurePublication(ownerUrl, publication, HQ_PUBLICATION)) log(`hq: created publication ${publication} for Electric`);
      shapeUrl = env.ELECTRIC_URL;
      shapeSecret = env.ELECTRIC_SECRET ?? null;
      slotName = env.HQ_REPLICATION_SLOT ?? null;
    } else {
      shapeSecret = randomBytes(24).toString('base64url');
      shapes = await startShapeServer({
        databaseUrl: replicationUrl!,
        storageDir: join(dataDir, 'shapes'),
        port: 0,
        host: '127.0.0.1',
        secret: shapeSecret,
        slot: EMBEDDED_SLOT,
        publication: HQ_PUBLICATION,
        // The proxy releases shapes idle this long; the service drops them too, and a restart resumes no older one.
        idleShapeMs: SHAPE_LIMITS.idleMs,
        ...(shapeMemory !== undefined ? { maxMemoryBytes: shapeMemory } : {}),
        log: (l) => log(l),
      });
      shapeUrl = shapes.url;
      slotName = EMBEDDED_SLOT;
    }
    const server = await startHqServer({
      appUrl,
      shapeUrl,
      shapeSecret,
      slotName,
      port: opts.port ?? HQ_DEFAULT_PORT,
      host: opts.host ?? '127.0.0.1',
      shapeLimits,
      log: (l) => log(l),
    });
    const running: RunningHq = {
      server,
      shapes,
      cluster,
      database,
      seeded: init.initialised && init.seeded,
      async stop() {
        await server.close().catch(() => undefined);
        await shapes?.close().catch(() => undefined);
        await cluster?.stop();
      },
    };
    return running;
  } catch (e) {
    await shapes?.close().catch(() => undefined);
    await cluster?.stop().catch(() => undefined);
    throw e;
  }
}

/**
 * Run `fn` with a one-connection pool of HQ's app role, as the operator: on DATABASE_URL
 * (+ HQ_APP_DATABASE_URL), or on the embedded installation under `dataDir` (its cluster adopted
 * when the server runs, else started for this call and stopped after). Migrates first, as a start does.
 * @throws HqConfigError (no installation under `dataDir`; DATABASE_URL without HQ_APP_DATABASE_URL)
 */
async function asOperator<T>(opts: { dataDir?: string; env?: NodeJS.ProcessEnv }, fn: (pool: ReturnType<typeof createPool>) => Promise<T>): Promise<T> {
  const env = opts.env ?? process.env;
  let cluster: PgCluster | null = null;
  let ownerUrl: string;
  let appUrl: string;
  if (env.DATABASE_URL) {
    ownerUrl = env.DATABASE_URL;
    appUrl = env.HQ_APP_DATABASE_URL ?? '';
    if (!appUrl) throw new HqConfigError(`With DATABASE_URL (the ${HQ_ROLES.owner} role), set HQ_APP_DATABASE_URL too (the ${HQ_ROLES.app} role).`);
  } else {
    const dataDir = resolve(opts.dataDir ?? '.data/hq');
    const rolesFile = join(dataDir, 'roles.json');
    if (!existsSync(join(dataDir, 'pg', 'PG_VERSION')) || !existsSync(rolesFile))
      throw new HqConfigError(
        `There is no HQ installation under ${dataDir}. Start the HQ server once (npm run hq -- --data-dir ${opts.dataDir ?? '.data/hq'}), or give the --data-dir it uses.`,
      );
    cluster = await startPgCluster({ dataDir: join(dataDir, 'pg'), stopOnExit: false });
    const passwords = loadOrCreatePasswords(rolesFile);
    const base = withDatabase(cluster.url, EMBEDDED_DATABASE);
    ownerUrl = withCredentials(base, HQ_ROLES.owner, passwords.owner);
    appUrl = withCredentials(base, HQ_ROLES.app, passwords.app);
  }
  try {
    await migrateHq(ownerUrl);
    const pool = createPool(appUrl, 1);
    try {
      return await fn(pool);
    } finally {
      await pool.end();
    }
  } finally {
    if (cluster && !cluster.adopted) await cluster.stop();
  }
}

/**
 * Issue a one-time HQ sign-in code for the account `email` as the operator (see {@link asOperator}
 * for where it reaches the database).
 * @throws HqConfigError (no installation under `dataDir`; DATABASE_URL without HQ_APP_DATABASE_URL),
 *   NotFound (no account with that email), Forbidden (deactivated or unlinked athlete account)
 */
export async function operatorEnrolmentCode(opts: { email: string; dataDir?: string; env?: NodeJS.ProcessEnv }): Promise<IssuedEnrolmentCode> {
  return asOperator(opts, (pool) => issueOperatorEnrolmentCode(pool, opts.email));
}

/**
 * Change the name and/or monthly assistant budget of the organisation of the account `ofEmail` as
 * the operator (sync/write/organisation.ts; see {@link asOperator} for where it reaches the
 * database). Every enrolled device of the club shows it after its next sync.
 * @throws HqConfigError, ValidationError (nothing to change; name or budget out of range), NotFound
 */
export async function operatorSetOrganisation(opts: {
  ofEmail: string;
  change: OrganisationChange;
  dataDir?: string;
  env?: NodeJS.ProcessEnv;
}): Promise<OrganisationAtHq> {
  checkOrganisationChange(opts.change);
  return asOperator(opts, (pool) => setOrganisationAsOperator(pool, opts.ofEmail, opts.change));
}

const ORG_USAGE = `Usage: npm run hq -- organisation --of EMAIL [--name NAME] [--budget-cap USD|none] [--data-dir .data/hq]
Changes the name and/or the monthly assistant budget (USD, or none for no cap) of the organisation
the account EMAIL belongs to. Every enrolled device of the club shows it after its next sync (on an
enrolled device they are HQ's and cannot be changed there). Reaches the embedded installation under
--data-dir, or DATABASE_URL.`;

/**
 * Parse `organisation`'s arguments. Returns the options, or a usage error to print with exit 2.
 */
export function parseOrganisationArgs(argv: string[]): { ofEmail: string; change: OrganisationChange; dataDir?: string } | { help: true } | { error: string } {
  const values: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const [flag, inline] = a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    if (flag === '--help' || flag === '-h') return { help: true };
    if (!['--of', '--name', '--budget-cap', '--data-dir'].includes(flag!)) return { error: `unknown option ${a}` };
    const value = inline ?? argv[++i];
    // A following option is not a value (`--name --budget-cap 5` must not name the club "--budget-cap").
    if (value === undefined || (inline === undefined && value.startsWith('--'))) return { error: `${flag} needs a value` };
    if (values[flag!] !== undefined) return { error: `${flag} is given twice` };
    values[flag!] = value;
  }
  const ofEmail = values['--of']?.trim();
  if (!ofEmail) return { error: '--of EMAIL is required (an account of the organisation, e.g. its owner)' };
  const change: OrganisationChange = {};
  if (values['--name'] !== undefined) change.name = values['--name'];
  const cap = values['--budget-cap'];
  if (cap !== undefined) {
    if (cap.trim().toLowerCase() === 'none') change.budgetCapUsd = null;
    else if (/^\d+(\.\d+)?$/.test(cap.trim())) change.budgetCapUsd = Number(cap.trim());
    else return { error: `--budget-cap takes an amount in USD (e.g. 250 or 99.50) or none, not "${cap}"` };
  }
  if (change.name === undefined && change.budgetCapUsd === undefined) return { error: 'give --name NAME and/or --budget-cap USD|none' };
  return { ofEmail, change, ...(values['--data-dir'] !== undefined ? { dataDir: values['--data-dir'] } : {}) };
}

async function organisationMain(argv: string[]): Promise<void> {
  const args = parseOrganisationArgs(argv);
  if ('help' in args) {
    console.log(ORG_USAGE);
    return;
  }
  if ('error' in args) {
    console.error(`hq organisation: ${args.error}\n${ORG_USAGE}`);
    process.exitCode = 2;
    return;
  }
  try {
    const org = await operatorSetOrganisation(args);
    const cap = org.budget_cap_usd === null ? 'no cap' : `${org.budget_cap_usd.toFixed(2)} USD a month`;
    console.log(`Organisation ${org.id}: "${org.name}", assistant budget ${cap} (version ${org.version}). Devices show it after their next sync.`);
  } catch (e) {
    const err = e as Error & { code?: string };
    console.error(`hq organisation: ${err.message}`);
    process.exitCode = err instanceof HqConfigError || err.code === 'Validation' ? 2 : err.code === 'NotFound' ? 4 : 1;
  }
}

const CODE_USAGE = `Usage: npm run hq -- enrolment-code --as EMAIL [--data-dir .data/hq]
Prints a one-time HQ sign-in code for that account (valid 24 hours, once). Signing a device in to HQ
needs it with the email and PIN. Reaches the embedded installation under --data-dir, or DATABASE_URL.`;

async function codeMain(argv: string[]): Promise<void> {
  let email: string | undefined;
  let dataDir: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const [flag, inline] = a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    const value = inline ?? argv[i + 1];
    if (flag === '--help' || flag === '-h') {
      console.log(CODE_USAGE);
      return;
    }
    if ((flag === '--as' || flag === '--data-dir') && value !== undefined) {
      if (inline === undefined) i++;
      if (flag === '--as') email = value;
      else dataDir = value;
    } else {
      console.error(`hq enrolment-code: ${flag === '--as' || flag === '--data-dir' ? `${flag} needs a value` : `unknown option ${a}`}\n${CODE_USAGE}`);
      process.exit(2);
    }
  }
  if (!email?.trim()) {
    console.error(`hq enrolment-code: --as EMAIL is required\n${CODE_USAGE}`);
    process.exit(2);
  }
  try {
    const issued = await operatorEnrolmentCode({ email, dataDir });
    console.log(
      [
        `HQ sign-in code for ${issued.user.display_name} (${issued.user.email}, ${issued.user.role}): ${issued.code}`,
        `  valid once, on one device, until ${issued.expires_at}; a newer code for this account replaces it.`,
        `  Enter it with the email and PIN in Settings → Sync, or: npm run cli -- enrol --db FILE --hq URL --as ${issued.user.email} --pin PIN --code ${issued.code}`,
      ].join('\n'),
    );
  } catch (e) {
    const err = e as Error & { code?: string };
    console.error(`hq enrolment-code: ${err.message}`);
    process.exit(err instanceof HqConfigError ? 2 : err.code === 'NotFound' ? 4 : err.code === 'Forbidden' ? 3 : 1);
  }
}

const USAGE = `Usage: npm run hq -- [--port ${HQ_DEFAULT_PORT}] [--host 127.0.0.1] [--data-dir .data/hq] [--no-demo]
       npm run hq -- enrolment-code --as EMAIL [--data-dir .data/hq]
       npm run hq -- organisation --of EMAIL [--name NAME] [--budget-cap USD|none] [--data-dir .data/hq]
Starts the HQ server: POST /v1/devices, POST /v1/enrolment-codes, POST /v1/changesets, GET /v1/shape, /healthz, /readyz, /health/deps.
Without DATABASE_URL it runs its own Postgres under --data-dir (stopped on exit).
The second form prints a one-time HQ sign-in code for an account (the first owner's, say).`;

function parseArgs(argv: string[]): { port: number; host: string; dataDir: string; demo: boolean; help: boolean } {
  const out = { port: HQ_DEFAULT_PORT, host: '127.0.0.1', dataDir: '.data/hq', demo: true, help: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const [flag, inline] = a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new HqConfigError(`${flag} needs a value`);
      return v;
    };
    if (flag === '--help' || flag === '-h') out.help = true;
    else if (flag === '--port') {
      out.port = Number(value());
      if (!Number.isInteger(out.port) || out.port < 0 || out.port > 65535) throw new HqConfigError('--port must be 0–65535');
    } else if (flag === '--host') out.host = value();
    else if (flag === '--data-dir') out.dataDir = value();
    else if (flag === '--no-demo') out.demo = false;
    else throw new HqConfigError(`unknown option ${a}`);
  }
  return out;
}

async function main(): Promise<void> {
  if (process.argv[2] === 'enrolment-code') return codeMain(process.argv.slice(3));
  if (process.argv[2] === 'organisation') return organisationMain(process.argv.slice(3));
  let args: ReturnType<typeof parseArgs>;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`hq: ${(e as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  if (args.help) {
    console.log(USAGE);
    return;
  }
  let hq: RunningHq;
  try {
    hq = await startHq({ port: args.port, host: args.host, dataDir: args.dataDir, demo: args.demo });
  } catch (e) {
    const err = e as Error & { code?: string };
    if (err.code === 'EADDRINUSE') console.error(`hq: port ${args.port} on ${args.host} is in use; choose another with --port.`);
    else console.error(`hq: ${err.message}`);
    process.exit(err instanceof HqConfigError ? 2 : 1);
  }
  const url = hq.server.url;
  const lines = [
    `HQ server listening on ${url}/`,
    `  database: ${hq.cluster ? `embedded PostgreSQL ${hq.cluster.major} in ${hq.cluster.dataDir} (database ${hq.database})` : `${hq.database} at DATABASE_URL`}`,
    hq.seeded ? `  seeded:   the demo club (${DEMO_ORG_NAME}, ${DEMO_SECOND_ORG_NAME}); every PIN is ${DEMO_PIN}` : '  seeded:   no (already initialised)',
    `  shapes:   ${hq.shapes ? 'embedded shape service (reached only through HQ)' : `Electric at ${process.env.ELECTRIC_URL}`}`,
    `  sign a device in: a one-time code first (npm run hq -- enrolment-code --as ${DEMO_EMAILS.owner}${args.dataDir !== '.data/hq' ? ` --data-dir ${args.dataDir}` : ''}), then`,
    `    curl -s -X POST ${url}/v1/devices -H 'content-type: application/json' -d '{"email":"${DEMO_EMAILS.owner}","pin":"${DEMO_PIN}","code":"<code>","name":"Office laptop"}'`,
    `  health:   ${url}/healthz  ${url}/readyz  ${url}/health/deps`,
    args.host === '127.0.0.1'
      ? '  (only this machine can reach it; --host 0.0.0.0 serves the clinic network)'
      : `  (listening on ${args.host}: reachable from the network)`,
    'Press Ctrl+C to stop.',
  ];
  console.log(lines.join('\n'));
  let stopping = false;
  const shutdown = (): void => {
    if (stopping) return;
    stopping = true;
    console.log('hq: stopping…');
    hq.stop().then(
      () => process.exit(0),
      (e: Error) => {
        console.error(`hq: stop failed: ${e.message}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) void main();
