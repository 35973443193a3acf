/**
 * Device sync with real parts: the HQ server over a real Postgres (with the embedded shape
 * service), two SQLite device files, two DeviceSync engines. Offline edits converge; the same row
 * edited on both devices gives one winner and one visible conflict with both values; a role
 * lowered at HQ rejects a pending clinical write; a Larchfield device never receives a Kestrel
 * Vale row; revoking the device token stops sync; HQ restarting under live devices is survived.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_EMAILS, DEMO_PIN } from '../../models/seed/demo';
import { openDb, type Db } from '../data/db';
import { findUserByEmail } from '../data/identity';
import { getEnrolment, listShapeStates, pendingProposalEvents, pendingUploads, uploadState } from '../data/sync';
import { machineSecretBox, type SealedSecret } from '../security/secret-box';
import { applyPlanned, callVerb } from '../services';
import { getChangeset } from '../data/changesets';
import { approveProposal, proposeChangeset } from '../kinetix/proposals';
import { DeviceSync, type DeviceSyncOptions } from './engine';
import { HQ_ROLES } from '../../sync/pg/roles';
import { havePg, useHqStack } from './testing/hq-stack';
import { startNetLink } from './testing/net-link';
import { sqlite } from '../data/sqlite';

const FAST = {
  log: (l: string) => {
    if (process.env.SYNC_DEBUG) console.log(l);
  },
  backoff: { initialMs: 50, maxMs: 500 },
  streamBackoff: { initialMs: 100, maxMs: 500 },
  pollMs: 50,
};
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
function devicePath(): string {
  const d = mkdtempSync(join(tmpdir(), 'ai-device-'));
  dirs.push(d);
  return join(d, 'device.sqlite');
}

async function waitFor<T>(what: string, fn: () => T | undefined | null | false, timeoutMs = 20_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Pull again until `done` holds: a shape's up-to-date means "caught up with the shape log as it
 * stands", and HQ's logical replication may not have delivered a commit made a moment ago (more so
 * on a loaded machine), so convergence is checked as eventual, with a bound.
 */
