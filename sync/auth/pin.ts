/**
 * Sign-in PIN hashes, in the device's format (`scrypt$N$salt$hash`: salt and hash base64url,
 * r = 8, p = 1, 32-byte key; main/security/pin.ts). The hashes travel with `app_user` rows, so the
 * HQ must verify exactly what the device wrote; `sync/seed.test.ts` checks that both sides produce
 * and accept the same hashes. Verification here is asynchronous (libuv's thread pool), so a burst
 * of sign-ins does not stall the HQ's event loop.
 */
import { randomBytes, scrypt, scryptSync, timingSafeEqual } from 'node:crypto';

/** scrypt cost parameter for new hashes (as on the device). */
export const PIN_SCRYPT_N = 16384;
const R = 8;
const P = 1;
const KEY_LEN = 32;

/** Hash a PIN as `scrypt$N$salt$hash`. `salt` is for deterministic seeding only. */
export function hashPin(pin: string, salt: Uint8Array = randomBytes(16)): string {
  const key = scryptSync(pin.normalize('NFKC'), salt, KEY_LEN, { N: PIN_SCRYPT_N, r: R, p: P });
  return `scrypt$${PIN_SCRYPT_N}$${Buffer.from(salt).toString('base64url')}$${key.toString('base64url')}`;
}

/** True when `pin` matches `stored` (constant-time compare). A malformed or missing hash never matches. */
export async function verifyPin(pin: string, stored: string | null | undefined): Promise<boolean> {
  if (!stored) return false;
  const parts = stored.split('$');
  if (parts.length !== 4 || parts[0] !== 'scrypt') return false;
  const n = Number(parts[1]);
  if (!Number.isInteger(n) || n < 1024 || n > 1 << 20 || (n & (n - 1)) !== 0) return false;
  const salt = Buffer.from(parts[2] ?? '', 'base64url');
  const expected = Buffer.from(parts[3] ?? '', 'base64url');
  if (salt.length === 0 || expected.length !== KEY_LEN) return false;
  const key = await new Promise<Buffer>((res, rej) =>
    scrypt(pin.normalize('NFKC'), salt, KEY_LEN, { N: n, r: R, p: P, maxmem: 256 * n * R }, (e, k) => (e ? rej(e) : res(k))),
  );
  return timingSafeEqual(key, expected);
}

/** A dummy hash to verify against for unknown users, so timing does not reveal whether an email exists. */
export const DUMMY_PIN_HASH = hashPin('not-a-pin', new Uint8Array(16));
