/**
 * The Athlete Intelligence MCP server (stdio): `npm run mcp -- --db PATH --token T`
 * (or the token in `ATHLETE_MCP_TOKEN`, which keeps it out of the process list).
 *
 * Bound to the one local user of a token issued with `npm run cli -- mcp-token`; a bad, revoked
 * or expired token (or a deactivated user) refuses to start: a message on stderr, exit code 7
 * (`Unauthenticated`). Exit codes are the CLI's (main/cli/exit-codes.ts): one failure, one number
 * in both programs.
 * stdout carries only the MCP protocol; every diagnostic goes to stderr.
 * See session.ts for what the tools do.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { toErrorPayload } from '../../models/errors';
import { exitCodeFor } from '../cli/exit-codes';
import type { Db } from '../data/db';
import { openDb } from '../data/db';
import { findOrganization } from '../data/identity';
import type { LogFn } from '../kinetix/registry';
import { McpSession } from './session';
import { markMcpTokenUsed, McpTokenRefused } from './tokens';

/**
 * Exit codes of the server process: the CLI's map (main/cli/exit-codes.ts), so a script sees the
 * same number for the same failure from either program: a usage error 2 (`Validation`), a
 * missing database file 4 (`NotFound`), a bad, revoked or expired token or a deactivated user 7
 * (`Unauthenticated`), a role that may not use MCP 3 (`Forbidden`), anything else 1.
 */
export const MCP_EXIT = {
  ok: 0,
  other: 1,
  usage: exitCodeFor('Validation'),
  noDatabase: exitCodeFor('NotFound'),
  unauthenticated: exitCodeFor('Unauthenticated'),
  forbidden: exitCodeFor('Forbidden'),
} as const;

/** Server name and version announced to clients. */
export const MCP_SERVER_INFO = { name: 'athlete-intelligence', version: '0.1.0' } as const;

const USAGE =
  'Usage: npm run mcp -- --db PATH --token TOKEN   (or set ATHLETE_MCP_TOKEN instead of --token)\nIssue a token with: npm run cli -- mcp-token --db PATH --as EMAIL [--label L] [--expires-days N]';

const stderrLog: LogFn = (line, fields) => {
  process.stderr.write(`${line}${fields ? ` ${JSON.stringify(fields)}` : ''}\n`);
};

/** Build the SDK server around a session (tools/list and tools/call only). */
export function createMcpServer(session: McpSession, instructions?: string): McpServer {
  const server = new McpServer(MCP_SERVER_INFO, { capabilities: { tools: { listChanged: false } }, ...(instructions ? { instructions } : {}) });
  server.server.setRequestHandler(ListToolsRequestSchema, () => {
    try {
      return { tools: session.listTools() };
    } catch (e) {
      const p = toErrorPayload(e);
      throw new McpError(ErrorCode.InvalidRequest, `${p.code}: ${p.message}`);
    }
  });
  // Only the tool name and arguments are read; `_meta` and anything else the client sends is ignored.
  server.server.setRequestHandler(CallToolRequestSchema, (req) => session.callTool(req.params.name, req.params.arguments ?? {}));
  return server;
}

/**
 * Start the stdio server for `argv` (arguments after the script name). Resolves once connected
 * with a `close` function, or with an exit code when it refused to start.
 */
export async function startMcpServer(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number } | { close: () => Promise<void> }> {
  let values: { db?: string; token?: string; help?: boolean };
  try {
    values = parseArgs({
      args: argv,
      options: { db: { type: 'string' }, token: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
    }).values;
  } catch (e) {
    process.stderr.write(`athlete-intelligence mcp: ${(e as Error).message}\n${USAGE}\n`);
    return { code: MCP_EXIT.usage };
  }
  if (values.help) {
    process.stderr.write(`${USAGE}\n`);
    return { code: MCP_EXIT.ok };
  }
  const token = (values.token ?? env.ATHLETE_MCP_TOKEN ?? '').trim();
  if (!values.db || !token) {
    process.stderr.write(
      `athlete-intelligence mcp: ${!values.db ? '--db PATH is required' : 'a token is required (--token or ATHLETE_MCP_TOKEN)'}.\n${USAGE}\n`,
    );
    return { code: MCP_EXIT.usage };
  }
  const path = resolve(values.db);
  if (!existsSync(path)) {
    process.stderr.write(`athlete-intelligence mcp: no database at ${path}. Point --db at the app's database file.\n`);
    return { code: MCP_EXIT.noDatabase };
  }
  let db: Db;
  try {
    db = openDb(path);
  } catch (e) {
    process.stderr.write(`athlete-intelligence mcp: cannot open ${path}: ${(e as Error).message}\n`);
    return { code: exitCodeFor(toErrorPayload(e).code) };
  }
  let session: McpSession;
  try {
    session = new McpSession({ db, token, log: stderrLog });
    markMcpTokenUsed(db, session.binding.tokenId);
  } catch (e) {
    db.close();
    if (e instanceof McpTokenRefused) {
      process.stderr.write(`athlete-intelligence mcp: refused to start: ${e.message}\n`);
      return { code: MCP_EXIT.unauthenticated };
    }
    const p = toErrorPayload(e);
    process.stderr.write(`athlete-intelligence mcp: refused to start: ${p.code}: ${p.code === 'Internal' && e instanceof Error ? e.message : p.message}\n`);
    return { code: exitCodeFor(p.code) };
  }
  const actor = session.actor();
  const org = findOrganization(db, actor.orgId);
  const instructions = `Athlete Intelligence clinic data for ${org?.name ?? 'one organisation'}, acting as ${actor.displayName} (${actor.role}). Read tools return data. Write tools never apply a change: they return a proposal id and the rows before → after, and the change waits for a person to approve it in the app.`;
  const server = createMcpServer(session, instructions);
  const transport = new StdioServerTransport();
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    try {
      await server.close();
    } finally {
      db.close();
    }
  };
  server.server.onclose = () => void close();
  await server.connect(transport);
  process.stdin.once('end', () => void close());
  stderrLog('athlete-intelligence mcp: ready on stdio', { session: session.sessionId, role: actor.role });
  return { close };
}

const isMain = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  startMcpServer(process.argv.slice(2)).then(
    (r) => {
      if ('code' in r) process.exitCode = r.code;
      else {
        for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => void r.close().finally(() => process.exit(0)));
      }
    },
    (e: unknown) => {
      process.stderr.write(`athlete-intelligence mcp: ${toErrorPayload(e).message}\n`);
      process.exitCode = MCP_EXIT.other;
    },
  );
}
