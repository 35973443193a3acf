/** Small builders for row changes, used by every write verb's plan. */
import { uuidv7 } from 'uuidv7';
import type { InsertChange, UpdateChange } from '../../models/changeset';
import type { TableName } from '../../models/tables';

/** An insert of a new row with a fresh UUID v7. */
export function insertRow(table: TableName, after: Record<string, unknown>, id: string = uuidv7()): InsertChange {
  return { op: 'insert', table, id, after };
}

/**
 * An update carrying only the fields whose value differs from `row`, each with before/after,
 * planned against `row.version`. Returns null when nothing would change.
 */
export function updateRow(
  table: TableName,
  row: { id: string; version: number } & Record<string, unknown>,
  patch: Record<string, unknown>,
): UpdateChange | null {
  const before: Record<string, unknown> = {};
  const after: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) continue;
    if (row[k] !== v) {
      before[k] = row[k] ?? null;
      after[k] = v;
    }
  }
  if (Object.keys(after).length === 0) return null;
  return { op: 'update', table, id: row.id, version: row.version, before, after };
}

/** Drop `undefined` entries (optional inputs the caller did not give). */
export function defined<T extends Record<string, unknown>>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
