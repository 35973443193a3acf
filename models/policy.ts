/**
 * The policy engine: limits in code, run on a planned changeset at proposal time (before anyone
 * is asked to approve it). Source: shared/design/kinetix.md §3 "Policy engine (limits live in
 * code)", with the approver rule from domain.md ("Only `owner` may approve a changeset that the
 * policy engine marks *needs owner*").
 *
 * The engine is pure: it sees the actor (as re-read by the service layer), the planned rows with
 * their before/after values, and today's clinic date. It never reads the database. It adds to,
 * and never replaces, the row rules of `authorizeChange` (models/changeset.ts), which still run on
 * apply; the policy's job is to put each limit, with its reason, on the run trace and in front of
 * the user.
 *
 * Every decision carries a machine `code`, a human `reason`, the `rule` it comes from, and the
 * row/field it concerns. The overall verdict is `deny` if any decision denies, else `needs_owner`
 * if any decision needs an owner, else `allow`.
 */
import type { PlannedChangeset, RowChange, RuleActor } from './changeset';
import type { Permission, Role } from './roles';
import { hasPermission, NEEDS_OWNER_APPROVER } from './roles';
import type { TableName } from './tables';

/** Outcome of one decision and of the whole evaluation. */
export type PolicyVerdict = 'allow' | 'deny' | 'needs_owner';

/** Machine codes of policy decisions (stable: they go on traces and into tests). */
export type PolicyCode =
  | 'within_limits'
  | 'too_many_records'
  | 'numeric_change_needs_owner'
  | 'numeric_change_by_owner'
  | 'rate_out_of_range'
  | 'scale_out_of_range'
  | 'date_invalid'
  | 'date_in_future'
  | 'date_too_early'
  | 'signoff_not_holder'
  | 'signoff_for_other_user'
  | 'fee_code_change_needs_owner'
  | 'fee_code_change_by_owner'
  | 'fee_code_reuse_needs_owner'
  | 'fee_code_reuse_by_owner';

/** One policy decision, ready for the run trace and the confirm dialog. */
export interface PolicyDecision {
  code: PolicyCode;
  effect: PolicyVerdict;
  /** One or two sentences a clinician can read. */
  reason: string;
  /** Where the limit comes from (design reference). */
  rule: string;
  /** The row and field the decision concerns; absent for changeset-level decisions. */
  table?: TableName;
  rowId?: string;
  field?: string;
  /** The numbers behind the decision (before/after/limit/percentage…). */
  detail?: Record<string, string | number | null>;
}

/** The result of {@link evaluatePolicy}. */
export interface PolicyResult {
  verdict: PolicyVerdict;
  /** Every decision, in changeset order (a single `within_limits` allow when nothing fired). */
  decisions: PolicyDecision[];
  /** The reasons of the decisions that set the verdict (deny or needs-owner); empty on allow. */
  reasons: string[];
  /** The role that must approve, when the verdict is `needs_owner`; otherwise null. */
  approverRole: Role | null;
}

/**
 * One applied change of a value judged cumulatively ({@link CUMULATIVE_NUMERIC_FIELDS}), from the
 * applying side's own log: `before` is the value the store held when it was applied (never a
 * device's claim at HQ), `after` the value it wrote; `at` when it was applied (ISO date-time);
 * `ownerApproved` when an owner made or approved it, as that side can verify.
 */
export interface NumericHistoryEntry {
  at: string;
  before: number | null;
  after: number | null;
  ownerApproved: boolean;
}

/** Applied history per value, keyed by {@link numericHistoryKey}, each list oldest first. */
export type NumericHistory = ReadonlyMap<string, readonly NumericHistoryEntry[]>;

/** The key of one row's field in a {@link NumericHistory}: `table:id:field`. */
export function numericHistoryKey(table: TableName, id: string, field: string): string {
  return `${table}:${id}:${field}`;
}

/**
 * Context of an evaluation. `today` is the clinic's date (YYYY-MM-DD). `history`: the applied
 * history of the values in {@link CUMULATIVE_NUMERIC_FIELDS} that the changeset updates (the
 * caller reads it: the device from its changeset log, HQ from its own `hq_changeset`); `now` (ISO
 * date-time, default the current time) places the rolling window. Without `history` a change is
 * judged against its own `before` only.
 */
export interface PolicyContext {
  today: string;
  history?: NumericHistory;
  now?: string;
  /** Earlier holders of the fee codes the changeset gives items ({@link feeCodeTargets}); without it a reused code is not judged. */
  feeCodes?: FeeCodeHistory;
}

/**
 * An item of the organisation that held a fee code before (a later item taking the code inherits
 * what bills under it were charged): `priceCents` is the last price billed under the code (the
 * item's price when it was renamed away from it, or its stored price when it still holds it or was
 * deleted), `at` when it last held the code (ISO date-time), `how` why it no longer does.
 */
export interface FeeCodeHolder {
  itemId: string;
  /** The code as that item spelled it. */
  code: string;
  /** The item's name (as stored now). */
  name: string;
  priceCents: number | null;
  at: string;
  how: 'renamed' | 'deleted' | 'current';
  /** The item's code now, when it was renamed away from this one. */
  codeNow?: string;
}

/**
 * Earlier holders per fee code (keyed by {@link normaliseFeeCode}), and the stored price of each
 * rate item a changeset renames (its change carries the price only when it changes it). The
 * caller reads both: the device from its rate items and changeset log, HQ from its own.
 */
export interface FeeCodeHistory {
  holders: ReadonlyMap<string, readonly FeeCodeHolder[]>;
  prices: ReadonlyMap<string, number>;
}

/**
 * A fee code as codes are compared (unique in an organisation ignoring case): NFKC, trimmed,
 * lower case — the input schema (models/text.ts plainText) already stores codes NFKC and trimmed.
 */
export function normaliseFeeCode(code: string): string {
  return code.normalize('NFKC').trim().toLowerCase();
}

/**
 * The fee codes `changes` gives rate items (an insert's code, an update's new code when it differs
 * from the old one ignoring case), normalised ({@link normaliseFeeCode}), and the ids of the
 * renamed items: what a caller reads into {@link FeeCodeHistory}.
 */
