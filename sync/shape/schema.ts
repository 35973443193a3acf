/**
 * Table metadata for shapes: columns, primary key, Electric's `electric-schema` header and row keys.
 */
import type pg from 'pg';
import { AppError } from '../../models/errors';
import { quoteIdent } from './where';

/** One column of a shape's table. */
export interface ColumnInfo {
  name: string;
  /** Base type name (`int4`, `text`, an enum's name); for arrays, the element type. */
  type: string;
  /** Array dimensions (0 for scalars). */
  dims: number;
  notNull: boolean;
  /** Position in the primary key (0-based), or null. */
  pkIndex: number | null;
  typmod: number;
}

/** A table a shape can be defined on. */
export interface TableInfo {
  schema: string;
  name: string;
  oid: number;
  columns: ColumnInfo[];
  /** Primary-key column names, in key order. */
  pk: string[];
  /** `REPLICA IDENTITY` setting: d(efault), f(ull), i(ndex), n(othing). */
  replicaIdentity: string;
}

/**
 * The table does not exist, has no primary key, or the `table` (or `columns`) parameter is
 * malformed: code `Validation`, which the shape API answers with Electric's 400
 * (`{message: 'Invalid request', errors: {<param>: [<message>]}}`).
 */
export class TableError extends AppError {
  /** @param message `<param>: <what is wrong>` (`table: …`, `columns: …`); the prefix names the issue's path. */
  constructor(message: string) {
    const m = /^(\w+): ([\s\S]*)$/.exec(message);
    super({ code: 'Validation', message, issues: [{ path: m?.[1] ?? 'table', message: m?.[2] ?? message }] });
    this.name = 'TableError';
  }
}

