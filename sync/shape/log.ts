/**
 * A shape's log: an append-only sequence of JSON messages, each at an offset `"<tx>_<op>"`.
 *
 * Offsets (opaque to clients, ordered here): the initial snapshot is `0_0 … 0_n` (its last entry the
 * `snapshot-end` control message); a change is `<commit LSN as a decimal integer>_<position of the
 * change among this shape's changes in that transaction>`. They are derived from the WAL, so a
 * transaction replayed after a restart gets the same offsets it had before.
 *
 * The messages live only in `<dir>/log.jsonl` (`offset<TAB>json` lines, appended, fsync'd by
 * `flush()`) and are read from it for every response; memory holds an index of 24 bytes per
 * message (offset, byte position, byte length), so a shape of 73,000 rows costs ~1.7 MB of memory
 * however wide its rows are (the issue 12 review measured ~68 MB with the messages held in memory).
 * A log survives a restart: a torn last line (a crash mid-write) is cut off when the file is read
 * back, and the replication slot replays whatever was not acknowledged.
 */
import { closeSync, existsSync, fdatasyncSync, fstatSync, ftruncateSync, openSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { AppError } from '../../models/errors';

/** A parsed offset: transaction position (LSN, or 0 for the snapshot) and operation position. */
export interface Offset {
  tx: bigint;
  op: number;
}

/** `-1` (from the start), `now` (from the end), or a log offset. */
export type RequestOffset = { kind: 'start' } | { kind: 'now' } | { kind: 'at'; offset: Offset };

/** Parse Electric's `offset` query parameter; null when malformed. */
export function parseOffset(s: string): RequestOffset | null {
  if (s === '-1') return { kind: 'start' };
  if (s === 'now') return { kind: 'now' };
  const m = /^(\d{1,20})_(\d{1,9}|inf)$/.exec(s);
  if (!m) return null;
  return { kind: 'at', offset: { tx: BigInt(m[1]!), op: m[2] === 'inf' ? Number.MAX_SAFE_INTEGER : Number(m[2]) } };
}

/** Electric's text form of an offset (`<tx>_<op>`, `<tx>_inf` for the end of a transaction). */
export function formatOffset(o: Offset): string {
  return `${o.tx}_${o.op === Number.MAX_SAFE_INTEGER ? 'inf' : o.op}`;
}

/** Order of two offsets: negative, zero or positive. */
export function compareOffsets(a: Offset, b: Offset): number {
  return a.tx < b.tx ? -1 : a.tx > b.tx ? 1 : a.op - b.op;
}

/** Bytes read from the file at a time when it is read back. */
const READ_BLOCK = 1 << 20;
/** Largest operation position an entry may have (the index keeps it in 32 bits). */
const MAX_OP = 0xffff_ffff;
const MAX_TX = 0xffff_ffff_ffff_ffffn;
const NL = 0x0a;
const TAB = 0x09;

/**
 * A failure to read a shape log back or to serve from it, code `Internal` (the service drops such
 * a shape and its clients refetch a fresh snapshot).
 */
export class ShapeLogError extends AppError {
  constructor(message: string) {
    super({ code: 'Internal', message: `shape log: ${message}` });
    this.name = 'ShapeLogError';
  }
}

/** The on-disk log of one shape with its in-memory index. */
export class ShapeLog {
  private txs = new BigUint64Array(1024);
  private ops = new Uint32Array(1024);
  /** Byte position of each message's JSON in the file. */
  private pos = new Float64Array(1024);
  /** Byte length of each message's JSON. */
  private len = new Uint32Array(1024);
  private n = 0;
  /** Bytes of whole lines in the file. */
  private end = 0;
  private fd: number | null = null;
  private dirty = false;
  private bytes = 0;
  private snapBytes = 0;
  readonly file: string;

  /**
   * @param dir the shape's directory (must exist). Reads back an existing log, cutting the file at
   *   the first line that is torn or not `offset<TAB>json` with offsets in increasing order.
   * @throws ShapeLogError when `log.jsonl` is not a regular file; the file system's error (EACCES, EIO)
   */
  constructor(dir: string) {
    this.file = join(dir, 'log.jsonl');
    const existed = existsSync(this.file);
    this.fd = openSync(this.file, 'a+');
    if (existed) {
      try {
        if (!fstatSync(this.fd).isFile()) throw new ShapeLogError(`${this.file} is not a regular file`);
        this.readBack();
      } catch (e) {
        closeSync(this.fd);
        this.fd = null;
        throw e;
      }
    }
  }

  private readBack(): void {
    const fd = this.fd!;
    let buf = Buffer.allocUnsafe(READ_BLOCK);
    let at = 0; // file position of buf[0]
    let have = 0;
    let bad = false;
    while (!bad) {
      if (have === buf.length) {
        const bigger = Buffer.allocUnsafe(buf.length * 2); // one line longer than the buffer
        buf.copy(bigger, 0, 0, have);
        buf = bigger;
      }
      const got = readSync(fd, buf, have, buf.length - have, at + have);
      if (got === 0) break; // what is left (if anything) is a torn last line
      have += got;
      const view = buf.subarray(0, have);
      let start = 0;
      for (;;) {
        const nl = view.indexOf(NL, start);
        if (nl < 0) break;
        const tab = view.indexOf(TAB, start);
        const off = tab > start && tab < nl ? parseOffset(view.toString('latin1', start, tab)) : null;
        const last = this.last;
        if (!off || off.kind !== 'at' || off.offset.op > MAX_OP || off.offset.tx > MAX_TX || (last && compareOffsets(off.offset, last) <= 0)) {
          bad = true;
          break;
        }
        this.push(off.offset, at + tab + 1, nl - tab - 1);
        start = nl + 1;
      }
      buf.copy(buf, 0, start, have);
      at += start;
      have -= start;
    }
    this.end = at;
    ftruncateSync(fd, this.end);
  }

  private push(o: Offset, p: number, l: number): void {
    if (this.n === this.txs.length) {
      const cap = this.n * 2;
      const grow = <T extends BigUint64Array | Uint32Array | Float64Array>(a: T, b: T): T => (b.set(a as never), b);
      this.txs = grow(this.txs, new BigUint64Array(cap));
      this.ops = grow(this.ops, new Uint32Array(cap));
      this.pos = grow(this.pos, new Float64Array(cap));
      this.len = grow(this.len, new Uint32Array(cap));
    }
    this.txs[this.n] = o.tx;
    this.ops[this.n] = o.op;
    this.pos[this.n] = p;
    this.len[this.n] = l;
    this.n++;
    this.bytes += l;
    if (o.tx === 0n) this.snapBytes += l;
  }

  /** Number of messages. */
  get length(): number {
    return this.n;
  }

  /** Bytes of JSON (UTF-8) of the messages held. */
  get size(): number {
    return this.bytes;
  }

  /** Bytes of memory the index takes (24 per message of capacity). */
  get indexBytes(): number {
    return this.txs.length * 24;
  }

  /** Bytes of JSON of the initial snapshot's entries (offsets `0_n`). */
  snapshotSize(): number {
    return this.snapBytes;
  }

  /** Offset of the last entry (the log is never empty once the snapshot is in). */
  get last(): Offset | null {
    return this.n > 0 ? { tx: this.txs[this.n - 1]!, op: this.ops[this.n - 1]! } : null;
  }

  /**
   * Iterate over the messages (JSON strings) in order, read from the file ~1 MiB at a time.
   * @throws ShapeLogError when the log is closed or its file is shorter than its index
   */
  *messages(): Iterable<string> {
    let i = 0;
    while (i < this.n) {
      const j = this.rangeEnd(i, READ_BLOCK);
      yield* this.readRange(i, j);
      i = j;
    }
  }

  /** The end (exclusive) of the run of messages from `i` within ~`maxBytes` (at least one). */
  private rangeEnd(i: number, maxBytes: number): number {
    let bytes = 0;
    let j = i;
    for (; j < this.n; j++) {
      if (j > i && bytes + this.len[j]! > maxBytes) break;
      bytes += this.len[j]! + 1;
    }
    return j;
  }

  /** Messages `i` to `j` (exclusive), in one read of the file. */
  private readRange(i: number, j: number): string[] {
    if (j <= i) return [];
    if (this.fd === null) throw new ShapeLogError(`${this.file} is closed`);
    const from = this.pos[i]!;
    const to = this.pos[j - 1]! + this.len[j - 1]!;
    const buf = Buffer.allocUnsafe(to - from);
    let got = 0;
    while (got < buf.length) {
      const r = readSync(this.fd, buf, got, buf.length - got, from + got);
      if (r === 0)
        throw new ShapeLogError(
          `${this.file} ends at byte ${from + got}, before the ${this.n} messages its index holds (the file was changed outside the service)`,
        );
      got += r;
    }
    const out: string[] = new Array(j - i);
    for (let k = i; k < j; k++) {
      const p = this.pos[k]! - from;
      out[k - i] = buf.toString('utf8', p, p + this.len[k]!);
    }
    return out;
  }

  /**
   * Append messages (offsets must increase; JSON must not hold a raw newline, which JSON.stringify
   * never writes). Written to the file now, made durable by `flush()`. A failed write (e.g. a full
   * disk) is cut back off the file and the index is unchanged, so the log stays whole.
   * @throws Error when an offset does not increase, a message holds a newline or the log is closed;
   *   the write's own error (ENOSPC, EIO) after cutting it back
   */
  append(batch: { offset: Offset; json: string }[]): void {
    if (batch.length === 0) return;
    if (this.fd === null) throw new ShapeLogError(`${this.file} is closed`);
    let prev = this.last;
    const heads: number[] = [];
    let text = '';
    for (const e of batch) {
      if (prev && compareOffsets(e.offset, prev) <= 0) throw new ShapeLogError(`offset ${formatOffset(e.offset)} not after ${formatOffset(prev)}`);
      if (e.offset.op > MAX_OP || e.offset.tx > MAX_TX || e.offset.tx < 0n || e.offset.op < 0)
        throw new ShapeLogError(`offset ${formatOffset(e.offset)} out of range`);
      if (e.json.includes('\n')) throw new ShapeLogError(`message at ${formatOffset(e.offset)} holds a newline`);
      const head = `${formatOffset(e.offset)}\t`;
      heads.push(head.length);
      text += `${head}${e.json}\n`;
      prev = e.offset;
    }
    const data = Buffer.from(text, 'utf8');
    try {
      let done = 0;
      while (done < data.length) done += writeSync(this.fd, data, done, data.length - done);
    } catch (e) {
      try {
        ftruncateSync(this.fd, this.end);
      } catch {
        // the error below is what the caller must see
      }
      throw e;
    }
    let p = this.end;
    batch.forEach((e, k) => {
      const l = Buffer.byteLength(e.json);
      this.push(e.offset, p + heads[k]!, l);
      p += heads[k]! + l + 1;
    });
    this.end = p;
    this.dirty = true;
  }

  /**
   * Messages after `after` (null: from the start), at most ~`maxBytes` of JSON (always at least one
   * message when any remain), read from the file. A closed log (its shape was just deleted) reads as
   * empty and complete; the caller then sees the shape deleted.
   * @returns the messages, the offset of the last one returned, and whether the end was reached.
   * @throws ShapeLogError when the file is shorter than the index (changed outside the service)
   */
  read(after: Offset | null, maxBytes: number): { messages: string[]; last: Offset | null; complete: boolean } {
    if (this.fd === null) return { messages: [], last: null, complete: true };
    let lo = 0;
    if (after) {
      let hi = this.n;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (compareOffsets({ tx: this.txs[mid]!, op: this.ops[mid]! }, after) <= 0) lo = mid + 1;
        else hi = mid;
      }
    }
    const hi = this.rangeEnd(lo, maxBytes);
    const messages = this.readRange(lo, hi);
    return { messages, last: hi > lo ? { tx: this.txs[hi - 1]!, op: this.ops[hi - 1]! } : null, complete: hi >= this.n };
  }

  /** fdatasync the file if anything was appended since the last flush. */
  flush(): void {
    if (this.dirty && this.fd !== null) {
      fdatasyncSync(this.fd);
      this.dirty = false;
    }
  }

  /** Flush and close the file; later reads are empty, later appends throw. */
  close(): void {
    if (this.fd !== null) {
      try {
        this.flush();
      } finally {
        closeSync(this.fd);
        this.fd = null;
      }
    }
  }
}
