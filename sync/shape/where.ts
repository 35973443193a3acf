/**
 * The `where` clause of a shape: a restricted, safe subset of Electric's (PostgreSQL) syntax.
 *
 * The clause is tokenised and parsed into an AST; SQL is then *regenerated* from the AST, never
 * copied from the input: every column is checked against the table's columns and double-quoted,
 * every literal becomes a bind parameter, and `$n` refers to the shape's `params[n]`. Nothing the
 * client writes reaches Postgres as SQL text, so there is nothing to inject.
 *
 * Supported (everything else is refused with `WhereError`, which the HTTP layer turns into 400):
 * - column references: `status`, `"Mixed Case"` (unquoted names fold to lower case, as in SQL);
 * - literals: `'text'` (with `''` escapes), integers and decimals (`-3`, `2.5`), `TRUE`, `FALSE`, `NULL`;
 * - positional parameters `$1`, `$2`, … (values from `params[n]`, bound as parameters);
 * - comparisons `=  <>  !=  <  <=  >  >=`;
 * - `x [NOT] IN (a, b, …)`, `x [NOT] BETWEEN a AND b`, `x [NOT] LIKE p`, `x [NOT] ILIKE p`;
 * - `x IS [NOT] NULL`, `x IS [NOT] TRUE`, `x IS [NOT] FALSE`, `x IS [NOT] DISTINCT FROM y`;
 * - `AND`, `OR`, `NOT`, parentheses, a bare boolean column;
 * - casts `x::type` to: text, varchar, int2, int4, int8, smallint, integer, int, bigint, numeric,
 *   decimal, real, float4, float8, bool, boolean, date, time, timestamp, timestamptz, uuid, jsonb
 *   (optionally with `[]`).
 * Not supported: function calls, arithmetic, sub-queries, `ANY`/`ALL`, array literals, JSON
 * operators, `SIMILAR TO`, regular expressions, comments, `;`.
 */

import { AppError } from '../../models/errors';

/**
 * A `where` clause (or its params) that is not in the supported subset, or names an unknown
 * column: code `Validation` (the shape API answers Electric's 400 with `errors.where`).
 */
export class WhereError extends AppError {
  constructor(message: string) {
    super({ code: 'Validation', message, issues: [{ path: 'where', message }] });
    this.name = 'WhereError';
  }
}

type Token =
  | { t: 'ident'; v: string; quoted: boolean; pos: number }
  | { t: 'str'; v: string; pos: number }
  | { t: 'num'; v: string; pos: number }
  | { t: 'param'; v: number; pos: number }
  | { t: 'op'; v: string; pos: number }
  | { t: 'eof'; pos: number };

const MAX_WHERE_LENGTH = 4096;
const MAX_DEPTH = 64;

function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const pos = i;
    if (c === "'") {
      let v = '';
      i++;
      for (;;) {
        if (i >= src.length) throw new WhereError(`unterminated string literal at position ${pos}`);
        if (src[i] === "'") {
          if (src[i + 1] === "'") {
            v += "'";
            i += 2;
            continue;
          }
          i++;
          break;
        }
        v += src[i];
        i++;
      }
      out.push({ t: 'str', v, pos });
    } else if (c === '"') {
      let v = '';
      i++;
      for (;;) {
        if (i >= src.length) throw new WhereError(`unterminated quoted identifier at position ${pos}`);
        if (src[i] === '"') {
          if (src[i + 1] === '"') {
            v += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        v += src[i];
        i++;
      }
      if (v === '') throw new WhereError(`empty quoted identifier at position ${pos}`);
      out.push({ t: 'ident', v, quoted: true, pos });
    } else if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(src[i + 1] ?? ''))) {
      const m = /^(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?/.exec(src.slice(i))!;
      out.push({ t: 'num', v: m[0], pos });
      i += m[0].length;
      if (/[A-Za-z_]/.test(src[i] ?? '')) throw new WhereError(`unexpected character '${src[i]}' after number at position ${i}`);
    } else if (c === '$') {
      const m = /^\$(\d+)/.exec(src.slice(i));
      if (!m) throw new WhereError(`'$' must be followed by a parameter number at position ${pos}`);
      const n = Number(m[1]);
      if (n < 1 || n > 1000) throw new WhereError(`parameter $${m[1]} out of range`);
      out.push({ t: 'param', v: n, pos });
      i += m[0].length;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_$]*/.exec(src.slice(i))!;
      out.push({ t: 'ident', v: m[0], quoted: false, pos });
      i += m[0].length;
    } else {
      const two = src.slice(i, i + 2);
      if (['<>', '!=', '<=', '>=', '::'].includes(two)) {
        out.push({ t: 'op', v: two, pos });
        i += 2;
      } else if ('=<>(),[]-'.includes(c)) {
        out.push({ t: 'op', v: c, pos });
        i++;
      } else {
        throw new WhereError(`unsupported character '${c}' at position ${pos}`);
      }
    }
  }
  out.push({ t: 'eof', pos: src.length });
  return out;
}

