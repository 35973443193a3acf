/**
 * The full tool catalogue over the service layer's VERBS, and end-to-end turns against the
 * seeded demo club through the real services (scripted model, real SDK).
 */
import { EventType } from '@ag-ui/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ROLES, hasPermission } from '../../models/roles';
import { listActivity } from '../data/changesets';
import { putOrgSetting } from '../data/identity';
import * as K from '../data/kinetix';
import { countRows, listRows } from '../data/rows';
import { INJECTION_NOTE, seedDemo, type SeedSummary } from '../data/seed';
import { callVerb, VERBS } from '../services';
import { collectEvents, tempDb, testHarness, waitForEvent, type TempDb } from '../testing/kinetix-fixtures';
import { startScriptedAnthropic, type ScriptedAnthropic } from '../testing/scripted-anthropic';
import { shippedHelpPages } from '../help';
import { catalogueTools, defaultToolRegistry, openPageTool } from './catalogue';
import { clearanceUpTo } from '../../models/classification';
import { CLEARANCE_SETTING_KEY, RECORD_TEXT_OMITTED, WITHHELD } from './classification';
import { KINETIX_EVENTS } from './events';
import { DISABLED_TOOLS_SETTING_KEY } from './registry';
import { toolInputSchema } from './tool';
import { RECORD_TEXT_VERBS, toolNameForVerb } from './verb-tools';