export function feeCodeTargets(changes: readonly RowChange[]): { codes: string[]; renamedIds: string[] } {
  const codes = new Set<string>();
  const renamedIds: string[] = [];
  for (const c of changes) {
    if (c.table !== 'rate_item' || c.op === 'delete' || typeof c.after.code !== 'string') continue;
    const code = normaliseFeeCode(c.after.code);
    if (c.op === 'update') {
      if (typeof c.before.code === 'string' && normaliseFeeCode(c.before.code) === code) continue;
      renamedIds.push(c.id);
    }
    codes.add(code);
  }
  return { codes: [...codes], renamedIds };
}

const SRC = 'kinetix.md §3 Policy engine';

/** At most this many records (row changes) per changeset. Source: kinetix.md §3. */
export const MAX_RECORDS_PER_CHANGESET = 50;

/**
 * Tables whose rows, inserted together with their capture session in one changeset, are that
 * session's readings (one per joint, side and measure, produced by the measurement pipeline):
 * they count as one record with the session for {@link MAX_RECORDS_PER_CHANGESET}, since a person
 * reviews a processed trial as one record (capture.md "Results"), and a full trial carries more
 * than 50 readings. Any other change to these tables counts row by row.
 */
export const SESSION_READING_TABLES: readonly TableName[] = ['pose_metric'];

/**
 * The number of records a changeset touches for the 50-record limit: every row change, except
 * readings inserted with their own capture session in the same changeset ({@link SESSION_READING_TABLES}).
 */
export function countedRecords(changes: PlannedChangeset['changes']): number {
  const sessions = new Set(changes.filter((c) => c.op === 'insert' && c.table === 'capture_session').map((c) => c.id));
  return changes.filter((c) => !(c.op === 'insert' && SESSION_READING_TABLES.includes(c.table) && sessions.has(String(c.after['capture_session_id'])))).length;
}

/** A change to a listed numeric value of more than this fraction needs an owner. Source: kinetix.md §3. */
export const MAX_NUMERIC_CHANGE_FRACTION = 0.2;

/**
 * Values whose 20% limit is cumulative: a change is judged against every baseline of
 * {@link numericBaselines}, not only its own `before`, so a run of small steps (4000 → 4800 →
 * 5760 → 6912 cents, each exactly 20%) cannot walk a price away without an owner.
 */
export const CUMULATIVE_NUMERIC_FIELDS: Readonly<Partial<Record<TableName, readonly string[]>>> = {
  rate_item: ['price_cents'],
  // A budget cap raised in 19 % steps ($2 → $2.38 → $2.83 …) must not walk away from an owner either.
  app_user: ['budget_cap_usd'],
};

/** The values of `changes` whose history the policy needs ({@link CUMULATIVE_NUMERIC_FIELDS} on updates). */
export function cumulativeTargets(changes: readonly RowChange[]): { table: TableName; id: string; field: string }[] {
  return changes.flatMap((c) =>
    c.op === 'update' ? (CUMULATIVE_NUMERIC_FIELDS[c.table] ?? []).filter((f) => f in c.after).map((field) => ({ table: c.table, id: c.id, field })) : [],
  );
}

/** A stored rate item as {@link buildFeeCodeHistory} reads it (ISO date-times). */
export interface FeeCodeItemRow {
  id: string;
  code: string;
  name: string;
  price_cents: number;
  updated_at: string;
  deleted_at: string | null;
}

/**
 * Build the {@link FeeCodeHistory} of fee codes `codes` (normalised) and items `renamedIds` from
 * the organisation's stored rate items (`items`, live or deleted: each holds its code at its stored
 * price; a deleted one since `deleted_at`) and its applied changes in apply order (`log`: every
 * change of a changeset, oldest first; only rate item updates are read). A rename (an update whose
 * code differs) makes the item an earlier holder of its old code, at its price then: the rename's
 * own `before` price, else the `before` of the item's next price change, else its stored price.
 * Pure: the device (main/data/changesets.ts) and HQ (sync/write/apply.ts) pass their own rows.
 */
export function buildFeeCodeHistory(
  codes: readonly string[],
  renamedIds: readonly string[],
  items: readonly FeeCodeItemRow[],
  log: readonly { at: string; changes: readonly RowChange[] }[],
): FeeCodeHistory {
  const holders = new Map<string, FeeCodeHolder[]>();
  const prices = new Map<string, number>();
  const wanted = new Set(codes);
  const byId = new Map(items.map((it) => [it.id, it]));
  for (const id of renamedIds) {
    const it = byId.get(id);
    if (it) prices.set(id, it.price_cents);
  }
  const add = (code: string, h: FeeCodeHolder) => {
    const key = normaliseFeeCode(code);
    if (wanted.has(key)) holders.set(key, [...(holders.get(key) ?? []), h]);
  };
  for (const it of items) {
    add(it.code, {
      itemId: it.id,
      code: it.code,
      name: it.name,
      priceCents: it.price_cents,
      at: it.deleted_at ?? it.updated_at,
      how: it.deleted_at ? 'deleted' : 'current',
    });
  }
  if (wanted.size === 0) return { holders, prices };
  const updates: { at: string; ch: Extract<RowChange, { op: 'update' }> }[] = [];
  for (const e of log) for (const ch of e.changes) if (ch.table === 'rate_item' && ch.op === 'update') updates.push({ at: e.at, ch });
  updates.forEach(({ at, ch }, i) => {
    const old = ch.before.code;
    if (typeof old !== 'string' || typeof ch.after.code !== 'string' || old === ch.after.code) return;
    let price: unknown = 'price_cents' in ch.before ? ch.before.price_cents : undefined;
    if (price === undefined) price = updates.slice(i + 1).find((e) => e.ch.id === ch.id && 'price_cents' in e.ch.before)?.ch.before.price_cents;
    const it = byId.get(ch.id);
    if (price === undefined) price = it?.price_cents;
    add(old, {
      itemId: ch.id,
      code: old,
      name: it?.name ?? old,
      priceCents: isNum(price) ? price : null,
      at,
      how: 'renamed',
      ...(it ? { codeNow: it.code } : {}),
    });
  });
  return { holders, prices };
}

