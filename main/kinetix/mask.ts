/**
 * Secret masking for everything that is persisted or displayed (tool-call rows, confirm cards,
 * traces, events, messages, prompts, titles, log lines, stdout, OTel spans): the one redactor
 * of the app ({@link redactText} for text, {@link maskSecrets} for values). Masks by key name at ANY depth of objects and arrays; the tool handler always
 * receives the unmasked arguments. Source: kinetix.md §8 ("password, admin_password, api_key, …
 * at any depth, not only top-level").
 */

/** What a masked value reads as. */
export const MASK = '•••';

/** Key names (normalised: lower case, `-`/`_` removed) whose values are always masked. */
const SECRET_KEYS = new Set([
  'password',
  'adminpassword',
  'newpassword',
  'oldpassword',
  'currentpassword',
  'passphrase',
  'apikey',
  'xapikey',
  'token',
  'accesstoken',
  'refreshtoken',
  'idtoken',
  'authtoken',
  'bearer',
  'secret',
  'clientsecret',
  'privatekey',
  'authorization',
  'cookie',
  'pin',
  'pinhash',
  'apikeyhash',
  'credentials',
  'credential',
  'sessionkey',
  'signingkey',
  'encryptionkey',
  'key',
  'secretkey',
  'passwd',
  'pwd',
  'devicekey',
  'clientsecret',
  'sessiontoken',
  'setcookie',
  'proxyauthorization',
]);

/**
 * Values shaped like a credential, masked wherever they sit (a model or a user can put a key in
 * any text): Anthropic keys (`sk-ant-…`), OpenAI-style keys (`sk-…`, `sk-proj-…`), this app's
 * device keys (`aik_…`) and MCP tokens (`aimcp_…`), GitHub tokens (`ghp_`/`gho_`/`ghu_`/`ghs_`/
 * `ghr_…`, `github_pat_…`), AWS access key ids (`AKIA…`), Slack tokens (`xox?-…`). The character
 * classes never include quotes or backslashes, so masking JSON text keeps it valid JSON.
 */