/** Split Electric's `table` parameter (`issues`, `foo.issues`, `"Foo"."Bar Baz"`) into schema and name. */
export function parseTableName(param: string): { schema: string; name: string } {
  const parts: string[] = [];
  let i = 0;
  const s = param.trim();
  while (i < s.length) {
    if (s[i] === '"') {
      let v = '';
      i++;
      for (;;) {
        if (i >= s.length) throw new TableError(`table: unterminated quoted identifier in ${JSON.stringify(param)}`);
        if (s[i] === '"') {
          if (s[i + 1] === '"') {
            v += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        v += s[i++];
      }
      parts.push(v);
    } else {
      const m = /^[A-Za-z_][A-Za-z0-9_$]*/.exec(s.slice(i));
      if (!m) throw new TableError(`table: ${JSON.stringify(param)} is not a table name (use name, schema.name or "Quoted Name")`);
      parts.push(m[0].toLowerCase());
      i += m[0].length;
    }
    if (i < s.length) {
      if (s[i] !== '.') throw new TableError(`table: ${JSON.stringify(param)} is not a table name`);
      i++;
      if (i >= s.length) throw new TableError(`table: ${JSON.stringify(param)} ends with '.'`);
    }
  }
  if (parts.length === 1) return { schema: 'public', name: parts[0]! };
  if (parts.length === 2) return { schema: parts[0]!, name: parts[1]! };
  throw new TableError(`table: ${JSON.stringify(param)} is not a table name`);
}

/** Parse Electric's `columns` parameter (`id,title,"Status-Check"`). */
export function parseColumnList(param: string): string[] {
  const out: string[] = [];
  let i = 0;
  const s = param;
  while (i < s.length) {
    while (s[i] === ' ') i++;
    if (s[i] === '"') {
      let v = '';
      i++;
      for (;;) {
        if (i >= s.length) throw new TableError('columns: unterminated quoted identifier');
        if (s[i] === '"') {
          if (s[i + 1] === '"') {
            v += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        v += s[i++];
      }
      out.push(v);
    } else {
      const m = /^[A-Za-z_][A-Za-z0-9_$]*/.exec(s.slice(i));
      if (!m) throw new TableError(`columns: ${JSON.stringify(param)} is not a comma-separated list of column names`);
      out.push(m[0].toLowerCase());
      i += m[0].length;
    }
    while (s[i] === ' ') i++;
    if (i < s.length) {
      if (s[i] !== ',') throw new TableError(`columns: ${JSON.stringify(param)} is not a comma-separated list of column names`);
      i++;
    }
  }
  if (out.length === 0) throw new TableError('columns: empty list');
  return out;
}

/** Read a table's columns and primary key from the catalog. Throws TableError if absent or keyless. */
export async function loadTable(db: pg.Pool | pg.Client, schema: string, name: string): Promise<TableInfo> {
  const t = await db.query<{ oid: number; relkind: string; relreplident: string }>(
    `SELECT c.oid::int AS oid, c.relkind::text AS relkind, c.relreplident::text AS relreplident
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relname = $2`,
    [schema, name],
  );
  const row = t.rows[0];
  if (!row || !['r', 'p'].includes(row.relkind)) throw new TableError(`table: ${quoteIdent(schema)}.${quoteIdent(name)} does not exist (or is not a table)`);
  const cols = await db.query<{ name: string; type: string; elem: string | null; dims: number; notnull: boolean; typmod: number; pk: number | null }>(
    `SELECT a.attname AS name, t.typname AS type, et.typname AS elem, a.attndims AS dims, a.attnotnull AS notnull, a.atttypmod AS typmod,
            (SELECT k.ord - 1 FROM pg_index i, unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
              WHERE i.indrelid = a.attrelid AND i.indisprimary AND k.attnum = a.attnum)::int AS pk
       FROM pg_attribute a
       JOIN pg_type t ON t.oid = a.atttypid
       LEFT JOIN pg_type et ON et.oid = t.typelem AND t.typcategory = 'A'
      WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY a.attnum`,
    [row.oid],
  );
  const columns: ColumnInfo[] = cols.rows.map((c) => ({
    name: c.name,
    type: c.elem ?? c.type,
    dims: c.elem ? Math.max(1, c.dims) : 0,
    notNull: c.notnull,
    pkIndex: c.pk,
    typmod: c.typmod,
  }));
  const pk = columns
    .filter((c) => c.pkIndex !== null)
    .sort((a, b) => a.pkIndex! - b.pkIndex!)
    .map((c) => c.name);
  if (pk.length === 0) throw new TableError(`table: ${quoteIdent(schema)}.${quoteIdent(name)} has no primary key; shapes need one to key their rows`);
  return { schema, name, oid: row.oid, columns, pk, replicaIdentity: row.relreplident };
}

/** Electric's schema object for one column (the `electric-schema` header maps column → this). */
export function columnSchema(c: ColumnInfo): Record<string, unknown> {
  const s: Record<string, unknown> = { type: c.type, dims: c.dims };
  const m = c.typmod;
  if (m >= 0) {
    if (c.type === 'varchar') s.max_length = m - 4;
    else if (c.type === 'bpchar') s.length = m - 4;
    else if (c.type === 'numeric') {
      s.precision = ((m - 4) >> 16) & 0xffff;
      s.scale = (m - 4) & 0xffff;
    } else if (['time', 'timetz', 'timestamp', 'timestamptz'].includes(c.type)) s.precision = m;
    else if (c.type === 'bit' || c.type === 'varbit') s.length = m;
  }
  if (c.notNull) s.not_null = true;
  if (c.pkIndex !== null) s.pk_index = c.pkIndex;
  return s;
}

/**
 * Electric's row key: `"schema"."table"/"pk1"/"pk2"` (identifiers quoted, each key value quoted with
 * `"` and `/` escaped as in Electric).
 */
export function rowKey(schema: string, table: string, pk: string[], row: Record<string, string | null | undefined>): string {
  let k = `${quoteIdent(schema)}.${quoteIdent(table)}`;
  for (const c of pk) {
    const v = row[c] ?? '_';
    k += '/"' + String(v).replace(/\//g, '//').replace(/"/g, '""') + '"';
  }
  return k;
}
