import { describe, expect, it } from 'vitest';
import { compileWhere, WhereError } from './where';
import { parseColumnList, parseTableName } from './schema';
import { parseOffset } from './log';

const cols = new Set(['id', 'org_id', 'status', 'n', 'Mixed Case', 'archived']);

describe('compileWhere', () => {
  it('regenerates SQL with quoted columns and every literal and param bound', () => {
    const w = compileWhere(`org_id = $1 AND (status IN ('open', 'it''s') OR n >= 2.5) AND NOT archived AND "Mixed Case" IS NOT NULL`, cols, { '1': 'org-a' });
    expect(w.sql).toBe(`(((("org_id" = $1) AND (("status" IN ($2, $3)) OR ("n" >= $4::numeric))) AND (NOT "archived")) AND ("Mixed Case" IS NOT NULL))`);
    expect(w.values).toEqual(['org-a', 'open', "it's", '2.5']);
    expect([...w.columns].sort()).toEqual(['Mixed Case', 'archived', 'n', 'org_id', 'status']);
  });

  it('supports BETWEEN, LIKE/ILIKE, IS DISTINCT FROM, casts, != and negative numbers; placeholders start where asked', () => {
    const w = compileWhere(
      `n BETWEEN -1 AND 10 AND status NOT ILIKE $2 AND id::text LIKE 'a%' AND n != 3 AND status IS DISTINCT FROM NULL`,
      cols,
      { '2': '%x%' },
      5,
    );
    expect(w.sql).toBe(
      `((((("n" BETWEEN $5 AND $6) AND ("status" NOT ILIKE $7)) AND (("id")::text LIKE $8)) AND ("n" <> $9)) AND ("status" IS DISTINCT FROM NULL))`,
    );
    expect(w.values).toEqual(['-1', '10', '%x%', 'a%', '3']);
  });

  it('a repeated $n binds once', () => {
    const w = compileWhere(`org_id = $1 OR status = $1`, cols, { '1': 'a' });
    expect(w.sql).toBe(`(("org_id" = $1) OR ("status" = $1))`);
    expect(w.values).toEqual(['a']);
  });

  it.each([
    [`id = 1; DROP TABLE x`, /unsupported character ';'/],
    [`id = 1 -- comment`, /arithmetic is not supported|unexpected/],
    [`pg_sleep(1) IS NULL`, /function calls are not supported/],
    [`password = 'x'`, /unknown column "password"/],
    [`"ID" = 1`, /unknown column "ID"/],
    [`id = (SELECT 1)`, /unexpected keyword SELECT|unknown column/],
    [`id = 1 UNION SELECT 1`, /unexpected token/],
    [`id::regclass = 1`, /unsupported cast type/],
    [`id = $1`, /params\[1\] is not given/],
    [`'unterminated`, /unterminated string literal/],
    [``, /empty where clause/],
    [`id + 1 = 2`, /unsupported character '\+'/],
    [`id = 1 OR`, /expected a column, literal or parameter at end of clause/],
  ])('refuses %j', (where, re) => {
    expect(() => compileWhere(where, cols)).toThrow(WhereError);
    expect(() => compileWhere(where, cols)).toThrow(re);
  });

  it('refuses params the clause does not use, and non-numeric param keys', () => {
    expect(() => compileWhere(`id = $1`, cols, { '1': 'a', '2': 'b' })).toThrow(/params\[2\] is given but \$2 does not appear/);
    expect(() => compileWhere(`id = 1`, cols, { x: 'a' })).toThrow(/positive integers/);
  });

  it('refuses a clause nested deeper than 64 levels or longer than 4096 characters', () => {
    expect(() => compileWhere('('.repeat(70) + 'id = 1' + ')'.repeat(70), cols)).toThrow(/nested too deeply/);
    expect(() => compileWhere(`status = '${'x'.repeat(5000)}'`, cols)).toThrow(/longer than 4096/);
  });
});

describe('table, columns and offset parameters', () => {
  it('parses table names as Electric does', () => {
    expect(parseTableName('issues')).toEqual({ schema: 'public', name: 'issues' });
    expect(parseTableName('Foo.Issues')).toEqual({ schema: 'foo', name: 'issues' });
    expect(parseTableName('"My Schema"."Is""sues"')).toEqual({ schema: 'My Schema', name: 'Is"sues' });
    expect(() => parseTableName('a.b.c')).toThrow(/not a table name/);
    expect(() => parseTableName('x; drop')).toThrow(/not a table name/);
  });
  it('parses column lists with quoted identifiers', () => {
    expect(parseColumnList('id,title,"Status-Check"')).toEqual(['id', 'title', 'Status-Check']);
    expect(parseColumnList('"id","a,b"')).toEqual(['id', 'a,b']);
    expect(() => parseColumnList('id;title')).toThrow(/comma-separated/);
  });
  it('parses offsets', () => {
    expect(parseOffset('-1')).toEqual({ kind: 'start' });
    expect(parseOffset('now')).toEqual({ kind: 'now' });
    expect(parseOffset('26800584_4')).toEqual({ kind: 'at', offset: { tx: 26800584n, op: 4 } });
    expect(parseOffset('0_inf')).toEqual({ kind: 'at', offset: { tx: 0n, op: Number.MAX_SAFE_INTEGER } });
    expect(parseOffset('1_-1')).toBeNull();
    expect(parseOffset('abc')).toBeNull();
  });
});