const SECRET_VALUE_PATTERNS: readonly RegExp[] = [
  /sk-ant-[A-Za-z0-9_-]{6,}/g,
  /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g,
  /\baik_[A-Za-z0-9_-]{16,}/g,
  /\baimcp_[A-Za-z0-9_-]{16,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
];

/** Password-like names whose value follows in free text (`password: x`, `pwd=x`, `"token":"x"`). */
const KV_NAMES = 'password|passwd|pwd|passphrase|secret|client_secret|api[_-]?key|access[_-]?token|refresh[_-]?token|auth[_-]?token|token|pin';
/** `name=value` / `name: value` / `"name":"value"` (also JSON-escaped, `\\"name\\":\\"value\\"`) inside one whitespace-free token. */
const KV_IN_TOKEN = new RegExp(`\\b((?:${KV_NAMES})\\\\?["']?\\s*[:=]\\s*\\\\?["']?)([^\\s"'\`,;&{}\\[\\]\\\\]+)`, 'gi');
/** A token that names a secret and ends in `:`/`=`: the next token is its value. */
const KV_NAME_TOKEN = new RegExp(`^["']?(?:${KV_NAMES}|authorization)["']?[:=]$`, 'i');
/** Names after which `is`, `was`, `:` or `=` as a separate token introduces the value (`my password is x`). */
const KV_NAME_WORD = /^["']?(?:password|passwd|pwd|passphrase|pin)["']?$/i;
const KV_JOINER = /^(?:is|was|:|=)$/i;
/** HTTP auth schemes whose next token is a credential (`Authorization: Bearer …`). */
const AUTH_SCHEME = /^(?:bearer|basic)$/i;
/** The leading credential characters of a value token (quotes, brackets, backslashes stay). */
const VALUE_RUN = /^[^\s"'`,;&{}[\]\\]+/;

/**
 * Fast path: text with none of these substrings cannot match any rule above (every value pattern
 * and every name starts with one of them), so it is returned as is without tokenising.
 */
const MAY_HOLD_SECRET = /sk-|aik_|aimcp_|gh[pousr]_|github_pat_|AKIA|xox[abprs]-|pass|pwd|secret|api[_-]?key|token|pin|bearer|basic|authori/i;

/** Longest token judged as one (characters); a longer whitespace-free run is judged in pieces this long. */
const MAX_TOKEN = 256;

function maskToken(token: string, prev1: string, prev2: string): string {
  let out = token;
  for (const re of SECRET_VALUE_PATTERNS) out = out.replace(re, MASK);
  out = out.replace(KV_IN_TOKEN, `$1${MASK}`);
  const valueFollows = AUTH_SCHEME.test(prev1)
    ? /^[A-Za-z0-9._~+/=-]{8,}/.test(token) && (/\d/.test(token) || token.length >= 20)
    : KV_NAME_TOKEN.test(prev1)
      ? !AUTH_SCHEME.test(token)
      : KV_JOINER.test(prev1) && KV_NAME_WORD.test(prev2);
  if (valueFollows && out !== MASK) out = out.replace(VALUE_RUN, MASK);
  return out;
}

/**
 * The one redactor (issue 9 §5): every sink that stores or prints text — prompts, titles,
 * `request_text`, model text, messages, run events, traces, log lines, stdout, OTel spans — goes
 * through it (directly, through {@link maskSecrets}, or through the telemetry exporter).
 *
 * It works token by token (whitespace-separated), looking at the two tokens before each one, so
 * a streamed text redacts exactly as the whole text does: {@link push} returns what is safe to
 * show now (everything up to the last complete token), {@link flush} the rest. Linear in length.
 */
export class TextRedactor {
  private pending = '';
  private prev1 = '';
  private prev2 = '';

  /** Add raw text; returns the redacted text that is final now. */
  push(delta: string): string {
    this.pending += delta;
    const lastWs = this.pending.search(/\s(?=\S*$)/);
    let out = '';
    if (lastWs >= 0) {
      out = this.process(this.pending.slice(0, lastWs + 1));
      this.pending = this.pending.slice(lastWs + 1);
    }
    // A run without whitespace is shown in pieces of MAX_TOKEN characters (the same pieces process() cuts).
    if (this.pending.length >= MAX_TOKEN) {
      const cut = this.pending.length - (this.pending.length % MAX_TOKEN);
      out += this.process(this.pending.slice(0, cut));
      this.pending = this.pending.slice(cut);
    }
    return out;
  }

  /** The redacted remainder (the last, incomplete token); the redactor can be reused afterwards. */
  flush(): string {
    const rest = this.pending;
    this.pending = '';
    const out = this.process(rest);
    this.prev1 = '';
    this.prev2 = '';
    return out;
  }

  private process(text: string): string {
    let out = '';
    for (const part of text.split(/(\s+)/)) {
      if (part === '') continue;
      if (/^\s/.test(part)) {
        out += part;
        continue;
      }
      for (let i = 0; i < part.length; i += MAX_TOKEN) {
        const piece = part.slice(i, i + MAX_TOKEN);
        out += maskToken(piece, this.prev1, this.prev2);
        this.prev2 = this.prev1;
        this.prev1 = piece;
      }
    }
    return out;
  }
}

/**
 * `text` with every credential masked: credential-shaped values, `Bearer`/`Basic` credentials,
 * and values of password-like names (`password: x`, `pwd=x`, `my password is x`, `"token":"x"`).
 */
export function redactText(text: string): string {
  if (text.length === 0 || !MAY_HOLD_SECRET.test(text)) return text;
  const r = new TextRedactor();
  return r.push(text) + r.flush();
}

/** `text` with every credential-shaped substring replaced by {@link MASK} (see {@link redactText}). */
export function scrubSecretValues(text: string): string {
  return redactText(text);
}
/** Suffixes that mark a secret whatever the prefix (`device_api_key`, `smtp_password`). */
const SECRET_SUFFIXES = ['password', 'apikey', 'secret', 'token', 'privatekey'];

const MAX_DEPTH = 64;

/** True when a key's value must be masked. */
export function isSecretKey(key: string): boolean {
  // Dotted attribute names (OTel: `http.request.header.authorization`) are judged by their last part.
  const k = (key.includes('.') ? key.slice(key.lastIndexOf('.') + 1) : key).toLowerCase().replace(/[-_\s]/g, '');
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
