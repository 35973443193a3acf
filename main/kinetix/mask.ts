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
  'credentials', 'credential', 'sessionkey', 'signingkey', 'encryptionkey',
]);
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
 * depth (objects inside arrays inside objects…). Cycles and nesting deeper than 64 levels are
 * cut (`[cycle]`, `[too deep]`). Non-plain values (Date, Buffer) become their JSON form.
 */
export function maskSecrets<T>(value: T): T {
  const seen = new WeakSet<object>();
  const walk = (v: unknown, depth: number): unknown => {
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
  // Anything shaped like an Anthropic key, even one we were not told about.
  return out.replace(/sk-ant-[A-Za-z0-9_-]{6,}/g, MASK);
}
