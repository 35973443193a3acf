/**
 * The command line, for people and tests, without the UI: `npm run cli -- <command> …`.
 * Every verb goes through the service layer (`callVerb`) as a real user; nothing here touches SQL.
 *
 * Exit codes: 0 ok · 1 other error · 2 Validation · 3 Forbidden · 4 NotFound · 5 Conflict.
 * Results are JSON on stdout; errors are the typed error payload (models/errors.ts) as JSON on stderr.
 */
import { isRealDate } from '../../models/records';
import { existsSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { ErrorPayload } from '../../models/errors';
import { EXIT_CODES_LINE, exitCodeFor } from './exit-codes';
import { AppError, toErrorPayload } from '../../models/errors';
import type { Db } from '../data/db';
import { openDb } from '../data/db';
import { findUserByEmail, listAllUsers } from '../data/identity';
import { isDatabaseEmpty, seedDemo } from '../data/seed';
import { z } from 'zod';
import { VERB_NAMES, VERB_SPECS, isVerbName } from '../../models/verbs';
import { callVerbByName, VERBS } from '../services';
import { mcpTokenCommand } from './mcp-token';
import { enrolCommand, syncCommand } from './sync';

/** Where the CLI writes (injectable so it can run in-process). */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
}

const STD_IO: CliIo = {
  out: (t) => process.stdout.write(t.endsWith('\n') ? t : `${t}\n`),
  err: (t) => process.stderr.write(t.endsWith('\n') ? t : `${t}\n`),
};

const HELP = `Athlete Intelligence CLI

Usage: npm run cli -- <command> [options]

Commands:
  seed  --db PATH [--seed N] [--today YYYY-MM-DD] [--force]
        Create the database file and seed the demo clubs (deterministic for a given seed and
        today). Refuses a database that already holds data unless --force (which deletes it first).
  users --db PATH [--json]
        List every user: email, role, organisation, linked athlete.
  call  --db PATH --as EMAIL VERB [JSON] [--idempotency-key KEY]
        Call a service verb as that user. Prints the JSON result on stdout; on error prints the
        typed error JSON on stderr and exits with the code of its error (every command: ${EXIT_CODES_LINE}).
  verbs [VERB] [--json]
        List the service verbs with their permission and kind (read / write). With --json, or
        for one VERB: also each verb's input and output as JSON Schema (from models/verbs.ts).
  ask   …
        Ask the assistant (when installed: main/cli/ask.ts).
  mcp-token [issue|list|revoke] --db PATH --as EMAIL [--label L] [--expires-days N] [--id ID] [--all]
        Issue (printed once; only its hash is stored), list or revoke the token that binds an MCP
        client (\`npm run mcp -- --db PATH --token T\`) to that user.
  enrol --db FILE --hq URL --as EMAIL --pin PIN --code CODE [--name DEVICE]
        Sign this device file in at the club's HQ server (creates FILE when missing: migrated, empty,
        no demo seed). CODE: a one-time HQ sign-in code, from a club owner or administrator (their
        Settings) or, for the first owner, \`npm run hq -- enrolment-code --as EMAIL\` on the HQ
        machine. The device token is stored encrypted under the machine key.
  sync  --db FILE [--watch]
        One sync pass: upload the outbox, then pull every shape until up-to-date; prints what moved.
        --watch stays live (long-poll shapes, uploader with back-off) until Ctrl+C. Exit codes:
        6 Unavailable (HQ unreachable), 7 Unauthenticated (PIN or token refused), 8 NotConfigured (not enrolled),
        10 RateLimited (PIN lockout, HQ's limits: wait, then try again).
  help  This text.

Examples:
  npm run cli -- seed --db ./.data/demo.sqlite
  npm run cli -- users --db ./.data/demo.sqlite
  npm run cli -- call --db ./.data/demo.sqlite --as physio@kestrelvale.test athletes.list '{"limit":5}'
`;

/** A CLI failure: the typed error printed on stderr as JSON, with the process exit code. */
class CliError extends AppError {
  constructor(
    payload: ErrorPayload,
    readonly exitCode = exitCodeFor(payload.code),
  ) {
    super(payload);
  }
}

function usage(message: string): never {
  throw new CliError({ code: 'Validation', message: `${message} Run \`npm run cli -- help\` for usage.` }, 2);
}

function requireDbPath(v: string | undefined): string {
  if (!v) usage('--db PATH is required.');
  return resolve(v);
}