/** AST of a parsed where clause. */
export type WhereNode =
  | { k: 'col'; name: string }
  | { k: 'lit'; value: string | null; kind: 'text' | 'number' | 'bool' | 'null' }
  | { k: 'param'; n: number }
  | { k: 'cast'; e: WhereNode; type: string }
  | { k: 'and' | 'or'; l: WhereNode; r: WhereNode }
  | { k: 'not'; e: WhereNode }
  | { k: 'cmp'; op: string; l: WhereNode; r: WhereNode }
  | { k: 'in'; e: WhereNode; list: WhereNode[]; not: boolean }
  | { k: 'between'; e: WhereNode; lo: WhereNode; hi: WhereNode; not: boolean }
  | { k: 'like'; e: WhereNode; pattern: WhereNode; not: boolean; ci: boolean }
  | { k: 'is'; e: WhereNode; what: 'NULL' | 'TRUE' | 'FALSE'; not: boolean }
  | { k: 'distinct'; l: WhereNode; r: WhereNode; not: boolean };

const CAST_TYPES = new Set([
  'text',
  'varchar',
  'int2',
  'int4',
  'int8',
  'smallint',
  'integer',
  'int',
  'bigint',
  'numeric',
  'decimal',
  'real',
  'float4',
  'float8',
  'bool',
  'boolean',
  'date',
  'time',
  'timestamp',
  'timestamptz',
  'uuid',
  'jsonb',
]);
const RESERVED = new Set(['and', 'or', 'not', 'in', 'is', 'null', 'true', 'false', 'like', 'ilike', 'between', 'distinct', 'from', 'select', 'union']);

class Parser {
  private i = 0;
  private depth = 0;
  constructor(
    private readonly toks: Token[],
    private readonly columns: ReadonlySet<string>,
  ) {}

  private peek(): Token {
    return this.toks[this.i]!;
  }
  private next(): Token {
    return this.toks[this.i++]!;
  }
  private isKw(word: string, tok: Token = this.peek()): boolean {
    return tok.t === 'ident' && !tok.quoted && tok.v.toLowerCase() === word;
  }
  private acceptKw(word: string): boolean {
    if (this.isKw(word)) {
      this.i++;
      return true;
    }
    return false;
  }
  private expectKw(word: string): void {
    if (!this.acceptKw(word)) this.fail(`expected ${word.toUpperCase()}`);
  }
  private isOp(v: string): boolean {
    const t = this.peek();
    return t.t === 'op' && t.v === v;
  }
  private expectOp(v: string): void {
    if (!this.isOp(v)) this.fail(`expected '${v}'`);
    this.i++;
  }
  private fail(msg: string): never {
    const t = this.peek();
    const at = t.t === 'eof' ? 'at end of clause' : `at position ${t.pos}`;
    throw new WhereError(`${msg} ${at}`);
  }

  parseAll(): WhereNode {
    const e = this.or();
    if (this.peek().t !== 'eof') this.fail('unexpected token');
    return e;
  }

