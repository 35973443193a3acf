/**
 * The provider key: stored in org settings encrypted with AES-256-GCM under a machine key
 * (`ATHLETE_SECRET_KEY`, or a 32-byte key file created with mode 0600 next to the database),
 * or taken from `ANTHROPIC_API_KEY`. The key never appears in a log line, an error, an event, a
 * trace or a settings dump: {@link describeProviderKey} says only where it comes from.
 */
import { isSealed, type SecretBox } from '../security/secret-box';
import type { Db } from '../data/db';
import { getOrgSetting, putOrgSetting } from '../data/identity';

/** Org setting holding the encrypted Anthropic key. */
export const PROVIDER_KEY_SETTING = 'kinetix.anthropic_api_key';

export { SecretBox, type SealedSecret } from '../security/secret-box';

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
