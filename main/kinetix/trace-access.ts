/**
 * Who may open an assistant run's trace (the audit view behind "Name via Assistant" in Activity).
 *
 * - The run's own user, always (within their org).
 * - Anyone else in the same organisation who may read the activity log (`activity.read`; never an
 *   athlete account), when the run wrote at least one activity entry their role may see (its
 *   record's table readable by the role, as `activity.list` filters), and only when their role may
 *   read every table the run's tools read or changed (an owner also when the run proposed a change
 *   that needs an owner's approval, so the person asked to approve can see why): a trace holds tool results, so it must not
 *   show an admin the injury records a physio's run looked up. A tool whose result tables are not
 *   declared (`'unknown'`) fails closed: the reader must be able to read every table the run's
 *   user could.
 *
 * Otherwise NotFound (the run's existence is not revealed) or Forbidden naming what the role
 * cannot read.
 */
import { Forbidden, NotFound } from '../../models/errors';
import type { Role } from '../../models/roles';
import { NEEDS_OWNER_APPROVER, SELF_SCOPED_ROLES, hasPermission } from '../../models/roles';
import type { TableName } from '../../models/tables';
import { TABLES, isTableName } from '../../models/tables';
import type { RowChange } from '../../models/changeset';
import { activityForRun, getChangeset } from '../data/changesets';
import type { Db } from '../data/db';
import type { RunRow, ToolCallRow } from '../data/kinetix';
import { countNeedsOwnerForRun } from '../data/proposals';
import type { ToolRegistry } from './registry';

/** The trace reader as the harness resolved them. */
export interface TraceReader {
  id: string;
  org_id: string;
  role: string;
}

/** Table names in clinician words, for the refusal. */
const TABLE_WORDS: Partial<Record<TableName, string>> = {
  injury: 'injuries',
  rtp_entry: 'return-to-play plans',
  screening: 'screenings',
  wellness: 'wellness answers',
  vitals: 'vitals',
  session_load: 'training loads',
  training_session: 'training sessions',
  app_user: 'user accounts',
  rate_item: 'fee schedule',
  rate_folder: 'fee schedule',
  device: 'devices',
  report: 'reports',
  pose_metric: 'pose metrics',
  capture_session: 'capture sessions',
};

function readable(role: string, table: string): boolean {
  return isTableName(table) && hasPermission(role, TABLES[table].read);
}

/**
 * Refuse unless `reader` may open the trace of `run` (see the module doc).
 * @throws NotFound (another org, no activity.read, no visible activity entry), Forbidden (the run read records the role cannot)
 */
export function assertMayReadTrace(db: Db, tools: ToolRegistry, reader: TraceReader, run: RunRow, toolCalls: readonly ToolCallRow[]): void {
  if (run.org_id !== reader.org_id) throw new NotFound('Run');
  if (run.user_id === reader.id) return;
  if (!hasPermission(reader.role, 'activity.read') || SELF_SCOPED_ROLES.has(reader.role as Role)) throw new NotFound('Run');
  const entries = activityForRun(db, reader.org_id, run.id).filter((a) => readable(reader.role, a.record_table));
  const asApprover = reader.role === NEEDS_OWNER_APPROVER && countNeedsOwnerForRun(db, reader.org_id, run.id) > 0;
  if (entries.length === 0 && !asApprover) throw new NotFound('Run');
  const ownerRole = runUserRole(run);
  const tables = new Set<string>();
  for (const c of toolCalls) {
    const tool = tools.get(c.tool_name);
    const declared = tool ? tool.tables : 'unknown';
    if (declared === 'unknown') {
      for (const t of Object.keys(TABLES)) if (ownerRole === null || hasPermission(ownerRole, TABLES[t as TableName].read)) tables.add(t);
    } else for (const t of declared) tables.add(t);
    if (c.changeset_id) for (const ch of changedTables(db, reader.org_id, c.changeset_id)) tables.add(ch);
  }
  const hidden = [...tables].filter((t) => !readable(reader.role, t));
  if (hidden.length > 0) {
    const words = [...new Set(hidden.map((t) => TABLE_WORDS[t as TableName] ?? t.replace(/_/g, ' ')))].sort();
    throw new Forbidden(
      `This assistant run looked at records your role cannot read (${words.join(', ')}), so its trace opens only for its own user and roles that can read them.`,
    );
  }
}

function runUserRole(run: RunRow): string | null {
  try {
    const snap = JSON.parse(run.user_snapshot_json) as { role?: unknown };
    return typeof snap.role === 'string' ? snap.role : null;
  } catch {
    return null;
  }
}

function changedTables(db: Db, orgId: string, changesetId: string): string[] {
  const c = getChangeset(db, orgId, changesetId);
  return c ? [...new Set(c.changes.map((ch: RowChange) => ch.table))] : [];
}
