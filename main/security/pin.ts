/**
 * Sign-in PINs: scrypt hashes stored as `scrypt$N$salt$hash` (salt and hash base64url, r = 8,
 * p = 1, 32-byte key). The PIN itself is never stored or logged.
 */
import { randomBytes, scryptSync, timingSafeEqual } from 'node:crypto';

/** scrypt cost parameter used for new hashes. */
export const PIN_SCRYPT_N = 16384;
const R = 8;
const P = 1;
const KEY_LEN = 32;

/** Hash a PIN as `scrypt$N$salt$hash`. `salt` is for deterministic seeding only; omit it otherwise. */
export function hashPin(pin: string, salt: Buffer = randomBytes(16)): string {
  const key = scryptSync(pin.normalize('NFKC'), salt, KEY_LEN, { N: PIN_SCRYPT_N, r: R, p: P });
  return `scrypt$${PIN_SCRYPT_N}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** True when `pin` matches `stored` (constant-time compare). A malformed or missing hash never matches. */
export function verifyPin(pin: string, stored: string | null | undefined): boolean {
  if (!stored) return false;
  const parts = stored.split('$');
  if (parts.length !== 4 || parts[0] !== 'scrypt') return false;
  const n = Number(parts[1]);
  if (!Number.isInteger(n) || n < 1024 || n > 1 << 20 || (n & (n - 1)) !== 0) return false;
  const salt = Buffer.from(parts[2] ?? '', 'base64url');
  const expected = Buffer.from(parts[3] ?? '', 'base64url');
  if (salt.length === 0 || expected.length !== KEY_LEN) return false;
  const key = scryptSync(pin.normalize('NFKC'), salt, KEY_LEN, { N: n, r: R, p: P, maxmem: 256 * n * R });
  return timingSafeEqual(key, expected);
}
