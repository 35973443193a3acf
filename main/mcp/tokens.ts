/**
 * MCP client tokens: issue (shown once, only the SHA-256 hash stored), verify, list, revoke.
 * A token binds an MCP server process to one local user; the org is always the token's user's
 * org, never anything the MCP client says.
 */
import { createHash, randomBytes } from 'node:crypto';
import { uuidv7 } from 'uuidv7';
import { AppError, Forbidden, NotFound, ValidationError } from '../../models/errors';
import { hasPermission } from '../../models/roles';
import type { User } from '../../models/records';
import type { Db } from '../data/db';
import { accountStamp, findUserById } from '../data/identity';
import type { McpTokenRow } from '../data/mcp';
import { findMcpToken, findMcpTokenByHash, insertMcpToken, listMcpTokens, revokeMcpToken, touchMcpToken } from '../data/mcp';

/** Every token starts with this (recognisable in logs and secret scanners). */
export const MCP_TOKEN_PREFIX = 'aimcp_';
const TOKEN_RE = /^aimcp_[A-Za-z0-9_-]{43}$/;
/** Longest allowed lifetime, in days. */
export const MAX_TOKEN_DAYS = 3650;

/** SHA-256 (hex) of a token: what is stored and looked up. */
export function hashMcpToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A token's public view (no hash, no token). */
export interface McpTokenInfo {
  id: string;
  label: string;
  user_id: string;
  hint: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  /** `account_changed`: its user's role, linked athlete, PIN or active flag changed since it was issued; it no longer works. */
  state: 'active' | 'revoked' | 'expired' | 'account_changed';
}

function stateOf(row: McpTokenRow, now: Date, stampNow?: string | null): McpTokenInfo['state'] {
  if (row.revoked_at) return 'revoked';
  if (row.expires_at && Date.parse(row.expires_at) <= now.getTime()) return 'expired';
  if (row.account_stamp !== null && stampNow !== undefined && stampNow !== row.account_stamp) return 'account_changed';
  return 'active';
}

/** Public view of a stored row; `stampNow` (its user's `accountStamp` now), when given, marks a token whose account changed. */
export function tokenInfo(row: McpTokenRow, now: Date = new Date(), stampNow?: string | null): McpTokenInfo {
  return {
    id: row.id,
    label: row.label,
    user_id: row.user_id,
    hint: row.token_hint,
    created_at: row.created_at,
    expires_at: row.expires_at,
    revoked_at: row.revoked_at,
    last_used_at: row.last_used_at,
    state: stateOf(row, now, stampNow),
  };
}

function activeUser(db: Db, userId: string): User {
  const u = findUserById(db, userId);
  if (!u) throw new Forbidden('Your account was not found.');
  if (!u.active) throw new Forbidden('Your account is deactivated. Ask a club administrator to reactivate it.');
  return u;
}

/**
 * Issue a token for `userId` (a user issues their own). The token is returned once; only its
 * hash is stored. `expiresInDays` omitted: no expiry.
 * @throws Forbidden (inactive user or no `kinetix.use`), Validation (bad label or expiry)
 */
