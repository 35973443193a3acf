/** Devices (hashed API keys), reports, users, the activity log, changesets and Undo. */
import { createHash, randomBytes } from 'node:crypto';
import { Conflict, Forbidden, NotFound, ValidationError } from '../../models/errors';
import { TABLES, isTableName } from '../../models/tables';
import type { Athlete, Device, Injury, Report, RtpEntry, SessionLoad, User, Wellness } from '../../models/records';
import { checkOrganisationName } from '../../models/records';
import { withArticle } from '../../models/format';
import type { Role } from '../../models/roles';
import { canManageRole, hasPermission, mayReadReportKind, pinRefusal } from '../../models/roles';
import { ACUTE_DAYS, CHRONIC_DAYS, MIN_ACUTE_DAYS_WITH_DATA, MIN_CHRONIC_DAYS_WITH_DATA, computeAcwr } from '../../models/acwr';
import { getChangeset, listActivity } from '../data/changesets';
import { findOrganization, findUserByEmail, findUserById, renameOrganization, setUserPinHashWithActivity, storePinHashSetAtHq } from '../data/identity';
import { dailyLoads, getRow, listRows, rowFacts } from '../data/rows';
import type { Db } from '../data/db';
import { getEnrolment } from '../data/sync';
import { orgSquad, visibleAthlete } from './scope';
import type { ServiceContext } from './context';
import { isSelfScoped, requirePermission, resolveActor, scopeAthleteId, type Actor } from './context';
import { hashPin } from './pin';
import { defined, insertRow, updateRow } from './plan';
import { notInFuture, today } from './scope';
import type { VerbContext } from './verb';
import { readVerb, writeVerb } from './verb';

/** The ACWR coverage rule in words, for reports (models/acwr.ts). */
const COVERAGE_NOTE = `Athletes with under a ${CHRONIC_DAYS}-day history, or fewer than ${MIN_ACUTE_DAYS_WITH_DATA} of ${ACUTE_DAYS} or ${MIN_CHRONIC_DAYS_WITH_DATA} of ${CHRONIC_DAYS} days with data, show "insufficient data".`;

// ---- Devices ----
/** A new device API key (`aik_` + 32 random bytes, base64url) and its SHA-256 hash (stored). */
export function newDeviceKey(): { key: string; hash: string; last4: string } {
  const key = `aik_${randomBytes(32).toString('base64url')}`;
  return { key, hash: `sha256$${createHash('sha256').update(key).digest('hex')}`, last4: key.slice(-4) };
}

function visibleDevice(vc: VerbContext, id: string): Device {
  const d = getRow<Device>(vc.db, 'device', vc.actor.orgId, id);
  if (!d || (isSelfScoped(vc.actor) && d.athlete_id !== scopeAthleteId(vc.actor, undefined))) throw new NotFound('Device');
  return d;
}

export const listDevices = readVerb('devices.list', {
  run(vc) {
    const self = isSelfScoped(vc.actor) ? scopeAthleteId(vc.actor, undefined) : undefined;
    const rows = listRows<Device>(vc.db, 'device', vc.actor.orgId, { eq: { athlete_id: self }, orderBy: [{ column: 'name' }] });
    return { devices: rows.map(({ api_key_hash: _h, ...d }) => d) };
  },
});

export const registerDevice = writeVerb('devices.register', {
  plan(vc, i) {
    const athleteId = isSelfScoped(vc.actor) ? scopeAthleteId(vc.actor, i.athlete_id ?? undefined)! : (i.athlete_id ?? null);
    if (athleteId) visibleAthlete(vc, athleteId);
    const k = newDeviceKey();
    const change = insertRow('device', {
      name: i.name,
      kind: i.kind,
      athlete_id: athleteId,
      api_key_hash: k.hash,
      api_key_last4: k.last4,
      key_rotated_at: vc.now.toISOString(),
    });
    return { planned: { verb: 'devices.register', summary: `Register ${i.kind} ${i.name}`, changes: [change] }, reveal: { api_key: k.key } };
  },
});

export const rotateDeviceKey = writeVerb('devices.rotateKey', {
  plan(vc, i) {
    const d = visibleDevice(vc, i.id);
    const k = newDeviceKey();
    const change = updateRow('device', d, { api_key_hash: k.hash, api_key_last4: k.last4, key_rotated_at: vc.now.toISOString() })!;
    return { planned: { verb: 'devices.rotateKey', summary: `Rotate API key of ${d.name}`, changes: [change] }, reveal: { api_key: k.key } };
  },
});

