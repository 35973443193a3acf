/**
 * `npm run cli -- mcp-token …`: tokens that bind an MCP client (`npm run mcp`) to one user.
 *
 *   mcp-token [issue] --db PATH --as EMAIL [--label L] [--expires-days N]
 *       Issue a token for that user. Prints it ONCE (stdout, JSON); only its hash is stored.
 *   mcp-token list --db PATH --as EMAIL [--all]
 *       Your tokens (no secrets); --all lists the org's tokens (needs user.manage).
 *   mcp-token revoke --db PATH --as EMAIL --id TOKEN_ID
 *       Revoke one of your tokens (or any of the org's with user.manage). A running MCP server
 *       using it stops working at its next request.
 *
 * Exit codes as the rest of the CLI (main/cli/exit-codes.ts).
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { ErrorPayload } from '../../models/errors';
import { exitCodeFor } from './exit-codes';
import { toErrorPayload } from '../../models/errors';
import { openDb } from '../data/db';
import { findUserByEmail } from '../data/identity';
import { issueMcpToken, listTokensFor, revokeTokenAs } from '../mcp/tokens';

/** Where the command writes (injectable for in-process tests). */
export interface McpTokenIo {
  out(text: string): void;
  err(text: string): void;
}

const STD_IO: McpTokenIo = {
  out: (t) => process.stdout.write(`${t}\n`),
  err: (t) => process.stderr.write(`${t}\n`),
};

const USAGE =
  'Usage: mcp-token [issue] --db PATH --as EMAIL [--label L] [--expires-days N] | mcp-token list --db PATH --as EMAIL [--all] | mcp-token revoke --db PATH --as EMAIL --id TOKEN_ID';

function fail(io: McpTokenIo, p: ErrorPayload): number {
  io.err(JSON.stringify(p));
  return exitCodeFor(p.code);
}

/**
 * Run the `mcp-token` command. Never calls process.exit.
 * @param argv arguments after `mcp-token`
 * @returns the exit code
 */
export async function mcpTokenCommand(argv: string[], io: McpTokenIo = STD_IO): Promise<number> {
  const [first, ...rest] = argv;
  const sub = first === 'issue' || first === 'list' || first === 'revoke' ? first : 'issue';
  const args = sub === first ? rest : argv;
  let values: { db?: string; as?: string; label?: string; 'expires-days'?: string; all?: boolean; id?: string };
  try {
    ({ values } = parseArgs({
      args,
      options: {
        db: { type: 'string' },
        as: { type: 'string' },
        label: { type: 'string' },
        'expires-days': { type: 'string' },
        all: { type: 'boolean', default: false },
        id: { type: 'string' },
      },
      strict: true,
    }));
  } catch (e) {
    return fail(io, { code: 'Validation', message: `${e instanceof Error ? e.message : 'Bad arguments'}. ${USAGE}` });
  }
  if (!values.db) return fail(io, { code: 'Validation', message: `--db PATH is required. ${USAGE}` });
  if (!values.as) return fail(io, { code: 'Validation', message: `--as EMAIL is required (the user the token acts as). ${USAGE}` });
  if (sub === 'revoke' && !values.id) return fail(io, { code: 'Validation', message: `--id TOKEN_ID is required (see \`mcp-token list\`). ${USAGE}` });
  let expiresInDays: number | undefined;
  if (values['expires-days'] !== undefined) {
    expiresInDays = Number(values['expires-days']);
    if (!Number.isInteger(expiresInDays))
      return fail(io, { code: 'Validation', message: `--expires-days must be a whole number of days, got "${values['expires-days']}".` });
  }
  const path = resolve(values.db);
  if (!existsSync(path)) return fail(io, { code: 'NotFound', message: `No database at ${path}.` });
  const db = openDb(path);
  try {
    const user = findUserByEmail(db, values.as);
    if (!user) return fail(io, { code: 'NotFound', message: `No user with email "${values.as}" in ${path}.` });
    if (sub === 'list') {
      io.out(JSON.stringify(listTokensFor(db, user.id, { all: values.all ?? false }), null, 2));
      return 0;
    }
    if (sub === 'revoke') {
      io.out(JSON.stringify(revokeTokenAs(db, user.id, values.id!), null, 2));
      return 0;
    }
    const { token, info } = issueMcpToken(db, user.id, {
      ...(values.label !== undefined ? { label: values.label } : {}),
      ...(expiresInDays !== undefined ? { expiresInDays } : {}),
    });
    io.out(
      JSON.stringify(
        {
          token,
          ...info,
          note: 'Shown once: copy it into your MCP client configuration now. Only its hash is stored; revoke it with `mcp-token revoke --id`.',
        },
        null,
        2,
      ),
    );
    return 0;
  } catch (e) {
    return fail(io, toErrorPayload(e));
  } finally {
    db.close();
  }
}
