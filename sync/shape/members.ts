/**
 * A shape's membership: the keys of the rows currently in it, kept as 128-bit digests in one
 * open-addressing table (linear probing, grown at half full): 17 bytes a slot, 2 to 4 slots a key,
 * however long the keys are (a shape of 73,000 rows: 262,144 slots, 4.5 MB). With a `Set` of the key
 * strings the HQ process grew by 23.8 MiB per such shape, with this table by 9.6 MiB
 * (`npm run bench:shapes:memory`, BENCHMARKS.md).
 *
 * Digest: the first 16 bytes of SHA-256 of the key's UTF-8. Two different keys would share a digest
 * with probability ~n²/2¹²⁹ (n keys), negligible for any table, and finding such a pair on purpose
 * means finding a 128-bit SHA-256 prefix collision.
 */
import { createHash } from 'node:crypto';

const DIGEST = 16;
const EMPTY = 0;
const FULL = 1;
const GONE = 2;

/** The set of row keys in a shape (see the module comment). */
export class MemberKeys {
  private slots = new Uint8Array(1024 * DIGEST);
  private state = new Uint8Array(1024);
  private count = 0;
  /** Slots in use or tombstoned (what probing must step over). */
  private used = 0;

  /** Number of keys held. */
  get size(): number {
    return this.count;
  }

  /** Bytes of memory the table takes (17 per slot). */
  get bytes(): number {
    return this.slots.byteLength + this.state.byteLength;
  }

  /** Add a key; true when it was not there. */
  add(key: string): boolean {
    const d = digest(key);
    if (this.find(d) >= 0) return false;
    if ((this.used + 1) * 2 > this.state.length) this.rehash(this.count + 1 > this.state.length / 4 ? this.state.length * 2 : this.state.length);
    this.put(d);
    this.count++;
    return true;
  }

  /** True when the key is held. */
  has(key: string): boolean {
    return this.find(digest(key)) >= 0;
  }

  /** Remove a key; true when it was there. */
  delete(key: string): boolean {
    const i = this.find(digest(key));
    if (i < 0) return false;
    this.state[i] = GONE;
    this.count--;
    return true;
  }

  /** Remove every key and give back the memory. */
  clear(): void {
    this.slots = new Uint8Array(1024 * DIGEST);
    this.state = new Uint8Array(1024);
    this.count = this.used = 0;
  }

  private find(d: Buffer): number {
    const mask = this.state.length - 1;
    for (let i = d.readUInt32LE(0) & mask, n = 0; n <= mask; i = (i + 1) & mask, n++) {
      const s = this.state[i];
      if (s === EMPTY) return -1;
      if (s === FULL && d.equals(this.slots.subarray(i * DIGEST, i * DIGEST + DIGEST))) return i;
    }
    return -1;
  }

  private put(d: Uint8Array): void {
    const mask = this.state.length - 1;
    let i = new DataView(d.buffer, d.byteOffset, DIGEST).getUint32(0, true) & mask;
    while (this.state[i] === FULL) i = (i + 1) & mask;
    if (this.state[i] === EMPTY) this.used++;
    this.state[i] = FULL;
    this.slots.set(d, i * DIGEST);
  }

  /** Rebuild the table with `cap` slots (a power of two), dropping tombstones. */
  private rehash(cap: number): void {
    const { slots, state } = this;
    this.slots = new Uint8Array(cap * DIGEST);
    this.state = new Uint8Array(cap);
    this.used = 0;
    for (let i = 0; i < state.length; i++) if (state[i] === FULL) this.put(slots.subarray(i * DIGEST, i * DIGEST + DIGEST));
  }
}

function digest(key: string): Buffer {
  return createHash('sha256').update(key).digest().subarray(0, DIGEST);
}