export const revokeDevice = writeVerb('devices.revoke', {
  plan(vc, i) {
    const d = visibleDevice(vc, i.id);
    if (!d.api_key_hash) throw new Conflict(`${d.name} has no key to revoke (already revoked).`);
    const change = updateRow('device', d, { api_key_hash: null, api_key_last4: null, key_rotated_at: vc.now.toISOString() })!;
    return { planned: { verb: 'devices.revoke', summary: `Revoke API key of ${d.name}`, changes: [change] } };
  },
});

// ---- Reports ----
/** Athlete reports carry injury and RTP detail: only roles that may read those may read them. */
function mayReadReport(vc: VerbContext, kind: Report['kind']): boolean {
  return mayReadReportKind(vc.actor.role, kind);
}

export const listReports = readVerb('reports.list', {
  run(vc, i) {
    const rows = listRows<Report>(vc.db, 'report', vc.actor.orgId, { eq: { athlete_id: i.athlete_id }, limit: i.limit, offset: i.offset });
    return { reports: rows.filter((r) => mayReadReport(vc, r.kind)).map(({ markdown: _m, ...r }) => r) };
  },
});

export const getReport = readVerb('reports.get', {
  run(vc, i) {
    const r = getRow<Report>(vc.db, 'report', vc.actor.orgId, i.id);
    if (!r) throw new NotFound('Report');
    if (!mayReadReport(vc, r.kind)) throw new Forbidden('This report includes injury and RTP records, which your role cannot read.');
    return r;
  },
});

function fmt(n: number | null, digits = 2): string {
  return n === null ? '—' : n.toFixed(digits);
}

/** Markdown for a report, built only from stored records (no invented figures). */
function renderReport(
  vc: VerbContext,
  kind: Report['kind'],
  athlete: Athlete | null,
  squadId: string | null,
  asOf: string,
): { title: string; markdown: string } {
  const org = vc.actor.orgId;
  if (kind === 'squad_workload') {
    const squad = orgSquad(vc, squadId!);
    const athletes = listRows<Athlete>(vc.db, 'athlete', org, { eq: { squad_id: squad.id, status: 'active' }, orderBy: [{ column: 'name' }], limit: 100_000 });
    const lines = athletes.map((a) => {
      const r = computeAcwr(dailyLoads(vc.db, org, a.id, asOf), asOf, 'rolling');
      return `| ${a.name} | ${fmt(r.acute_au, 0)} | ${fmt(r.chronic_au, 0)} | ${r.status === 'ok' ? fmt(r.ratio) : r.status.replace('_', ' ')} | ${r.acute_days_of_data}/${r.acute_window_days} | ${r.days_of_data}/${r.chronic_window_days} |`;
    });
    return {
      title: `${squad.name} workload as of ${asOf}`,
      markdown: `# ${squad.name} workload as of ${asOf}\n\nACWR: coupled 7-day / 28-day rolling averages of session-RPE load (AU/day). Coverage: days with a recorded load in the acute (7 d) and chronic (28 d) windows. ${COVERAGE_NOTE}\n\n| Athlete | Acute AU/day | Chronic AU/day | ACWR | Acute days with data | Chronic days with data |\n| --- | --- | --- | --- | --- | --- |\n${lines.join('\n')}\n`,
    };
  }
  const a = athlete!;
  const injuries = listRows<Injury>(vc.db, 'injury', org, { eq: { athlete_id: a.id }, orderBy: [{ column: 'onset_date', desc: true }] });
  const rtp = listRows<RtpEntry>(vc.db, 'rtp_entry', org, { eq: { athlete_id: a.id }, orderBy: [{ column: 'created_at', desc: true }] });
  const sign = (by: string | null) => (by ? 'signed' : 'not signed');
  const rtpLines = rtp.map((e) => `| ${e.stage} | ${sign(e.physio_signoff_by)} | ${sign(e.doctor_signoff_by)} | ${sign(e.coach_signoff_by)} |`);
  if (kind === 'rtp_status') {
    return {
      title: `RTP status: ${a.name}`,
      markdown: `# RTP status: ${a.name}\n\n| Stage | Physio | Doctor | Coach |\n| --- | --- | --- | --- |\n${rtpLines.join('\n') || '| no RTP entries | | | |'}\n`,
    };
  }
  const acwr = computeAcwr(dailyLoads(vc.db, org, a.id, asOf), asOf, 'rolling');
  // Only what was stored for days up to the report's date (a report as of a past day leaves out later entries).
  const wellness = listRows<Wellness>(vc.db, 'wellness', org, {
    eq: { athlete_id: a.id },
    range: { column: 'date', to: asOf },
    orderBy: [{ column: 'date', desc: true }],
    limit: 7,
  });
  const loads = listRows<SessionLoad>(vc.db, 'session_load', org, {
    eq: { athlete_id: a.id },
    range: { column: 'date', to: asOf },
    orderBy: [{ column: 'date', desc: true }],
    limit: 7,
  });
  return {
    title: `Athlete summary: ${a.name} (${asOf})`,
    markdown: [
      `# Athlete summary: ${a.name}`,
      `As of ${asOf}. ${a.position ?? 'No position'}; status ${a.status}.`,
      `## Injuries`,
      injuries.length ? injuries.map((j) => `- ${j.onset_date}: ${j.side} ${j.body_part}, ${j.severity}, ${j.status}`).join('\n') : '- none recorded',
      `## Return to play`,
      rtp.length ? `| Stage | Physio | Doctor | Coach |\n| --- | --- | --- | --- |\n${rtpLines.join('\n')}` : '- no RTP entries',
      `## Workload`,
      acwr.status === 'ok' ? `ACWR ${fmt(acwr.ratio)} (${acwr.note})` : `ACWR: insufficient data. ${acwr.note}`,
      loads.length ? loads.map((l) => `- ${l.date}: RPE ${l.rpe} × ${l.duration_min} min = ${l.load_au} AU`).join('\n') : '- no recent loads',
      `## Wellness (last 7 entries)`,
      wellness.length
        ? wellness.map((w) => `- ${w.date}: sleep ${w.sleep}, soreness ${w.soreness}, stress ${w.stress}, mood ${w.mood}, fatigue ${w.fatigue}`).join('\n')
        : '- none recorded',
    ].join('\n\n'),
  };
}

