import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../data/db';
import { openDb } from '../data/db';
import { sqlite } from '../data/sqlite';
import type { SeedSummary } from '../data/seed';
import { seedDemo } from '../data/seed';
import { defaultToolRegistry } from './catalogue';
import { BudgetExceeded } from './errors';
import { checkBudget } from './limits';
import { resolveProviderKey, SecretBox } from './secrets';
import { readAssistantSettings, updateAssistantSettings } from './settings';

let dir: string;
let db: Db;
let seed: SeedSummary;
const tools = defaultToolRegistry();
const env = { ATHLETE_SECRET_KEY: 'settings-test-machine-key' };

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ai-settings-'));
  db = openDb(join(dir, 'db.sqlite'));
  seed = seedDemo(db, { today: '2026-11-20' });
});
afterAll(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('assistant settings', () => {
  it('needs settings.manage', () => {
    expect(() => readAssistantSettings({ db, tools, env }, seed.userIds.physio)).toThrow(expect.objectContaining({ code: 'Forbidden' }));
    expect(() => updateAssistantSettings({ db, tools, env }, seed.userIds.coach, { disabled_tools: [] })).toThrow(
      expect.objectContaining({ code: 'Forbidden' }),
    );
  });

  it('reports the key source, spend and the switchable tools (never destructive ones)', () => {
    const s = readAssistantSettings({ db, tools, env }, seed.userIds.owner);
    expect(s.provider).toEqual({ configured: false, source: 'none', base_url: null });
    expect(s.org.spend_mtd_usd).toBe(0);
    expect(s.tools.length).toBeGreaterThan(40);
    expect(s.tools.every((t) => t.risk !== 'destructive' && !t.disabled)).toBe(true);
  });

  it('stores the key encrypted and never returns it', () => {
    const key = 'sk-ant-test-settings-0123456789';
    const s = updateAssistantSettings({ db, tools, env }, seed.userIds.owner, { api_key: key });
    expect(s.provider).toMatchObject({ configured: true, source: 'settings' });
    expect(JSON.stringify(s)).not.toContain(key);
    const box = SecretBox.fromEnvOrFile(join(dir, 'machine.key'), env);
    expect(resolveProviderKey(db, seed.orgId, box, () => {}, {}).key).toBe(key);
    expect(updateAssistantSettings({ db, tools, env }, seed.userIds.owner, { api_key: null }).provider.source).toBe('none');
  });

  it('switches tools off for the org (the harness then leaves them out) and refuses unknown names', () => {
    updateAssistantSettings({ db, tools, env }, seed.userIds.admin, { disabled_tools: ['bulk_update_rates'] });
    const offered = tools.availableEnabled(db, seed.orgId, 'physio', () => {}).map((t) => t.name);
    expect(offered).not.toContain('bulk_update_rates');
    expect(offered).toContain('list_athletes');
    expect(() => updateAssistantSettings({ db, tools, env }, seed.userIds.admin, { disabled_tools: ['rm_rf'] })).toThrow(
      expect.objectContaining({ code: 'Validation' }),
    );
  });

  it("the owner sets the organisation's monthly budget through the service layer; the budget gate then uses it and names where to change it (issue 9 §8)", () => {
    expect(() => updateAssistantSettings({ db, tools, env }, seed.userIds.physio, { budget_cap_usd: 5 })).toThrow(
      expect.objectContaining({ code: 'Forbidden' }),
    );
    expect(() => updateAssistantSettings({ db, tools, env }, seed.userIds.owner, { budget_cap_usd: -1 })).toThrow(
      expect.objectContaining({ code: 'Validation' }),
    );
    expect(() => updateAssistantSettings({ db, tools, env }, seed.userIds.owner, { budget_cap_usd: Number.NaN })).toThrow(
      expect.objectContaining({ code: 'Validation' }),
    );
    expect(updateAssistantSettings({ db, tools, env }, seed.userIds.owner, { budget_cap_usd: 12.5 }).org.cap_usd).toBe(12.5);
    expect(checkBudget(db, seed.orgId, seed.userIds.physio, Date.now(), () => {})).toMatchObject({ allowed: true, remainingUsd: 12.5 });
    updateAssistantSettings({ db, tools, env }, seed.userIds.owner, { budget_cap_usd: 0 });
    const refused = checkBudget(db, seed.orgId, seed.userIds.physio, Date.now(), () => {});
    expect(refused).toMatchObject({ allowed: false });
    const err = new BudgetExceeded(refused.reason!, refused.remainingUsd);
    expect(err.message).toContain('under Settings → Kinetix');
    expect(err.message).not.toContain('super-admin');
    expect(updateAssistantSettings({ db, tools, env }, seed.userIds.owner, { budget_cap_usd: null }).org.cap_usd).toBeNull();
    expect(checkBudget(db, seed.orgId, seed.userIds.physio, Date.now(), () => {})).toMatchObject({ allowed: true, remainingUsd: Infinity });
  });

  it('all or nothing: a refused field saves none of the others', () => {
    const before = readAssistantSettings({ db, tools, env }, seed.userIds.owner);
    expect(() =>
      updateAssistantSettings({ db, tools, env }, seed.userIds.owner, {
        budget_cap_usd: 7,
        disabled_tools: ['nope'],
        provider_clearance: { anthropic: ['internal', 'personal'] },
      }),
    ).toThrow(expect.objectContaining({ code: 'Validation' }));
    expect(readAssistantSettings({ db, tools, env }, seed.userIds.owner)).toEqual(before);
  });

  it('an unreadable stored clearance reads as internal only and Settings still opens and repairs it', () => {
    // Test-only: corrupt the stored row through the data layer's connection.
    sqlite(db)
      .prepare(
        "INSERT INTO org_setting (org_id, key, value_json, updated_at) VALUES (?, 'kinetix.provider_cleared_for', '{not json', ?) ON CONFLICT (org_id, key) DO UPDATE SET value_json = excluded.value_json",
      )
      .run(seed.orgId, new Date().toISOString());
    const view = readAssistantSettings({ db, tools, env }, seed.userIds.owner);
    expect(JSON.stringify(view)).toContain('internal');
    updateAssistantSettings({ db, tools, env }, seed.userIds.owner, { provider_clearance: { anthropic: ['internal'] } });
  });

  it('provider clearance: internal only by default; settings.manage sets an ordered prefix per provider; a gap or unknown name is refused, nothing saved', () => {
    const logs: string[] = [];
    expect(readAssistantSettings({ db, tools, env }, seed.userIds.owner).clearance).toEqual({ anthropic: ['internal'], mcp: ['internal'] });
    expect(() => updateAssistantSettings({ db, tools, env }, seed.userIds.physio, { provider_clearance: { anthropic: ['internal', 'personal'] } })).toThrow(
      expect.objectContaining({ code: 'Forbidden' }),
    );
    const s = updateAssistantSettings({ db, tools, env, log: (l) => logs.push(l) }, seed.userIds.admin, {
      provider_clearance: { anthropic: ['clinical', 'personal', 'internal'] },
    });
    expect(s.clearance).toEqual({ anthropic: ['internal', 'personal', 'clinical'], mcp: ['internal'] });
    expect(logs).toContain('settings: provider clearance changed (anthropic up to clinical, mcp up to internal)');
    // A provider not named keeps its clearance.
    expect(updateAssistantSettings({ db, tools, env }, seed.userIds.owner, { provider_clearance: { mcp: ['internal', 'personal'] } }).clearance).toEqual({
      anthropic: ['internal', 'personal', 'clinical'],
      mcp: ['internal', 'personal'],
    });
    for (const bad of [{ anthropic: ['internal', 'clinical'] }, { anthropic: ['secret'] }, { anthropic: [] }, { openai: ['internal'] }] as const) {
      expect(() => updateAssistantSettings({ db, tools, env }, seed.userIds.owner, { provider_clearance: bad as never })).toThrow(
        expect.objectContaining({ code: 'Validation' }),
      );
    }
    expect(readAssistantSettings({ db, tools, env }, seed.userIds.owner).clearance.anthropic).toEqual(['internal', 'personal', 'clinical']);
    updateAssistantSettings({ db, tools, env }, seed.userIds.owner, { provider_clearance: { anthropic: ['internal'], mcp: ['internal'] } });
  });
});

describe('assistant settings: optimistic concurrency (issue 13 re-review)', () => {
  it('every saved change bumps the version; a refused one does not; a stale expected_version is a Conflict and nothing is saved', () => {
    const deps = { db, tools, env };
    const v0 = readAssistantSettings(deps, seed.userIds.admin).version;
    const s1 = updateAssistantSettings(deps, seed.userIds.owner, { disabled_tools: ['get_squad'], expected_version: v0 });
    expect(s1.version).toBe(v0 + 1);
    // A refused change (an unknown tool) saves nothing and keeps the version.
    expect(() => updateAssistantSettings(deps, seed.userIds.admin, { disabled_tools: ['no_such_tool'], expected_version: v0 + 1 })).toThrow(
      expect.objectContaining({ code: 'Validation' }),
    );
    expect(readAssistantSettings(deps, seed.userIds.admin).version).toBe(v0 + 1);
    const cap = readAssistantSettings(deps, seed.userIds.admin).org.cap_usd;
    expect(() => updateAssistantSettings(deps, seed.userIds.admin, { budget_cap_usd: 1, disabled_tools: [], expected_version: v0 })).toThrow(
      expect.objectContaining({
        code: 'Conflict',
        message: expect.stringMatching(/last: the switched-off tools by .+\). Nothing was saved\. The current settings are now shown/),
        details: expect.objectContaining({
          conflicts: [{ table: 'org_setting', id: 'kinetix.settings_revision', expectedVersion: v0, actualVersion: v0 + 1 }],
        }),
      }),
    );
    const now = readAssistantSettings(deps, seed.userIds.admin);
    expect(now.org.cap_usd).toBe(cap);
    expect(now.tools.find((t) => t.name === 'get_squad')?.disabled).toBe(true);
    expect(now.version).toBe(v0 + 1);
  });
});
