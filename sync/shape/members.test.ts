/**
 * A shape's membership set (sync/shape/members.ts) against a plain Set of the same keys, through
 * adds, deletes, re-adds and growth, and its memory per key.
 */
import { describe, expect, it } from 'vitest';
import { MemberKeys } from './members';

describe('MemberKeys', () => {
  it('answers as a Set of the key strings does through 200,000 mixed operations', () => {
    const m = new MemberKeys();
    const ref = new Set<string>();
    let seed = 7;
    const rnd = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    for (let i = 0; i < 200_000; i++) {
      const key = `"public"."session_load"/"${rnd(30_000)}"`;
      const op = rnd(3);
      if (op === 0) {
        expect(m.add(key)).toBe(!ref.has(key));
        ref.add(key);
      } else if (op === 1) expect(m.delete(key)).toBe(ref.delete(key));
      else expect(m.has(key)).toBe(ref.has(key));
    }
    expect(m.size).toBe(ref.size);
    for (const k of ref) expect(m.has(k)).toBe(true);
    // Keys that differ only in quoting or escaping are different members.
    expect(m.has('"public"."session_load"/"1""')).toBe(false);
  });

  it('keeps the table small: ~17 bytes a slot, at most 4 slots a key after growth, and gives memory back on clear', () => {
    const m = new MemberKeys();
    for (let i = 0; i < 73_000; i++) m.add(`"public"."session_load"/"0190a3c4-1111-7000-8000-${String(i).padStart(12, '0')}"`);
    expect(m.size).toBe(73_000);
    expect(m.bytes).toBeLessThanOrEqual(4 * 73_000 * 17);
    // Deleting and re-adding (tombstones) does not grow the table without bound.
    const before = m.bytes;
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 73_000; i += 2) m.delete(`"public"."session_load"/"0190a3c4-1111-7000-8000-${String(i).padStart(12, '0')}"`);
      for (let i = 0; i < 73_000; i += 2) m.add(`"public"."session_load"/"0190a3c4-1111-7000-8000-${String(i).padStart(12, '0')}"`);
    }
    expect(m.size).toBe(73_000);
    expect(m.bytes).toBe(before);
    m.clear();
    expect(m.size).toBe(0);
    expect(m.bytes).toBe(1024 * 17);
  });
});
