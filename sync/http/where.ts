/**
 * The one guarantee the shape proxy needs from a client's `where`: that wrapping it in
 * parentheses yields exactly one expression, so `(tenant) AND (client)` can only narrow. A scan
 * (not a SQL parser): parentheses balanced outside string literals and quoted identifiers, never
 * closing below depth 0, and no statement separator, comment or dollar quote. The shape service
 * parses what remains (and refuses what it cannot).
 */

/** Why a `where` was refused, or null when it is safe to wrap. */
export function whereProblem(where: string): string | null {
  if (where.length > 4000) return 'the where clause is longer than 4000 characters';
  let depth = 0;
  for (let i = 0; i < where.length; i++) {
    const ch = where[i]!;
    if (ch === "'" || ch === '"') {
      const end = closingQuote(where, i, ch);
      if (end < 0) return `an unterminated ${ch === "'" ? 'string literal' : 'quoted identifier'}`;
      i = end;
      continue;
    }
    if (ch === '(') depth++;
    else if (ch === ')') {
      depth--;
      if (depth < 0) return 'a closing parenthesis without an opening one';
    } else if (ch === ';') return 'a statement separator (;)';
    else if (ch === '-' && where[i + 1] === '-') return 'a comment (--)';
    else if (ch === '/' && where[i + 1] === '*') return 'a comment (/*)';
    else if (ch === '$' && /[$A-Za-z_]/.test(where[i + 1] ?? '')) return 'a dollar-quoted string';
    else if (ch === '\\') return 'a backslash outside a string';
  }
  if (depth !== 0) return 'unbalanced parentheses';
  return null;
}

/** Index of the quote closing the one opened at `start` (a doubled quote is an escaped quote), or -1. */
function closingQuote(s: string, start: number, quote: string): number {
  for (let i = start + 1; i < s.length; i++) {
    if (s[i] === quote) {
      if (s[i + 1] === quote) {
        i++;
        continue;
      }
      return i;
    }
  }
  return -1;
}
