/**
 * Assistant settings for the Settings page: the model key (set or clear; stored encrypted with
 * the machine key, never returned), budgets with month-to-date spend, and the tools an
 * administrator may switch off. Gated by `settings.manage` through the service layer's own
 * check (resolveActor + requirePermission), re-read on every call.
 *
 * These are organisation settings, not business rows: they do not travel as changesets (like
 * PINs, a key never appears in a diff). Each change is logged as one line without values.
 */
import { dirname, join } from 'node:path';
import type { AssistantSettingsView } from '../../models/contract';
import { ValidationError } from '../../models/errors';
import type { Db } from '../data/db';
import { findOrganization, listAllUsers, putOrgSetting } from '../data/identity';
import { setOrgBudgetCap } from '../data/kinetix';
import type { ToolRegistry } from './registry';
import { DISABLED_TOOLS_SETTING_KEY } from './registry';
import { checkBudget, monthStartIso } from './limits';
import { SecretBox, describeProviderKey, storeProviderKey } from './secrets';
import { getOrgSetting } from '../data/identity';
import type { Actor } from '../services';
import { requirePermission, resolveActor } from '../services';

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
    org: { cap_usd: org?.budget_cap_usd ?? null, spend_mtd_usd: budget.orgSpendUsd ?? null },
    users: listAllUsers(deps.db)
      .filter((u) => u.org_id === actor.orgId)
      .map((u) => ({ id: u.id, display_name: u.display_name, role: u.role, cap_usd: u.budget_cap_usd })),
    my_spend_mtd_usd: budget.userSpendUsd ?? null,
    tools: offerable
      .map((t) => ({ name: t.name, title: t.title, risk: t.risk, permission: t.permission, disabled: off.has(t.name) }))
      .sort((a, b) => a.name.localeCompare(b.name)),
  };
}

/**
 * Change the key, the switched-off tools and/or the organisation's monthly assistant budget
 * (`budget_cap_usd`: USD per calendar month (UTC), 0–1,000,000; null removes the cap). Gated by
 * `settings.manage` (owner, admin, super-admin). @throws Forbidden, Validation
 */
export function updateAssistantSettings(
  deps: SettingsDeps,
  userId: string,
  input: { api_key?: string | null; disabled_tools?: string[]; budget_cap_usd?: number | null },
): AssistantSettingsView {
  const env = deps.env ?? process.env;
  const actor = manager(deps.db, userId);
  if (input.budget_cap_usd !== undefined) {
    const cap = input.budget_cap_usd;
    if (cap !== null && !(typeof cap === 'number' && Number.isFinite(cap) && cap >= 0 && cap <= 1_000_000)) {
      throw new ValidationError('The monthly budget must be an amount in USD between 0 and 1,000,000, or empty for no cap.', [
        { path: 'budget_cap_usd', message: 'out of range' },
      ]);
    }
    setOrgBudgetCap(deps.db, actor.orgId, cap === null ? null : Math.round(cap * 100) / 100, new Date().toISOString());
    deps.log?.(`settings: organisation budget ${cap === null ? 'removed' : 'changed'}`);
  }
  if (input.disabled_tools) {
    const known = new Set(deps.tools.all().map((t) => t.name));
    const unknown = input.disabled_tools.filter((n) => !known.has(n));
    if (unknown.length) throw new ValidationError(`Unknown tool(s): ${unknown.join(', ')}.`, [{ path: 'disabled_tools', message: 'unknown tool name' }]);
    putOrgSetting(deps.db, actor.orgId, DISABLED_TOOLS_SETTING_KEY, [...new Set(input.disabled_tools)].sort());
    deps.log?.(`settings: disabled tools changed (${input.disabled_tools.length} off)`);
  }
  if (input.api_key !== undefined) {
    storeProviderKey(deps.db, actor.orgId, input.api_key, secretBox(deps.db, env));
    deps.log?.(`settings: model key ${input.api_key ? 'set' : 'cleared'}`);
  }
  return readAssistantSettings(deps, userId);
}
