/**
 * The shape log read back from disk (sync/shape/log.ts): every whole line is kept, a torn last
 * line (a crash mid-write) is cut off at the right byte even when the log holds multi-byte text,
 * and appending after the read-back continues the same file; messages are served from the file
 * (memory holds only an index), a file changed outside the service fails loudly, and a write that
 * fails part-way is cut back off so the log stays whole.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ShapeLog, ShapeLogError } from './log';

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

describe('ShapeLog serves from its file', () => {
  const entry = (tx: bigint, op: number, text: string) => ({ offset: { tx, op }, json: JSON.stringify({ key: `k${tx}_${op}`, value: { text } }) });

  it('reads every message back in order, page by page within the byte budget, before and after a reopen', () => {
    const d = dir();
    const log = new ShapeLog(d);
    const all = [
      ...Array.from({ length: 3000 }, (_, i) => entry(0n, i, `Zoë Ōkubo 🏃 ${'x'.repeat(i % 200)}`)),
      ...Array.from({ length: 500 }, (_, i) => entry(1234n + BigInt(i >> 2), i & 3, `change ${i}`)),
    ];
    log.append(all.slice(0, 3000));
    log.append(all.slice(3000));
    const pages = (l: ShapeLog, budget: number): string[][] => {
      const out: string[][] = [];
      let after = null;
      for (;;) {
        const r = l.read(after, budget);
        out.push(r.messages);
        after = r.last;
        if (r.complete) return out;
      }
    };
    const check = (l: ShapeLog): void => {
      const got = pages(l, 16 * 1024);
      expect(got.length).toBeGreaterThan(10);
      for (const page of got) expect(Buffer.byteLength(page.join('\n'))).toBeLessThanOrEqual(16 * 1024);
      expect(got.flat()).toEqual(all.map((e) => e.json));
      expect([...l.messages()]).toEqual(all.map((e) => e.json));
      // From an offset in the middle of a transaction, and from past the end.
      expect(l.read({ tx: 1235n, op: 1 }, 1 << 20).messages).toEqual(all.slice(3006).map((e) => e.json));
      expect(l.read({ tx: 9999n, op: 0 }, 1 << 20)).toEqual({ messages: [], last: null, complete: true });
      expect(l.size).toBe(all.reduce((n, e) => n + Buffer.byteLength(e.json), 0));
      expect(l.snapshotSize()).toBe(all.slice(0, 3000).reduce((n, e) => n + Buffer.byteLength(e.json), 0));
      expect(l.indexBytes).toBeLessThanOrEqual(4096 * 24);
    };
    check(log);
    log.close();
    check(new ShapeLog(d));
  });

  it('holds no message in memory: bytes changed in the file are what the next read returns', () => {
    const d = dir();
    const log = new ShapeLog(d);
    log.append([entry(0n, 0, 'aaaa'), entry(0n, 1, 'bbbb')]);
    const text = readFileSync(log.file, 'utf8');
    writeFileSync(log.file, text.replace('bbbb', 'cccc')); // same length
    expect(log.read(null, 1 << 20).messages[1]).toContain('cccc');
  });

  it('a file cut short outside the service fails the read with a ShapeLogError, not a wrong answer', () => {
    const d = dir();
    const log = new ShapeLog(d);
    log.append([entry(0n, 0, 'aaaa'), entry(0n, 1, 'bbbb')]);
    truncateSync(log.file, 10);
    expect(() => log.read(null, 1 << 20)).toThrow(ShapeLogError);
    log.close();
    expect(log.read(null, 1 << 20)).toEqual({ messages: [], last: null, complete: true });
    expect(() => log.append([entry(5n, 0, 'x')])).toThrow(/closed/);
  });

  it('reads back a message longer than its read block, and stops at a line out of order or not a log line', () => {
    const d = dir();
    const log = new ShapeLog(d);
    const big = entry(0n, 0, 'é'.repeat(1_500_000)); // 3 MB of UTF-8, over the 1 MiB block
    log.append([big, entry(7n, 0, 'after')]);
    log.close();
    const good = statSync(log.file).size;
    appendFileSync(log.file, `6_0\t{"older":true}\n7_1\t{"fine":true}\n`);
    const back = new ShapeLog(d);
    expect(back.length).toBe(2);
    expect(back.read(null, 1).messages).toEqual([big.json]);
    expect(statSync(back.file).size).toBe(good);
    back.close();
    appendFileSync(back.file, `no tab here\n`);
    expect(new ShapeLog(d).length).toBe(2);
  });

  it('refuses offsets that do not increase and messages holding a newline, writing nothing', () => {
    const d = dir();
    const log = new ShapeLog(d);
    log.append([entry(3n, 0, 'a')]);
    expect(() => log.append([entry(3n, 1, 'b'), entry(3n, 1, 'c')])).toThrow(ShapeLogError);
    expect(() => log.append([entry(2n, 0, 'b')])).toThrow(/not after/);
    expect(() => log.append([{ offset: { tx: 4n, op: 0 }, json: '{"a":\n1}' }])).toThrow(/newline/);
    expect(log.length).toBe(1);
    log.close();
    expect(readFileSync(log.file, 'utf8').split('\n')).toHaveLength(2);
  });

  it('refuses a log.jsonl that is not a regular file (a device would be read forever)', () => {
    const d = dir();
    symlinkSync('/dev/zero', join(d, 'log.jsonl'));
    expect(() => new ShapeLog(d)).toThrow(/not a regular file/);
  });

  it('a write that fails part-way (file size limit reached) is cut back off: the log on disk stays whole', () => {
    const d = dir();
    // A child process with a 64 KiB file-size limit (ulimit -f counts 1 KiB blocks); SIGXFSZ is
    // ignored so the write fails with EFBIG instead of killing the process.
    const script = `
      process.on('SIGXFSZ', () => {});
      const { ShapeLog } = await import(${JSON.stringify(join(__dirname, 'log.ts'))});
      const log = new ShapeLog(${JSON.stringify(d)});
      let n = 0, error = null;
      try { for (;;) { log.append(Array.from({ length: 7 }, (_, i) => ({ offset: { tx: BigInt(n + 1), op: i }, json: JSON.stringify({ n, i, pad: 'p'.repeat(300) }) }))); n++; } }
      catch (e) { error = e.code; }
      console.log(JSON.stringify({ n, error, length: log.length }));
      log.close();`;
    const out = execFileSync('bash', ['-c', `ulimit -f 64 && exec "${process.execPath}" --import tsx --input-type=module -e "$0"`, script], {
      encoding: 'utf8',
      cwd: join(__dirname, '..', '..'),
    });
    const r = JSON.parse(out.trim().split('\n').at(-1)!) as { n: number; error: string; length: number };
    expect(r.error).toBe('EFBIG');
    expect(r.length).toBe(r.n * 7);
    const back = new ShapeLog(d);
    expect(back.length).toBe(r.n * 7);
    expect(readFileSync(back.file, 'utf8').endsWith('\n')).toBe(true);
    expect(JSON.parse([...back.messages()].at(-1)!)).toMatchObject({ n: r.n - 1, i: 6 });
  });
});