export const generateReport = writeVerb('reports.generate', {
  plan(vc, i) {
    const asOf = i.as_of ?? today(vc);
    if (i.as_of) notInFuture(vc, 'as_of', i.as_of);
    if (i.kind === 'squad_workload') {
      if (!i.squad_id)
        throw new ValidationError('A squad workload report needs squad_id.', [
          { path: 'squad_id', message: 'Choose the squad: a squad workload report is about one squad.' },
        ]);
      if (!getRow(vc.db, 'squad', vc.actor.orgId, i.squad_id)) throw new NotFound('Squad');
    } else if (!i.athlete_id)
      throw new ValidationError(`A ${i.kind} report needs athlete_id.`, [
        { path: 'athlete_id', message: `Choose the athlete: ${i.kind === 'rtp_status' ? 'an RTP status' : 'an athlete summary'} report is about one athlete.` },
      ]);
    const athlete = i.athlete_id ? visibleAthlete(vc, i.athlete_id) : null;
    if (i.kind !== 'squad_workload' && athlete) {
      // Reports contain clinical detail: the reader must hold the clinical read permissions too.
      if (!mayReadReport(vc, i.kind)) throw new Forbidden('This report includes injury and RTP records, which your role cannot read.');
    }
    const r = renderReport(vc, i.kind, athlete, i.squad_id ?? null, asOf);
    const change = insertRow('report', {
      kind: i.kind,
      athlete_id: athlete?.id ?? null,
      squad_id: i.squad_id ?? null,
      title: r.title,
      markdown: r.markdown,
      pdf_path: null,
      generated_by: vc.actor.userId,
    });
    return { planned: { verb: 'reports.generate', summary: `Generate report: ${r.title}`, changes: [change] } };
  },
});

// ---- Users ----
export const listUsers = readVerb('users.list', {
  run(vc) {
    return {
      users: listRows<User>(vc.db, 'app_user', vc.actor.orgId, { orderBy: [{ column: 'display_name' }] }).map(({ pin_hash, ...u }) => ({
        ...u,
        has_pin: pin_hash !== null,
      })),
    };
  },
});

