/**
 * Assistant settings for the Settings page: the model key (set or clear; stored encrypted with
 * the machine key, never returned), budgets with month-to-date spend, the tools an
 * administrator may switch off, and each provider's data clearance (models/classification.ts:
 * the in-app model and MCP clients; default `['internal']`, no names or health data). Gated by `settings.manage` through the service layer's own
 * check (resolveActor + requirePermission), re-read on every call.
 *
 * These are organisation settings, not business rows: they do not travel as changesets (like
 * PINs, a key never appears in a diff). Each change is logged as one line without values.
 */
import { dirname, join } from 'node:path';
import type { AssistantSettingsView } from '../../models/contract';
import { CLEARANCE_PROVIDERS, ProviderClearanceInput, type ClearanceProvider, type ProviderClearance } from '../../models/classification';
import { CLEARANCE_SETTING_KEY, clearanceFromSetting, DEFAULT_CLEARANCE } from './classification';
import { Conflict, ValidationError } from '../../models/errors';
import type { Db } from '../data/db';
import { findOrganization, listAllUsers, putOrgSetting } from '../data/identity';
import { setOrgBudgetCap } from '../data/kinetix';
import type { ToolRegistry } from './registry';
import { DISABLED_TOOLS_SETTING_KEY } from './registry';
import { checkBudget, monthStartIso } from './limits';
import { SecretBox, describeProviderKey, storeProviderKey } from './secrets';
import { getOrgSetting } from '../data/identity';
import type { Actor } from '../services';
import { PolicyDenied, orgSetAtHq, refuseOrgChangeOnSyncedDevice, requirePermission, resolveActor } from '../services';
import { evaluateOrgBudgetCap } from '../../models/policy';
import { NEEDS_OWNER_APPROVER } from '../../models/roles';

/** Org setting: the organisation budget cap (USD, null = none) an owner last set; see updateAssistantSettings. */
export const ORG_CAP_OWNER_SET_KEY = 'budget_cap_owner_set_usd';

/**
 * Org setting: the assistant settings' revision, `{ version, by, at, changed }` (a counter bumped by
 * every saved change, who made it, when (ISO date-time) and which parts changed, in words). The
 * Settings page quotes `version` back (`expected_version`) so a stale tab cannot overwrite another
 * administrator's change (optimistic concurrency, as the record forms do with row versions).
 */
export const SETTINGS_REVISION_KEY = 'kinetix.settings_revision';

/** The stored {@link SETTINGS_REVISION_KEY}: version 0 before any change. */
interface SettingsRevision {
  version: number;
  by: string | null;
  at: string | null;
  changed: string[];
}

function settingsRevision(db: Db, orgId: string): SettingsRevision {
  const v = getOrgSetting<Partial<SettingsRevision>>(db, orgId, SETTINGS_REVISION_KEY);
  return {
    version: typeof v?.version === 'number' ? v.version : 0,
    by: typeof v?.by === 'string' ? v.by : null,
    at: typeof v?.at === 'string' ? v.at : null,
    changed: Array.isArray(v?.changed) ? v.changed.filter((x): x is string => typeof x === 'string') : [],
  };
}

/** What the settings operations need. */
export interface SettingsDeps {
  db: Db;
  tools: ToolRegistry;
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
}

function manager(db: Db, userId: string): Actor {
  const ctx = { db, userId };
  const actor = resolveActor(ctx);
  requirePermission(ctx, actor, 'settings.manage');
  return actor;
}

/** The machine key the harness uses for stored provider keys (same location: next to the database). */
function secretBox(db: Db, env: NodeJS.ProcessEnv): SecretBox {
  return SecretBox.fromEnvOrFile(db.path === ':memory:' ? join(process.cwd(), '.athlete', 'machine.key') : join(dirname(db.path), 'machine.key'), env);
}