  private or(): WhereNode {
    let l = this.and();
    while (this.acceptKw('or')) l = { k: 'or', l, r: this.and() };
    return l;
  }
  private and(): WhereNode {
    let l = this.not();
    while (this.acceptKw('and')) l = { k: 'and', l, r: this.not() };
    return l;
  }
  private not(): WhereNode {
    if (this.acceptKw('not')) {
      if (++this.depth > MAX_DEPTH) this.fail('clause nested too deeply');
      const e = this.not();
      this.depth--;
      return { k: 'not', e };
    }
    return this.predicate();
  }
  private predicate(): WhereNode {
    const e = this.operand();
    const t = this.peek();
    if (t.t === 'op' && ['=', '<>', '!=', '<', '<=', '>', '>='].includes(t.v)) {
      this.i++;
      return { k: 'cmp', op: t.v === '!=' ? '<>' : t.v, l: e, r: this.operand() };
    }
    if (this.acceptKw('is')) {
      const not = this.acceptKw('not');
      if (this.acceptKw('null')) return { k: 'is', e, what: 'NULL', not };
      if (this.acceptKw('true')) return { k: 'is', e, what: 'TRUE', not };
      if (this.acceptKw('false')) return { k: 'is', e, what: 'FALSE', not };
      if (this.acceptKw('distinct')) {
        this.expectKw('from');
        return { k: 'distinct', l: e, r: this.operand(), not };
      }
      this.fail('expected NULL, TRUE, FALSE or DISTINCT FROM after IS');
    }
    const not = this.acceptKw('not');
    if (this.acceptKw('in')) {
      this.expectOp('(');
      const list = [this.operand()];
      while (this.isOp(',')) {
        this.i++;
        list.push(this.operand());
        if (list.length > 1000) this.fail('IN list longer than 1000 items');
      }
      this.expectOp(')');
      return { k: 'in', e, list, not };
    }
    if (this.acceptKw('between')) {
      const lo = this.operand();
      this.expectKw('and');
      return { k: 'between', e, lo, hi: this.operand(), not };
    }
    if (this.isKw('like') || this.isKw('ilike')) {
      const ci = this.isKw('ilike');
      this.i++;
      return { k: 'like', e, pattern: this.operand(), not, ci };
    }
    if (not) this.fail('expected IN, BETWEEN, LIKE or ILIKE after NOT');
    return e;
  }
  private operand(): WhereNode {
    let e = this.primary();
    while (this.isOp('::')) {
      this.i++;
      const t = this.next();
      if (t.t !== 'ident' || t.quoted || !CAST_TYPES.has(t.v.toLowerCase())) {
        this.i--;
        this.fail(`unsupported cast type (allowed: ${[...CAST_TYPES].join(', ')})`);
      }
      let type = t.v.toLowerCase();
      if (this.isOp('[')) {
        this.i++;
        this.expectOp(']');
        type += '[]';
      }
      e = { k: 'cast', e, type };
    }
    return e;
  }
  private primary(): WhereNode {
    const t = this.next();
    switch (t.t) {
      case 'str':
        return { k: 'lit', value: t.v, kind: 'text' };
      case 'num':
        return { k: 'lit', value: t.v, kind: 'number' };
      case 'param':
        return { k: 'param', n: t.v };
      case 'op':
        if (t.v === '(') {
          if (++this.depth > MAX_DEPTH) this.fail('clause nested too deeply');
          const e = this.or();
          this.expectOp(')');
          this.depth--;
          return e;
        }
        if (t.v === '-') {
          const n = this.next();
          if (n.t !== 'num') {
            this.i--;
            this.fail('arithmetic is not supported (only negative number literals)');
          }
          return { k: 'lit', value: '-' + n.v, kind: 'number' };
        }
        this.i--;
        return this.fail(`unexpected '${t.v}'`);
      case 'ident': {
        if (!t.quoted) {
          const w = t.v.toLowerCase();
          if (w === 'true' || w === 'false') return { k: 'lit', value: w, kind: 'bool' };
          if (w === 'null') return { k: 'lit', value: null, kind: 'null' };
          if (this.isOp('(')) {
            this.i--;
            this.fail(`function calls are not supported (${t.v})`);
          }
          if (RESERVED.has(w)) {
            this.i--;
            this.fail(`unexpected keyword ${t.v.toUpperCase()}`);
          }
        }
        const name = t.quoted ? t.v : t.v.toLowerCase();
        if (!this.columns.has(name)) {
          this.i--;
          this.fail(`unknown column "${name}"`);
        }
        return { k: 'col', name };
      }
      case 'eof':
        this.i--;
        return this.fail('expected a column, literal or parameter');
    }
  }
}

/** A validated where clause, compiled to parameterised SQL. */
export interface CompiledWhere {
  /** The clause as SQL over the table's quoted columns, with `$k` placeholders starting at `firstParam`. */
  sql: string;
  /** Values for the placeholders, in order (user params and literals; all as text or null). */
  values: (string | null)[];
  /** The columns the clause reads. */
  columns: Set<string>;
  /** Parameter numbers the clause refers to. */
  params: Set<number>;
}