/** Length of the rolling window of {@link numericBaselines}, in days. */
export const NUMERIC_BASELINE_WINDOW_DAYS = 30;

/** Where a baseline of a cumulative numeric rule comes from. */
export type BaselineSource = 'current' | 'owner_approved' | 'first_on_record' | 'window';

/** One value a cumulative change is judged against (see {@link numericBaselines}). */
export interface NumericBaseline {
  value: number;
  source: BaselineSource;
  /** When the value was set or held (ISO date-time); absent for the current value. */
  at?: string;
}

/**
 * The baselines a new value of a cumulative field ({@link CUMULATIVE_NUMERIC_FIELDS}) is judged
 * against; the change needs an owner when it is more than 20% from any of them (the strictest
 * wins). Rule (this project's choice, after kinetix.md §3 "a change of more than 20% … needs an
 * owner" and the review of issue 13, where 20% steps walked a price up 73% without one):
 * - `current`: the stored value (the single-step rule);
 * - `owner_approved`: the value set by the latest change an owner made or approved, at any age;
 *   when the history holds none, `first_on_record`: the value before its oldest change;
 * - `window`: every value held in the last {@link NUMERIC_BASELINE_WINDOW_DAYS} days after that
 *   owner-approved change (both sides of each applied change), so a price may not swing more than
 *   20% from its extremes of the window either.
 * An owner's approval therefore re-bases the price: later steps count from it.
 * `history` is oldest first; `nowMs` is the evaluation time (ms since epoch).
 */
export function numericBaselines(current: number, history: readonly NumericHistoryEntry[], nowMs: number): NumericBaseline[] {
  const out: NumericBaseline[] = [{ value: current, source: 'current' }];
  let k = -1;
  for (let i = history.length - 1; i >= 0; i--) {
    if (history[i]!.ownerApproved) {
      k = i;
      break;
    }
  }
  if (k >= 0) {
    const h = history[k]!;
    if (isNum(h.after)) out.push({ value: h.after, source: 'owner_approved', at: h.at });
  } else if (history.length > 0 && isNum(history[0]!.before)) {
    out.push({ value: history[0]!.before, source: 'first_on_record', at: history[0]!.at });
  }
  const since = nowMs - NUMERIC_BASELINE_WINDOW_DAYS * 86_400_000;
  for (let i = k + 1; i < history.length; i++) {
    const h = history[i]!;
    if (Date.parse(h.at) < since) continue;
    for (const v of [h.before, h.after]) if (isNum(v)) out.push({ value: v, source: 'window', at: h.at });
  }
  return out;
}

/** Rates between $1 and $10,000, in USD cents. Source: kinetix.md §3; models/records RateItem. */
export const RATE_MIN_CENTS = 100;
export const RATE_MAX_CENTS = 1_000_000;

/**
 * The numeric values whose change of more than 20% needs an owner as approver: the clinic's
 * prices, planned training loads, and assistant budget caps (money). Only updates are judged
 * (an insert has no "before"; a new fee item under a code used before is judged against that
 * code's last price, {@link FeeCodeHistory}); a value that is or becomes null is not a numeric
 * change, except a limit removed ({@link NULL_MEANS_UNLIMITED}).
 * Clinical measurements (wellness, vitals, screening values) are deliberately not listed: they
 * are corrections of observations, owned by clinicians, not business limits.
 */
export const NUMERIC_CHANGE_FIELDS: Readonly<Partial<Record<TableName, readonly string[]>>> = {
  rate_item: ['price_cents'],
  session_load: ['load_au', 'duration_min', 'rpe'],
  training_session: ['duration_min'],
  app_user: ['budget_cap_usd'],
};

/**
 * Limits of {@link NUMERIC_CHANGE_FIELDS} (null means "no limit"), judged one way only: a rise of
 * more than 20% needs an owner, and removing one (a number → null) is a rise beyond any bound, so
 * it needs an owner too; a cut, or a limit set where there was none (null → a number), is a
 * stricter limit and needs no owner (issue 13 review: an administrator lifted budget caps at once).
 */
export const NULL_MEANS_UNLIMITED: Readonly<Partial<Record<TableName, readonly string[]>>> = {
  app_user: ['budget_cap_usd'],
};

/**
 * The decision on removing a limit (a value → none): needs an owner, or allowed for an owner
 * (code `numeric_change_by_owner`, which HQ accepts only with proof the owner acted).
 * `words`: "The monthly assistant budget cap"; `shown`: the old value as shown ("$2.00").
 */
function limitRemovedDecision(
  actor: Pick<RuleActor, 'role'>,
  words: string,
  shown: string,
  before: number,
  where: Pick<PolicyDecision, 'table' | 'rowId' | 'field'>,
): PolicyDecision {
  const what = `${words} ${shown} → no cap removes the limit (a rise beyond any bound, over 20%)`;
  const rule = `${SRC}: a change of more than 20% to a numeric value needs an owner (removing a limit is more than any rise)`;
  const detail = { before, after: null, change_pct: null, limit_pct: MAX_NUMERIC_CHANGE_FRACTION * 100 };
  return actor.role === NEEDS_OWNER_APPROVER
    ? { code: 'numeric_change_by_owner', effect: 'allow', reason: `${what}; you are an owner, so no further approval is needed.`, rule, ...where, detail }
    : { code: 'numeric_change_needs_owner', effect: 'needs_owner', reason: `${what}; an owner must approve this change in the app.`, rule, ...where, detail };
}

/**
 * The policy on a change of the organisation's monthly assistant budget cap (USD; null = no cap),
 * an organisation setting outside changesets (main/kinetix/settings.ts): the same rule as a user's
 * cap ({@link NULL_MEANS_UNLIMITED}) — a rise of more than 20%, or removing the cap, needs an
 * owner (allowed outright for an owner); a cut, a cap set where there was none, or a rise within
 * 20% is allowed. `ownerSetUsd`: the cap an owner last set (null: an owner left it uncapped;
 * undefined: not known), a second baseline so that steps within 20% cannot add up. Pure.
 */