async function syncUntil(devices: { syncOnce(): Promise<unknown> }[], what: string, done: () => boolean, timeoutMs = 20_000): Promise<void> {
  const start = Date.now();
  while (!done()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out syncing until ${what}`);
    for (const d of devices) await d.syncOnce();
  }
}

function uploadStateOf(db: Db, state: string): boolean {
  const last = sqlite(db).prepare('SELECT changeset_id FROM outbox ORDER BY seq DESC LIMIT 1').pluck().get() as string | undefined;
  return !!last && uploadState(db, last).state === state;
}

/** Rows of a table on a device, by id, with the columns the comparison uses. */
function deviceRows(db: Db, table: string, cols: string[]): Record<string, Record<string, unknown>> {
  const rows = sqlite(db)
    .prepare(`SELECT id, ${cols.join(', ')} FROM ${table} ORDER BY id`)
    .all() as Record<string, unknown>[];
  return Object.fromEntries(rows.map((r) => [r.id as string, r]));
}

describe.skipIf(!havePg)('device sync against a real HQ', () => {
  const hq = useHqStack();
  const engines: DeviceSync[] = [];
  afterAll(async () => {
    for (const e of engines) await e.stop();
  });
  /** A fresh device file enrolled as `role`'s account (`email`), with the FAST engine options and `opts` over them. */
  const enrol = async (role: keyof typeof DEMO_EMAILS, email = DEMO_EMAILS[role], opts: DeviceSyncOptions = {}): Promise<{ db: Db; sync: DeviceSync }> => {
    const db = openDb(devicePath());
    const sync = await DeviceSync.enrol(
      db,
      { hqUrl: hq.url, email, pin: DEMO_PIN, code: await hq.code(email), deviceName: `${role} laptop` },
      { ...FAST, ...opts },
    );
    engines.push(sync);
    return { db, sync };
  };
  const as = (db: Db, email: string) => ({ db, userId: findUserByEmail(db, email)!.id });

  it('initial sync brings exactly the org rows HQ holds; a second pass moves nothing', async () => {
    const { db, sync } = await enrol('physio');
    const first = await sync.syncOnce();
    expect(first.pulled.athlete).toBeGreaterThan(0);
    const orgId = hq.summary.orgId;
    for (const table of ['athlete', 'injury', 'wellness', 'session_load', 'app_user', 'activity']) {
      const [{ n }] = (await hq.query<{ n: string }>(orgId, `SELECT count(*) AS n FROM ${table} WHERE org_id = $1`, [orgId])) as [{ n: string }];
      expect((sqlite(db).prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n, table).toBe(Number(n));
    }
    // Values arrive in the device's encoding: ISO instants, 0/1 booleans, no PIN hashes.
    const user = sqlite(db).prepare('SELECT created_at, active, pin_hash FROM app_user LIMIT 1').get() as {
      created_at: string;
      active: number;
      pin_hash: string | null;
    };
    expect(user.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(user.active).toBe(1);
    expect(user.pin_hash).toMatch(/^scrypt\$/); // org devices sign the club's users in offline
    const again = await sync.syncOnce();
    expect(Object.values(again.pulled).reduce((a, b) => a + b, 0)).toBe(0);
    expect(sync.status()).toMatchObject({ enrolled: true, online: true, pending_uploads: 0, conflicts: 0, last_error: null });
    expect(sync.status().last_synced_at).not.toBeNull();
  });

  it('with the shape streams in this thread (no worker) a device syncs the same rows as with the worker', async () => {
    const orgId = hq.summary.orgId;
    const db = openDb(devicePath());
    const sync = await DeviceSync.enrol(
      db,
      { hqUrl: hq.url, email: DEMO_EMAILS.physio, pin: DEMO_PIN, code: await hq.code(DEMO_EMAILS.physio), deviceName: 'no worker' },
      { ...FAST, shapeWorker: false },
    );
    engines.push(sync);
    const r = await sync.syncOnce();
    for (const table of ['athlete', 'wellness', 'session_load', 'app_user']) {
      const [{ n }] = (await hq.query<{ n: string }>(orgId, `SELECT count(*) AS n FROM ${table} WHERE org_id = $1`, [orgId])) as [{ n: string }];
      expect(sqlite(db).prepare(`SELECT count(*) FROM ${table}`).pluck().get(), table).toBe(Number(n));
      expect(r.pulled[table], table).toBeGreaterThan(0);
    }
  });

  it('two devices edit different athletes offline; both converge to the rows HQ holds', async () => {
    const a = await enrol('physio');
    const b = await enrol('doctor');
    await a.sync.syncOnce();
    await b.sync.syncOnce();
    const athletes = sqlite(a.db).prepare('SELECT id FROM athlete WHERE deleted_at IS NULL ORDER BY id LIMIT 2').all() as { id: string }[];
    // Offline: each device writes through the service verbs (outbox in the same transaction).
    callVerb(as(a.db, DEMO_EMAILS.physio), 'athletes.update', { id: athletes[0]!.id, notes: 'edited on device A' });
    callVerb(as(b.db, DEMO_EMAILS.doctor), 'athletes.update', { id: athletes[1]!.id, notes: 'edited on device B' });
    expect(a.sync.status().pending_uploads).toBe(1);
    const ra = await a.sync.syncOnce();
    const rb = await b.sync.syncOnce();
    expect(ra.uploaded).toBe(1);
    expect(rb.uploaded).toBe(1);
    const orgId = hq.summary.orgId;
    const hqRows = await hq.query<{ id: string; notes: string; version: number }>(orgId, 'SELECT id, notes, version FROM athlete WHERE org_id = $1', [orgId]);
    const expected = Object.fromEntries(hqRows.map((r) => [r.id, { id: r.id, notes: r.notes, version: r.version }]));
    const same = (x: unknown): boolean => isDeepStrictEqual(x, expected);
    await syncUntil(
      [a.sync, b.sync],
      'both devices hold the rows HQ holds',
      () => same(deviceRows(a.db, 'athlete', ['notes', 'version'])) && same(deviceRows(b.db, 'athlete', ['notes', 'version'])),
    );
    expect(deviceRows(a.db, 'athlete', ['notes', 'version'])).toEqual(expected);
    expect(deviceRows(b.db, 'athlete', ['notes', 'version'])).toEqual(expected);
    expect(expected[athletes[0]!.id]!.notes).toBe('edited on device A');
    expect(expected[athletes[1]!.id]!.notes).toBe('edited on device B');
    expect(a.sync.status().pending_uploads).toBe(0);
  });

  it('the same row edited on both devices offline: the first upload wins, the second is a conflict with both values; discard drops it', async () => {
    const a = await enrol('physio');
    const b = await enrol('doctor');
    await a.sync.syncOnce();
    await b.sync.syncOnce();
    const id = (sqlite(a.db).prepare('SELECT id FROM athlete WHERE deleted_at IS NULL ORDER BY id DESC LIMIT 1').get() as { id: string }).id;
    callVerb(as(a.db, DEMO_EMAILS.physio), 'athletes.update', { id, notes: 'A: hamstring tight' });
    const bWrite = callVerb(as(b.db, DEMO_EMAILS.doctor), 'athletes.update', { id, notes: 'B: cleared to train' }) as { changeset: { id: string } };
    expect((await a.sync.syncOnce()).uploaded).toBe(1);
    const rb = await b.sync.syncOnce();
    expect(rb).toMatchObject({ uploaded: 0, rejected: 1 });
    const [conflict] = b.sync.conflicts();
    expect(conflict).toMatchObject({ changeset_id: bWrite.changeset.id, verb: 'athletes.update', reason: 'stale' });
    // Both values: the device's change and HQ's current row.
    expect(conflict!.changes[0]).toMatchObject({ op: 'update', table: 'athlete', id, after: { notes: 'B: cleared to train' } });
    expect(conflict!.current[0]).toMatchObject({ table: 'athlete', id, row: { notes: 'A: hamstring tight' } });
    // The local row shows the server's truth; the rejected value is kept in the conflict only.
    const local = sqlite(b.db).prepare('SELECT notes, version FROM athlete WHERE id = ?').get(id) as { notes: string; version: number };
    const [server] = await hq.query<{ notes: string; version: number }>(hq.summary.orgId, 'SELECT notes, version FROM athlete WHERE id = $1', [id]);
    expect(local).toEqual(server);
    expect(b.sync.status()).toMatchObject({ pending_uploads: 0, conflicts: 1 });
    expect(uploadState(b.db, bWrite.changeset.id)).toMatchObject({ outbox: 'rejected', state: 'rejected', reason: 'stale' });
    // The conflict stays across passes until the user decides.
    await b.sync.syncOnce();
    expect(b.sync.conflicts()).toHaveLength(1);
    b.sync.discard(bWrite.changeset.id);
    expect(b.sync.conflicts()).toHaveLength(0);
    expect(b.sync.status().conflicts).toBe(0);
    expect(() => b.sync.discard(bWrite.changeset.id)).toThrow(/not found/);
  });

  it('an RTP sign-off is never merged: a stale sign-off stays a conflict and the row keeps the server sign-offs', async () => {
    const a = await enrol('physio');
    const b = await enrol('doctor');
    await a.sync.syncOnce();
    await b.sync.syncOnce();
    const rtp = sqlite(a.db).prepare('SELECT id FROM rtp_entry WHERE deleted_at IS NULL AND doctor_signoff_by IS NULL ORDER BY id LIMIT 1').get() as {
      id: string;
    };
    callVerb(as(a.db, DEMO_EMAILS.physio), 'rtp.update', { id: rtp.id, notes: 'A: progressed to stage drills' });
    const sign = callVerb(as(b.db, DEMO_EMAILS.doctor), 'rtp.signoffDoctor', { id: rtp.id, signed: true }) as { changeset: { id: string } };
    expect(sqlite(b.db).prepare('SELECT doctor_signoff_by FROM rtp_entry WHERE id = ?').pluck().get(rtp.id)).not.toBeNull();
    await a.sync.syncOnce();
    const rb = await b.sync.syncOnce();
    expect(rb.rejected).toBe(1);
    expect(b.sync.conflicts().map((c) => [c.changeset_id, c.reason])).toEqual([[sign.changeset.id, 'stale']]);
    const [server] = await hq.query<{ doctor_signoff_by: string | null; notes: string }>(
      hq.summary.orgId,
      'SELECT doctor_signoff_by, notes FROM rtp_entry WHERE id = $1',
      [rtp.id],
    );
    expect(server).toEqual({ doctor_signoff_by: null, notes: 'A: progressed to stage drills' });
    expect(sqlite(b.db).prepare('SELECT doctor_signoff_by, notes FROM rtp_entry WHERE id = ?').get(rtp.id)).toEqual(server);
  });

  // Issue 12 review B1: a device's second offline edit of a row expects the version its first edit
  // made; when the first is rejected, that version is HQ's *other* device's write, and the second
  // would overwrite it (and carry a sign-off onto a stage its signer never saw). Both per-request
  // paths: one changeset per request (the device holds the rest back) and one batch (HQ does).
  for (const perRequest of [1, 50])
    it(`edits made on top of a rejected edit are conflicts too, never applied over the other device's write (${perRequest} per upload)`, async () => {
      const a = await enrol('physio');
      const dbB = openDb(devicePath());
      const b = {
        db: dbB,
        sync: await DeviceSync.enrol(
          dbB,
          { hqUrl: hq.url, email: DEMO_EMAILS.doctor, pin: DEMO_PIN, code: await hq.code(DEMO_EMAILS.doctor), deviceName: 'doctor laptop' },
          { ...FAST, uploadBatch: perRequest },
        ),
      };
      engines.push(b.sync);
      await a.sync.syncOnce();
      await b.sync.syncOnce();
      const injury = (
        sqlite(a.db)
          .prepare('SELECT id FROM injury WHERE deleted_at IS NULL ORDER BY id LIMIT 1 OFFSET ?')
          .get(perRequest === 1 ? 2 : 3) as { id: string }
      ).id;
      const rtp = (
        sqlite(a.db)
          .prepare('SELECT id FROM rtp_entry WHERE deleted_at IS NULL AND doctor_signoff_by IS NULL ORDER BY id LIMIT 1 OFFSET ?')
          .get(perRequest === 1 ? 1 : 2) as { id: string }
      ).id;
      callVerb(as(a.db, DEMO_EMAILS.physio), 'injuries.update', { id: injury, clinician_notes: 'PHYSIO A: neuro signs on exam, refer' });
      callVerb(as(a.db, DEMO_EMAILS.physio), 'rtp.update', { id: rtp, notes: 'SYMPTOMS RETURNED: not cleared' });
      const b1 = callVerb(as(b.db, DEMO_EMAILS.doctor), 'injuries.update', { id: injury, clinician_notes: 'DOCTOR B: sling' }) as { changeset: { id: string } };
      const b2 = callVerb(as(b.db, DEMO_EMAILS.doctor), 'injuries.update', { id: injury, clinician_notes: 'DOCTOR B: sling; review Friday' }) as {
        changeset: { id: string };
      };
      const b3 = callVerb(as(b.db, DEMO_EMAILS.doctor), 'rtp.update', { id: rtp, notes: 'Doctor reviewed offline' }) as { changeset: { id: string } };
      const b4 = callVerb(as(b.db, DEMO_EMAILS.doctor), 'rtp.signoffDoctor', { id: rtp, signed: true }) as { changeset: { id: string } };
      await a.sync.syncOnce();
      await b.sync.syncOnce();
      // Every one of B's four is a conflict; none reached HQ.
      expect(b.sync.conflicts().map((c) => [c.changeset_id, c.reason])).toEqual([
        [b1.changeset.id, 'stale'],
        [b2.changeset.id, 'stale'],
        [b3.changeset.id, 'stale'],
        [b4.changeset.id, 'stale'],
      ]);
      expect(b.sync.conflicts()[1]!.message).toContain(b1.changeset.id);
      // Who decided each: one per upload, the device holds back what was made on top of a refused
      // one, unsent (the Sync page says so); in one upload HQ refuses them all itself.
      expect(b.sync.conflicts().map((c) => c.rejected_here)).toEqual(perRequest === 1 ? [false, true, false, true] : [false, false, false, false]);
      expect(b.sync.status()).toMatchObject({ pending_uploads: 0, conflicts: 4 });
      const orgId = hq.summary.orgId;
      const [inj] = await hq.query<{ clinician_notes: string; version: number }>(orgId, 'SELECT clinician_notes, version FROM injury WHERE id = $1', [injury]);
      expect(inj!.clinician_notes).toBe('PHYSIO A: neuro signs on exam, refer');
      const [entry] = await hq.query<{ notes: string; doctor_signoff_by: string | null }>(
        orgId,
        'SELECT notes, doctor_signoff_by FROM rtp_entry WHERE id = $1',
        [rtp],
      );
      expect(entry).toEqual({ notes: 'SYMPTOMS RETURNED: not cleared', doctor_signoff_by: null });
      // B's rows show HQ's truth; the conflicts keep both values, so nothing is lost.
      await syncUntil(
        [b.sync],
        'B holds A’s values',
        () => sqlite(b.db).prepare('SELECT clinician_notes FROM injury WHERE id = ?').pluck().get(injury) === inj!.clinician_notes,
      );
      expect(sqlite(b.db).prepare('SELECT notes, doctor_signoff_by FROM rtp_entry WHERE id = ?').get(rtp)).toEqual(entry);
      expect(JSON.stringify(b.sync.conflicts()[1]!.changes)).toContain('DOCTOR B: sling; review Friday');
      // Re-planned on HQ's row, B's edit applies on top of A's.
      callVerb(as(b.db, DEMO_EMAILS.doctor), 'injuries.update', {
        id: injury,
        clinician_notes: 'PHYSIO A: neuro signs on exam, refer. DOCTOR B: sling; review Friday',
      });
      const r = await b.sync.syncOnce();
      expect(r.rejected).toBe(0);
      const [after] = await hq.query<{ clinician_notes: string; version: number }>(orgId, 'SELECT clinician_notes, version FROM injury WHERE id = $1', [
        injury,
      ]);
      expect(after).toEqual({ clinician_notes: 'PHYSIO A: neuro signs on exam, refer. DOCTOR B: sling; review Friday', version: inj!.version + 1 });
    });

  it('an edit made on top of a pending one names it (based_on), and HQ applies the chain it applied', async () => {
    const b = await enrol('doctor');
    await b.sync.syncOnce();
    const injury = (sqlite(b.db).prepare('SELECT id FROM injury WHERE deleted_at IS NULL ORDER BY id LIMIT 1 OFFSET 4').get() as { id: string }).id;
    const injury2 = (sqlite(b.db).prepare('SELECT id FROM injury WHERE deleted_at IS NULL ORDER BY id LIMIT 1 OFFSET 5').get() as { id: string }).id;
    const first = callVerb(as(b.db, DEMO_EMAILS.doctor), 'injuries.update', { id: injury, clinician_notes: 'chain 1' }) as { changeset: { id: string } };
    const second = callVerb(as(b.db, DEMO_EMAILS.doctor), 'injuries.update', { id: injury, clinician_notes: 'chain 2' }) as { changeset: { id: string } };
    const other = callVerb(as(b.db, DEMO_EMAILS.doctor), 'injuries.update', { id: injury2, clinician_notes: 'not on top of anything' }) as {
      changeset: { id: string };
    };
    const sent = new Map(pendingUploads(b.db, null, 10).map((cs) => [cs.changeset_id, cs]));
    expect(sent.get(first.changeset.id)!.based_on).toBeUndefined();
    expect(sent.get(second.changeset.id)!.based_on).toEqual([{ table: 'injury', id: injury, changeset_id: first.changeset.id }]);
    expect(sent.get(other.changeset.id)!.based_on).toBeUndefined();
    const r = await b.sync.syncOnce();
    expect(r).toMatchObject({ uploaded: 3, rejected: 0 });
    const [inj] = await hq.query<{ clinician_notes: string }>(hq.summary.orgId, 'SELECT clinician_notes FROM injury WHERE id = $1', [injury]);
    expect(inj!.clinician_notes).toBe('chain 2');
    // Once HQ's row is back on the device, a new edit is made on HQ's row: no base.
    callVerb(as(b.db, DEMO_EMAILS.doctor), 'injuries.update', { id: injury, clinician_notes: 'chain 3' });
    expect(pendingUploads(b.db, null, 10).map((cs) => cs.based_on)).toEqual([undefined]);
    await b.sync.syncOnce();
  });

  it('when HQ refuses a whole upload, what was made on top of the refused changeset is not sent one by one (issue 12 re-review B2)', async () => {
    const a = await enrol('physio');
    const b = await enrol('doctor');
    await a.sync.syncOnce();
    await b.sync.syncOnce();
    const injury = (sqlite(a.db).prepare('SELECT id FROM injury WHERE deleted_at IS NULL ORDER BY id LIMIT 1 OFFSET 5').get() as { id: string }).id;
    const first = callVerb(as(b.db, DEMO_EMAILS.doctor), 'injuries.update', { id: injury, clinician_notes: 'DOCTOR B first' }) as { changeset: { id: string } };
    const second = callVerb(as(b.db, DEMO_EMAILS.doctor), 'injuries.update', { id: injury, clinician_notes: 'DOCTOR B second' }) as {
      changeset: { id: string };
    };
    callVerb(as(a.db, DEMO_EMAILS.physio), 'injuries.update', { id: injury, clinician_notes: 'PHYSIO A: must keep' });
    await a.sync.syncOnce();
    // The first carries a column HQ does not know (a device newer than HQ): HQ refuses the whole request (400).
    sqlite(b.db)
      .prepare(
        `UPDATE outbox SET payload_json = replace(payload_json, '"clinician_notes":"DOCTOR B first"', '"clinician_notes":"DOCTOR B first","zz_future_col":1') WHERE changeset_id = ?`,
      )
      .run(first.changeset.id);
    const r = await b.sync.syncOnce();
    expect(r.uploaded).toBe(0);
    expect(b.sync.conflicts().map((c) => [c.changeset_id, c.reason])).toEqual([
      [first.changeset.id, 'validation'],
      [second.changeset.id, 'stale'],
    ]);
    const [inj] = await hq.query<{ clinician_notes: string }>(hq.summary.orgId, 'SELECT clinician_notes FROM injury WHERE id = $1', [injury]);
    expect(inj!.clinician_notes).toBe('PHYSIO A: must keep');
  });

  it('a proposal planned on top of an edit HQ then rejects fails with it: approving it cannot overwrite the other device (issue 12 re-review)', async () => {
    const a = await enrol('physio');
    const b = await enrol('doctor');
    await a.sync.syncOnce();
    await b.sync.syncOnce();
    const injury = (sqlite(a.db).prepare('SELECT id FROM injury WHERE deleted_at IS NULL ORDER BY id LIMIT 1 OFFSET 6').get() as { id: string }).id;
    const doctor = findUserByEmail(b.db, DEMO_EMAILS.doctor)!.id;
    callVerb({ db: b.db, userId: doctor }, 'injuries.update', { id: injury, clinician_notes: 'DOCTOR B first' });
    const row = sqlite(b.db).prepare('SELECT clinician_notes, version FROM injury WHERE id = ?').get(injury) as { clinician_notes: string; version: number };
    // An MCP client's change, planned on the row as B's pending edit left it, waiting for B's confirmation.
    const p = proposeChangeset(b.db, {
      userId: doctor,
      source: 'mcp',
      toolName: 'injuries.update',
      title: 'Update injury',
      planned: {
        verb: 'injuries.update',
        summary: 'append',
        changes: [
          {
            op: 'update',
            table: 'injury',
            id: injury,
            version: row.version,
            before: { clinician_notes: row.clinician_notes },
            after: { clinician_notes: 'DOCTOR B first + MCP addendum' },
          },
        ],
      },
    });
    callVerb(as(a.db, DEMO_EMAILS.physio), 'injuries.update', { id: injury, clinician_notes: 'PHYSIO A: must keep' });
    await a.sync.syncOnce();
    await b.sync.syncOnce();
    // B's row is HQ's again, at the very version the proposal was planned on; the proposal failed with the edit.
    expect(() => approveProposal(b.db, { approverUserId: doctor, changesetId: p.id, contentHash: p.contentHash })).toThrow(/already failed/);
    await b.sync.syncOnce();
    const [inj] = await hq.query<{ clinician_notes: string }>(hq.summary.orgId, 'SELECT clinician_notes FROM injury WHERE id = $1', [injury]);
    expect(inj!.clinician_notes).toBe('PHYSIO A: must keep');
  });

  /** The admin's +25 % rise of fee `fee` on `db`, planned on the fee as `db` holds it (needs an owner). */
  function proposeFeeRise(db: Db, fee: { id: string; version: number; price_cents: number }): { id: string; contentHash: string } {
    const p = proposeChangeset(db, {
      userId: findUserByEmail(db, DEMO_EMAILS.admin)!.id,
      source: 'page',
      toolName: 'rates.updateItem',
      title: 'Change a fee',
      permission: 'rates.write',
      planned: {
        verb: 'rates.updateItem',
        summary: 'Raise a fee by 25 %',
        changes: [
          {
            op: 'update',
            table: 'rate_item',
            id: fee.id,
            version: fee.version,
            before: { price_cents: fee.price_cents },
            after: { price_cents: Math.round(fee.price_cents * 1.25) },
          },
        ],
      },
    });
    expect(p.status).toBe('needs_owner');
    return p;
  }
  const feeAt = (db: Db, offset: number) =>
    sqlite(db).prepare('SELECT id, version, price_cents FROM rate_item WHERE deleted_at IS NULL ORDER BY code LIMIT 1 OFFSET ?').get(offset) as {
      id: string;
      version: number;
      price_cents: number;
    };
  const hqProposal = async (id: string) =>
    (await hq.query<{ status: string; decided_by: string | null }>(hq.summary.orgId, 'SELECT status, decided_by FROM hq_proposal WHERE id = $1', [id]))[0];
  const hqPrice = async (id: string) =>
    (await hq.query<{ price_cents: number }>(hq.summary.orgId, 'SELECT price_cents FROM rate_item WHERE id = $1', [id]))[0]!.price_cents;

  it("a refused or discarded edit fails only this device's own proposals: another user's proposal copied from HQ stays waiting there (issue 12 final review)", async () => {
    const laptop = await enrol('admin');
    const owner = await enrol('owner');
    await laptop.sync.syncOnce();
    await owner.sync.syncOnce();
    const fee = feeAt(laptop.db, 2);
    const p = proposeFeeRise(laptop.db, fee);
    await laptop.sync.syncOnce();
    await syncUntil(
      [owner.sync],
      'the proposal reaches the owner',
      () => !!sqlite(owner.db).prepare('SELECT 1 FROM changeset_proposal WHERE id = ?').get(p.id),
    );
    // The owner edits that fee's name and discards the edit: the admin's proposal is not the owner's device's to withdraw.
    const ownerId = findUserByEmail(owner.db, DEMO_EMAILS.owner)!.id;
    const edit = callVerb({ db: owner.db, userId: ownerId }, 'rates.updateItem', { id: fee.id, name: 'typo' }) as { changeset: { id: string } };
    owner.sync.discard(edit.changeset.id, ownerId);
    expect(sqlite(owner.db).prepare('SELECT status FROM changeset_proposal WHERE id = ?').pluck().get(p.id)).toBe('needs_owner');
    await owner.sync.syncOnce();
    const [atHq] = await hq.query<{ status: string }>(hq.summary.orgId, 'SELECT status FROM hq_proposal WHERE id = $1', [p.id]);
    expect(atHq!.status).toBe('needs_owner');
  });

  it('a needs-owner proposal planned on a pending edit reaches HQ only after that edit: at once when HQ applies it, never when HQ refuses it (issue 12 final review B-c, P4)', async () => {
    const laptop = await enrol('admin');
    const owner = await enrol('owner');
    await laptop.sync.syncOnce();
    await owner.sync.syncOnce();
    const adminId = findUserByEmail(laptop.db, DEMO_EMAILS.admin)!.id;
    const ownerId = findUserByEmail(owner.db, DEMO_EMAILS.owner)!.id;
    const status = (db: Db, id: string) => sqlite(db).prepare('SELECT status FROM changeset_proposal WHERE id = ?').pluck().get(id);
    const [refusedFee, appliedFee] = [3, 4].map((n) => feeAt(laptop.db, n));
    // Offline on the laptop: the admin renames two fees, then proposes a rise of each, planned on the renamed rows.
    for (const fee of [refusedFee!, appliedFee!])
      callVerb({ db: laptop.db, userId: adminId }, 'rates.updateItem', { id: fee.id, name: 'Renamed on the laptop' });
    const refused = proposeFeeRise(laptop.db, feeAt(laptop.db, 3));
    const applied = proposeFeeRise(laptop.db, feeAt(laptop.db, 4));
    // Neither is reported while its edit waits (were the edit's upload to fail, an owner elsewhere could approve it).
    expect(pendingProposalEvents(laptop.db, 10)).toEqual([]);
    // The owner sets the first fee's price first: HQ reaches the version that proposal expects through the owner's write.
    callVerb({ db: owner.db, userId: ownerId }, 'rates.updateItem', { id: refusedFee!.id, price_cents: 12_345 });
    await owner.sync.syncOnce();
    // One pass on the laptop: the first rename is refused, and its proposal fails without ever reaching HQ; the
    // second rename applies, and its proposal reaches HQ in the same pass.
    await laptop.sync.syncOnce();
    expect(status(laptop.db, refused.id)).toBe('failed');
    expect(await hqProposal(refused.id)).toBeUndefined();
    expect(await hqProposal(applied.id)).toMatchObject({ status: 'needs_owner' });
    await syncUntil([owner.sync], 'the second proposal reaches the owner', () => status(owner.db, applied.id) === 'needs_owner');
    expect(status(owner.db, refused.id)).toBeUndefined();
    // Approved there, it applies on top of the rename it was planned on.
    approveProposal(owner.db, { approverUserId: ownerId, changesetId: applied.id, contentHash: applied.contentHash });
    await owner.sync.syncOnce();
    expect(await hqPrice(refusedFee!.id)).toBe(12_345);
    expect(await hqPrice(appliedFee!.id)).toBe(Math.round(appliedFee!.price_cents * 1.25));
  });

  it("an owner's approval on the laptop of a proposal planned on a pending edit HQ then refuses: never applied, never left waiting at HQ (issue 12 final review B-b)", async () => {
    const laptop = await enrol('admin');
    const owner = await enrol('owner');
    await laptop.sync.syncOnce();
    await owner.sync.syncOnce();
    const adminId = findUserByEmail(laptop.db, DEMO_EMAILS.admin)!.id;
    const ownerId = findUserByEmail(owner.db, DEMO_EMAILS.owner)!.id;
    const fee = feeAt(laptop.db, 5);
    callVerb({ db: laptop.db, userId: adminId }, 'rates.updateItem', { id: fee.id, name: 'Renamed again on the laptop' });
    const p = proposeFeeRise(laptop.db, feeAt(laptop.db, 5));
    // The owner, signed in on the admin's laptop with their PIN, approves it there: its upload waits behind the rename.
    approveProposal(laptop.db, { approverUserId: findUserByEmail(laptop.db, DEMO_EMAILS.owner)!.id, changesetId: p.id, contentHash: p.contentHash });
    callVerb({ db: owner.db, userId: ownerId }, 'rates.updateItem', { id: fee.id, price_cents: 11_111 });
    await owner.sync.syncOnce();
    await laptop.sync.syncOnce();
    expect(uploadState(laptop.db, p.id)).toMatchObject({ outbox: 'rejected', reason: 'stale' });
    expect(getChangeset(laptop.db, hq.summary.orgId, p.id)!.status).toBe('refused');
    // Decided here before HQ heard of it: it was never reported, so no owner elsewhere can approve it.
    expect(await hqProposal(p.id)).toBeUndefined();
    expect(pendingProposalEvents(laptop.db, 10)).toEqual([]);
    await owner.sync.syncOnce();
    expect(sqlite(owner.db).prepare('SELECT 1 FROM changeset_proposal WHERE id = ?').get(p.id)).toBeUndefined();
    expect(await hqPrice(fee.id)).toBe(11_111);
  });

  it("a change HQ refused, or one discarded, cannot be undone: the Undo's expected version would be HQ's row from another device (issue 12 final review)", async () => {
    const laptop = await enrol('admin');
    const desk = await enrol('admin', DEMO_EMAILS.admin);
    await laptop.sync.syncOnce();
    await desk.sync.syncOnce();
    const admin = (db: Db) => ({ db, userId: findUserByEmail(db, DEMO_EMAILS.admin)!.id });
    const [refusedFee, discardedFee, undoneFee] = [7, 8, 9].map((n) => feeAt(laptop.db, n));
    // Refused: the laptop renames a fee offline; the desk renames it first at HQ.
    const c1 = callVerb(admin(laptop.db), 'rates.updateItem', { id: refusedFee!.id, name: 'Laptop name' }) as { changeset: { id: string } };
    callVerb(admin(desk.db), 'rates.updateItem', { id: refusedFee!.id, name: 'Desk name' });
    // Discarded: a pending rename the user drops once the desk's rename of that fee has arrived.
    const c2 = callVerb(admin(laptop.db), 'rates.updateItem', { id: discardedFee!.id, name: 'Laptop name b' }) as { changeset: { id: string } };
    callVerb(admin(desk.db), 'rates.updateItem', { id: discardedFee!.id, name: 'Desk name b' });
    await desk.sync.syncOnce();
    laptop.sync.discard(c2.changeset.id, admin(laptop.db).userId);
    await laptop.sync.syncOnce();
    await syncUntil([laptop.sync], 'the desk names on the laptop', () =>
      ['Desk name', 'Desk name b'].every((n) => sqlite(laptop.db).prepare('SELECT 1 FROM rate_item WHERE name = ?').get(n)),
    );
    for (const id of [c1.changeset.id, c2.changeset.id]) {
      expect(getChangeset(laptop.db, hq.summary.orgId, id)!.status).toBe('refused');
      expect(() => callVerb(admin(laptop.db), 'changesets.undo', { changeset_id: id })).toThrow(/never reached HQ/);
    }
    await laptop.sync.syncOnce();
    const names = await hq.query<{ name: string }>(hq.summary.orgId, 'SELECT name FROM rate_item WHERE id = ANY($1) ORDER BY code', [
      [refusedFee!.id, discardedFee!.id],
    ]);
    expect(names.map((r) => r.name)).toEqual(['Desk name', 'Desk name b']);
    // An Undo HQ refuses gives the change it undid back: it still holds at HQ, and can be undone later.
    const c3 = callVerb(admin(laptop.db), 'rates.updateItem', { id: undoneFee!.id, name: 'Laptop name c' }) as { changeset: { id: string } };
    await laptop.sync.syncOnce();
    const undo = callVerb(admin(laptop.db), 'changesets.undo', { changeset_id: c3.changeset.id }) as { changeset: { id: string } };
    laptop.sync.discard(undo.changeset.id, admin(laptop.db).userId);
    expect(getChangeset(laptop.db, hq.summary.orgId, c3.changeset.id)).toMatchObject({ status: 'applied', undone_by: null });
    expect(getChangeset(laptop.db, hq.summary.orgId, undo.changeset.id)!.status).toBe('refused');
  });

  it('an edit made on top of a discarded pending edit is held back as a conflict, not uploaded', async () => {
    const a = await enrol('physio');
    const b = await enrol('doctor');
    await a.sync.syncOnce();
    await b.sync.syncOnce();
    const injury = (sqlite(a.db).prepare('SELECT id FROM injury WHERE deleted_at IS NULL ORDER BY id LIMIT 1 OFFSET 4').get() as { id: string }).id;
    callVerb(as(a.db, DEMO_EMAILS.physio), 'injuries.update', { id: injury, clinician_notes: 'A wrote this' });
    await a.sync.syncOnce();
    const first = callVerb(as(b.db, DEMO_EMAILS.doctor), 'injuries.update', { id: injury, clinician_notes: 'B first' }) as { changeset: { id: string } };
    const second = callVerb(as(b.db, DEMO_EMAILS.doctor), 'injuries.update', { id: injury, clinician_notes: 'B second' }) as { changeset: { id: string } };
    const doctorId = findUserByEmail(b.db, DEMO_EMAILS.doctor)!.id;
    b.sync.discard(first.changeset.id, doctorId);
    expect(b.sync.conflicts().map((c) => [c.changeset_id, c.reason, c.author_id])).toEqual([[second.changeset.id, 'stale', doctorId]]);
    // The discard is on record: when, by whom, and the payload stays in the outbox (issue 12 review B2).
    expect(sqlite(b.db).prepare('SELECT state, discarded_by FROM sync_upload WHERE changeset_id = ?').get(first.changeset.id)).toEqual({
      state: 'discarded',
      discarded_by: doctorId,
    });
    expect(sqlite(b.db).prepare('SELECT payload_json FROM outbox WHERE changeset_id = ?').pluck().get(first.changeset.id)).toContain('B first');
    const r = await b.sync.syncOnce();
    expect(r.uploaded).toBe(0);
    const [inj] = await hq.query<{ clinician_notes: string }>(hq.summary.orgId, 'SELECT clinician_notes FROM injury WHERE id = $1', [injury]);
    expect(inj!.clinician_notes).toBe('A wrote this');
  });

  it('must-refetch replaces a table with a fresh snapshot and keeps the local change made before it', async () => {
    const a = await enrol('physio');
    await a.sync.syncOnce();
    const id = (sqlite(a.db).prepare('SELECT id FROM athlete WHERE deleted_at IS NULL ORDER BY id LIMIT 1 OFFSET 3').get() as { id: string }).id;
    callVerb(as(a.db, DEMO_EMAILS.physio), 'athletes.update', { id, notes: 'made before the refetch' });
    const handle = listShapeStates(a.db).find((s) => s.tbl === 'athlete')!.handle!;
    // A row only the stale replica has: the fresh snapshot must remove it.
    sqlite(a.db).pragma('foreign_keys = OFF');
    sqlite(a.db)
      .prepare(
        `INSERT INTO athlete (id, org_id, created_at, updated_at, name, date_of_birth, sex, dominant_side) SELECT '01900000-0000-7000-8000-000000000001', org_id, created_at, updated_at, 'Ghost', date_of_birth, sex, dominant_side FROM athlete WHERE id = ?`,
      )
      .run(id);
    sqlite(a.db).pragma('foreign_keys = ON');
    expect(await hq.deleteShape('athlete', handle, `org_id = '${hq.summary.orgId}'`)).toBe(202);
    const r = await a.sync.syncOnce();
    expect(r.refetched).toContain('athlete');
    const orgId = hq.summary.orgId;
    const hqRows = await hq.query<{ id: string; notes: string; version: number }>(orgId, 'SELECT id, notes, version FROM athlete WHERE org_id = $1', [orgId]);
    expect(deviceRows(a.db, 'athlete', ['notes', 'version'])).toEqual(Object.fromEntries(hqRows.map((row) => [row.id, row])));
    expect(sqlite(a.db).prepare('SELECT notes FROM athlete WHERE id = ?').pluck().get(id)).toBe('made before the refetch');
    expect(a.sync.status().pending_uploads).toBe(0);
  });

  it('a Larchfield device receives no Kestrel Vale row, even when it hand-edits the shape request', async () => {
    const l = await enrol('doctor', 'doctor@larchfield.test');
    await l.sync.syncOnce();
    const kestrel = hq.summary.orgId;
    const larch = hq.summary.secondOrgId;
    for (const table of ['organization', 'app_user', 'athlete', 'injury', 'rtp_entry', 'wellness', 'activity']) {
      const col = table === 'organization' ? 'id' : 'org_id';
      const orgs = sqlite(l.db).prepare(`SELECT DISTINCT ${col} FROM ${table}`).pluck().all();
      expect(
        orgs.every((o) => o === larch),
        table,
      ).toBe(true);
    }
    expect((sqlite(l.db).prepare('SELECT count(*) FROM athlete').pluck().get() as number) > 0).toBe(true);
    // The device's own token, asking for Kestrel Vale's rows by hand.
    const token = machineSecretBox(l.db.path).open(JSON.parse(getEnrolment(l.db)!.token_sealed) as SealedSecret);
    for (const where of [`org_id = '${kestrel}'`, `org_id = '${kestrel}' OR true`, `true) OR (org_id = '${kestrel}'`]) {
      const res = await fetch(`${hq.url}/v1/shape?table=athlete&offset=-1&where=${encodeURIComponent(where)}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const body = await res.text();
      expect(body.includes(kestrel), where).toBe(false);
    }
  });

  it('live: a write on device A is visible on device B; HQ restarting under live devices is survived', async () => {
    const a = await enrol('physio');
    const b = await enrol('doctor');
    await a.sync.syncOnce();
    await b.sync.syncOnce();
    a.sync.start();
    b.sync.start();
    if (process.env.SYNC_DEBUG) a.sync.onChange((st) => console.log('A', JSON.stringify(st)));
    const id = (sqlite(a.db).prepare('SELECT id FROM athlete WHERE deleted_at IS NULL ORDER BY id LIMIT 1 OFFSET 5').get() as { id: string }).id;
    callVerb(as(a.db, DEMO_EMAILS.physio), 'athletes.update', { id, notes: 'live 1' });
    a.sync.nudge();
    await waitFor('B to see live 1', () => sqlite(b.db).prepare('SELECT notes FROM athlete WHERE id = ?').pluck().get(id) === 'live 1');
    await waitFor('A to settle', () => a.sync.status().pending_uploads === 0 && uploadStateOf(a.db, 'synced'));

    await hq.stopHq();
    callVerb(as(a.db, DEMO_EMAILS.physio), 'athletes.update', { id, notes: 'written while HQ was down' });
    await waitFor('A to see HQ gone', () => !a.sync.status().online && a.sync.status().last_error?.code === 'Unavailable');
    expect(a.sync.status().pending_uploads).toBe(1);
    await hq.startHq();
    await waitFor(
      'B to see the write made while HQ was down',
      () => sqlite(b.db).prepare('SELECT notes FROM athlete WHERE id = ?').pluck().get(id) === 'written while HQ was down',
      40_000,
    );
    await waitFor(
      'A back online with nothing pending',
      () => a.sync.status().online && a.sync.status().pending_uploads === 0 && a.sync.status().last_error === null,
      20_000,
    );
    await a.sync.stop();
    await b.sync.stop();
  }, 120_000);

  it('live with nothing to upload: HQ going away is seen from the shape streams alone, again after it came back, and also when its connections hang', async () => {
    const link = await startNetLink(hq.url);
    const db = openDb(devicePath());
    // The live deadline must exceed HQ's long-poll (5 s in this stack).
    const sync = await DeviceSync.enrol(
      db,
      { hqUrl: link.url, email: DEMO_EMAILS.physio, pin: DEMO_PIN, code: await hq.code(DEMO_EMAILS.physio), deviceName: 'pitch laptop' },
      { ...FAST, shapeDeadlines: { liveMs: 8_000, otherMs: 30_000 } },
    );
    engines.push(sync);
    try {
      await sync.syncOnce();
      sync.start();
      expect(sync.status().online).toBe(true);
      // HQ's connections close: the held long-polls fail, offline.
      link.cut();
      await waitFor('offline after the cut', () => !sync.status().online, 5_000);
      // Back: a pass reaches HQ (online); the streams reconnect and hold new long-polls. Cut again
      // before any of them is answered: each stream's last word was "unreachable", and the device
      // must still notice (every outcome counts, not only a stream's change of mind).
      link.restore();
      await sync.syncOnce();
      expect(sync.status().online).toBe(true);
      await new Promise((r) => setTimeout(r, 1_000));
      link.cut();
      await waitFor('offline after the second cut', () => !sync.status().online, 5_000);
      expect(sync.status().pending_uploads).toBe(0);
      // HQ stops answering without closing anything (a dead Wi-Fi link): the held requests fail
      // at the response deadline instead of hanging.
      link.restore();
      await sync.syncOnce();
      expect(sync.status().online).toBe(true);
      await new Promise((r) => setTimeout(r, 1_000));
      link.blackhole();
      await waitFor('offline when HQ stops answering', () => !sync.status().online, 8_000 + 10_000);
      link.restore();
      await waitFor('online again', () => sync.status().online, 20_000);
    } finally {
      await sync.stop();
      await link.close();
    }
  }, 120_000);

  it('live: a local write wakes the uploader at once, not at its next poll (issue 12 review minor: the app never nudged it)', async () => {
    // A poll far longer than the wait below: only the write's own wake-up can upload in time.
    const { db, sync } = await enrol('physio', DEMO_EMAILS.physio, { pollMs: 120_000 });
    await sync.syncOnce();
    sync.start();
    await waitFor('live', () => sync.isLive);
    await new Promise((r) => setTimeout(r, 300)); // the uploader is asleep in its poll now
    const id = (sqlite(db).prepare('SELECT id FROM athlete WHERE deleted_at IS NULL ORDER BY id LIMIT 1 OFFSET 5').get() as { id: string }).id;
    callVerb(as(db, DEMO_EMAILS.physio), 'athletes.update', { id, notes: 'uploaded on the write' });
    await waitFor('the write to be uploaded', () => sync.status().pending_uploads === 0, 10_000);
    const [row] = await hq.query<{ notes: string }>(hq.summary.orgId, 'SELECT notes FROM athlete WHERE id = $1', [id]);
    expect(row!.notes).toBe('uploaded on the write');
    await sync.stop();
  }, 60_000);

  it('live and idle: the last successful sync keeps up with a connected device that writes nothing', async () => {
    const { sync } = await enrol('coach', DEMO_EMAILS.coach, { idleSyncedMarkMs: 500 });
    await sync.syncOnce();
    const first = sync.status().last_synced_at;
    expect(first).not.toBeNull();
    sync.start();
    await waitFor('live', () => sync.isLive);
    const after = (than: string, what: string) =>
      waitFor(
        what,
        () => {
          const at = sync.status().last_synced_at;
          return at !== null && at > than ? at : null;
        },
        20_000,
      );
    // Going live marks it once; then, with no write anywhere, only the shapes' long polls coming
    // back up to date (every 5 s here) can move it again.
    const live = await after(first!, 'the mark on going live');
    const idle = await after(live, 'the idle mark');
    expect(sync.status().pending_uploads).toBe(0);
    expect(Date.parse(idle) - Date.parse(live)).toBeGreaterThanOrEqual(500);
    await sync.stop();
  }, 60_000);

  it('a revoked device token stops sync at the next request', async () => {
    const a = await enrol('physio');
    await a.sync.syncOnce();
    const token = machineSecretBox(a.db.path).open(JSON.parse(getEnrolment(a.db)!.token_sealed) as SealedSecret);
    a.sync.start();
    await waitFor('live', () => a.sync.isLive);
    expect(await hq.revokeDevice(a.sync.status().device_id!, token)).toBe(200);
    const id = (sqlite(a.db).prepare('SELECT id FROM athlete WHERE deleted_at IS NULL ORDER BY id LIMIT 1').get() as { id: string }).id;
    callVerb(as(a.db, DEMO_EMAILS.physio), 'athletes.update', { id, notes: 'after revoke' });
    await waitFor('sync to stop', () => !a.sync.isLive, 20_000);
    expect(a.sync.status().last_error?.code).toBe('Unauthenticated');
    expect(a.sync.status().pending_uploads).toBe(1); // kept, never lost
    await expect(a.sync.syncOnce()).rejects.toMatchObject({ code: 'Unauthenticated' });
    await a.sync.stop();
  }, 60_000);

  it("live: a PIN reset at HQ of the device's account stops sync with HQ's words; the write is kept (issue 13 review blocker)", async () => {
    const d = await enrol('doctor', 'doctor@larchfield.test');
    await d.sync.syncOnce();
    d.sync.start();
    await waitFor('live', () => d.sync.isLive);
    await hq.query(hq.summary.secondOrgId, `UPDATE app_user SET pin_hash = 'scrypt$handed-over' WHERE lower(email) = 'doctor@larchfield.test'`);
    const id = (sqlite(d.db).prepare('SELECT id FROM athlete WHERE deleted_at IS NULL ORDER BY id LIMIT 1').get() as { id: string }).id;
    callVerb(as(d.db, 'doctor@larchfield.test'), 'athletes.update', { id, notes: 'after the PIN reset' });
    await waitFor('sync to stop', () => !d.sync.isLive, 20_000);
    // What the shell's indicator ("Sync stopped") and the Sync page show.
    expect(d.sync.status().last_error).toMatchObject({
      code: 'Unauthenticated',
      message: expect.stringMatching(/account this device signed in with changed at HQ.*Sign the device in to HQ again \(Settings → Sync\)/),
    });
    expect(d.sync.status().pending_uploads).toBe(1);
    await d.sync.stop();
  }, 60_000);

  it('a role lowered at HQ while the device is offline: the pending clinical write is rejected and visible', async () => {
    const p = await enrol('physio', 'physio@larchfield.test');
    await p.sync.syncOnce();
    const athlete = sqlite(p.db).prepare('SELECT id FROM athlete WHERE deleted_at IS NULL ORDER BY id LIMIT 1').pluck().get() as string;
    const made = callVerb(as(p.db, 'physio@larchfield.test'), 'injuries.create', {
      athlete_id: athlete,
      body_part: 'ankle',
      side: 'left',
      mechanism: 'contact',
      onset_date: hq.today,
      severity: 'mild',
    }) as { changeset: { id: string; changes: { id: string }[] } };
    const injuryId = made.changeset.changes[0]!.id;
    expect(sqlite(p.db).prepare('SELECT count(*) FROM injury WHERE id = ?').pluck().get(injuryId)).toBe(1);
    await hq.query(
      hq.summary.secondOrgId,
      `UPDATE app_user SET role = 'coach', version = version + 1, updated_at = now() WHERE lower(email) = 'physio@larchfield.test'`,
    );
    // The role change ends the device token (HQ 0012, the account stamp): sync stops, saying why
    // and what to do, and the write waits in the outbox.
    await expect(p.sync.syncOnce()).rejects.toMatchObject({ code: 'Unauthenticated', message: expect.stringMatching(/changed at HQ.*Settings → Sync/) });
    expect(p.sync.status().last_error).toMatchObject({ code: 'Unauthenticated', message: expect.stringMatching(/role, athlete link, PIN or status/) });
    expect(p.sync.status().pending_uploads).toBe(1);
    // Signed in again (Settings → Sync): the pending write is uploaded, rejected, and visible.
    p.sync = await DeviceSync.enrol(
      p.db,
      { hqUrl: hq.url, email: 'physio@larchfield.test', pin: DEMO_PIN, code: await hq.code('physio@larchfield.test'), deviceName: 'physio laptop' },
      FAST,
    );
    engines.push(p.sync);
    const r = await p.sync.syncOnce();
    expect(r.rejected).toBe(1);
    expect(p.sync.conflicts()).toMatchObject([{ changeset_id: made.changeset.id, reason: 'forbidden', verb: 'injuries.create' }]);
    expect(p.sync.conflicts()[0]!.changes[0]).toMatchObject({ op: 'insert', table: 'injury', id: injuryId, after: { body_part: 'ankle' } });
    // Server truth locally: the injury does not exist at HQ, and the new role arrived.
    expect(sqlite(p.db).prepare('SELECT count(*) FROM injury WHERE id = ?').pluck().get(injuryId)).toBe(0);
    const role = (): unknown => sqlite(p.db).prepare(`SELECT role FROM app_user WHERE lower(email) = 'physio@larchfield.test'`).pluck().get();
    await syncUntil([p.sync], 'the lowered role arrives', () => role() === 'coach');
    expect(role()).toBe('coach');
    expect(p.sync.conflicts()).toHaveLength(1); // still visible after further syncs
  });
  it("an Undo's __NOW__ placeholder reaches HQ as the time the Undo was applied on the device", async () => {
    const { db, sync } = await enrol('physio');
    await sync.syncOnce();
    const me = as(db, DEMO_EMAILS.physio);
    const orgId = hq.summary.orgId;
    const athlete = sqlite(db).prepare('SELECT id FROM athlete WHERE deleted_at IS NULL ORDER BY id LIMIT 1').pluck().get() as string;
    const create = (bodyPart: string): { csId: string; injuryId: string } => {
      const r = callVerb(me, 'injuries.create', {
        athlete_id: athlete,
        body_part: bodyPart,
        side: 'right',
        mechanism: 'non_contact',
        onset_date: hq.today,
        severity: 'mild',
      }) as { changeset: { id: string; changes: { id: string }[] } };
      return { csId: r.changeset.id, injuryId: r.changeset.changes[0]!.id };
    };
    const viaVerb = create('knee');
    const viaProposal = create('hip');
    expect((await sync.syncOnce()).uploaded).toBe(2);

    // 1. Undo through the verb (the Activity page's Undo button).
    const u1 = callVerb(me, 'changesets.undo', { changeset_id: viaVerb.csId }) as { changeset: { id: string } };
    // 2. Undo as an approved proposal carries it: the stored inverse, placeholder and all, applied as planned.
    const inverse = getChangeset(db, orgId, viaProposal.csId)!.inverse!;
    expect(inverse[0]!.after).toEqual({ deleted_at: '__NOW__' });
    const u2 = applyPlanned(
      me,
      { verb: 'changesets.undo', summary: 'Undo: hip injury', changes: inverse, undoOf: viaProposal.csId },
      { undoOf: viaProposal.csId },
    );
    const payload = sqlite(db).prepare('SELECT payload_json FROM outbox WHERE changeset_id = ?').pluck().get(u2.id) as string;
    expect(payload).toContain('"__NOW__"'); // the outbox keeps the placeholder; the uploader resolves it

    const r = await sync.syncOnce();
    expect(r).toMatchObject({ uploaded: 2, rejected: 0, unsettled: 0 });
    const local = sqlite(db).prepare('SELECT id, deleted_at FROM injury WHERE id IN (?, ?)').all(viaVerb.injuryId, viaProposal.injuryId) as {
      id: string;
      deleted_at: string | null;
    }[];
    const hqRows = await hq.query<{ id: string; deleted_at: Date | null }>(orgId, 'SELECT id::text, deleted_at FROM injury WHERE id = ANY($1::uuid[])', [
      [viaVerb.injuryId, viaProposal.injuryId],
    ]);
    expect(hqRows).toHaveLength(2);
    const appliedAt = (id: string): string => sqlite(db).prepare('SELECT applied_at FROM changeset WHERE id = ?').pluck().get(id) as string;
    const hqAt = (id: string): Date | null => hqRows.find((x) => x.id === id)!.deleted_at;
    // HQ holds the device's time (never the placeholder, never HQ's clock), the same as the device.
    for (const injuryId of [viaVerb.injuryId, viaProposal.injuryId]) {
      expect(hqAt(injuryId), injuryId).toBeInstanceOf(Date);
      expect(local.find((x) => x.id === injuryId)!.deleted_at).toBe(hqAt(injuryId)!.toISOString());
    }
    // The placeholder became the time the Undo was applied on the device.
    expect(hqAt(viaProposal.injuryId)!.toISOString()).toBe(new Date(appliedAt(u2.id)).toISOString());
    expect(u1.changeset.id).not.toBe(u2.id);
  });

  it('a pass waits for the shapes to deliver what it uploaded, though replication lags HQ; bounded, then a later pass settles it', async () => {
    const { db, sync } = await enrol('physio');
    await sync.syncOnce();
    const orgId = hq.summary.orgId;
    const me = as(db, DEMO_EMAILS.physio);
    const [first, second] = sqlite(db).prepare('SELECT id FROM athlete WHERE deleted_at IS NULL ORDER BY id DESC LIMIT 2').pluck().all() as [string, string];
    // Replication stops (the shape service's WAL sender is cut and cannot log in again): HQ applies
    // uploads, but their commits do not reach the shape log, so a pull's up-to-date predates them.
    const stopReplication = async (): Promise<void> => {
      await hq.adminQuery(`ALTER ROLE ${HQ_ROLES.replication} NOLOGIN`);
      await hq.adminQuery(`SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = 'hq_shapes' AND active_pid IS NOT NULL`);
    };
    const resumeReplication = (): Promise<unknown> => hq.adminQuery(`ALTER ROLE ${HQ_ROLES.replication} LOGIN`);
    try {
      // 1. Bounded: with replication down for longer than the wait, the pass ends with the change
      //    applied at HQ but not yet delivered; the row keeps the device's value (no flicker).
      await stopReplication();
      const a = callVerb(me, 'athletes.update', { id: first, notes: 'lagging replication 1' });
      const short = new DeviceSync(db, { ...FAST, settleTimeoutMs: 300 });
      const r1 = await short.syncOnce();
      expect(r1).toMatchObject({ uploaded: 1, unsettled: 1 });
      expect(uploadState(db, a.changeset.id)).toMatchObject({ outbox: 'applied', state: 'applied' });
      expect(sqlite(db).prepare('SELECT notes FROM athlete WHERE id = ?').pluck().get(first)).toBe('lagging replication 1');

      // 2. Replication comes back while the next pass waits: that pass settles both changesets,
      //    the one it uploaded and the one left over.
      const b = callVerb(me, 'athletes.update', { id: second, notes: 'lagging replication 2' });
      let resumed: Promise<unknown> | null = null;
      const waiting = new DeviceSync(db, {
        ...FAST,
        trace: (point) => {
          if (point === 'upload:recorded' && !resumed) resumed = new Promise((r) => setTimeout(r, 500)).then(resumeReplication);
        },
      });
      const r2 = await waiting.syncOnce();
      expect(resumed).not.toBeNull();
      expect(r2).toMatchObject({ uploaded: 1, unsettled: 0 });
      for (const id of [a.changeset.id, b.changeset.id]) expect(uploadState(db, id)).toMatchObject({ outbox: 'synced', state: 'synced' });
      expect(sqlite(db).prepare('SELECT count(*) FROM sync_server_row').pluck().get()).toBe(0);
      const hqRows = await hq.query<{ id: string; notes: string; version: number }>(
        orgId,
        'SELECT id::text, notes, version FROM athlete WHERE id = ANY($1::uuid[]) ORDER BY id',
        [[first, second]],
      );
      expect(sqlite(db).prepare('SELECT id, notes, version FROM athlete WHERE id IN (?, ?) ORDER BY id').all(first, second)).toEqual(hqRows);
    } finally {
      await resumeReplication();
    }
  }, 120_000);
});
