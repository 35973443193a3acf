/**
 * Owner approvals HQ can verify, device to HQ with real parts (a real Postgres, the HQ server with
 * its shape service, SQLite device files, DeviceSync): a fee rise over 20 % proposed on a shared
 * clinic laptop (enrolled by the admin) and approved there by the owner, who signed in on the
 * laptop with their PIN only, is rejected `approval_unverified` and stays a visible conflict, with
 * nothing changed at HQ; once the owner has signed in to HQ as themselves on the laptop, the
 * next approval is recorded under the owner's own token and the change is applied; on a device the
 * owner enrolled, the upload itself is the proof. RTP sign-offs likewise: a doctor's sign-off on
 * the shared laptop (enrolled by the physio) is rejected `signoff_unverified` until the doctor signs
 * in to HQ there, then attested under the doctor's own token and applied; the doctor's ordinary
 * clinical changes there need nothing of this.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_EMAILS, DEMO_PIN } from '../../models/seed/demo';
import { openDb, type Db } from '../data/db';
import { findUserByEmail } from '../data/identity';
import { sqlite } from '../data/sqlite';
import { approveProposal, proposeChangeset } from '../kinetix/proposals';
import { callVerb } from '../services';
import { DeviceSync } from './engine';
import { havePg, useHqStack } from './testing/hq-stack';

const FAST = { backoff: { initialMs: 50, maxMs: 500 }, streamBackoff: { initialMs: 100, maxMs: 500 }, pollMs: 50 };
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe.skipIf(!havePg)('owner approvals from a device, verified by HQ', () => {
  const hq = useHqStack();
  const engines: DeviceSync[] = [];
  afterAll(async () => {
    for (const e of engines) await e.stop();
  });
  async function enrol(email: string, name: string): Promise<{ db: Db; sync: DeviceSync }> {
    const d = mkdtempSync(join(tmpdir(), 'ai-approval-'));
    dirs.push(d);
    const db = openDb(join(d, 'device.sqlite'));
    const sync = await DeviceSync.enrol(db, { hqUrl: hq.url, email, pin: DEMO_PIN, code: await hq.code(email), deviceName: name }, FAST);
    engines.push(sync);
    await sync.syncOnce();
    return { db, sync };
  }
  const userId = (db: Db, email: string): string => findUserByEmail(db, email)!.id;
  async function hqPrice(id: string): Promise<{ price_cents: number; version: number }> {
    const [r] = await hq.query<{ price_cents: number; version: number }>(hq.summary.orgId, 'SELECT price_cents, version FROM rate_item WHERE id = $1', [id]);
    return r!;
  }
  /** `proposer` proposes a +25 % rise of the `n`th fee on `db`; the owner approves it there (signed in on the device with the PIN). */
  function proposeAndApprove(db: Db, proposer: string, n: number): { changesetId: string; itemId: string; after: number } {
    const item = sqlite(db).prepare('SELECT id, version, price_cents FROM rate_item WHERE deleted_at IS NULL ORDER BY code LIMIT 1 OFFSET ?').get(n) as {
      id: string;
      version: number;
      price_cents: number;
    };
    const after = Math.round(item.price_cents * 1.25);
    const p = proposeChangeset(db, {
      userId: userId(db, proposer),
      source: 'page',
      toolName: 'rates.updateItem',
      title: 'Change a fee',
      planned: {
        verb: 'rates.updateItem',
        summary: 'Raise a fee by 25 %',
        changes: [
          { op: 'update', table: 'rate_item', id: item.id, version: item.version, before: { price_cents: item.price_cents }, after: { price_cents: after } },
        ],
      },
    });
    expect(p.status).toBe('needs_owner');
    approveProposal(db, { approverUserId: userId(db, DEMO_EMAILS.owner), changesetId: p.id, contentHash: p.contentHash });
    return { changesetId: p.id, itemId: item.id, after };
  }

  it("a shared laptop's owner approval without the owner's HQ sign-in is rejected and stays a visible conflict; after the owner signs in to HQ there, it is applied", async () => {
    const { db, sync } = await enrol(DEMO_EMAILS.admin, 'Clinic laptop');
    const ownerId = userId(db, DEMO_EMAILS.owner);
    expect(sync.hqSignIn(ownerId)).toEqual({ signedIn: false, signedInAt: null, enrolledHere: false });

    // 1. Approved by the owner on this device, but HQ has no proof the owner acted.
    const first = proposeAndApprove(db, DEMO_EMAILS.admin, 0);
    const before = await hqPrice(first.itemId);
    const r1 = await sync.syncOnce();
    expect(r1.rejected).toBe(1);
    const [conflict] = sync.conflicts();
    expect(conflict).toMatchObject({ changeset_id: first.changesetId, reason: 'approval_unverified', verb: 'rates.updateItem' });
    expect(conflict!.message).toMatch(/cannot verify the owner's approval/);
    expect(conflict!.changes[0]).toMatchObject({ table: 'rate_item', id: first.itemId, after: { price_cents: first.after } });
    expect(await hqPrice(first.itemId)).toEqual(before);
    // The device shows HQ's truth again.
    expect(sqlite(db).prepare('SELECT price_cents FROM rate_item WHERE id = ?').pluck().get(first.itemId)).toBe(before.price_cents);

    // 2. A wrong PIN gets no sign-in; the owner's own does (a token of the owner's, for this device).
    await expect(sync.signInUser({ email: DEMO_EMAILS.owner, pin: '0000', code: await hq.code(DEMO_EMAILS.owner) })).rejects.toMatchObject({
      code: 'Unauthenticated',
    });
    const signed = await sync.signInUser({ email: DEMO_EMAILS.owner, pin: DEMO_PIN, code: await hq.code(DEMO_EMAILS.owner) });
    expect(signed.userId).toBe(ownerId);
    expect(sync.hqSignIn(ownerId).signedIn).toBe(true);
    const sealed = sqlite(db).prepare('SELECT token_sealed FROM sync_user_token WHERE user_id = ?').pluck().get(ownerId) as string;
    expect(sealed).not.toMatch(/aihq_/); // sealed, never in the clear

    // 3. The re-planned change, approved again by the owner (offline is fine: the approval is recorded at the next upload).
    const second = proposeAndApprove(db, DEMO_EMAILS.admin, 1);
    const r2 = await sync.syncOnce();
    expect(r2).toMatchObject({ uploaded: 1, rejected: 0 });
    expect((await hqPrice(second.itemId)).price_cents).toBe(second.after);
    const [rec] = await hq.query<{ approver_id: string; device_name: string }>(
      hq.summary.orgId,
      'SELECT a.approver_id, d.name AS device_name FROM hq_approval a JOIN hq_device d ON d.id = a.device_id WHERE a.changeset_id = $1',
      [second.changesetId],
    );
    expect(rec).toEqual({ approver_id: ownerId, device_name: `Clinic laptop (${DEMO_EMAILS.owner})` });

    // The conflict of step 1 is still there until discarded (re-planned above).
    expect(sync.conflicts().map((c) => c.changeset_id)).toEqual([first.changesetId]);
    sync.discard(first.changesetId);
    expect(sync.status().conflicts).toBe(0);
  }, 120_000);

  it("a doctor's RTP sign-off on a shared laptop needs the doctor's own HQ sign-in there; the doctor's ordinary clinical change does not", async () => {
    // The treatment room laptop, enrolled by the physio: the doctor signs in on it offline with the PIN.
    const { db, sync } = await enrol(DEMO_EMAILS.physio, 'Treatment room laptop');
    const doctorId = userId(db, DEMO_EMAILS.doctor);
    const rows = sqlite(db)
      .prepare('SELECT id FROM rtp_entry WHERE deleted_at IS NULL AND doctor_signoff_by IS NULL ORDER BY id LIMIT 2')
      .pluck()
      .all() as string[];
    expect(rows).toHaveLength(2);
    const hqSigner = async (id: string) =>
      (await hq.query<{ doctor_signoff_by: string | null }>(hq.summary.orgId, 'SELECT doctor_signoff_by FROM rtp_entry WHERE id = $1', [id]))[0]!
        .doctor_signoff_by;

    // 1. The doctor signs off on the laptop (signed in there with the PIN only) and updates the notes of another entry.
    const sign = callVerb({ db, userId: doctorId }, 'rtp.signoffDoctor', { id: rows[0]!, signed: true }) as { changeset: { id: string } };
    callVerb({ db, userId: doctorId }, 'rtp.update', { id: rows[1]!, notes: 'Shared laptop: progressed to drills' });
    const r1 = await sync.syncOnce();
    expect(r1).toMatchObject({ uploaded: 1, rejected: 1 });
    const [conflict] = sync.conflicts();
    expect(conflict).toMatchObject({ changeset_id: sign.changeset.id, reason: 'signoff_unverified' });
    expect(conflict!.message).toMatch(/cannot verify that the user this RTP sign-off names/);
    expect(await hqSigner(rows[0]!)).toBeNull();
    expect(sqlite(db).prepare('SELECT doctor_signoff_by FROM rtp_entry WHERE id = ?').pluck().get(rows[0])).toBeNull();
    const [notes] = await hq.query<{ notes: string }>(hq.summary.orgId, 'SELECT notes FROM rtp_entry WHERE id = $1', [rows[1]]);
    expect(notes!.notes).toBe('Shared laptop: progressed to drills');

    // 2. The doctor signs in to HQ as themselves on the laptop, and signs off again (re-planned): attested, applied.
    await sync.signInUser({ email: DEMO_EMAILS.doctor, pin: DEMO_PIN, code: await hq.code(DEMO_EMAILS.doctor) });
    sync.discard(sign.changeset.id);
    const again = callVerb({ db, userId: doctorId }, 'rtp.signoffDoctor', { id: rows[0]!, signed: true }) as { changeset: { id: string } };
    const r2 = await sync.syncOnce();
    expect(r2).toMatchObject({ uploaded: 1, rejected: 0 });
    expect(await hqSigner(rows[0]!)).toBe(doctorId);
    const [rec] = await hq.query<{ approver_id: string; device_name: string }>(
      hq.summary.orgId,
      'SELECT a.approver_id, d.name AS device_name FROM hq_approval a JOIN hq_device d ON d.id = a.device_id WHERE a.changeset_id = $1',
      [again.changeset.id],
    );
    expect(rec).toEqual({ approver_id: doctorId, device_name: `Treatment room laptop (${DEMO_EMAILS.doctor})` });
    expect(sync.status().conflicts).toBe(0);
  }, 120_000);

  it("an account change the laptop's own user could not make needs its author's own HQ sign-in there (author_unverified until then)", async () => {
    // The treatment room laptop again, enrolled by the physio; the owner signs in on it offline with the PIN.
    const { db, sync } = await enrol(DEMO_EMAILS.physio, 'Physio room laptop');
    const ownerId = userId(db, DEMO_EMAILS.owner);
    const analystId = userId(db, DEMO_EMAILS.analyst);
    const hqName = async () =>
      (await hq.query<{ display_name: string }>(hq.summary.orgId, 'SELECT display_name FROM app_user WHERE id = $1', [analystId]))[0]!.display_name;
    const before = await hqName();

    // 1. The owner renames the analyst's account there: a physio could not (user.manage), so HQ wants the owner's own word.
    const first = callVerb({ db, userId: ownerId }, 'users.update', { id: analystId, display_name: `${before} (analyst)` }) as { changeset: { id: string } };
    const r1 = await sync.syncOnce();
    expect(r1).toMatchObject({ uploaded: 0, rejected: 1 });
    const [conflict] = sync.conflicts();
    expect(conflict).toMatchObject({ changeset_id: first.changeset.id, reason: 'author_unverified', verb: 'users.update' });
    expect(conflict!.message).toMatch(/cannot verify that the user this change names as its author made it/);
    expect(await hqName()).toBe(before);

    // 2. The owner signs in to HQ as themselves on the laptop and makes the change again: attested under the owner's token, applied.
    await sync.signInUser({ email: DEMO_EMAILS.owner, pin: DEMO_PIN, code: await hq.code(DEMO_EMAILS.owner) });
    sync.discard(first.changeset.id);
    const again = callVerb({ db, userId: ownerId }, 'users.update', { id: analystId, display_name: `${before} (analyst)` }) as { changeset: { id: string } };
    const r2 = await sync.syncOnce();
    expect(r2).toMatchObject({ uploaded: 1, rejected: 0 });
    expect(await hqName()).toBe(`${before} (analyst)`);
    const [rec] = await hq.query<{ approver_id: string }>(hq.summary.orgId, 'SELECT approver_id FROM hq_approval WHERE changeset_id = $1', [
      again.changeset.id,
    ]);
    expect(rec).toEqual({ approver_id: ownerId });
    expect(sync.status().conflicts).toBe(0);
  }, 120_000);

  it("on a device the owner enrolled, the owner's approval of the admin's proposal made there needs nothing more", async () => {
    const { db, sync } = await enrol(DEMO_EMAILS.owner, 'Owner laptop');
    const made = proposeAndApprove(db, DEMO_EMAILS.admin, 2);
    const r = await sync.syncOnce();
    expect(r).toMatchObject({ uploaded: 1, rejected: 0 });
    expect((await hqPrice(made.itemId)).price_cents).toBe(made.after);
  }, 120_000);
});