function disabledList(db: Db, orgId: string): string[] {
  const v = getOrgSetting<unknown>(db, orgId, DISABLED_TOOLS_SETTING_KEY);
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/**
 * One provider's clearance for an org, read now: the harness (`anthropic`) and the MCP server
 * (`mcp`) call it for every run / request. Fail closed: missing, malformed or unreadable is
 * {@link DEFAULT_CLEARANCE} (`['internal']`), and a failed read is logged.
 */
export function providerClearance(db: Db, orgId: string, provider: ClearanceProvider, log?: (line: string) => void): ProviderClearance {
  try {
    return clearanceFromSetting(getOrgSetting<unknown>(db, orgId, CLEARANCE_SETTING_KEY), provider);
  } catch {
    log?.(`kinetix: could not read the ${provider} clearance; sending internal data only`);
    return DEFAULT_CLEARANCE;
  }
}

/**
 * Each provider's clearance as stored (fail closed: missing, malformed or unreadable reads as
 * `['internal']`, so Settings still opens and an admin can set it again).
 */
function clearances(db: Db, orgId: string): Record<ClearanceProvider, ProviderClearance> {
  let stored: unknown = null;
  try {
    stored = getOrgSetting<unknown>(db, orgId, CLEARANCE_SETTING_KEY);
  } catch {
    stored = null;
  }
  return Object.fromEntries(CLEARANCE_PROVIDERS.map((p) => [p, clearanceFromSetting(stored, p)])) as Record<ClearanceProvider, ProviderClearance>;
}

/** Read the assistant settings of the caller's organisation. @throws Forbidden */
export function readAssistantSettings(deps: SettingsDeps, userId: string): AssistantSettingsView {
  const env = deps.env ?? process.env;
  const actor = manager(deps.db, userId);
  const org = findOrganization(deps.db, actor.orgId);
  let box: SecretBox | null;
  try {
    box = secretBox(deps.db, env);
  } catch {
    box = null;
  }
  const p = describeProviderKey(deps.db, actor.orgId, box, env);
  const now = Date.now();
  const budget = checkBudget(deps.db, actor.orgId, actor.userId, now, (l) => deps.log?.(l));
  const off = new Set(disabledList(deps.db, actor.orgId));
  const offerable = deps.tools.all().filter((t) => t.risk !== 'destructive');
  return {
    provider: { configured: p.configured, source: p.source, base_url: p.baseUrl },
    model: org?.assistant_model ?? '',
    month_start: monthStartIso(now),
    org: { cap_usd: org?.budget_cap_usd ?? null, spend_mtd_usd: budget.orgSpendUsd ?? null, set_at_hq: orgSetAtHq(deps.db) },
    users: listAllUsers(deps.db)
      .filter((u) => u.org_id === actor.orgId)
      .map((u) => ({ id: u.id, display_name: u.display_name, role: u.role, cap_usd: u.budget_cap_usd })),
    my_spend_mtd_usd: budget.userSpendUsd ?? null,
    clearance: clearances(deps.db, actor.orgId),
    version: settingsRevision(deps.db, actor.orgId).version,
    tools: offerable
      .map((t) => ({ name: t.name, title: t.title, risk: t.risk, permission: t.permission, disabled: off.has(t.name) }))
      .sort((a, b) => a.name.localeCompare(b.name)),
  };
}

/**
 * Change the key, the switched-off tools, the organisation's monthly assistant budget
 * (`budget_cap_usd`: USD per calendar month (UTC), 0–1,000,000; null removes the cap) and/or a
 * provider's data clearance (`provider_clearance.anthropic` for the in-app model,
 * `provider_clearance.mcp` for MCP clients: the classes it may be sent, a prefix of
 * internal < personal < clinical < clinical-restricted, e.g. `['internal', 'personal']`; a
 * provider not named keeps its clearance). Gated by `settings.manage` (owner, admin,
 * super-admin). Everything is validated before anything is saved. A budget rise of more than
 * 20 %, or removing the cap, needs an owner (models/policy.ts `evaluateOrgBudgetCap`):
 * anyone else is refused with PolicyDenied (a Forbidden) and nothing is saved. On a device enrolled
 * for sync the organisation's budget is HQ's: a change of it is refused (Forbidden, nothing saved;
 * main/services/admin.ts `refuseOrgChangeOnSyncedDevice`); the other settings stay this device's.
 * `expected_version` is the settings' `version` the page showed (the contract requires it from the
 * page and the HTTP bridge): when another change was saved since, nothing is saved and a Conflict
 * says what changed, by whom and when. Every saved change bumps the version.
 * @throws Forbidden (incl. PolicyDenied), Validation (a clearance with a gap such as `['internal', 'clinical']`, an unknown class or provider),
 *   Conflict (the settings changed since `expected_version`; carries the version now stored)
 */
export function updateAssistantSettings(
  deps: SettingsDeps,
  userId: string,
  input: {
    api_key?: string | null;
    disabled_tools?: string[];
    budget_cap_usd?: number | null;
    provider_clearance?: Partial<Record<ClearanceProvider, readonly string[]>>;
    expected_version?: number;
  },
): AssistantSettingsView {
  const env = deps.env ?? process.env;
  const actor = manager(deps.db, userId);
  const revision = settingsRevision(deps.db, actor.orgId);
  if (input.expected_version !== undefined && input.expected_version !== revision.version) {
    const what = revision.changed.length ? revision.changed.join(', ') : 'the assistant settings';
    const who = revision.by ? ` by ${revision.by}` : '';
    const when = revision.at ? ` at ${revision.at.slice(0, 16).replace('T', ' ')} UTC` : '';
    throw new Conflict(
      `The assistant settings were changed since you opened this page (last: ${what}${who}${when}). Nothing was saved. The current settings are now shown: check them, then make your change again.`,
      [{ table: 'org_setting', id: SETTINGS_REVISION_KEY, expectedVersion: input.expected_version, actualVersion: revision.version }],
    );
  }
  let clearance: Record<ClearanceProvider, ProviderClearance> | null = null;
  if (input.provider_clearance !== undefined) {
    const pc = input.provider_clearance;
    if (!pc || typeof pc !== 'object' || Array.isArray(pc))
      throw new ValidationError('The provider clearance must name providers (anthropic, mcp) and their classes.', [
        { path: 'provider_clearance', message: 'expected an object' },
      ]);
    clearance = clearances(deps.db, actor.orgId);
    for (const [provider, classes] of Object.entries(pc)) {
      if (!(CLEARANCE_PROVIDERS as readonly string[]).includes(provider))
        throw new ValidationError(`Unknown provider "${provider.slice(0, 40)}": the clearance is kept for ${CLEARANCE_PROVIDERS.join(' and ')}.`, [
          { path: `provider_clearance.${provider.slice(0, 40)}`, message: 'unknown provider' },
        ]);
      const parsed = ProviderClearanceInput.safeParse(classes);
      if (!parsed.success) {
        const issues = parsed.error.issues.map((i) => ({ path: ['provider_clearance', provider, ...i.path.map(String)].join('.'), message: i.message }));
        throw new ValidationError(`The ${provider} clearance is not valid: ${issues.map((i) => i.message).join('; ')}.`, issues);
      }
      clearance[provider as ClearanceProvider] = parsed.data;
    }
  }
  // Every field is checked before anything is saved: a refused field leaves every setting as it was.
  const cap = input.budget_cap_usd;
  // The organisation's cap is on its row, which HQ holds on a device enrolled for sync.
  if (cap !== undefined) refuseOrgChangeOnSyncedDevice(deps.db, 'monthly assistant budget');
  if (cap !== undefined && cap !== null && !(typeof cap === 'number' && Number.isFinite(cap) && cap >= 0 && cap <= 1_000_000)) {
    throw new ValidationError('The monthly budget must be an amount in USD between 0 and 1,000,000, or empty for no cap.', [
      { path: 'budget_cap_usd', message: 'out of range' },
    ]);
  }
  // The same owner rule as a user's cap (models/policy.ts evaluateOrgBudgetCap): a rise of more
  // than 20 %, or removing the cap, needs an owner; anyone else is refused (nothing saved).
  const newCap = cap === undefined ? undefined : cap === null ? null : Math.round(cap * 100) / 100;
  const currentCap = findOrganization(deps.db, actor.orgId)?.budget_cap_usd ?? null;
  // The cap an owner last set (first recorded at the first change by anyone else), so that
  // steps within 20 % cannot add up past it without an owner.
  const ownerSet = getOrgSetting<number | null>(deps.db, actor.orgId, ORG_CAP_OWNER_SET_KEY);
  if (newCap !== undefined) {
    const policy = evaluateOrgBudgetCap(actor, currentCap, newCap, ownerSet);
    if (policy.verdict === 'needs_owner')
      throw new PolicyDenied(
        policy,
        `This change needs an owner: ${policy.reasons.join(' ')} Nothing was saved; ask an owner to change the organisation's budget (a change within 20 %, or a lower cap, you can make yourself).`,
      );
  }
  if (input.disabled_tools) {
    const known = new Set(deps.tools.all().map((t) => t.name));
    const unknown = input.disabled_tools.filter((n) => !known.has(n));
    if (unknown.length) throw new ValidationError(`Unknown tool(s): ${unknown.join(', ')}.`, [{ path: 'disabled_tools', message: 'unknown tool name' }]);
  }
  if (newCap !== undefined) {
    setOrgBudgetCap(deps.db, actor.orgId, newCap, new Date().toISOString());
    if (actor.role === NEEDS_OWNER_APPROVER) putOrgSetting(deps.db, actor.orgId, ORG_CAP_OWNER_SET_KEY, newCap);
    else if (ownerSet === undefined) putOrgSetting(deps.db, actor.orgId, ORG_CAP_OWNER_SET_KEY, currentCap);
    deps.log?.(`settings: organisation budget ${cap === null ? 'removed' : 'changed'}`);
  }
  if (input.disabled_tools) {
    putOrgSetting(deps.db, actor.orgId, DISABLED_TOOLS_SETTING_KEY, [...new Set(input.disabled_tools)].sort());
    deps.log?.(`settings: disabled tools changed (${input.disabled_tools.length} off)`);
  }
  if (clearance) {
    putOrgSetting(deps.db, actor.orgId, CLEARANCE_SETTING_KEY, clearance);
    deps.log?.(`settings: provider clearance changed (${CLEARANCE_PROVIDERS.map((p) => `${p} up to ${clearance[p][clearance[p].length - 1]}`).join(', ')})`);
  }
  if (input.api_key !== undefined) {
    storeProviderKey(deps.db, actor.orgId, input.api_key, secretBox(deps.db, env));
    deps.log?.(`settings: model key ${input.api_key ? 'set' : 'cleared'}`);
  }
  const changed = [
    ...(newCap !== undefined ? ["the organisation's budget cap"] : []),
    ...(input.disabled_tools ? ['the switched-off tools'] : []),
    ...(clearance ? ['the data clearance'] : []),
    ...(input.api_key !== undefined ? ['the model key'] : []),
  ];
  if (changed.length > 0)
    putOrgSetting(deps.db, actor.orgId, SETTINGS_REVISION_KEY, {
      version: revision.version + 1,
      by: actor.displayName,
      at: new Date().toISOString(),
      changed,
    } satisfies SettingsRevision);
  return readAssistantSettings(deps, userId);
}
