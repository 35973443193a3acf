/** MCP tokens on a real SQLite file: issued once, only the hash stored, revocable, expiring; the CLI command. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli';
import type { Db } from '../data/db';
import { openDb } from '../data/db';
import { findMcpTokenByHash, listMcpTokens } from '../data/mcp';
import type { SeedSummary } from '../data/seed';
import { DEMO_EMAILS, seedDemo } from '../data/seed';
import { sqlite } from '../data/sqlite';
import { callVerb } from '../services';
import { setUserPin } from '../services/admin';
import { hashMcpToken, issueMcpToken, listTokensFor, McpTokenRefused, revokeTokenAs, verifyMcpToken } from './tokens';

let dir: string;
let path: string;
let db: Db;
let seed: SeedSummary;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ai-mcp-tok-'));
  path = join(dir, 'clinic.sqlite');
  db = openDb(path);
  seed = seedDemo(db, { seed: 2 });
});

afterAll(() => {
  db?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof McpTokenRefused) return e.reason;
    throw e;
  }
  return 'accepted';
}

describe('MCP tokens', () => {
  it('stores only the hash and binds to the issuing user and org', () => {
    const { token, info } = issueMcpToken(db, seed.userIds.physio, { label: 'Claude Desktop' });
    expect(token).toMatch(/^aimcp_[A-Za-z0-9_-]{43}$/);
    const row = findMcpTokenByHash(db, hashMcpToken(token))!;
    expect(row).toMatchObject({ id: info.id, user_id: seed.userIds.physio, org_id: seed.orgId, label: 'Claude Desktop', revoked_at: null, expires_at: null });
    expect(Object.values(row)).not.toContain(token);
    expect(JSON.stringify(listMcpTokens(db, seed.orgId))).not.toContain(token.slice(10));
    expect(verifyMcpToken(db, token)).toEqual({ tokenId: info.id, userId: seed.userIds.physio, orgId: seed.orgId });
  });

  it('refuses malformed, unknown, revoked, expired tokens and deactivated users', () => {
    expect(refusal(() => verifyMcpToken(db, 'nope'))).toBe('malformed');
    expect(refusal(() => verifyMcpToken(db, `aimcp_${'x'.repeat(43)}`))).toBe('unknown');
    const now = new Date();
    const exp = issueMcpToken(db, seed.userIds.doctor, { expiresInDays: 1, now });
    expect(refusal(() => verifyMcpToken(db, exp.token, new Date(now.getTime() + 86_400_000 - 1)))).toBe('accepted');
    expect(refusal(() => verifyMcpToken(db, exp.token, new Date(now.getTime() + 86_400_000)))).toBe('expired');
    const rev = issueMcpToken(db, seed.userIds.doctor);
    revokeTokenAs(db, seed.userIds.doctor, rev.info.id);
    expect(refusal(() => verifyMcpToken(db, rev.token))).toBe('revoked');
    const s = issueMcpToken(db, seed.userIds.analyst);
    callVerb({ db, userId: seed.userIds.owner }, 'users.update', { id: seed.userIds.analyst, active: false });
    expect(refusal(() => verifyMcpToken(db, s.token))).toBe('user_inactive');
    expect(() => issueMcpToken(db, seed.userIds.analyst)).toThrow(/deactivated/);
    callVerb({ db, userId: seed.userIds.owner }, 'users.update', { id: seed.userIds.analyst, active: true });
    expect(refusal(() => verifyMcpToken(db, s.token))).toBe('accepted');
  });

  it('stops working once its account changes: role, PIN, linked athlete (issue 13 re-review: tokens outlived what ends sessions and runs)', () => {
    const ss = seed.userIds.sports_scientist;
    const owner = { db, userId: seed.userIds.owner };
    const byRole = issueMcpToken(db, ss);
    expect(refusal(() => verifyMcpToken(db, byRole.token))).toBe('accepted');
    callVerb(owner, 'users.update', { id: ss, role: 'analyst' });
    // before: accepted, so an MCP client kept calling with the demoted account's old token
    expect(refusal(() => verifyMcpToken(db, byRole.token))).toBe('account_changed');
    expect(listTokensFor(db, ss).find((t) => t.id === byRole.info.id)?.state).toBe('account_changed');
    // A token issued after the change works.
    const fresh = issueMcpToken(db, ss);
    expect(refusal(() => verifyMcpToken(db, fresh.token))).toBe('accepted');
    // A PIN set by an administrator ends it too (whoever set it can sign in as the account).
    setUserPin(owner, { user_id: ss, pin: '9876' });
    expect(refusal(() => verifyMcpToken(db, fresh.token))).toBe('account_changed');
    // An athlete account relinked to another athlete's record.
    const athleteUser = seed.userIds.athlete;
    const linked = issueMcpToken(db, athleteUser);
    callVerb(owner, 'users.update', { id: athleteUser, linked_athlete_id: seed.injectionAthleteId });
    expect(refusal(() => verifyMcpToken(db, linked.token))).toBe('account_changed');
    expect(new McpTokenRefused('account_changed').message).toMatch(/changed since the token was issued.*issue a new one/i);
  });

  it('a token issued before migration 0017 is stamped by the migration, so a change after the upgrade ends it (issue 13 re-review B2)', () => {
    const p = join(dir, 'pre-0017.sqlite');
    const old = openDb(p, { migrateUpTo: 16 });
    const s2 = seedDemo(old, { seed: 3 });
    const token = `aimcp_${'L'.repeat(43)}`;
    sqlite(old)
      .prepare(
        'INSERT INTO mcp_token (id, org_id, user_id, label, token_hash, token_hint, created_at, created_by, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL)',
      )
      .run('legacy-token', s2.orgId, s2.userIds.athlete, 'Old client', hashMcpToken(token), token.slice(0, 10), new Date().toISOString(), s2.userIds.athlete);
    old.close();
    const upgraded = openDb(p);
    try {
      expect(findMcpTokenByHash(upgraded, hashMcpToken(token))!.account_stamp).toMatch(/^[0-9a-f]{64}$/);
      expect(refusal(() => verifyMcpToken(upgraded, token))).toBe('accepted');
      // the owner relinks the account after the upgrade: before, the first use stamped the changed account and accepted it
      callVerb({ db: upgraded, userId: s2.userIds.owner }, 'users.update', { id: s2.userIds.athlete, linked_athlete_id: s2.injectionAthleteId });
      expect(refusal(() => verifyMcpToken(upgraded, token))).toBe('account_changed');
      // a row with no stamp at all is refused, never stamped on use
      sqlite(upgraded).prepare("UPDATE mcp_token SET account_stamp = NULL WHERE id = 'legacy-token'").run();
      expect(refusal(() => verifyMcpToken(upgraded, token))).toBe('account_changed');
    } finally {
      upgraded.close();
    }
  });

  it("revoking: own tokens, or the org's with user.manage; another user's is not found", () => {
    const t = issueMcpToken(db, seed.userIds.coach);
    expect(() => revokeTokenAs(db, seed.userIds.physio, t.info.id)).toThrow(/not found/);
    expect(listTokensFor(db, seed.userIds.physio).map((x) => x.id)).not.toContain(t.info.id);
    expect(() => listTokensFor(db, seed.userIds.physio, { all: true })).toThrow(/user.manage/);
    expect(revokeTokenAs(db, seed.userIds.owner, t.info.id).state).toBe('revoked');
    expect(revokeTokenAs(db, seed.userIds.coach, t.info.id).state).toBe('revoked');
  });

  it('npm run cli -- mcp-token issues (printed once), lists and revokes', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (t: string) => void out.push(t), err: (t: string) => void err.push(t) };
    expect(await runCli(['mcp-token', '--db', path, '--as', DEMO_EMAILS.strength_coach, '--label', 'Cursor', '--expires-days', '30'], io)).toBe(0);
    const issued = JSON.parse(out.pop()!);
    expect(issued.token).toMatch(/^aimcp_/);
    expect(issued).toMatchObject({ label: 'Cursor', state: 'active', user_id: seed.userIds.strength_coach });
    expect(verifyMcpToken(db, issued.token).userId).toBe(seed.userIds.strength_coach);
    expect(await runCli(['mcp-token', 'list', '--db', path, '--as', DEMO_EMAILS.strength_coach], io)).toBe(0);
    const listed = out.pop()!;
    expect(listed).toContain(issued.id);
    expect(listed).not.toContain(issued.token);
    expect(await runCli(['mcp-token', 'revoke', '--db', path, '--as', DEMO_EMAILS.strength_coach, '--id', issued.id], io)).toBe(0);
    expect(refusal(() => verifyMcpToken(db, issued.token))).toBe('revoked');
    expect(await runCli(['mcp-token', '--db', path, '--as', 'nobody@example.test'], io)).toBe(4);
    expect(await runCli(['mcp-token', '--db', path, '--as', DEMO_EMAILS.physio, '--expires-days', 'soon'], io)).toBe(2);
    expect(await runCli(['mcp-token', 'revoke', '--db', path, '--as', DEMO_EMAILS.physio, '--id', issued.id], io)).toBe(4);
    expect(err.join('\n')).not.toContain(issued.token);
  });
});
