import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDb } from '../data/db';
import { findUserByEmail } from '../data/identity';
import { DEMO_EMAILS, DEMO_PIN, seedDemo } from '../data/seed';
import { hashPin, verifyPin } from './pin';

describe('PIN hashing', () => {
  it('round-trips, rejects a wrong PIN and malformed hashes', () => {
    const h = hashPin('4821');
    expect(h).toMatch(/^scrypt\$16384\$[\w-]+\$[\w-]+$/);
    expect(verifyPin('4821', h)).toBe(true);
    expect(verifyPin('4822', h)).toBe(false);
    expect(hashPin('4821')).not.toBe(h); // random salt
    for (const bad of [null, undefined, '', 'plain', 'scrypt$3$aa$bb', 'bcrypt$16384$aa$bb', `${h}x`]) expect(verifyPin('4821', bad)).toBe(false);
  });

  it('verifies the PIN hashes written by the demo seed', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ai-pin-'));
    const db = openDb(path.join(dir, 'd.sqlite'));
    try {
      seedDemo(db, { seed: 3, today: '2026-03-15' });
      const u = findUserByEmail(db, DEMO_EMAILS.doctor);
      expect(verifyPin(DEMO_PIN, u?.pin_hash)).toBe(true);
      expect(verifyPin('0000', u?.pin_hash)).toBe(false);
    } finally {
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