/** Athlete accounts must be linked to an athlete record when created. @throws Validation */
function requireLinkForAthlete(role: Role, linked: string | null | undefined): void {
  if (role === 'athlete' && !linked)
    throw new ValidationError('An athlete account must be linked to an athlete record (linked_athlete_id).', [
      { path: 'linked_athlete_id', message: 'required for the athlete role' },
    ]);
}

export const createUser = writeVerb('users.create', {
  plan(vc, i) {
    requireLinkForAthlete(i.role, i.linked_athlete_id);
    // Emails are unique on the device; the message does not confirm which org holds one.
    if (findUserByEmail(vc.db, i.email)) throw new Conflict('This email address is not available for a new account; use a different one.');
    if (i.linked_athlete_id) visibleAthlete(vc, i.linked_athlete_id);
    return { planned: { verb: 'users.create', summary: `Add user ${i.display_name} (${i.role})`, changes: [insertRow('app_user', { ...i, active: true })] } };
  },
});

export const updateUser = writeVerb('users.update', {
  plan(vc, i) {
    const u = getRow<User>(vc.db, 'app_user', vc.actor.orgId, i.id);
    if (!u) throw new NotFound('User');
    // Which accounts and roles this actor may manage is a row rule (models/roles.ts GRANTABLE_ROLES),
    // enforced for every write path by authorizeChange.
    if ((i.role ?? u.role) === 'athlete' && i.linked_athlete_id === null) requireLinkForAthlete('athlete', null);
    if (i.linked_athlete_id) visibleAthlete(vc, i.linked_athlete_id);
    const { id: _id, ...patch } = i;
    const change = updateRow('app_user', u, defined(patch));
    return { planned: { verb: 'users.update', summary: `Update user ${u.display_name}`, changes: change ? [change] : [] } };
  },
});

/**
 * Set (or replace) another user's sign-in PIN: `user.manage`, an account of this organisation
 * whose role the actor may grant (models/roles.ts GRANTABLE_ROLES), and, since whoever sets the
 * PIN can sign in as the account, only where models/roles.ts `pinRefusal` allows it: never an
 * owner's; an athlete account's or any account linked to an athlete's record only by a role that
 * reads what it reads; otherwise only an account whose permissions are a subset of the actor's
 * (an owner may set any non-owner PIN). Not a changeset: credentials never travel in diffs;
 * only the scrypt hash is stored. An activity row says who set or reset whose PIN (never the PIN).
 * An account added in Settings can sign in once a PIN is set.
 * @throws Forbidden (permission, role rule, `pinRefusal`, one's own PIN here), NotFound (another org's or unknown user)
 */
export function setUserPin(ctx: ServiceContext, input: { user_id: string; pin: string }): { pin_set: true } {
  const { actor, u } = checkSetUserPin(ctx, input);
  setUserPinHashWithActivity(ctx.db, u.id, hashPin(input.pin), {
    orgId: actor.orgId,
    actorUserId: actor.userId,
    actorName: actor.displayName,
    summary: `${u.pin_hash ? 'Reset' : 'Set'} the sign-in PIN of ${u.display_name} (${u.role})`,
  });
  return { pin_set: true };
}

/**
 * The rules of {@link setUserPin}, without the write: the actor and the target account.
 * @throws as {@link setUserPin}
 */
export function checkSetUserPin(ctx: ServiceContext, input: { user_id: string }): { actor: Actor; u: User } {
  const actor = resolveActor(ctx);
  requirePermission(ctx, actor, 'user.manage');
  const u = findUserById(ctx.db, input.user_id);
  if (!u || u.org_id !== actor.orgId) throw new NotFound('User');
  if (!canManageRole(actor.role, u.role)) throw new Forbidden(`Your role (${actor.role}) cannot change ${withArticle(u.role)} account.`);
  if (u.id === actor.userId) throw new Forbidden('Your own PIN is not changed here.');
  const refusal = pinRefusal(actor.role, u, u.pin_hash ? 'reset' : 'set');
  if (refusal) throw new Forbidden(refusal);
  return { actor, u };
}

/**
 * On a device enrolled for sync, after HQ set the PIN (main/sync/engine.ts `setPinAtHq`): store its
 * hash here at once, so the account signs in offline with it before HQ's row arrives through the
 * shapes (which then replaces it with HQ's hash of the same PIN), with the row version and
 * `updated_at` HQ gave the account (`hq`; null from an older HQ), so this device's next change of
 * the account is not refused as stale. HQ wrote the activity row, which arrives the same way.
 * @throws as {@link setUserPin}
 */