/** Open an existing database (never creates one: a typo must not produce an empty file). */
function openExisting(path: string): Db {
  if (!existsSync(path)) throw new CliError({ code: 'NotFound', message: `No database at ${path}. Create one with \`npm run cli -- seed --db ${path}\`.` }, 4);
  return openDb(path);
}

function seedCmd(args: string[], io: CliIo): number {
  const { values } = parseArgs({
    args,
    options: { db: { type: 'string' }, seed: { type: 'string' }, today: { type: 'string' }, force: { type: 'boolean', default: false } },
    strict: true,
  });
  const path = requireDbPath(values.db);
  const seed = values.seed === undefined ? 1 : Number(values.seed);
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) usage(`--seed must be a non-negative integer, got "${values.seed}".`);
  if (values.today !== undefined && !isRealDate(values.today)) usage(`--today must be a date as YYYY-MM-DD, got "${values.today}".`);
  if (existsSync(path)) {
    const db = openDb(path);
    const empty = isDatabaseEmpty(db);
    db.close();
    if (!empty && !values.force) {
      throw new CliError(
        {
          code: 'Conflict',
          message: `${path} already holds data; refusing to seed over it. Pass --force to delete it and seed afresh, or choose another --db path.`,
        },
        5,
      );
    }
    if (!empty) for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
  }
  const db = openDb(path);
  try {
    const s = seedDemo(db, { seed, ...(values.today ? { today: values.today } : {}) });
    io.out(JSON.stringify({ db: path, seed: s.seed, today: s.today, org_id: s.orgId, second_org_id: s.secondOrgId, counts: s.counts }, null, 2));
  } finally {
    db.close();
  }
  return 0;
}

function usersCmd(args: string[], io: CliIo): number {
  const { values } = parseArgs({ args, options: { db: { type: 'string' }, json: { type: 'boolean', default: false } }, strict: true });
  const db = openExisting(requireDbPath(values.db));
  try {
    const rows = listAllUsers(db).map((u) => ({
      email: u.email,
      role: u.role,
      org: u.org_name,
      linked_athlete: u.linked_athlete_name ?? (u.linked_athlete_id ? u.linked_athlete_id : null),
      active: u.active,
      display_name: u.display_name,
    }));
    if (values.json) io.out(JSON.stringify(rows, null, 2));
    else
      io.out(
        table(
          ['email', 'role', 'org', 'linked athlete'],
          rows.map((r) => [r.email, r.active ? r.role : `${r.role} (inactive)`, r.org, r.linked_athlete ?? (r.role === 'athlete' ? '(unlinked)' : '')]),
        ),
      );
  } finally {
    db.close();
  }
  return 0;
}

function callCmd(args: string[], io: CliIo): number {
  const { values, positionals } = parseArgs({
    args,
    options: { db: { type: 'string' }, as: { type: 'string' }, 'idempotency-key': { type: 'string' } },
    allowPositionals: true,
    strict: true,
  });
  const path = requireDbPath(values.db);
  if (!values.as) usage('--as EMAIL is required (the user to act as; see `users`).');
  const [verb, json, ...extra] = positionals;
  if (!verb) usage('VERB is required (see `verbs`).');
  if (!isVerbName(verb)) {
    const near = VERB_NAMES.filter((n) => n.split('.')[0] === verb.split('.')[0]);
    throw new CliError({
      code: 'NotFound',
      message: `Verb "${verb}" was not found.${near.length ? ` Verbs of "${verb.split('.')[0]}": ${near.join(', ')}.` : ''} List them with \`npm run cli -- verbs\`.`,
    });
  }
  if (extra.length > 0) usage(`Unexpected arguments after the JSON input: ${extra.join(' ')}. Quote the JSON as one argument.`);
  let input: unknown = {};
  if (json !== undefined) {
    try {
      input = JSON.parse(json);
    } catch (e) {
      throw new CliError({
        code: 'Validation',
        message: `The input is not valid JSON (${(e as Error).message}).`,
        issues: [{ path: '(input)', message: 'not valid JSON' }],
      });
    }
  }
  const db = openExisting(path);
  try {
    const user = findUserByEmail(db, values.as);
    if (!user)
      throw new CliError({ code: 'NotFound', message: `No user with email "${values.as}" in ${path}. List them with \`npm run cli -- users --db ${path}\`.` });
    const result = callVerbByName({ db, userId: user.id }, VERBS, verb, input, { idempotencyKey: values['idempotency-key'] ?? null });
    io.out(JSON.stringify(result, null, 2));
  } finally {
    db.close();
  }
  return 0;
}

