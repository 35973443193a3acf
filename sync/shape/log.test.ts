/**
 * The shape log read back from disk (sync/shape/log.ts): every whole line is kept, a torn last
 * line (a crash mid-write) is cut off at the right byte even when the log holds multi-byte text,
 * and appending after the read-back continues the same file.
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ShapeLog } from './log';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function dir(): string {
  const d = mkdtempSync(join(tmpdir(), 'shape-log-'));
  dirs.push(d);
  return d;
}

describe('ShapeLog read back', () => {
  it('keeps every whole line of a large multi-byte log and cuts a torn last line at its byte offset', () => {
    const d = dir();
    const log = new ShapeLog(d);
    // 20,000 entries with 2-, 3- and 4-byte UTF-8 characters (names like "Zoë Ōkubo 🏃").
    const batch = Array.from({ length: 20_000 }, (_, i) => ({
      offset: { tx: 0n, op: i },
      json: JSON.stringify({ value: { id: i, name: `Zoë Ōkubo 🏃 ${i}` } }),
    }));
    log.append(batch);
    log.close();
    const whole = statSync(log.file).size;
    appendFileSync(log.file, '0_20000\t{"value":{"name":"Zoë'); // torn: no newline
    const back = new ShapeLog(d);
    expect(back.length).toBe(20_000);
    expect(back.last).toEqual({ tx: 0n, op: 19_999 });
    expect([...back.messages()][19_999]).toBe(batch[19_999]!.json);
    // The torn tail is gone from the file, byte for byte.
    expect(statSync(back.file).size).toBe(whole);
    back.append([{ offset: { tx: 5n, op: 0 }, json: '{"headers":{"control":"up-to-date"}}' }]);
    back.close();
    const lines = readFileSync(back.file, 'utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(20_001);
    expect(lines.at(-1)).toBe('5_0\t{"headers":{"control":"up-to-date"}}');
    expect(new ShapeLog(d).length).toBe(20_001);
  });
});