export function evaluateOrgBudgetCap(
  actor: Pick<RuleActor, 'role'>,
  beforeUsd: number | null,
  afterUsd: number | null,
  ownerSetUsd?: number | null,
): PolicyResult {
  const words = "The organisation's monthly assistant budget cap";
  const usd = (v: number) => money(Math.round(v * 100));
  const decisions: PolicyDecision[] = [];
  // Judged from the current cap and from the cap an owner last set (when known), whichever the new
  // value is further above: steps of 19 % add up against the owner's value.
  const bases = [beforeUsd, ownerSetUsd].filter((v): v is number => isNum(v) && isNum(afterUsd) && afterUsd > v && overNumericLimit(v, afterUsd));
  const base = bases.sort((a, b) => a - b)[0];
  if (isNum(beforeUsd) && afterUsd === null) decisions.push(limitRemovedDecision(actor, words, usd(beforeUsd), beforeUsd, {}));
  else if (base !== undefined && isNum(afterUsd)) {
    const r = relativeChange(base, afterUsd);
    const from = base === beforeUsd ? '' : ` from ${usd(base)}, the cap an owner last set`;
    const what = `${words} ${isNum(beforeUsd) ? usd(beforeUsd) : 'none'} → ${usd(afterUsd)} is a ${pctText(r)} rise${from} (over 20%)`;
    const rule = `${SRC}: a change of more than 20% to a numeric value needs an owner`;
    const detail = { before: beforeUsd, after: afterUsd, baseline: base, change_pct: Number.isFinite(r) ? Math.round(r * 10_000) / 100 : null, limit_pct: 20 };
    decisions.push(
      actor.role === NEEDS_OWNER_APPROVER
        ? { code: 'numeric_change_by_owner', effect: 'allow', reason: `${what}; you are an owner, so no further approval is needed.`, rule, detail }
        : { code: 'numeric_change_needs_owner', effect: 'needs_owner', reason: `${what}; an owner must approve this change in the app.`, rule, detail },
    );
  }
  const verdict: PolicyVerdict = decisions.some((d) => d.effect === 'needs_owner') ? 'needs_owner' : 'allow';
  if (decisions.length === 0) decisions.push({ code: 'within_limits', effect: 'allow', reason: 'Within every policy limit.', rule: SRC });
  return {
    verdict,
    decisions,
    reasons: verdict === 'allow' ? [] : decisions.filter((d) => d.effect === verdict).map((d) => d.reason),
    approverRole: verdict === 'needs_owner' ? NEEDS_OWNER_APPROVER : null,
  };
}

/** A closed numeric scale. */
interface Scale {
  min: number;
  max: number;
  integer: boolean;
  label: string;
}

/** Scores within their scales. Source: kinetix.md §3, domain.md (wellness 1–5, session RPE 0–10). */
export const SCALE_FIELDS: Readonly<Partial<Record<TableName, Readonly<Record<string, Scale>>>>> = {
  wellness: {
    sleep: { min: 1, max: 5, integer: true, label: 'wellness sleep (1–5)' },
    soreness: { min: 1, max: 5, integer: true, label: 'wellness soreness (1–5)' },
    stress: { min: 1, max: 5, integer: true, label: 'wellness stress (1–5)' },
    mood: { min: 1, max: 5, integer: true, label: 'wellness mood (1–5)' },
    fatigue: { min: 1, max: 5, integer: true, label: 'wellness fatigue (1–5)' },
  },
  session_load: {
    rpe: { min: 0, max: 10, integer: false, label: 'session RPE (CR-10, 0–10)' },
  },
};

/** Days after today (UTC) a clinical event may still be dated: a clinic east of UTC is already on the next date. */
export const CLINICAL_DATE_GRACE_DAYS = 1;
/** Earliest date a clinical event may carry (an injury onset of 1900-01-01 is a slip, not history). */
export const EARLIEST_CLINICAL_DATE = '1950-01-01';

/**
 * Youngest age (whole years, at today's date) an athlete's date of birth may give. Rationale: the
 * youngest organised age groups (under-6/under-7 football, mini rugby) start at about five; a
 * younger date of birth is almost always this year typed for the birth year.
 */
export const MIN_ATHLETE_AGE_YEARS = 5;

/** Latest date of birth allowed when it is `today` (YYYY-MM-DD): today minus {@link MIN_ATHLETE_AGE_YEARS} years (same month and day). */
export function latestDateOfBirth(today: string): string {
  return `${String(Number(today.slice(0, 4)) - MIN_ATHLETE_AGE_YEARS).padStart(4, '0')}${today.slice(4)}`;
}

/** The latest date a clinical event may carry when it is `today` (YYYY-MM-DD, UTC): today + {@link CLINICAL_DATE_GRACE_DAYS}. */
export function latestClinicalDate(today: string): string {
  return new Date(Date.parse(`${today}T00:00:00Z`) + CLINICAL_DATE_GRACE_DAYS * 86_400_000).toISOString().slice(0, 10);
}

/**
 * Dates of clinical events, which cannot be in the future (date or ISO date-time; the date part
 * is compared with the clinic's today). Source: kinetix.md §3 "dates not in the future for
 * clinical events". Training sessions are not listed: a session may be planned ahead.
 */
export const CLINICAL_EVENT_DATE_FIELDS: Readonly<Partial<Record<TableName, readonly string[]>>> = {
  injury: ['onset_date'],
  screening: ['date'],
  wellness: ['date'],
  vitals: ['date'],
  session_load: ['date'],
  capture_session: ['recorded_at'],
};

/** RTP sign-off fields and the permission whose holder alone may set or withdraw them. Source: kinetix.md §3, domain.md. */
export const SIGNOFF_PERMISSIONS: Readonly<Record<'physio' | 'doctor' | 'coach', Permission>> = {
  physio: 'rtp.signoff_physio',
  doctor: 'rtp.signoff_doctor',
  coach: 'rtp.signoff_coach',
};