function verbsCmd(args: string[], io: CliIo): number {
  const { values, positionals } = parseArgs({ args, options: { json: { type: 'boolean', default: false } }, allowPositionals: true, strict: true });
  const [one, ...extra] = positionals;
  if (extra.length > 0) usage(`Unexpected arguments: ${extra.join(' ')}.`);
  if (one !== undefined && !isVerbName(one))
    throw new CliError({ code: 'NotFound', message: `Verb "${one}" was not found. List them with \`npm run cli -- verbs\`.` });
  const names = one !== undefined ? [one] : VERB_NAMES;
  const rows = names.map((name) => {
    const v = VERB_SPECS[name];
    return { name, kind: v.kind, permission: v.permission, description: v.description };
  });
  if (values.json || one !== undefined) {
    // With --json (or for one verb): each verb's input and output as JSON Schema, from the verb map.
    const schema = (s: z.ZodType, io: 'input' | 'output') => {
      const js = z.toJSONSchema(s, { io, unrepresentable: 'any' }) as Record<string, unknown>;
      delete js.$schema;
      return js;
    };
    const full = rows.map((r) => ({ ...r, input: schema(VERB_SPECS[r.name].input, 'input'), output: schema(VERB_SPECS[r.name].output, 'output') }));
    io.out(JSON.stringify(one !== undefined ? full[0] : full, null, 2));
  } else
    io.out(
      table(
        ['verb', 'kind', 'permission', 'description'],
        rows.map((r) => [r.name, r.kind, r.permission, r.description]),
      ),
    );
  return 0;
}

/** The `ask` command lives in main/cli/ask.ts when the assistant is installed; loaded on demand. */
async function askCmd(args: string[], io: CliIo): Promise<number> {
  const here = fileURLToPath(new URL('.', import.meta.url));
  const file = ['ask.ts', 'ask.js', 'ask.mjs'].map((f) => resolve(here, f)).find((f) => existsSync(f));
  if (!file) throw new CliError({ code: 'NotFound', message: 'The `ask` command is not installed in this build (main/cli/ask.ts is missing).' }, 1);
  const spec = pathToFileURL(file).href;
  const mod = (await import(/* @vite-ignore */ spec)) as { askCommand?: (argv: string[]) => Promise<number> };
  if (typeof mod.askCommand !== 'function') throw new CliError({ code: 'Internal', message: `${file} does not export askCommand(argv).` }, 1);
  void io;
  return mod.askCommand(args);
}

function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/**
 * Run one CLI command. Returns the exit code; never calls process.exit.
 * @param argv arguments after the script name (`['call', '--db', …]`)
 */
export async function runCli(argv: string[], io: CliIo = STD_IO): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'seed':
        return seedCmd(rest, io);
      case 'users':
        return usersCmd(rest, io);
      case 'call':
        return callCmd(rest, io);
      case 'verbs':
        return verbsCmd(rest, io);
      case 'ask':
        return await askCmd(rest, io);
      case 'mcp-token':
        return await mcpTokenCommand(rest, io);
      case 'enrol':
        return await enrolCommand(rest, io);
      case 'sync':
        return await syncCommand(rest, io);
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        io.out(HELP);
        return 0;
      default:
        usage(`Unknown command "${command}".`);
    }
  } catch (e) {
    if (e instanceof CliError) {
      io.err(JSON.stringify(e.toJSON()));
      return e.exitCode;
    }
    if (e instanceof Error && 'code' in e && typeof (e as { code: unknown }).code === 'string' && (e as { code: string }).code.startsWith('ERR_PARSE_ARGS')) {
      io.err(JSON.stringify({ code: 'Validation', message: `${e.message}. Run \`npm run cli -- help\` for usage.` } satisfies ErrorPayload));
      return 2;
    }
    const payload = toErrorPayload(e);
    if (payload.code === 'Internal' && e instanceof Error) payload.message = `${payload.message} (${e.message})`;
    io.err(JSON.stringify(payload));
    return exitCodeFor(payload.code);
  }
}

const isMain = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  // Exit once the command is done and stdout/stderr are flushed, rather than when the event loop
  // empties: @electric-sql/client 1.5.28 keeps a 60 s timer (UpToDateTracker's throttled save) after
  // every shape up-to-date, which would hold `sync` open for a minute after its report.
  const exit = (code: number): void => {
    process.exitCode = code;
    process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
  };
  runCli(process.argv.slice(2)).then(exit, (e: unknown) => {
    process.stderr.write(`${JSON.stringify(toErrorPayload(e))}\n`);
    exit(1);
  });
}
