/**
 * AES-256-GCM sealing of stored secrets (the provider key, the HQ device token) under one machine
 * key: `ATHLETE_SECRET_KEY`, or a 32-byte key file created with mode 0600 next to the database.
 * A sealed secret never appears in a log line, an error or a settings dump.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

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

/** True when `v` has the stored form of a sealed secret. */
export function isSealed(v: unknown): v is SealedSecret {
  const s = v as SealedSecret;
  return (
    !!s && typeof s === 'object' && s.v === 1 && s.alg === 'aes-256-gcm' && typeof s.iv === 'string' && typeof s.tag === 'string' && typeof s.ct === 'string'
  );
}

/**
 * The machine's SecretBox for the database at `dbPath`: `ATHLETE_SECRET_KEY`, else `machine.key`
 * next to the database (created on first use, mode 0600), the same key the provider key uses.
 */
export function machineSecretBox(dbPath: string, env: NodeJS.ProcessEnv = process.env): SecretBox {
  return SecretBox.fromEnvOrFile(dbPath === ':memory:' ? join(process.cwd(), '.athlete', 'machine.key') : join(dirname(dbPath), 'machine.key'), env);
}