export function storeUserPinSetAtHq(
  ctx: ServiceContext,
  input: { user_id: string; pin: string },
  hq: { version: number; updated_at: string } | null,
): { pin_set: true } {
  const { u } = checkSetUserPin(ctx, input);
  storePinHashSetAtHq(ctx.db, u.id, hashPin(input.pin), hq);
  return { pin_set: true };
}

// ---- Organisation ----
/** The signed-in user's organisation as Settings shows it. */
export interface OrganisationView {
  id: string;
  name: string;
  /** Row version, quoted back by a rename (optimistic concurrency). */
  version: number;
  /**
   * True on a device enrolled for sync: HQ holds the organisation row (name, assistant budget), so
   * this device shows it and does not change it ({@link refuseOrgChangeOnSyncedDevice}).
   */
  set_at_hq: boolean;
}

/** True on a device enrolled for sync, where the `organization` row (name, assistant budget) is HQ's. */
export function orgSetAtHq(db: Db): boolean {
  return getEnrolment(db) !== null;
}

/**
 * On a device enrolled for sync the `organization` row is HQ's: it arrives in the organisation
 * shape, and a change written here has no changeset to upload, so HQ's row would replace it at the
 * next sync. Refuse such a change before anything is written, saying where it is made instead.
 * `what` names the setting ("name", "monthly assistant budget").
 * @throws Forbidden on an enrolled device
 */
export function refuseOrgChangeOnSyncedDevice(db: Db, what: string): void {
  if (!orgSetAtHq(db)) return;
  throw new Forbidden(
    `This device syncs with HQ, which holds the organisation's ${what}: a change made here would be replaced by HQ's at the next sync, so nothing was saved. HQ's operator changes it (npm run hq -- organisation --of OWNER_EMAIL …), and every device shows it after its next sync.`,
  );
}

/** The signed-in user's organisation: id, name and row version. Any signed-in user. @throws NotFound */
export function readOrganisation(ctx: ServiceContext): OrganisationView {
  const actor = resolveActor(ctx);
  const o = findOrganization(ctx.db, actor.orgId);
  if (!o) throw new NotFound('Organisation');
  return { id: o.id, name: o.name, version: o.version, set_at_hq: orgSetAtHq(ctx.db) };
}

/**
 * Rename the signed-in user's organisation (`settings.manage`: owner, admin, super admin). `name`
 * is trimmed, 1–200 characters; `expected_version` is the version the form showed. Like the
 * organisation's assistant budget, it is an org setting, not a changeset, and not in the activity
 * log. On a device enrolled for sync it is refused ({@link refuseOrgChangeOnSyncedDevice}): HQ
 * holds the organisation row there.
 * @throws Forbidden (permission; an enrolled device), Validation (`name`), Conflict (renamed since the form opened; the
 *   conflict carries the version now stored, the message the name now stored), NotFound
 */
export function updateOrganisation(ctx: ServiceContext, input: { name: string; expected_version: number }): OrganisationView {
  const actor = resolveActor(ctx);
  requirePermission(ctx, actor, 'settings.manage');
  refuseOrgChangeOnSyncedDevice(ctx.db, 'name');
  const name = checkOrganisationName(input.name);
  const r = renameOrganization(ctx.db, actor.orgId, name, input.expected_version, new Date().toISOString());
  if (!r) throw new NotFound('Organisation');
  if ('stale' in r)
    throw new Conflict(`The organisation was renamed since you opened this form: it is now called "${r.stale.name}". Nothing was written.`, [
      { table: 'organization', id: r.stale.id, expectedVersion: input.expected_version, actualVersion: r.stale.version },
    ]);
  return { id: r.renamed.id, name: r.renamed.name, version: r.renamed.version, set_at_hq: false };
}

// ---- Activity, changesets, Undo ----
function notForAthletes(vc: VerbContext): void {
  if (isSelfScoped(vc.actor)) throw new Forbidden('The activity log is not available to athlete accounts.');
}

/** True when the actor's role may read rows of `table` (activity summaries and diffs reveal them). */
function mayReadTable(vc: VerbContext, table: string): boolean {
  return isTableName(table) && hasPermission(vc.actor.role, TABLES[table].read);
}