/**
 * The RTP sign-off fields (`physio_signoff_by`, `…_at`, doctor's, coach's) whose value `change`
 * sets or withdraws: on an insert, those given non-null; on an update, those whose `after`
 * differs from `before` (judge against the stored row's `before`, as HQ does). Empty for any
 * other table or a delete. Used by the policy and by HQ's sign-off attestation check
 * (sync/write/apply.ts).
 */
export function signoffFieldsSet(change: RowChange): string[] {
  if (change.table !== 'rtp_entry' || change.op === 'delete') return [];
  const out: string[] = [];
  for (const who of Object.keys(SIGNOFF_PERMISSIONS)) {
    for (const f of [`${who}_signoff_by`, `${who}_signoff_at`]) {
      if (!(f in change.after)) continue;
      const v = change.after[f];
      if (change.op === 'insert' ? v !== null && v !== undefined : v !== change.before[f]) out.push(f);
    }
  }
  return out;
}

/**
 * Whether any change of `changes` names an RTP sign-off field at all (an `rtp_entry` insert giving
 * one non-null, or an update mentioning one): a superset of {@link signoffFieldsSet} that needs
 * no stored row, for a device deciding which changesets its author must attest at HQ.
 */
export function mentionsSignoff(changes: readonly RowChange[]): boolean {
  return changes.some((ch) => {
    if (ch.table !== 'rtp_entry' || ch.op === 'delete') return false;
    return Object.keys(SIGNOFF_PERMISSIONS).some((who) =>
      [`${who}_signoff_by`, `${who}_signoff_at`].some((f) => f in ch.after && (ch.op === 'update' || (ch.after[f] !== null && ch.after[f] !== undefined))),
    );
  });
}

