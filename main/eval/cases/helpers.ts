/**
 * Shared pieces of the eval cases: reading tool results the way a competent model would, the
 * ground truth computed through the service layer (never from what the model saw), and planting
 * hostile text through the same changeset path every other write takes.
 */
import { uuidv7 } from 'uuidv7';
import type { RowChange } from '../../../models/changeset';
import type { Injury, RtpEntry } from '../../../models/records';
import { applyChangeset } from '../../data/changesets';
import type { HelpPageInput } from '../../data/help';
import { indexHelpPages } from '../../data/help';
import { putOrgSetting } from '../../data/identity';
import { getRow, listRows } from '../../data/rows';
import { shippedHelpPages } from '../../help';
import { CLEARANCE_SETTING_KEY } from '../../kinetix';
import { clearanceUpTo } from '../../../models/classification';
import type { ReadVerbName, VerbOutput } from '../../../models/verbs';
import { callVerb, type CallVerbInput } from '../../services';
import type { Turn } from '../model';
import type { ShownRow } from '../types';
import type { World } from '../world';

/** Find by `name` in a list result (array, or `{ [key]: [] }`). @throws when absent (a script bug). */
export function pick<T extends Record<string, unknown>>(list: unknown, pred: (x: T) => boolean, what: string): T {
  const arr = Array.isArray(list) ? list : list && typeof list === 'object' ? Object.values(list).find(Array.isArray) : undefined;
  const hit = (arr as T[] | undefined)?.find(pred);
  if (!hit) throw new Error(`scripted model: ${what} not in the tool result`);
  return hit;
}

/** The id of the row named `name` in the latest result of `tool`. */
export function idNamed(t: Turn, tool: string, name: string): string {
  return String(pick<{ name: string; id: string }>(t.last(tool), (x) => x.name === name, `${name} (${tool})`).id);
}

/** Call read verb `verb` as a user (ground truth for answer checks), typed by the verb map. */
export function read<K extends ReadVerbName>(w: World, userId: string, verb: K, input: CallVerbInput<K>): VerbOutput<K> {
  return callVerb({ db: w.db, userId, now: () => new Date(`${w.seed.today}T12:00:00Z`) }, verb, input);
}

/** Dollars as the fee pages show them: 5500 → "$55.00". */
export function dollars(cents: number): string {
  return `$${(cents / 100).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

/** Change one row as a club user, the way the app's pages do (a changeset, activity, version bump). */
export function editAs(w: World, userId: string, role: string, table: RowChange['table'], id: string, patch: Record<string, unknown>, orgId = w.orgId): void {
  const row = getRow<{ id: string; version: number } & Record<string, unknown>>(w.db, table, orgId, id);
  if (!row) throw new Error(`eval setup: no ${table} ${id}`);
  const before: Record<string, unknown> = {};
  for (const k of Object.keys(patch)) before[k] = row[k] ?? null;
  applyChangeset(w.db, {
    actor: { userId, orgId, role: role as never, linkedAthleteId: null, active: true, displayName: 'Eval set-up' },
    planned: { verb: 'eval.setup', summary: `Set up ${table}`, changes: [{ op: 'update', table, id, version: row.version, before, after: patch }] },
  });
}

/** Insert rows as a club user (set-up of a case; part of the baseline). Returns the ids. */
export function insertAs(w: World, userId: string, role: string, table: RowChange['table'], rows: Record<string, unknown>[], orgId = w.orgId): string[] {
  const changes = rows.map((after) => ({ op: 'insert' as const, table, id: uuidv7(), after }));
  applyChangeset(w.db, {
    actor: { userId, orgId, role: role as never, linkedAthleteId: null, active: true, displayName: 'Eval set-up' },
    planned: { verb: 'eval.setup', summary: `Set up ${rows.length} ${table}`, changes },
  });
  return changes.map((c) => c.id);
}

/** Clear the model provider for every class up to clinical-restricted (so injected clinician notes reach the model). */
export function clearProviderForRestricted(w: World): void {
  putOrgSetting(w.db, w.orgId, CLEARANCE_SETTING_KEY, { anthropic: clearanceUpTo('clinical-restricted') });
}

/** The open injury whose body part starts with `part`, with its RTP entries (demo club). */
export function injuryOf(w: World, part: string): { injury: Injury; rtp: RtpEntry[]; athleteName: string } {
  const injury = listRows<Injury>(w.db, 'injury', w.orgId, { limit: 1000 }).find((i) => i.body_part.startsWith(part));
  if (!injury) throw new Error(`eval: no ${part} injury`);
  const rtp = listRows<RtpEntry>(w.db, 'rtp_entry', w.orgId, { eq: { injury_id: injury.id }, orderBy: [{ column: 'created_at' }] });
  const a = getRow<{ name: string }>(w.db, 'athlete', w.orgId, injury.athlete_id);
  return { injury, rtp, athleteName: a?.name ?? '?' };
}

/** Add a help page to the index of this case's database only (a poisoned page in a test DB). */
export function plantHelpPage(w: World, page: HelpPageInput): void {
  indexHelpPages(w.db, [...shippedHelpPages(), page]);
}

/** A row predicate: an insert into `table`. */
export const inserts = (table: string) => (c: ShownRow) => c.op === 'insert' && c.table === table;
/** A row predicate: an update of `table`. */
export const updates = (table: string) => (c: ShownRow) => c.op === 'update' && c.table === table;
