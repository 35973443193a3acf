/**
 * The provider key: stored in org settings encrypted with AES-256-GCM under a machine key
 * (`ATHLETE_SECRET_KEY`, or a 32-byte key file created with mode 0600 next to the database),
 * or taken from `ANTHROPIC_API_KEY`. The key never appears in a log line, an error, an event, a
 * trace or a settings dump: {@link describeProviderKey} says only where it comes from.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Db } from '../data/db';
import { getOrgSetting, putOrgSetting } from '../data/identity';

/** Org setting holding the encrypted Anthropic key. */
export const PROVIDER_KEY_SETTING = 'kinetix.anthropic_api_key';

/** Stored form of an encrypted secret (all fields base64). */
export interface SealedSecret {
  v: 1;
  alg: 'aes-256-gcm';
  iv: string;
  tag: string;
  ct: string;
}

/** AES-256-GCM with one machine key. */
export class SecretBox {
  private readonly key: Buffer;

  /** @param key 32 bytes. */
  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('SecretBox needs a 32-byte key.');
    this.key = key;
  }

  /**
   * The machine key: `ATHLETE_SECRET_KEY` (any string, hashed with SHA-256 to 32 bytes) if set,
   * else the key file at `keyFile`, created (32 random bytes, mode 0600) if missing.
   */
  static fromEnvOrFile(keyFile: string, env: NodeJS.ProcessEnv = process.env): SecretBox {
    const fromEnv = env.ATHLETE_SECRET_KEY;
    if (fromEnv) return new SecretBox(createHash('sha256').update(fromEnv).digest());
    if (!existsSync(keyFile)) {
      mkdirSync(dirname(keyFile), { recursive: true });
      writeFileSync(keyFile, randomBytes(32), { mode: 0o600, flag: 'wx' });
    }
    try {
      chmodSync(keyFile, 0o600);
    } catch {
      /* best effort on filesystems without modes */
    }
    const key = readFileSync(keyFile);
    return new SecretBox(key.length === 32 ? key : createHash('sha256').update(key).digest());
  }

  seal(plaintext: string): SealedSecret {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.key, iv);
    const ct = Buffer.concat([c.update(plaintext, 'utf8'), c.final()]);
    return { v: 1, alg: 'aes-256-gcm', iv: iv.toString('base64'), tag: c.getAuthTag().toString('base64'), ct: ct.toString('base64') };
  }

  /** @throws Error (without the plaintext) when the secret was sealed under another key or tampered with. */
  open(s: SealedSecret): string {
    const d = createDecipheriv('aes-256-gcm', this.key, Buffer.from(s.iv, 'base64'));
    d.setAuthTag(Buffer.from(s.tag, 'base64'));
    return Buffer.concat([d.update(Buffer.from(s.ct, 'base64')), d.final()]).toString('utf8');
  }
}

function isSealed(v: unknown): v is SealedSecret {
  const s = v as SealedSecret;
  return (
    !!s && typeof s === 'object' && s.v === 1 && s.alg === 'aes-256-gcm' && typeof s.iv === 'string' && typeof s.tag === 'string' && typeof s.ct === 'string'
  );
}

/** Store (or, with null, remove) the org's Anthropic key, encrypted. */
export function storeProviderKey(db: Db, orgId: string, key: string | null, box: SecretBox): void {
  putOrgSetting(db, orgId, PROVIDER_KEY_SETTING, key ? box.seal(key) : null);
}

/** Where the key comes from; the key itself is never returned by this function. */
export type KeySource = 'settings' | 'env' | 'none';

/**
 * The org's Anthropic key: settings (decrypted) first, then `ANTHROPIC_API_KEY`, else null.
 * A stored key that cannot be decrypted is skipped with a log line (no key material in it).
 */
export function resolveProviderKey(
  db: Db,
  orgId: string,
  box: SecretBox | null,
  log: (line: string) => void,
  env: NodeJS.ProcessEnv = process.env,
): { key: string | null; source: KeySource } {
  try {
    const stored = getOrgSetting<unknown>(db, orgId, PROVIDER_KEY_SETTING);
    if (isSealed(stored) && box) {
      try {
        return { key: box.open(stored), source: 'settings' };
      } catch {
        log('kinetix: the stored provider key could not be decrypted with this machine key; falling back to ANTHROPIC_API_KEY');
      }
    }
  } catch {
    log('kinetix: could not read the provider key setting; falling back to ANTHROPIC_API_KEY');
  }
  const k = env.ANTHROPIC_API_KEY;
  return k ? { key: k, source: 'env' } : { key: null, source: 'none' };
}

/** A settings-dump-safe description of the provider configuration. */
export function describeProviderKey(
  db: Db,
  orgId: string,
  box: SecretBox | null,
  env: NodeJS.ProcessEnv = process.env,
): { configured: boolean; source: KeySource; baseUrl: string | null } {
  const { source } = resolveProviderKey(db, orgId, box, () => {}, env);
  return { configured: source !== 'none', source, baseUrl: env.ANTHROPIC_BASE_URL ?? null };
}