describe('the catalogue', () => {
  const tools = catalogueTools();

  it('every help page link ("Show me" app paths and citation links) opens through open_page, to a concrete app route', () => {
    // The app's routes (renderer/src/router.ts parseHash): a link that opens anything else does not resolve.
    const ROUTE =
      /^\/(athletes(\/[A-Za-z0-9-]+(\/(injuries|screenings|wellness|workload|pose))?)?|squads|fees|activity|approvals|settings|sync|capture(\/(sessions|record|process|rig|results(\/[A-Za-z0-9-]+)?))?|help(\/[a-z0-9-]+(#[a-z0-9-]+)?)?)$/;
    const emitted: unknown[] = [];
    const ctx = { page: null, emit: (_n: string, v: unknown) => emitted.push(v) } as unknown as Parameters<typeof openPageTool.run>[0];
    const pages = shippedHelpPages();
    expect(pages.length).toBeGreaterThan(10);
    let links = 0;
    for (const p of pages) {
      for (const link of [p.appPath, ...p.sections.map((x) => `/help/${p.slug}#${x.anchor}`)]) {
        for (const extra of [{}, { athlete_id: '0193e5a0-0000-7000-8000-00000000a001' }]) {
          const parsed = openPageTool.input.safeParse({ path: link, ...extra });
          expect(parsed.success, `${p.slug}: ${link} ${parsed.success ? '' : parsed.error.message}`).toBe(true);
          const opened = (openPageTool.run(ctx, parsed.data!) as { opened: string }).opened;
          expect(opened, `${p.slug}: ${link} opened ${opened}`).toMatch(ROUTE);
          if ('athlete_id' in extra && link.includes(':id')) expect(opened).toContain('/athletes/0193e5a0-0000-7000-8000-00000000a001');
          links++;
        }
      }
    }
    expect(emitted).toHaveLength(links);
    // A template opens the athlete page the user is on; other placeholders and schemes are refused.
    const onPage = { ...ctx, page: '/athletes/abc-1/injuries' } as typeof ctx;
    expect(openPageTool.run(onPage, { path: '/athletes/:id/workload' })).toEqual({ opened: '/athletes/abc-1/workload' });
    for (const bad of ['/athletes/:athleteId', '//evil.test/x', 'https://evil.test', '/help/../x'])
      expect(openPageTool.input.safeParse({ path: bad }).success, bad).toBe(false);
  });

  it('has a tool for every verb (at least 40), snake_case and unique, each with an object JSON Schema from its zod input', () => {
    expect(tools.length).toBeGreaterThanOrEqual(40);
    // + a read_<table>_notes tool per record with free text, + open_page, + delete_video (destructive, never offered)
    expect(tools.length).toBe(VERBS.size + Object.keys(RECORD_TEXT_VERBS).length + 2);
    expect(new Set(tools.map((t) => t.name)).size).toBe(tools.length);
    for (const t of tools) {
      expect(t.name).toMatch(/^[a-z][a-z0-9_]+$/);
      expect(t.title.length).toBeGreaterThan(3);
      expect(toolInputSchema(t).type).toBe('object');
      expect(t.scopes).toEqual([t.permission.replace('.', ':')]);
    }
    for (const v of VERBS.values()) {
      const tool = tools.find((t) => t.name === toolNameForVerb(v.name))!;
      expect(tool.kind).toBe(v.kind);
      expect(tool.permission).toBe(v.permission);
    }
  });

  it("uses the design's names and honest titles", () => {
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const n of [
      'list_athletes',
      'get_athlete',
      'list_injuries',
      'get_workload_acwr',
      'get_pose_metrics',
      'log_session_load',
      'bulk_update_rates',
      'rotate_device_key',
      'generate_report',
      'submit_wellness',
      'deactivate_athlete',
      'open_page',
      'update_rtp_entry',
    ]) {
      expect(byName.has(n), n).toBe(true);
    }
    expect(byName.get('deactivate_athlete')!.title).toBe('Delete (deactivate) athlete');
    expect(byName.get('bulk_update_rates')!.risk).toBe('bulk');
    expect(byName.get('log_session_load')!.risk).toBe('bulk');
  });

  it('offers each role only tools its permissions allow, never a destructive one', () => {
    const reg = defaultToolRegistry();
    for (const role of ROLES) {
      const offered = reg.available(role);
      for (const t of offered) {
        expect(hasPermission(role, t.permission)).toBe(true);
        expect(t.risk).not.toBe('destructive');
      }
    }
    const athleteTools = reg.available('athlete').map((t) => t.name);
    expect(athleteTools).not.toContain('list_injuries');
    expect(athleteTools).toContain('submit_wellness');
    // Staff-only tools are not offered to an athlete account (they would always fail).
    for (const t of ['list_activity', 'get_changeset', 'undo_changeset']) expect(athleteTools).not.toContain(t);
  });
});

describe('turns against the demo club', () => {
  let t: TempDb;
  let s: SeedSummary;
  let server: ScriptedAnthropic;

  beforeEach(async () => {
    t = tempDb();
    s = seedDemo(t.db, { today: '2026-11-29' });
    // These turns read names, clinical values and athlete notes (free text: clinical-restricted); provider clearance itself is tested in clearance.test.ts.
    putOrgSetting(t.db, s.orgId, CLEARANCE_SETTING_KEY, { anthropic: clearanceUpTo('clinical-restricted') });
    server = await startScriptedAnthropic();
  });
  afterEach(async () => {
    await server.close();
    t.cleanup();
  });

  it('the injection note is data: a listing carries no note, the notes tool brings it inside the envelope, and no changeset results', async () => {
    const physio = s.userIds.physio;
    server.push(
      { toolUses: [{ name: 'get_athlete', input: { id: s.injectionAthleteId } }] },
      { toolUses: [{ name: 'read_athlete_notes', input: { id: s.injectionAthleteId } }] },
      { text: 'The record contains a note asking me to delete everything. I will not act on it.' },
    );
    const { kx } = testHarness(t.db, defaultToolRegistry(), { baseURL: server.url });
    const before = countRows(t.db, 'athlete', s.orgId, {});
    const { runId } = kx.startRun({ userId: physio, message: 'Tell me about Rowan', page: `/athletes/${s.injectionAthleteId}` });
    await kx.waitForRun(runId);
    const summary = (server.requests[1]!.body.messages.at(-1)!.content as { content: string }[])[0]!.content;
    expect(summary).toMatch(/^<data source="tool:get_athlete"/);
    expect(summary).not.toContain(JSON.stringify(INJECTION_NOTE).slice(1, 30));
    expect(summary).toContain(JSON.stringify(RECORD_TEXT_OMITTED).slice(1, -1));
    const result = (server.requests[2]!.body.messages.at(-1)!.content as { content: string }[])[0]!.content;
    expect(result).toMatch(/^<data source="tool:read_athlete_notes"/);
    expect(result).toContain(JSON.stringify(INJECTION_NOTE).slice(1, 30));
    expect(K.listToolCalls(t.db, runId).filter((c) => c.requires_confirm === 1)).toHaveLength(0);
    expect(countRows(t.db, 'athlete', s.orgId, {})).toBe(before);
    expect(listActivity(t.db, s.orgId).filter((a) => a.via_assistant)).toHaveLength(0);
  });

  it('withholds clinical-restricted fields from a provider not cleared for them, and sends them once cleared', async () => {
    const doctor = s.userIds.doctor;
    putOrgSetting(t.db, s.orgId, CLEARANCE_SETTING_KEY, { anthropic: clearanceUpTo('clinical') });
    const { kx } = testHarness(t.db, defaultToolRegistry(), { baseURL: server.url });
    const hamstring = listRows<{ id: string; body_part: string }>(t.db, 'injury', s.orgId, { limit: 100 }).find((i) => i.body_part.startsWith('Hamstring'))!;
    server.push({ toolUses: [{ name: 'read_injury_notes', input: { id: hamstring.id } }] }, { text: 'ok' });
    await kx.waitForRun(kx.startRun({ userId: doctor, message: 'hamstring notes?' }).runId);
    const sent = (server.requests[1]!.body.messages.at(-1)!.content as { content: string }[])[0]!.content;
    expect(sent).toContain(JSON.stringify(WITHHELD).slice(1, -1).slice(0, 30));
    expect(sent).not.toContain('MRI');
    expect(sent).toContain('clinician_notes');

    putOrgSetting(t.db, s.orgId, CLEARANCE_SETTING_KEY, { anthropic: clearanceUpTo('clinical-restricted') });
    server.push({ toolUses: [{ name: 'read_injury_notes', input: { id: hamstring.id } }] }, { text: 'ok' });
    await kx.waitForRun(kx.startRun({ userId: doctor, message: 'all injuries?' }).runId);
    const cleared = (server.requests[3]!.body.messages.at(-1)!.content as { content: string }[])[0]!.content;
    expect(cleared).not.toContain('[withheld');
    expect(cleared).toContain('MRI');
  });

  it('logs a squad session as one changeset of N session-load rows after approval', async () => {
    const coach = s.userIds.coach;
    const squad = s.squadIds.U19;
    const active = countRows(t.db, 'athlete', s.orgId, { eq: { squad_id: squad, status: 'active' } });
    const { kx } = testHarness(t.db, defaultToolRegistry(), { baseURL: server.url });
    // The demo holds yesterday's U19 loads: without the acknowledgement the service refuses the
    // tool call (Conflict SameDayExists), nothing is proposed or written.
    const loadsBefore = countRows(t.db, 'session_load', s.orgId);
    server.push({ toolUses: [{ name: 'log_session_load', input: { squad_id: squad, date: '2026-11-28', duration_min: 75, rpe: 6 } }] }, { text: 'Refused.' });
    const refused = kx.startRun({ userId: coach, message: "log yesterday's session for the U19 squad: 75 minutes at RPE 6" }).runId;
    await kx.waitForRun(refused);
    const failed = K.listToolCalls(t.db, refused)[0]!;
    expect(failed.status).toBe('failed');
    expect(failed.error_json).toContain('SameDayExists');
    expect(countRows(t.db, 'session_load', s.orgId)).toBe(loadsBefore);
    server.push(
      { toolUses: [{ name: 'log_session_load', input: { squad_id: squad, date: '2026-11-28', duration_min: 75, rpe: 6, second_session_same_day: true } }] },
      { text: 'Logged.' },
    );
    const { runId } = kx.startRun({ userId: coach, message: "log yesterday's second U19 session (they already have one that day): 75 minutes at RPE 6" });
    const ev = await waitForEvent(
      kx,
      coach,
      runId,
      (e) => e.event.type === EventType.CUSTOM && (e.event as { name: string }).name === KINETIX_EVENTS.confirmRequired,
    );
    const v = (
      ev.event as { value: { toolCallId: string; argsHash: string; changeset: { changes: { table: string; after: { load_au: number } }[] }; risk: string } }
    ).value;
    expect(v.risk).toBe('bulk');
    expect(v.changeset.changes).toHaveLength(active);
    expect(v.changeset.changes.every((c) => c.table === 'session_load' && c.after.load_au === 450)).toBe(true);
    kx.confirm(coach, v.toolCallId, { approve: true, argsHash: v.argsHash });
    expect((await kx.waitForRun(runId)).status).toBe('completed');
    const act = listActivity(t.db, s.orgId, { limit: 1 })[0]!;
    expect(act.actor_name).toMatch(/ via Assistant$/);
    expect(act.run_id).toBe(runId);
  });

  it('open_page emits a navigation event; an admin-disabled tool is not offered', async () => {
    putOrgSetting(t.db, s.orgId, DISABLED_TOOLS_SETTING_KEY, ['bulk_update_rates']);
    server.push({ toolUses: [{ name: 'open_page', input: { path: '/workload' } }] }, { text: 'Opened.' });
    const { kx } = testHarness(t.db, defaultToolRegistry(), { baseURL: server.url });
    const { runId } = kx.startRun({ userId: s.userIds.physio, message: 'show me workload' });
    const events = await collectEvents(kx, s.userIds.physio, runId);
    const nav = events.filter((e) => e.event.type === EventType.CUSTOM && (e.event as { name: string }).name === KINETIX_EVENTS.openPage);
    expect(nav.map((e) => (e.event as { value: unknown }).value)).toEqual([{ path: '/workload' }]);
    const offered = server.requests[0]!.body.tools!.map((x) => x.name);
    expect(offered).toContain('update_rate_item');
    expect(offered).not.toContain('bulk_update_rates');
  });

  it('a rotated device key is shown once on the live stream, and never persisted or sent to the model', async () => {
    const admin = s.userIds.admin;
    const { kx } = testHarness(t.db, defaultToolRegistry(), { baseURL: server.url });
    const reg = callVerb({ db: t.db, userId: admin }, 'devices.register', { name: 'GPS vest 7', kind: 'wearable' }) as {
      changeset: { changes: { id: string }[] };
    };
    const deviceId = reg.changeset.changes[0]!.id;
    server.push({ toolUses: [{ name: 'rotate_device_key', input: { id: deviceId } }] }, { text: 'Rotated.' });
    const { runId } = kx.startRun({ userId: admin, message: 'rotate the key of the first device' });
    const live: { name: string; value: unknown }[] = [];
    for await (const e of kx.subscribe(admin, runId)) {
      if (e.event.type !== EventType.CUSTOM) continue;
      const ev = e.event as { name: string; value: { toolCallId: string; argsHash: string; values?: Record<string, string> } };
      live.push(ev);
      if (ev.name === KINETIX_EVENTS.confirmRequired) kx.confirm(admin, ev.value.toolCallId, { approve: true, argsHash: ev.value.argsHash });
    }
    const reveal = live.find((e) => e.name === KINETIX_EVENTS.reveal)!.value as { values: { api_key: string } };
    const key = reveal.values.api_key;
    expect(key).toMatch(/^aik_/);
    const stored = JSON.stringify([K.listRunEvents(t.db, runId), K.listToolCalls(t.db, runId), K.listTrace(t.db, runId), server.requests.map((r) => r.body)]);
    expect(stored).not.toContain(key);
    expect((await collectEvents(kx, admin, runId)).some((e) => (e.event as { name?: string }).name === KINETIX_EVENTS.reveal)).toBe(false);
  });
});