export function issueMcpToken(
  db: Db,
  userId: string,
  opts: { label?: string; expiresInDays?: number; now?: Date } = {},
): { token: string; info: McpTokenInfo } {
  const user = activeUser(db, userId);
  if (!hasPermission(user.role, 'kinetix.use')) throw new Forbidden(`Your role (${user.role}) cannot use Kinetix tools.`);
  const label = (opts.label ?? 'MCP client').trim();
  if (!label || label.length > 80) throw new ValidationError('The label must be 1–80 characters.', [{ path: 'label', message: '1–80 characters' }]);
  const now = opts.now ?? new Date();
  let expiresAt: string | null = null;
  if (opts.expiresInDays !== undefined) {
    const d = opts.expiresInDays;
    if (!Number.isFinite(d) || d <= 0 || d > MAX_TOKEN_DAYS)
      throw new ValidationError(`The expiry must be between 1 and ${MAX_TOKEN_DAYS} days.`, [{ path: 'expires_days', message: `1–${MAX_TOKEN_DAYS}` }]);
    expiresAt = new Date(now.getTime() + d * 86_400_000).toISOString();
  }
  const token = `${MCP_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
  const row = {
    id: uuidv7(),
    org_id: user.org_id,
    user_id: user.id,
    label,
    token_hash: hashMcpToken(token),
    token_hint: token.slice(0, MCP_TOKEN_PREFIX.length + 4),
    created_at: now.toISOString(),
    created_by: user.id,
    expires_at: expiresAt,
    account_stamp: accountStamp(db, user.id),
  };
  insertMcpToken(db, row);
  return { token, info: tokenInfo({ ...row, revoked_at: null, revoked_by: null, last_used_at: null }, now) };
}

/** Raised when a token does not authenticate (one message for unknown, malformed, revoked, expired or a deactivated user). */
export class McpTokenRefused extends AppError {
  /** Why, for the operator's stderr (never includes the token). */
  readonly reason: 'malformed' | 'unknown' | 'revoked' | 'expired' | 'user_inactive' | 'account_changed';
  constructor(reason: McpTokenRefused['reason']) {
    const text: Record<McpTokenRefused['reason'], string> = {
      malformed: 'The MCP token is not in the expected format (aimcp_…). Issue one with `npm run cli -- mcp-token --db PATH --as EMAIL`.',
      unknown: 'The MCP token is not known to this database. Check --db, or issue a new token with `npm run cli -- mcp-token --db PATH --as EMAIL`.',
      revoked: 'The MCP token was revoked. Issue a new one with `npm run cli -- mcp-token --db PATH --as EMAIL`.',
      expired: 'The MCP token has expired. Issue a new one with `npm run cli -- mcp-token --db PATH --as EMAIL`.',
      user_inactive: 'The user this MCP token belongs to is deactivated or removed. Ask a club administrator.',
      account_changed:
        'The account this MCP token belongs to changed since the token was issued (its role, linked athlete, PIN or active state), so the token no longer works. Sign in again and issue a new one with `npm run cli -- mcp-token --db PATH --as EMAIL`.',
    };
    super({ code: 'Unauthenticated', message: text[reason] });
    this.reason = reason;
  }
}

/** The user and token a verified token binds to. */
export interface McpBinding {
  tokenId: string;
  userId: string;
  orgId: string;
}

/**
 * Verify a token now: known hash, not revoked, not expired, its user present, active and in the
 * token's org, and the account as it was at issue (main/data/identity.ts `accountStamp`: role,
 * linked athlete, PIN, active flag; issue 13 re-review: a token outlived a demotion or a relink
 * that ends sessions and runs). Tokens issued before migration 0017 were stamped by it.
 * Called at start and again on every tool call.
 * @throws McpTokenRefused
 */
export function verifyMcpToken(db: Db, token: string, now: Date = new Date()): McpBinding {
  if (!TOKEN_RE.test(token)) throw new McpTokenRefused('malformed');
  const row = findMcpTokenByHash(db, hashMcpToken(token));
  if (!row) throw new McpTokenRefused('unknown');
  const state = stateOf(row, now);
  if (state !== 'active') throw new McpTokenRefused(state);
  const u = findUserById(db, row.user_id);
  if (!u || !u.active || u.org_id !== row.org_id) throw new McpTokenRefused('user_inactive');
  if (row.account_stamp === null || row.account_stamp !== accountStamp(db, u.id)) throw new McpTokenRefused('account_changed');
  return { tokenId: row.id, userId: row.user_id, orgId: row.org_id };
}

/** Record a successful start with this token (last used). */
export function markMcpTokenUsed(db: Db, tokenId: string, now: Date = new Date()): void {
  touchMcpToken(db, tokenId, now.toISOString());
}

/** The acting user's own tokens, or every token of the org for a role with `user.manage`. */
export function listTokensFor(db: Db, userId: string, opts: { all?: boolean; now?: Date } = {}): McpTokenInfo[] {
  const u = activeUser(db, userId);
  if (opts.all && !hasPermission(u.role, 'user.manage'))
    throw new Forbidden(`Your role (${u.role}) does not have user.manage; you can list your own tokens only.`);
  const stamps = new Map<string, string | null>();
  const stampOf = (id: string): string | null => {
    if (!stamps.has(id)) stamps.set(id, accountStamp(db, id));
    return stamps.get(id) ?? null;
  };
  return listMcpTokens(db, u.org_id, opts.all ? undefined : u.id).map((r) => tokenInfo(r, opts.now, stampOf(r.user_id)));
}

/**
 * Revoke a token: your own, or any of your org's with `user.manage`. Another org's token, or
 * another user's without the permission, is not found. Revoking twice is harmless.
 * @throws NotFound, Forbidden
 */
export function revokeTokenAs(db: Db, userId: string, tokenId: string, now: Date = new Date()): McpTokenInfo {
  const u = activeUser(db, userId);
  const row = findMcpToken(db, u.org_id, tokenId);
  if (!row || (row.user_id !== u.id && !hasPermission(u.role, 'user.manage'))) throw new NotFound('MCP token');
  revokeMcpToken(db, u.org_id, tokenId, u.id, now.toISOString());
  return tokenInfo(findMcpToken(db, u.org_id, tokenId) ?? row, now, accountStamp(db, row.user_id));
}
