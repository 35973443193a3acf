/**
 * Every error code the product emits is in the one list (models/errors.ts ERROR_CODES): each
 * `code: 'X'` / `runCode: 'X'` / `error_code: 'X'` literal of the source (main/, sync/, models/,
 * renderer/; tests excluded) whose value is a PascalCase word is collected and checked. A code
 * stored or emitted without being in the list (as `Interrupted` once was) fails here.
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
});