function isNum(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

function money(cents: number): string {
  return `$${(cents / 100).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

function fmt(table: TableName, field: string, v: number): string {
  if (table === 'rate_item' && field === 'price_cents') return money(v);
  if (table === 'app_user' && field === 'budget_cap_usd') return money(Math.round(v * 100));
  return String(v);
}

/**
 * The fields a policy reason names, in the words a clinician reads on the forms (never the
 * column name): what the value is, with its unit. Fields not listed fall back to the column name
 * with spaces ("start date").
 */
export const POLICY_FIELD_WORDS: Readonly<Partial<Record<TableName, Readonly<Record<string, string>>>>> = {
  rate_item: { price_cents: 'The price' },
  session_load: { load_au: 'The session load (AU)', duration_min: 'The session duration (minutes)', rpe: 'The session RPE', date: 'The session date' },
  training_session: { duration_min: 'The training session duration (minutes)' },
  app_user: { budget_cap_usd: 'The monthly assistant budget cap' },
  injury: { onset_date: 'The injury onset date' },
  screening: { date: 'The screening date' },
  wellness: { date: 'The wellness date' },
  vitals: { date: 'The vitals date' },
  capture_session: { recorded_at: 'The capture date' },
};

/** "The injury onset date" for `injury.onset_date` (see {@link POLICY_FIELD_WORDS}). */
export function policyFieldWords(table: TableName, field: string): string {
  return POLICY_FIELD_WORDS[table]?.[field] ?? `The ${field.replace(/_/g, ' ')}`;
}

/** Role names as the app shows them. */
const ROLE_WORDS: Readonly<Record<string, string>> = {
  owner: 'owner',
  admin: 'administrator',
  doctor: 'doctor',
  physio: 'physiotherapist',
  sports_scientist: 'sports scientist',
  strength_coach: 'strength coach',
  coach: 'coach',
  analyst: 'analyst',
  athlete: 'athlete',
  super_admin: 'super admin',
};

/** Relative change |after − before| / |before| (Infinity from 0). */
function relativeChange(before: number, after: number): number {
  if (before === 0) return after === 0 ? 0 : Number.POSITIVE_INFINITY;
  return Math.abs(after - before) / Math.abs(before);
}

/** True when the change is strictly more than 20% (exactly 20% is allowed, float noise ignored). */
function overNumericLimit(before: number, after: number): boolean {
  if (before === 0) return after !== 0;
  const diff = Math.abs(after - before);
  const limit = MAX_NUMERIC_CHANGE_FRACTION * Math.abs(before);
  return diff > limit + 1e-9 * Math.max(1, Math.abs(before));
}

/** "25%", or "very large (from 0)" for a change from 0 (callers write "is a … rise"). */
function pctText(r: number): string {
  if (!Number.isFinite(r)) return 'very large (from 0)';
  const p = Math.round(r * 10_000) / 100;
  return `${p}%`;
}

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})/;

/** The YYYY-MM-DD part of a date or ISO date-time, or null when it is not a real date. */
function datePart(v: unknown): string | null {
  if (typeof v !== 'string') return null;
  const m = DATE_RE.exec(v);
  if (!m) return null;
  const d = `${m[1]}-${m[2]}-${m[3]}`;
  const t = Date.parse(`${d}T00:00:00Z`);
  if (Number.isNaN(t) || new Date(t).toISOString().slice(0, 10) !== d) return null;
  return d;
}

function at(change: RowChange, field?: string): Pick<PolicyDecision, 'table' | 'rowId' | 'field'> {
  return field === undefined ? { table: change.table, rowId: change.id } : { table: change.table, rowId: change.id, field };
}

const BASELINE_WORDS: Readonly<Record<Exclude<BaselineSource, 'current'>, string>> = {
  owner_approved: 'the value an owner last approved',
  first_on_record: 'the first value on record (no owner has approved one)',
  window: `a value it held in the last ${NUMERIC_BASELINE_WINDOW_DAYS} days`,
};

/**
 * The baselines a new value of a limit ({@link NULL_MEANS_UNLIMITED}) is judged against: a limit is
 * judged on rises only (a cut is stricter), as the organisation's cap is ({@link evaluateOrgBudgetCap}).
 * So only baselines the new value is above count, and a value of the 30-day window that lies below
 * the owner-approved (or first recorded) value does not: a cut under what the owner set is no
 * reference for steps adding up, which are measured from the owner's value (issue 13 re-review:
 * owner $10 → admin $5 → admin $5.50 was called "a 45% cut from $10.00"). The current value
 * always counts, so one step of more than 20% still needs an owner.
 */
function limitRiseBaselines(baselines: readonly NumericBaseline[], after: number): NumericBaseline[] {
  const anchor = baselines.find((b) => b.source === 'owner_approved' || b.source === 'first_on_record');
  return baselines.filter((b) => after > b.value && (b.source !== 'window' || anchor === undefined || b.value >= anchor.value));
}

function numericChecks(actor: RuleActor, change: RowChange, ctx: { history?: NumericHistory; nowMs: number }, out: PolicyDecision[]): void {
  if (change.op !== 'update') return;
  for (const field of NUMERIC_CHANGE_FIELDS[change.table] ?? []) {
    if (!(field in change.after)) continue;
    const before = change.before[field];
    const after = change.after[field];
    if (isNum(before) && after === null && (NULL_MEANS_UNLIMITED[change.table]?.includes(field) ?? false)) {
      out.push(limitRemovedDecision(actor, policyFieldWords(change.table, field), fmt(change.table, field, before), before, { ...at(change, field) }));
      continue;
    }
    if (!isNum(before) || !isNum(after)) continue;
    const limit = NULL_MEANS_UNLIMITED[change.table]?.includes(field) ?? false;
    // A lower limit is a stricter one: never judged.
    if (after < before && limit) continue;
    const cumulative = CUMULATIVE_NUMERIC_FIELDS[change.table]?.includes(field) ?? false;
    const hist = cumulative ? (ctx.history?.get(numericHistoryKey(change.table, change.id, field)) ?? []) : [];
    let baselines: NumericBaseline[] = cumulative ? numericBaselines(before, hist, ctx.nowMs) : [{ value: before, source: 'current' as const }];
    if (limit) baselines = limitRiseBaselines(baselines, after);
    // The strictest baseline: the one the new value is furthest from (relative to it).
    let worst: NumericBaseline | null = null;
    for (const b of baselines) {
      if (!overNumericLimit(b.value, after)) continue;
      if (!worst || relativeChange(b.value, after) > relativeChange(worst.value, after)) worst = b;
    }
    if (!worst) continue;
    const base = worst.value;
    const r = relativeChange(base, after);
    const dir = after > base ? 'rise' : 'cut';
    const what = `${policyFieldWords(change.table, field)} ${fmt(change.table, field, before)} → ${fmt(change.table, field, after)}`;
    const from = worst.source === 'current' ? '' : ` from ${fmt(change.table, field, base)}, ${BASELINE_WORDS[worst.source]}`;
    const detail: Record<string, string | number | null> = {
      before,
      after,
      change_pct: Number.isFinite(r) ? Math.round(r * 10_000) / 100 : null,
      limit_pct: MAX_NUMERIC_CHANGE_FRACTION * 100,
    };
    if (cumulative) {
      detail.baseline = base;
      detail.baseline_source = worst.source;
      if (worst.at) detail.baseline_at = worst.at;
    }
    const rule = cumulative
      ? `${SRC}: a change of more than 20% to a numeric value needs an owner (cumulative: judged from the last owner-approved value and the ${NUMERIC_BASELINE_WINDOW_DAYS}-day extremes, models/policy.ts numericBaselines)`
      : `${SRC}: a change of more than 20% to a numeric value needs an owner`;
    if (actor.role === NEEDS_OWNER_APPROVER) {
      out.push({
        code: 'numeric_change_by_owner',
        effect: 'allow',
        reason: `${what} is a ${pctText(r)} ${dir}${from} (over 20%); you are an owner, so no further approval is needed.`,
        rule,
        ...at(change, field),
        detail,
      });
    } else {
      out.push({
        code: 'numeric_change_needs_owner',
        effect: 'needs_owner',
        reason: `${what} is a ${pctText(r)} ${dir}${from} (over 20%); an owner must approve this change in the app.`,
        rule,
        ...at(change, field),
        detail,
      });
    }
  }
}

/**
 * A fee item's code is what bills are looked up by: changing it on an existing item needs an owner
 * (for an owner, an allow decision `fee_code_change_by_owner` that HQ accepts only with proof the
 * owner acted, and that the entry form shows for review). The old code becomes free for another
 * item: a new item under it is judged against this item's price ({@link feeCodeReuseChecks}).
 */
function feeCodeChecks(actor: RuleActor, change: RowChange, out: PolicyDecision[]): void {
  if (change.table !== 'rate_item' || change.op !== 'update' || !('code' in change.after)) return;
  const before = change.before.code;
  const after = change.after.code;
  if (typeof before !== 'string' || typeof after !== 'string' || before === after) return;
  const what = `The fee code ${before} → ${after}: a code is what bills are looked up by, and ${before} becomes free for another item (a new item under it is judged against this item's price)`;
  const rule = `${SRC}: changes that move billed prices need an owner (a fee code change frees the old code for another item)`;
  out.push(
    actor.role === NEEDS_OWNER_APPROVER
      ? {
          code: 'fee_code_change_by_owner',
          effect: 'allow',
          reason: `${what}; you are an owner, so no further approval is needed.`,
          rule,
          ...at(change, 'code'),
          detail: { before, after },
        }
      : {
          code: 'fee_code_change_needs_owner',
          effect: 'needs_owner',
          reason: `${what}; changing it needs an owner's approval in the app.`,
          rule,
          ...at(change, 'code'),
          detail: { before, after },
        },
  );
}

/**
 * A fee code another item of the organisation held before (now, renamed away, or deleted) carries
 * that item's last price: an item taking the code (a new item, or another item renamed to it) at
 * a price more than 20% from it needs an owner, like a price change of the code (allowed for an
 * owner, `fee_code_reuse_by_owner`). Without this, a code rename (or delete) followed by a new
 * item under the old code would move what bills under the code charge at once (issue 13 review).
 * The latest holder counts (none when that is the item itself); needs `feeCodes` from the caller.
 */
function feeCodeReuseChecks(actor: RuleActor, change: RowChange, feeCodes: FeeCodeHistory | undefined, out: PolicyDecision[]): void {
  if (!feeCodes || change.table !== 'rate_item' || change.op === 'delete' || typeof change.after.code !== 'string') return;
  const code = normaliseFeeCode(change.after.code);
  if (change.op === 'update' && typeof change.before.code === 'string' && normaliseFeeCode(change.before.code) === code) return;
  let prior: FeeCodeHolder | null = null;
  for (const h of feeCodes.holders.get(code) ?? []) {
    if (!isNum(h.priceCents) && h.itemId !== change.id) continue;
    if (!prior || h.at > prior.at) prior = h;
  }
  // The item taking back its own code: its price is judged by the numeric rule, not as a reuse.
  if (!prior || prior.itemId === change.id || !isNum(prior.priceCents)) return;
  const price = 'price_cents' in change.after ? change.after.price_cents : feeCodes.prices.get(change.id);
  if (!isNum(price) || !overNumericLimit(prior.priceCents, price)) return;
  const r = relativeChange(prior.priceCents, price);
  const holder =
    prior.how === 'renamed'
      ? `item "${prior.name}" (now ${prior.codeNow ?? 'under another code'})`
      : prior.how === 'deleted'
        ? `item "${prior.name}" (deleted)`
        : `item "${prior.name}"`;
  const what = `Fee code ${change.after.code} was last billed at ${money(prior.priceCents)} by ${holder}; ${change.op === 'insert' ? 'the new item' : 'this item'} at ${money(price)} is a ${pctText(r)} ${price > prior.priceCents ? 'rise' : 'cut'} from it (over 20%)`;
  const rule = `${SRC}: a change of more than 20% to a numeric value needs an owner (a reused fee code is judged against its last price)`;
  const detail = {
    code: change.after.code,
    previous_item_id: prior.itemId,
    previous_item: prior.name,
    previous_price_cents: prior.priceCents,
    price_cents: price,
    change_pct: Number.isFinite(r) ? Math.round(r * 10_000) / 100 : null,
    limit_pct: MAX_NUMERIC_CHANGE_FRACTION * 100,
  };
  out.push(
    actor.role === NEEDS_OWNER_APPROVER
      ? {
          code: 'fee_code_reuse_by_owner',
          effect: 'allow',
          reason: `${what}; you are an owner, so no further approval is needed.`,
          rule,
          ...at(change, 'code'),
          detail,
        }
      : {
          code: 'fee_code_reuse_needs_owner',
          effect: 'needs_owner',
          reason: `${what}; an owner must approve this change in the app.`,
          rule,
          ...at(change, 'code'),
          detail,
        },
  );
}

function rateChecks(change: RowChange, out: PolicyDecision[]): void {
  if (change.table !== 'rate_item' || change.op === 'delete' || !('price_cents' in change.after)) return;
  const v = change.after.price_cents;
  if (isNum(v) && Number.isInteger(v) && v >= RATE_MIN_CENTS && v <= RATE_MAX_CENTS) return;
  const shown = isNum(v) ? money(v) : JSON.stringify(v ?? null);
  out.push({
    code: 'rate_out_of_range',
    effect: 'deny',
    reason: `A price of ${shown} is outside the allowed range of $1.00 to $10,000.00 (whole cents).`,
    rule: `${SRC}: rates between $1 and $10,000`,
    ...at(change, 'price_cents'),
    detail: { value: isNum(v) ? v : null, min_cents: RATE_MIN_CENTS, max_cents: RATE_MAX_CENTS },
  });
}

function scaleChecks(change: RowChange, out: PolicyDecision[]): void {
  if (change.op === 'delete') return;
  const scales = SCALE_FIELDS[change.table];
  if (!scales) return;
  for (const [field, s] of Object.entries(scales)) {
    if (!(field in change.after)) continue;
    const v = change.after[field];
    if (isNum(v) && v >= s.min && v <= s.max && (!s.integer || Number.isInteger(v))) continue;
    out.push({
      code: 'scale_out_of_range',
      effect: 'deny',
      reason: `${JSON.stringify(v ?? null)} is not a valid ${s.label}${s.integer ? '; use a whole number' : ''} from ${s.min} to ${s.max}.`,
      rule: `${SRC}: scores within their scales`,
      ...at(change, field),
      detail: { value: isNum(v) ? v : null, min: s.min, max: s.max },
    });
  }
}

function dateChecks(change: RowChange, today: string, out: PolicyDecision[]): void {
  if (change.op === 'delete') return;
  for (const field of CLINICAL_EVENT_DATE_FIELDS[change.table] ?? []) {
    if (!(field in change.after)) continue;
    const raw = change.after[field];
    const d = datePart(raw);
    if (d === null) {
      out.push({
        code: 'date_invalid',
        effect: 'deny',
        reason: `${policyFieldWords(change.table, field)} ${JSON.stringify(raw ?? null)} is not a real calendar date.`,
        rule: `${SRC}: dates within their ranges`,
        ...at(change, field),
        detail: { value: typeof raw === 'string' ? raw : null },
      });
    } else if (d > latestClinicalDate(today)) {
      out.push({
        code: 'date_in_future',
        effect: 'deny',
        reason: `${policyFieldWords(change.table, field)} ${d} is in the future (today is ${today}; one day's grace allows for time zones); clinical events are recorded on or before the day they happen.`,
        rule: `${SRC}: dates not in the future for clinical events`,
        ...at(change, field),
        detail: { value: d, today },
      });
    } else if (d < EARLIEST_CLINICAL_DATE) {
      out.push({
        code: 'date_too_early',
        effect: 'deny',
        reason: `${policyFieldWords(change.table, field)} ${d} is implausibly far in the past; clinical records start on or after ${EARLIEST_CLINICAL_DATE}.`,
        rule: `${SRC}: dates within their ranges`,
        ...at(change, field),
        detail: { value: d, earliest: EARLIEST_CLINICAL_DATE },
      });
    }
  }
}

function signoffChecks(actor: RuleActor, change: RowChange, out: PolicyDecision[]): void {
  if (change.table !== 'rtp_entry' || change.op === 'delete') return;
  for (const [who, perm] of Object.entries(SIGNOFF_PERMISSIONS) as ['physio' | 'doctor' | 'coach', Permission][]) {
    const by = `${who}_signoff_by`;
    const atField = `${who}_signoff_at`;
    const touched = [by, atField].filter((f) => {
      if (!(f in change.after)) return false;
      const v = change.after[f];
      return change.op === 'insert' ? v !== null && v !== undefined : v !== change.before[f];
    });
    if (touched.length === 0) continue;
    const field = touched[0]!;
    if (!hasPermission(actor.role, perm)) {
      out.push({
        code: 'signoff_not_holder',
        effect: 'deny',
        reason: `Only the ${who === 'physio' ? 'physiotherapist' : who} may give or withdraw the ${who} sign-off; your role (${ROLE_WORDS[actor.role] ?? actor.role}) does not hold it.`,
        rule: `${SRC}: RTP sign-offs only by the holder of that sign-off permission`,
        ...at(change, field),
        detail: { permission: perm, role: actor.role },
      });
      continue;
    }
    const signer = change.after[by];
    if (by in change.after && signer !== null && signer !== undefined && signer !== actor.userId) {
      out.push({
        code: 'signoff_for_other_user',
        effect: 'deny',
        reason: `The ${who} sign-off can only be given in your own name, not on behalf of another user.`,
        rule: `${SRC}: RTP sign-offs only by the holder of that sign-off permission`,
        ...at(change, by),
        detail: { permission: perm, signer: typeof signer === 'string' ? signer : null },
      });
    }
  }
}

/**
 * Evaluate the policy limits on a planned changeset for `actor` (pure).
 *
 * Limits (kinetix.md §3): at most 50 records (deny; the rows are then not judged one by one; a
 * capture session's readings inserted with it count as one record, {@link countedRecords});
 * a change of more than 20% to a value in {@link NUMERIC_CHANGE_FIELDS} needs an owner (allowed
 * outright when the actor is an owner; for {@link CUMULATIVE_NUMERIC_FIELDS} judged against every
 * baseline of {@link numericBaselines} from `ctx.history`, so steps cannot add up past 20%); rates $1–$10,000 (deny); scores within
 * {@link SCALE_FIELDS} and clinical dates in {@link CLINICAL_EVENT_DATE_FIELDS} not after
 * `ctx.today` (deny); RTP sign-offs only by the holder of that permission, in their own name
 * (deny); a changed fee code needs an owner, and a fee code another item held before, given to
 * an item at a price more than 20% from its last price, needs an owner (`ctx.feeCodes`); removing
 * a limit of {@link NULL_MEANS_UNLIMITED} needs an owner, a cut of one never does. An owner's own
 * such change is allowed under {@link OWNER_AUTHORITY_CODES}. `ctx.today` defaults to today's UTC date.
 */
export function evaluatePolicy(actor: RuleActor, planned: PlannedChangeset, ctx?: PolicyContext): PolicyResult {
  const today = ctx?.today ?? new Date().toISOString().slice(0, 10);
  const nowMs = ctx?.now ? Date.parse(ctx.now) : Date.now();
  const decisions: PolicyDecision[] = [];
  const n = countedRecords(planned.changes);
  if (n > MAX_RECORDS_PER_CHANGESET) {
    decisions.push({
      code: 'too_many_records',
      effect: 'deny',
      reason: `This change touches ${n} records; at most ${MAX_RECORDS_PER_CHANGESET} are allowed in one change. Split it into smaller changes.`,
      rule: `${SRC}: at most 50 records per changeset`,
      detail: { records: n, max: MAX_RECORDS_PER_CHANGESET },
    });
  } else {
    for (const change of planned.changes) {
      rateChecks(change, decisions);
      feeCodeChecks(actor, change, decisions);
      feeCodeReuseChecks(actor, change, ctx?.feeCodes, decisions);
      scaleChecks(change, decisions);
      dateChecks(change, today, decisions);
      signoffChecks(actor, change, decisions);
      numericChecks(actor, change, { ...(ctx?.history ? { history: ctx.history } : {}), nowMs }, decisions);
    }
  }
  const verdict: PolicyVerdict = decisions.some((d) => d.effect === 'deny')
    ? 'deny'
    : decisions.some((d) => d.effect === 'needs_owner')
      ? 'needs_owner'
      : 'allow';
  if (decisions.length === 0) {
    decisions.push({
      code: 'within_limits',
      effect: 'allow',
      reason: `Within every policy limit (${n} record${n === 1 ? '' : 's'}).`,
      rule: SRC,
      detail: { records: n },
    });
  }
  return {
    verdict,
    decisions,
    reasons: verdict === 'allow' ? [] : decisions.filter((d) => d.effect === verdict).map((d) => d.reason),
    approverRole: verdict === 'needs_owner' ? NEEDS_OWNER_APPROVER : null,
  };
}

/**
 * Decision codes that allow a change only because the acting user is an owner (the owner's own
 * authority stands in for the approval a non-owner would need). HQ accepts that authority only
 * with proof the owner acted (sync/write/approvals.ts), as for an approval; the entry form shows
 * such a change for review before applying it (main/ipc/forms.ts).
 */
export const OWNER_AUTHORITY_CODES: ReadonlySet<PolicyCode> = new Set<PolicyCode>([
  'numeric_change_by_owner',
  'fee_code_change_by_owner',
  'fee_code_reuse_by_owner',
]);

/**
 * May a user of `approverRole` approve a changeset with this verdict? `deny` is approved by no
 * one; `needs_owner` only by an `owner` (domain.md); `allow` by the run's own user (the harness
 * checks who that is).
 */
export function canApprove(approverRole: Role | string, verdict: PolicyVerdict): boolean {
  if (verdict === 'deny') return false;
  if (verdict === 'needs_owner') return approverRole === NEEDS_OWNER_APPROVER;
  return true;
}
