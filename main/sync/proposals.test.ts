/**
 * Changes waiting for an owner travel between devices, with real parts (a real Postgres, the HQ
 * server with its embedded shape service, SQLite device files, DeviceSync): a fee rise over 20 %
 * proposed by the admin on the clinic laptop reaches HQ (`hq_proposal`) and the owner's own laptop,
 * whose Approvals list shows it with who proposed it, when, from which device, and the same diff
 * and content hash; the owner approves (or declines) there; HQ applies it once and the laptop sees
 * the outcome, its pending state cleared. Approved on two devices: one write. Approved after the
 * row changed: one visible conflict, the proposal failed everywhere. Scoping: an athlete's device
 * never receives proposals, a Larchfield device never receives Kestrel Vale's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_EMAILS, DEMO_PIN, DEMO_SECOND_EMAILS } from '../../models/seed/demo';
import { openDb, type Db } from '../data/db';
import { findUserByEmail } from '../data/identity';
import { sqlite } from '../data/sqlite';
import { refusedProposalEvents } from '../data/sync';
import { approveProposal, declineProposal, getProposal, listProposals, proposeChangeset } from '../kinetix/proposals';
import { callVerb } from '../services';
import { DeviceSync } from './engine';
import { havePg, useHqStack } from './testing/hq-stack';

const FAST = { backoff: { initialMs: 50, maxMs: 500 }, streamBackoff: { initialMs: 100, maxMs: 500 }, pollMs: 50 };
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe.skipIf(!havePg)('changes waiting for an owner, across devices through HQ', () => {
  const hq = useHqStack();
  const engines: DeviceSync[] = [];
  afterAll(async () => {
    for (const e of engines) await e.stop();
  });
  async function enrol(email: string, name: string): Promise<{ db: Db; sync: DeviceSync }> {
    const d = mkdtempSync(join(tmpdir(), 'ai-proposal-'));
    dirs.push(d);
    const db = openDb(join(d, 'device.sqlite'));
    const sync = await DeviceSync.enrol(db, { hqUrl: hq.url, email, pin: DEMO_PIN, code: await hq.code(email), deviceName: name }, FAST);
    engines.push(sync);
    await sync.syncOnce();
    return { db, sync };
  }
  const userId = (db: Db, email: string): string => findUserByEmail(db, email)!.id;
  /**
   * Sync `device` until `done()` (bounded): what another device uploaded reaches HQ's shape log
   * through logical replication, which can lag HQ's answer, so one pass may end before it.
   */
  async function syncUntil(device: DeviceSync, what: string, done: () => boolean, timeoutMs = 30_000): Promise<void> {
    const start = Date.now();
    for (;;) {
      await device.syncOnce();
      if (done()) return;
      if (Date.now() - start > timeoutMs) throw new Error(`timed out syncing until ${what}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  const hasProposal = (db: Db, id: string): boolean => sqlite(db).prepare('SELECT 1 FROM changeset_proposal WHERE id = ?').get(id) !== undefined;
  const proposalStatus = (db: Db, id: string): unknown => sqlite(db).prepare('SELECT status FROM changeset_proposal WHERE id = ?').pluck().get(id);
  async function hqPrice(id: string): Promise<{ price_cents: number; version: number }> {
    const [r] = await hq.query<{ price_cents: number; version: number }>(hq.summary.orgId, 'SELECT price_cents, version FROM rate_item WHERE id = $1', [id]);
    return r!;
  }
  async function hqProposal(id: string): Promise<Record<string, unknown> | undefined> {
    const [r] = await hq.query(
      hq.summary.orgId,
      'SELECT user_id, device_name, status, decided_by, decided_device_name, outcome_json, content_hash, tables FROM hq_proposal WHERE id = $1',
      [id],
    );
    return r;
  }
  const localPrice = (db: Db, id: string): number => sqlite(db).prepare('SELECT price_cents FROM rate_item WHERE id = ?').pluck().get(id) as number;

  /** The admin proposes a +25 % rise of the `n`th fee on `db` (needs an owner). */
  function proposeRise(db: Db, n: number): { id: string; hash: string; itemId: string; after: number; version: number } {
    const item = sqlite(db).prepare('SELECT id, version, price_cents FROM rate_item WHERE deleted_at IS NULL ORDER BY code LIMIT 1 OFFSET ?').get(n) as {
      id: string;
      version: number;
      price_cents: number;
    };
    const after = Math.round(item.price_cents * 1.25);
    const p = proposeChangeset(db, {
      userId: userId(db, DEMO_EMAILS.admin),
      source: 'page',
      toolName: 'rates.updateItem',
      title: 'Change a fee',
      permission: 'rates.write',
      planned: {
        verb: 'rates.updateItem',
        summary: 'Raise a fee by 25 %',
        changes: [
          { op: 'update', table: 'rate_item', id: item.id, version: item.version, before: { price_cents: item.price_cents }, after: { price_cents: after } },
        ],
      },
    });
    expect(p.status).toBe('needs_owner');
    return { id: p.id, hash: p.contentHash, itemId: item.id, after, version: item.version };
  }

  let laptop: { db: Db; sync: DeviceSync };
  let owner: { db: Db; sync: DeviceSync };

  it("an admin's proposal on the clinic laptop reaches the owner's laptop through HQ; the owner approves there; HQ applies it once; the laptop sees it applied", async () => {
    laptop = await enrol(DEMO_EMAILS.admin, 'Clinic laptop');
    owner = await enrol(DEMO_EMAILS.owner, 'Owner laptop');
    const adminId = userId(laptop.db, DEMO_EMAILS.admin);
    const ownerId = userId(owner.db, DEMO_EMAILS.owner);

    const made = proposeRise(laptop.db, 0);
    const before = await hqPrice(made.itemId);
    expect(laptop.sync.status().pending_uploads).toBe(1); // the proposal event waits for HQ
    await laptop.sync.syncOnce();
    expect(laptop.sync.status().pending_uploads).toBe(0);
    expect(await hqProposal(made.id)).toMatchObject({
      user_id: adminId,
      device_name: 'Clinic laptop',
      status: 'needs_owner',
      content_hash: made.hash,
      tables: ',rate_item,',
    });
    expect(await hqPrice(made.itemId)).toEqual(before); // proposing writes nothing

    // The owner's laptop: the same proposal, with who, when, from which device, the same diff and hash.
    await syncUntil(owner.sync, 'the proposal reaches the owner', () => hasProposal(owner.db, made.id));
    const mine = getProposal(laptop.db, adminId, made.id);
    const seen = listProposals(owner.db, ownerId, { status: 'needs_owner' }).find((p) => p.id === made.id);
    expect(seen).toBeDefined();
    expect(seen).toMatchObject({
      userId: adminId,
      status: 'needs_owner',
      verdict: 'needs_owner',
      approverRole: 'owner',
      contentHash: mine.contentHash,
      changes: mine.changes,
      summary: mine.summary,
      title: mine.title,
      originDevice: { name: 'Clinic laptop' },
    });
    expect(Date.parse(seen!.createdAt)).toBe(Date.parse(mine.createdAt));
    expect(mine.originDevice).toBeNull();
    expect(seen!.decisions.map((d) => d.code)).toContain('numeric_change_needs_owner');
    // Only an owner may approve it there; the proposer's own view is on the laptop.
    expect(listProposals(owner.db, userId(owner.db, DEMO_EMAILS.physio)).some((p) => p.id === made.id)).toBe(false);

    // 2. The owner approves on their laptop; it uploads; HQ applies it once, approved by the owner.
    approveProposal(owner.db, { approverUserId: ownerId, changesetId: made.id, contentHash: seen!.contentHash });
    expect(localPrice(owner.db, made.itemId)).toBe(made.after);
    const r = await owner.sync.syncOnce();
    expect(r).toMatchObject({ uploaded: 1, rejected: 0 });
    expect(await hqPrice(made.itemId)).toEqual({ price_cents: made.after, version: before.version + 1 });
    expect(await hqProposal(made.id)).toMatchObject({ status: 'applied', decided_by: ownerId, decided_device_name: 'Owner laptop' });
    const [act] = await hq.query<{ n: number; actor_user_id: string }>(
      hq.summary.orgId,
      'SELECT count(*)::int AS n, min(actor_user_id::text) AS actor_user_id FROM activity WHERE changeset_id = $1',
      [made.id],
    );
    expect(act).toEqual({ n: 1, actor_user_id: adminId });

    // 3. The laptop sees the outcome; its pending state clears and the fee shows HQ's value.
    await syncUntil(
      laptop.sync,
      'the laptop sees it applied',
      () => proposalStatus(laptop.db, made.id) === 'applied' && localPrice(laptop.db, made.itemId) === made.after,
    );
    expect(getProposal(laptop.db, adminId, made.id)).toMatchObject({ status: 'applied', decidedBy: ownerId });
    expect(listProposals(laptop.db, adminId, { status: 'needs_owner' }).some((p) => p.id === made.id)).toBe(false);
    expect(localPrice(laptop.db, made.itemId)).toBe(made.after);
    expect(laptop.sync.status()).toMatchObject({ pending_uploads: 0, conflicts: 0 });
  }, 180_000);

  it('declined by the owner on their laptop: HQ records it, the laptop sees it declined, nothing is written', async () => {
    const adminId = userId(laptop.db, DEMO_EMAILS.admin);
    const ownerId = userId(owner.db, DEMO_EMAILS.owner);
    const made = proposeRise(laptop.db, 1);
    const before = await hqPrice(made.itemId);
    await laptop.sync.syncOnce();
    await syncUntil(owner.sync, 'the proposal reaches the owner', () => hasProposal(owner.db, made.id));
    declineProposal(owner.db, { userId: ownerId, changesetId: made.id });
    await owner.sync.syncOnce();
    expect(await hqProposal(made.id)).toMatchObject({ status: 'declined', decided_by: ownerId, decided_device_name: 'Owner laptop' });
    await syncUntil(laptop.sync, 'the laptop sees it declined', () => proposalStatus(laptop.db, made.id) === 'declined');
    expect(getProposal(laptop.db, adminId, made.id)).toMatchObject({ status: 'declined', decidedBy: ownerId });
    expect(await hqPrice(made.itemId)).toEqual(before);
    expect(refusedProposalEvents(owner.db)).toEqual([]);

    // Withdrawn before the laptop reported it: HQ never hears of it (no other device has it to decide).
    const unreported = proposeRise(laptop.db, 6);
    declineProposal(laptop.db, { userId: adminId, changesetId: unreported.id });
    await laptop.sync.syncOnce();
    expect(await hqProposal(unreported.id)).toBeUndefined();

    // The proposer withdraws their own proposal on the laptop once HQ holds it: HQ records it from the laptop's token.
    const withdrawn = proposeRise(laptop.db, 4);
    await laptop.sync.syncOnce();
    declineProposal(laptop.db, { userId: adminId, changesetId: withdrawn.id });
    await laptop.sync.syncOnce();
    expect(await hqProposal(withdrawn.id)).toMatchObject({ status: 'declined', decided_by: adminId, decided_device_name: 'Clinic laptop' });

    // The owner declines on the admin's clinic laptop, signed in there with the PIN only: HQ cannot
    // verify it was the owner, so the proposal still waits at HQ for an owner elsewhere.
    const other = proposeRise(laptop.db, 5);
    await laptop.sync.syncOnce();
    declineProposal(laptop.db, { userId: ownerId, changesetId: other.id });
    await laptop.sync.syncOnce();
    expect(await hqProposal(other.id)).toMatchObject({ status: 'needs_owner', decided_by: null });
    expect(refusedProposalEvents(laptop.db)).toEqual([
      { proposal_id: other.id, op: 'decline', code: 'Forbidden', message: expect.stringMatching(/cannot verify that the owner declined/) },
    ]);
    expect(laptop.sync.status().pending_uploads).toBe(0);
    // The owner on their own laptop still sees it waiting and can decide it there.
    await syncUntil(owner.sync, 'the proposal reaches the owner', () => hasProposal(owner.db, other.id));
    expect(proposalStatus(owner.db, other.id)).toBe('needs_owner');
    declineProposal(owner.db, { userId: ownerId, changesetId: other.id });
    await owner.sync.syncOnce();
    expect(await hqProposal(other.id)).toMatchObject({ status: 'declined', decided_by: ownerId });
  }, 180_000);

  it('approved on two devices: one applied changeset at HQ, the second a replay; approved after the row changed: one visible conflict, failed everywhere', async () => {
    const adminId = userId(laptop.db, DEMO_EMAILS.admin);
    const ownerId = userId(owner.db, DEMO_EMAILS.owner);
    const second = await enrol(DEMO_EMAILS.owner, 'Owner tablet');

    // Two devices of the owner approve the same proposal before either syncs.
    const made = proposeRise(laptop.db, 2);
    const before = await hqPrice(made.itemId);
    await laptop.sync.syncOnce();
    await syncUntil(owner.sync, 'the proposal reaches the owner', () => hasProposal(owner.db, made.id));
    await syncUntil(second.sync, 'the proposal reaches the tablet', () => hasProposal(second.db, made.id));
    approveProposal(owner.db, { approverUserId: ownerId, changesetId: made.id, contentHash: made.hash });
    approveProposal(second.db, { approverUserId: ownerId, changesetId: made.id, contentHash: made.hash });
    await Promise.all([owner.sync.syncOnce(), second.sync.syncOnce()]);
    expect(await hqPrice(made.itemId)).toEqual({ price_cents: made.after, version: before.version + 1 });
    const [n] = await hq.query<{ n: number }>(hq.summary.orgId, "SELECT count(*)::int AS n FROM hq_changeset WHERE id = $1 AND status = 'applied'", [made.id]);
    expect(n!.n).toBe(1);
    const [acts] = await hq.query<{ n: number }>(hq.summary.orgId, 'SELECT count(*)::int AS n FROM activity WHERE changeset_id = $1', [made.id]);
    expect(acts!.n).toBe(1);
    expect(owner.sync.status().conflicts + second.sync.status().conflicts).toBe(0);

    // The row changes at HQ (the admin's small edit, uploaded) before the owner's approval of a new proposal arrives.
    const stale = proposeRise(laptop.db, 3);
    await laptop.sync.syncOnce();
    await syncUntil(owner.sync, 'the proposal reaches the owner', () => hasProposal(owner.db, stale.id));
    approveProposal(owner.db, { approverUserId: ownerId, changesetId: stale.id, contentHash: stale.hash }); // offline: the owner's laptop has the old row
    const [cur] = await hq.query<{ price_cents: number }>(hq.summary.orgId, 'SELECT price_cents FROM rate_item WHERE id = $1', [stale.itemId]);
    callVerb({ db: second.db, userId: ownerId }, 'rates.updateItem', { id: stale.itemId, price_cents: cur!.price_cents + 100 });
    await second.sync.syncOnce();
    const changed = await hqPrice(stale.itemId);
    const r = await owner.sync.syncOnce();
    expect(r).toMatchObject({ uploaded: 0, rejected: 1 });
    const [conflict] = owner.sync.conflicts();
    expect(conflict).toMatchObject({ changeset_id: stale.id, reason: 'stale' });
    expect(await hqPrice(stale.itemId)).toEqual(changed); // never two writes
    expect(await hqProposal(stale.id)).toMatchObject({ status: 'failed', decided_device_name: 'Owner laptop' });
    await syncUntil(laptop.sync, 'the laptop sees it failed', () => proposalStatus(laptop.db, stale.id) === 'failed');
    const out = getProposal(laptop.db, adminId, stale.id);
    expect(out.status).toBe('failed');
    expect(out.failure).toMatchObject({ code: 'Conflict' });
    expect(out.failure!.message).toMatch(/changed at HQ/);
    owner.sync.discard(stale.id);
  }, 240_000);

  it("scoping: an athlete's device never receives proposals and a Larchfield device never gets Kestrel Vale's, even with a hand-edited shape request", async () => {
    const [count] = await hq.query<{ n: number }>(hq.summary.orgId, 'SELECT count(*)::int AS n FROM hq_proposal', []);
    expect(count!.n).toBeGreaterThan(0);

    const larch = await enrol(DEMO_SECOND_EMAILS.owner, 'Larchfield desk');
    expect(sqlite(larch.db).prepare('SELECT count(*) FROM hq_proposal').pluck().get()).toBe(0);
    expect(sqlite(larch.db).prepare('SELECT count(*) FROM changeset_proposal').pluck().get()).toBe(0);
    const token = async (email: string): Promise<string> => {
      const res = await fetch(`${hq.url}/v1/devices`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, pin: DEMO_PIN, code: await hq.code(email), name: 'hand-made' }),
      });
      return ((await res.json()) as { token: string }).token;
    };
    const shape = async (tok: string, where?: string): Promise<Response> => {
      const q = new URLSearchParams({ table: 'hq_proposal', offset: '-1' });
      if (where) q.set('where', where);
      return fetch(`${hq.url}/v1/shape?${q.toString()}`, { headers: { authorization: `Bearer ${tok}` } });
    };
    const larchToken = await token(DEMO_SECOND_EMAILS.owner);
    const widened = await shape(larchToken, `org_id = '${hq.summary.orgId}' OR true`);
    expect(widened.status).toBe(200);
    expect(((await widened.json()) as { value?: unknown }[]).filter((m) => m.value)).toEqual([]);

    const athleteToken = await token(DEMO_EMAILS.athlete);
    expect((await shape(athleteToken)).status).toBe(403);
    const propose = await fetch(`${hq.url}/v1/proposals`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${athleteToken}` },
      body: JSON.stringify({
        events: [
          { op: 'decline', changeset_id: '0190a7e0-0000-7000-8000-000000000000', decided_by: hq.summary.userIds.athlete, decided_at: new Date().toISOString() },
        ],
      }),
    });
    expect(propose.status).toBe(403);
  }, 120_000);
});
