/**
 * HQ review with real parts: the HQ server over a real Postgres (with the embedded shape service),
 * two SQLite device files, two sync engines run the way the app runs them (main/app/AppSync over
 * main/sync/engine.ts). A physio records an injury on the pitch-side laptop while HQ cannot be
 * reached; after both devices sync, the HQ reviewer's device holds it, and its activity log says
 * who recorded it, when (the time on the pitch, not the upload), and from which device. The
 * reviewer's device is an org device: other staff sign in on it with their PINs (synced as
 * hashes) and see at HQ exactly what their role allows.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_EMAILS, DEMO_PIN } from '../../models/seed/demo';
import { openDb, type Db } from '../data/db';
import { findUserByEmail } from '../data/identity';
import { createHandlers, dispatch } from '../ipc/handlers';
import { callVerb } from '../services';
import { havePg, useHqStack } from '../sync/testing/hq-stack';
import { deviceSyncFactory } from './device-sync';
import { AppSync } from './sync-runner';
import { sqlite } from '../data/sqlite';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe.skipIf(!havePg)('HQ review of what was recorded offline', () => {
  const hq = useHqStack();
  const syncs: AppSync[] = [];
  afterAll(async () => {
    for (const s of syncs) await s.close();
  });

  async function device(role: 'physio' | 'doctor', name: string): Promise<{ db: Db; sync: AppSync }> {
    const d = mkdtempSync(join(tmpdir(), 'ai-hq-review-'));
    dirs.push(d);
    const db = openDb(join(d, 'device.sqlite'));
    const sync = new AppSync(db, deviceSyncFactory(), { tickMs: 0, stopTimeoutMs: 1000 });
    syncs.push(sync);
    expect(sync.status().enrolled).toBe(false);
    await sync.enrol({ hqUrl: hq.url, email: DEMO_EMAILS[role], pin: DEMO_PIN, code: await hq.code(DEMO_EMAILS[role]), deviceName: name });
    await sync.syncNow();
    return { db, sync };
  }
  const as = (db: Db, email: string) => ({ db, userId: findUserByEmail(db, email)!.id });

  it('a physio’s offline injury reaches the HQ reviewer’s device with who, when and which device', async () => {
    const pitch = await device('physio', 'Pitch laptop');
    const desk = await device('doctor', 'HQ review desk');
    const athleteId = hq.summary.linkedAthleteId;

    // Offline on the training ground: HQ cannot be reached; the write goes to the outbox.
    await hq.stopHq();
    const before = Date.now();
    const created = callVerb(as(pitch.db, DEMO_EMAILS.physio), 'injuries.create', {
      athlete_id: athleteId,
      body_part: 'hamstring',
      side: 'left',
      mechanism: 'non_contact',
      onset_date: hq.today,
      severity: 'moderate',
      clinician_notes: 'Felt a pull at 70 min, recorded pitch side.',
    }) as { changeset: { changes: { id: string }[] } };
    const injuryId = created.changeset.changes[0]!.id;
    await expect(pitch.sync.syncNow()).rejects.toMatchObject({ code: 'Unavailable' });
    expect(pitch.sync.status()).toMatchObject({ pending_uploads: 1, online: false });
    await new Promise((r) => setTimeout(r, 1100)); // the upload happens measurably later than the recording
    await hq.startHq();
    const uploadedAfter = Date.now();

    await pitch.sync.syncNow();
    expect(pitch.sync.status()).toMatchObject({ pending_uploads: 0, conflicts: 0, last_error: null });
    // HQ's logical replication may deliver the commit after a pass's up-to-date (more so under
    // load): the reviewer's device syncs again, bounded, until the injury has arrived.
    const arrived = (): boolean => sqlite(desk.db).prepare('SELECT count(*) FROM injury WHERE id = ?').pluck().get(injuryId) === 1;
    for (const start = Date.now(); ;) {
      await desk.sync.syncNow();
      if (arrived() || Date.now() - start > 20_000) break;
    }

    // The reviewer's device holds the injury as recorded.
    const doctor = as(desk.db, DEMO_EMAILS.doctor);
    const injury = callVerb(doctor, 'injuries.get', { id: injuryId }) as { body_part: string; clinician_notes: string; athlete_id: string };
    expect(injury).toMatchObject({ body_part: 'hamstring', clinician_notes: 'Felt a pull at 70 min, recorded pitch side.', athlete_id: athleteId });

    // Its activity log: who, when (on the pitch, before the upload), from which device.
    const physio = findUserByEmail(desk.db, DEMO_EMAILS.physio)!;
    const log = (
      callVerb(doctor, 'activity.list', { limit: 50 }) as {
        activity: { record_id: string; actor_user_id: string; actor_name: string; created_at: string }[];
      }
    ).activity;
    const line = log.find((a) => a.record_id === injuryId);
    expect(line).toBeDefined();
    expect(line!.actor_user_id).toBe(physio.id);
    expect(line!.actor_name).toBe(`${physio.display_name} via Device Pitch laptop`);
    const at = Date.parse(line!.created_at);
    expect(at).toBeGreaterThanOrEqual(before - 1000);
    expect(at).toBeLessThan(uploadedAfter);

    // The same line at HQ.
    const [hqLine] = await hq.query<{ actor_name: string }>(hq.summary.orgId, 'SELECT actor_name FROM activity WHERE record_id = $1', [injuryId]);
    expect(hqLine!.actor_name).toBe(`${physio.display_name} via Device Pitch laptop`);
  });

  it('staff sign in on the reviewer’s device with their own PIN, and see what their role allows', async () => {
    const desk = await device('doctor', 'HQ review desk 2');
    const handlers = createHandlers({ db: desk.db });
    const analyst = findUserByEmail(desk.db, DEMO_EMAILS.analyst)!;
    const session = { session: { userId: null as string | null } };
    // The PIN is checked against the hash HQ sent (never the PIN itself); a wrong one is refused.
    expect(await dispatch(handlers, session, 'session.signIn', { user_id: analyst.id, pin: '0000' })).toMatchObject({
      ok: false,
      error: { code: 'Unauthenticated' },
    });
    expect(await dispatch(handlers, session, 'session.signIn', { user_id: analyst.id, pin: DEMO_PIN })).toMatchObject({ ok: true, value: { role: 'analyst' } });
    // An analyst reads screenings but not injuries (models/roles.ts), on this device as at HQ.
    expect(await dispatch(handlers, session, 'verb.call', { verb: 'injuries.list', input: { athlete_id: hq.summary.linkedAthleteId } })).toMatchObject({
      ok: false,
      error: { code: 'Forbidden' },
    });
    const act = await dispatch(handlers, session, 'verb.call', { verb: 'activity.list', input: { limit: 200 } });
    expect(act.ok).toBe(true);
    const tables = new Set((act as { value: { activity: { record_table: string }[] } }).value.activity.map((a) => a.record_table));
    expect(tables.has('injury')).toBe(false);
  });
});
