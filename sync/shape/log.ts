/**
 * A shape's log: an append-only sequence of JSON messages, each at an offset `"<tx>_<op>"`.
 *
 * Offsets (opaque to clients, ordered here): the initial snapshot is `0_0 … 0_n` (its last entry the
 * `snapshot-end` control message); a change is `<commit LSN as a decimal integer>_<position of the
 * change among this shape's changes in that transaction>`. They are derived from the WAL, so a
 * transaction replayed after a restart gets the same offsets it had before.
 *
 * Kept in memory (for serving) and in `<dir>/log.jsonl` (`offset<TAB>json` lines, appended, fsync'd
 * by `flush()`), so a log survives a restart. A torn last line (a crash mid-write) is dropped when
 * the file is read back; the replication slot replays whatever was not acknowledged.
 */
import { closeSync, existsSync, fdatasyncSync, ftruncateSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

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

export function formatOffset(o: Offset): string {
  return `${o.tx}_${o.op === Number.MAX_SAFE_INTEGER ? 'inf' : o.op}`;
}

export function compareOffsets(a: Offset, b: Offset): number {
  return a.tx < b.tx ? -1 : a.tx > b.tx ? 1 : a.op - b.op;
}

interface Entry {
  offset: Offset;
  json: string;
}

/** The in-memory + on-disk log of one shape. */
export class ShapeLog {
  private readonly entries: Entry[] = [];
  private fd: number | null = null;
  private dirty = false;
  private bytes = 0;
  readonly file: string;

  /** @param dir the shape's directory (must exist). Reads back an existing log. */
  constructor(dir: string) {
    this.file = join(dir, 'log.jsonl');
    if (existsSync(this.file)) {
      const text = readFileSync(this.file, 'utf8');
      let good = 0;
      let pos = 0;
      while (pos < text.length) {
        const nl = text.indexOf('\n', pos);
        if (nl < 0) break; // torn last line
        const line = text.slice(pos, nl);
        const tab = line.indexOf('\t');
        const off = tab > 0 ? parseOffset(line.slice(0, tab)) : null;
        if (!off || off.kind !== 'at') break;
        this.entries.push({ offset: off.offset, json: line.slice(tab + 1) });
        this.bytes += line.length - tab;
        pos = nl + 1;
        // Bytes of the good prefix, counted line by line (re-measuring the whole prefix on every
        // line made reading back a 70k-line log take minutes).
        good += Buffer.byteLength(line) + 1;
      }
      this.fd = openSync(this.file, 'r+');
      ftruncateSync(this.fd, good);
      closeSync(this.fd);
    }
    this.fd = openSync(this.file, 'a');
  }

  get length(): number {
    return this.entries.length;
  }

  /** Approximate size of the messages held (bytes of JSON). */
  get size(): number {
    return this.bytes;
  }

  /** Bytes of JSON of the initial snapshot's entries (offsets `0_n`). */
  snapshotSize(): number {
    let n = 0;
    for (const e of this.entries) {
      if (e.offset.tx !== 0n) break;
      n += e.json.length;
    }
    return n;
  }

  /** Offset of the last entry (the log is never empty once the snapshot is in). */
  get last(): Offset | null {
    return this.entries.at(-1)?.offset ?? null;
  }

  /** Iterate over the messages (JSON strings) in order. */
  *messages(): Iterable<string> {
    for (const e of this.entries) yield e.json;
  }

  /** Append messages (offsets must increase). Written to the file now, made durable by `flush()`. */
  append(batch: { offset: Offset; json: string }[]): void {
    if (batch.length === 0) return;
    const last = this.last;
    if (last && compareOffsets(batch[0]!.offset, last) <= 0)
      throw new Error(`shape log: offset ${formatOffset(batch[0]!.offset)} not after ${formatOffset(last)}`);
    let text = '';
    for (const e of batch) {
      this.entries.push(e);
      this.bytes += e.json.length;
      text += `${formatOffset(e.offset)}\t${e.json}\n`;
    }
    if (this.fd !== null) writeSync(this.fd, text);
    this.dirty = true;
  }

  /**
   * Messages after `after` (null: from the start), at most ~`maxBytes` of JSON (always at least one
   * message when any remain).
   * @returns the messages, the offset of the last one returned, and whether the end was reached.
   */
  read(after: Offset | null, maxBytes: number): { messages: string[]; last: Offset | null; complete: boolean } {
    let lo = 0;
    if (after) {
      let hi = this.entries.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (compareOffsets(this.entries[mid]!.offset, after) <= 0) lo = mid + 1;
        else hi = mid;
      }
    }
    const messages: string[] = [];
    let bytes = 0;
    let i = lo;
    for (; i < this.entries.length; i++) {
      const e = this.entries[i]!;
      if (messages.length > 0 && bytes + e.json.length > maxBytes) break;
      messages.push(e.json);
      bytes += e.json.length + 1;
    }
    return { messages, last: i > lo ? this.entries[i - 1]!.offset : null, complete: i >= this.entries.length };
  }

  /** fdatasync the file if anything was appended since the last flush. */
  flush(): void {
    if (this.dirty && this.fd !== null) {
      fdatasyncSync(this.fd);
      this.dirty = false;
    }
  }

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
