/**
 * Every error code the product emits is in the one list (models/errors.ts ERROR_CODES): each
 * `code: 'X'` / `runCode: 'X'` / `error_code: 'X'` literal of the source (main/, sync/, models/,
 * renderer/; tests excluded) whose value is a PascalCase word is collected and checked. A code
 * stored or emitted without being in the list (as `Interrupted` once was) fails here.
 *
 * And every error class extends {@link AppError} (so it has one of those codes and keeps its type
 * across the bridge): a class of the source (main/, sync/, models/, renderer/, preload/; tests
 * excluded) that extends a built-in error (`Error`, `TypeError`, …) directly fails here, except
 * AppError itself and the documented exceptions in {@link PLAIN_ERROR_ALLOWED}.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, HTTP_STATUS } from '../models/errors';

const ROOT = resolve(__dirname, '..');
const LITERAL = /\b(?:code|runCode|error_code|errorCode)\s*[:=]\s*['"]([A-Z][a-z]+(?:[A-Z][a-z]+)*)['"]/g;

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.tsx?$/.test(e.name) && !/\.test\.tsx?$/.test(e.name))
    .map((e) => join(e.parentPath, e.name))
    .filter((p) => !/[/\\](node_modules|out|dist)[/\\]/.test(p));
}

/**
 * Classes that may extend a built-in error, and why. AppError is the base of all; nothing else
 * is allowed today (add a class here only with the reason it cannot carry an ErrorCode).
 */
const PLAIN_ERROR_ALLOWED: Readonly<Record<string, string>> = {
  'models/errors.ts AppError': 'the common base every other error class extends',
};

/** `class X extends Error`, `class X<T> extends globalThis.TypeError`, `class extends Error` (a class expression). */
const EXTENDS_BUILTIN =
  /\bclass(?:\s+([A-Za-z_$][\w$]*))?(?:\s*<[^>{]*>)?\s+extends\s+(?:globalThis\.)?(Error|TypeError|RangeError|SyntaxError|ReferenceError|EvalError|URIError|AggregateError)\b/g;

describe('error codes', () => {
  it('every code literal in the source is one of ERROR_CODES, with an HTTP status', () => {
    const found = new Map<string, string>();
    for (const file of ['main', 'sync', 'models', 'renderer'].flatMap(sources)) {
      for (const m of readFileSync(file, 'utf8').matchAll(LITERAL)) if (!found.has(m[1]!)) found.set(m[1]!, relative(ROOT, file));
    }
    // The scan sees the codes it must: a broken pattern would find nothing and pass.
    expect([...found.keys()]).toEqual(expect.arrayContaining(['Validation', 'Forbidden', 'Interrupted', 'NotConfigured']));
    const unknown = [...found].filter(([code]) => !(ERROR_CODES as readonly string[]).includes(code)).map(([code, file]) => `${code} (${file})`);
    expect(unknown).toEqual([]);
    for (const code of ERROR_CODES) expect(HTTP_STATUS[code], code).toBeGreaterThanOrEqual(400);
  });

  it('every error class extends AppError (none extends a built-in error directly)', () => {
    const plain: string[] = [];
    for (const file of ['main', 'sync', 'models', 'renderer', 'preload'].flatMap(sources)) {
      for (const m of readFileSync(file, 'utf8').matchAll(EXTENDS_BUILTIN))
        plain.push(`${relative(ROOT, file).split('\\').join('/')} ${m[1] ?? '(anonymous)'}`);
    }
    // The scan sees what it must (AppError extends Error): a broken pattern would find nothing and pass.
    expect(plain).toContain('models/errors.ts AppError');
    expect(plain.filter((c) => !(c in PLAIN_ERROR_ALLOWED))).toEqual([]);
  });

  it('the pattern catches the forms a plain error class can take', () => {
    const classes = (src: string): string[] => [...src.matchAll(EXTENDS_BUILTIN)].map((m) => m[1] ?? '(anonymous)');
    expect(classes('export class A extends Error {}')).toEqual(['A']);
    expect(classes('class B<T extends object>\n  extends TypeError {')).toEqual(['B']);
    expect(classes('const C = class extends globalThis.Error {};')).toEqual(['(anonymous)']);
    expect(classes('class D extends AppError {} class E extends ErrorBoundary {}')).toEqual([]);
  });
});