export const listActivityVerb = readVerb('activity.list', {
  run(vc, i) {
    notForAthletes(vc);
    // Summaries name clinical facts ("Record left knee injury for …"): show only rows of tables this role may read.
    const rows = listActivity(vc.db, vc.actor.orgId, { limit: i.limit, offset: i.offset, ...(i.record_id ? { recordId: i.record_id } : {}) });
    return { activity: rows.filter((a) => mayReadTable(vc, a.record_table)) };
  },
});

/**
 * What of a changeset's row changes the actor's role may not read, by table: a table it lacks the
 * read permission of, or a report whose kind {@link mayReadReport} refuses (an athlete summary
 * carries injury and RTP detail that `report.generate` alone does not open; issue 13 re-review:
 * an analyst read a doctor's athlete summary through changesets.get). A report row whose kind
 * cannot be found counts as unreadable.
 */
function unreadableIn(vc: VerbContext, changes: readonly { table: string; id: string; after?: Record<string, unknown> }[]): string[] {
  const out = new Set<string>();
  for (const ch of changes) {
    if (!mayReadTable(vc, ch.table)) out.add(ch.table);
    else if (ch.table === 'report') {
      const kind = (ch.after?.kind as Report['kind'] | undefined) ?? getRow<Report>(vc.db, 'report', vc.actor.orgId, ch.id, { includeDeleted: true })?.kind;
      if (!kind || !mayReadReport(vc, kind)) out.add('report (athlete summary: injury and RTP records)');
    }
  }
  return [...out];
}

export const getChangesetVerb = readVerb('changesets.get', {
  run(vc, i) {
    notForAthletes(vc);
    const c = getChangeset(vc.db, vc.actor.orgId, i.id);
    if (!c) throw new NotFound('Changeset');
    const hidden = unreadableIn(vc, c.changes);
    if (hidden.length > 0) throw new Forbidden(`This change touches records your role cannot read (${hidden.join(', ')}).`);
    // Exactly the declared output (models/outputs.ts StoredChangesetOut): MCP clients validate it
    // against the listed schema, which admits no other field (no org/user ids, no inverse).
    return {
      id: c.id,
      verb: c.verb,
      summary: c.summary,
      changes: c.changes,
      status: c.status,
      run_id: c.run_id,
      via_assistant: c.via_assistant,
      applied_at: c.applied_at,
      undo_of: c.undo_of,
      undone_by: c.undone_by,
    };
  },
});

export const undoChangeset = writeVerb('changesets.undo', {
  plan(vc, i) {
    notForAthletes(vc);
    const c = getChangeset(vc.db, vc.actor.orgId, i.changeset_id);
    if (!c || !c.inverse) throw new NotFound('Changeset');
    if (c.undone_by || c.status === 'undone') throw new Conflict('This change has already been undone.');
    if (c.status === 'refused')
      throw new Conflict('This change never reached HQ (HQ refused it, or it was discarded), so there is nothing to undo: the record shows HQ’s values.');
    if (c.status !== 'applied') throw new Conflict(`This changeset is ${c.status}; only an applied change can be undone.`);
    // Undo only what the role may read (an analyst does not remove a doctor's athlete summary it cannot open).
    const hidden = unreadableIn(vc, c.changes);
    if (hidden.length > 0) throw new Forbidden(`This change touches records your role cannot read (${hidden.join(', ')}); it cannot be undone by your role.`);
    const stale = c.inverse.filter((ch) => rowFacts(vc.db, ch.table, ch.id)?.version !== ch.version);
    if (stale.length > 0) {
      throw new Conflict(
        `${stale.length} record(s) were edited after this change was made, so Undo would overwrite the later edit. Nothing was written; change those records directly instead.`,
        stale.map((ch) => ({ table: ch.table, id: ch.id, expectedVersion: ch.version, actualVersion: rowFacts(vc.db, ch.table, ch.id)?.version ?? null })),
      );
    }
    const now = vc.now.toISOString();
    const changes = c.inverse.map((ch) => ({ ...ch, after: Object.fromEntries(Object.entries(ch.after).map(([k, v]) => [k, v === '__NOW__' ? now : v])) }));
    return { planned: { verb: 'changesets.undo', summary: `Undo: ${c.summary}`, changes, undoOf: c.id } };
  },
});