/** Double-quote an identifier for SQL (embedded quotes doubled). */
export function quoteIdent(name: string): string {
  return '"' + name.replace(/"/g, '""') + '"';
}

/** Parse and validate `where` against the table's columns. Throws WhereError. */
export function parseWhere(where: string, columns: ReadonlySet<string>): WhereNode {
  if (where.length > MAX_WHERE_LENGTH) throw new WhereError(`where clause longer than ${MAX_WHERE_LENGTH} characters`);
  if (where.trim() === '') throw new WhereError('empty where clause');
  return new Parser(tokenize(where), columns).parseAll();
}

/**
 * Parse, validate and compile a where clause.
 * @param params Electric's `params[n]` values (1-based keys); every `$n` used must be given, and
 *   every given param must be used.
 * @param firstParam Number of the first SQL placeholder to emit (to append to a larger query).
 * @throws WhereError on anything outside the supported subset, an unknown column, a missing or
 *   unused parameter.
 */
export function compileWhere(where: string, columns: ReadonlySet<string>, params: Record<string, string> = {}, firstParam = 1): CompiledWhere {
  const ast = parseWhere(where, columns);
  const values: (string | null)[] = [];
  const used = new Set<number>();
  const cols = new Set<string>();
  const paramSlot = new Map<number, number>();
  const bind = (v: string | null): string => {
    values.push(v);
    return `$${firstParam + values.length - 1}`;
  };
  const gen = (n: WhereNode): string => {
    switch (n.k) {
      case 'col':
        cols.add(n.name);
        return quoteIdent(n.name);
      case 'lit':
        if (n.kind === 'null') return 'NULL';
        if (n.kind === 'bool') return n.value === 'true' ? 'TRUE' : 'FALSE';
        // Text and integer literals are bound untyped, so Postgres gives them the type of the column
        // they are compared with (as it does for a literal in SQL, and so indexes are used);
        // decimals are bound as numeric (so `x > 2.5` on an integer column compares numerically).
        return n.kind === 'number' && /[.eE]/.test(n.value ?? '') ? `${bind(n.value)}::numeric` : bind(n.value);
      case 'param': {
        const key = String(n.n);
        if (!(key in params)) throw new WhereError(`parameter $${n.n} is used in where but params[${n.n}] is not given`);
        used.add(n.n);
        let slot = paramSlot.get(n.n);
        if (slot === undefined) {
          values.push(params[key]!);
          slot = firstParam + values.length - 1;
          paramSlot.set(n.n, slot);
        }
        return `$${slot}`;
      }
      case 'cast':
        return `(${gen(n.e)})::${n.type}`;
      case 'and':
        return `(${gen(n.l)} AND ${gen(n.r)})`;
      case 'or':
        return `(${gen(n.l)} OR ${gen(n.r)})`;
      case 'not':
        return `(NOT ${gen(n.e)})`;
      case 'cmp':
        return `(${gen(n.l)} ${n.op} ${gen(n.r)})`;
      case 'in':
        return `(${gen(n.e)} ${n.not ? 'NOT IN' : 'IN'} (${n.list.map(gen).join(', ')}))`;
      case 'between':
        return `(${gen(n.e)} ${n.not ? 'NOT BETWEEN' : 'BETWEEN'} ${gen(n.lo)} AND ${gen(n.hi)})`;
      case 'like':
        return `(${gen(n.e)} ${n.not ? 'NOT ' : ''}${n.ci ? 'ILIKE' : 'LIKE'} ${gen(n.pattern)})`;
      case 'is':
        return `(${gen(n.e)} IS ${n.not ? 'NOT ' : ''}${n.what})`;
      case 'distinct':
        return `(${gen(n.l)} IS ${n.not ? 'NOT ' : ''}DISTINCT FROM ${gen(n.r)})`;
    }
  };
  const sql = gen(ast);
  for (const k of Object.keys(params)) {
    if (!/^[1-9]\d*$/.test(k)) throw new WhereError(`params[${k}]: parameter keys are positive integers (params[1], params[2], …)`);
    if (!used.has(Number(k))) throw new WhereError(`params[${k}] is given but $${k} does not appear in where`);
  }
  return { sql, values, columns: cols, params: used };
}
