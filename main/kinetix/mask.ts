/**
 * Secret masking for everything that is persisted or displayed (tool-call rows, confirm cards,
 * traces, events). Masks by key name at ANY depth of objects and arrays; the tool handler always
 * receives the unmasked arguments. Source: kinetix.md §8 ("password, admin_password, api_key, …
 * at any depth, not only top-level").
 */

/** What a masked value reads as. */
export const MASK = '•••';

/** Key names (normalised: lower case, `-`/`_` removed) whose values are always masked. */
const SECRET_KEYS = new Set([
  'password', 'adminpassword', 'newpassword', 'oldpassword', 'currentpassword', 'passphrase',
  'apikey', 'xapikey', 'token', 'accesstoken', 'refreshtoken', 'idtoken', 'authtoken', 'bearer',
  'secret', 'clientsecret', 'privatekey', 'authorization', 'cookie', 'pin', 'pinhash', 'apikeyhash',
  'credentials', 'credential', 'sessionkey', 'signingkey', 'encryptionkey', 'key', 'secretkey',
]);

/**
 * Values shaped like a credential, masked wherever they sit (a model can put a key under any
 * name, e.g. in a `note`): Anthropic keys, this app's device keys (`aik_…`) and MCP tokens
 * (`aimcp_…`).
 */
const SECRET_VALUE_PATTERNS: readonly RegExp[] = [/sk-ant-[A-Za-z0-9_-]{6,}/g, /\baik_[A-Za-z0-9_-]{16,}/g, /\baimcp_[A-Za-z0-9_-]{16,}/g];

/** `text` with every credential-shaped substring replaced by {@link MASK}. */
export function scrubSecretValues(text: string): string {
  let out = text;
  for (const re of SECRET_VALUE_PATTERNS) out = out.replace(re, MASK);
  return out;
}
/** Suffixes that mark a secret whatever the prefix (`device_api_key`, `smtp_password`). */
const SECRET_SUFFIXES = ['password', 'apikey', 'secret', 'token', 'privatekey'];

const MAX_DEPTH = 64;

/** True when a key's value must be masked. */
export function isSecretKey(key: string): boolean {
  const k = key.toLowerCase().replace(/[-_\s]/g, '');
  if (SECRET_KEYS.has(k)) return true;
  return SECRET_SUFFIXES.some((s) => k.endsWith(s));
}

/**
 * A deep copy of `value` with every secret-named key's value replaced by {@link MASK}, at any
 * depth (objects inside arrays inside objects…), and credential-shaped substrings of every
 * other string masked too (see {@link scrubSecretValues}). Cycles and nesting deeper than 64 levels are
 * cut (`[cycle]`, `[too deep]`). Non-plain values (Date, Buffer) become their JSON form.
 */
export function maskSecrets<T>(value: T): T {
  const seen = new WeakSet<object>();
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') return scrubSecretValues(v);
    if (v === null || typeof v !== 'object') return v;
    if (depth > MAX_DEPTH) return '[too deep]';
    if (seen.has(v)) return '[cycle]';
    seen.add(v);
    try {
      if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1));
      const toJson = (v as { toJSON?: () => unknown }).toJSON;
      if (typeof toJson === 'function') return walk(toJson.call(v), depth + 1);
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        out[k] = isSecretKey(k) && x !== null && x !== undefined && x !== '' ? MASK : walk(x, depth + 1);
      }
      return out;
    } finally {
      seen.delete(v);
    }
  };
  return walk(value, 0) as T;
}

/** Replace every occurrence of each known secret string in `text` with {@link MASK} (for errors and log lines). */
export function scrubText(text: string, secrets: readonly (string | null | undefined)[]): string {
  let out = text;
  for (const s of secrets) {
    if (s && s.length >= 6) out = out.split(s).join(MASK);
  }
  // Anything shaped like a credential, even one we were not told about.
  return scrubSecretValues(out);
}
