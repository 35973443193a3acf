/**
 * Provider clearance (issue 9 §12, second half): `personal`, `clinical` and `clinical-restricted`
 * fields reach only a provider cleared for them. Real harness, real `@anthropic-ai/sdk`, the
 * scripted Messages server; every check is on the exact bytes the server received (`raw`), over
 * every request of the conversation: tool results, the identity block of the system prompt, the
 * memory digest of a second turn and a write's apply result. The MCP path is checked through a
 * real `McpSession`.
 */
import { EventType } from '@ag-ui/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clearanceUpTo, type Classification } from '../../models/classification';
import { findUserById, putOrgSetting } from '../data/identity';
import * as K from '../data/kinetix';
import { seedDemo, type SeedSummary } from '../data/seed';
import { issueMcpToken } from '../mcp/tokens';
import { McpSession } from '../mcp/session';
import { addRecord, tempDb, testHarness, type TempDb } from '../testing/kinetix-fixtures';
import { startScriptedAnthropic, type ScriptedAnthropic } from '../testing/scripted-anthropic';
import { defaultToolRegistry } from './catalogue';
import { CLEARANCE_SETTING_KEY, withheldMarker } from './classification';
import { KINETIX_EVENTS } from './events';

let t: TempDb;
let s: SeedSummary;
let server: ScriptedAnthropic;
let athleteId: string;
let injuryId: string;
let doctor: { id: string; name: string; email: string };
/** Many runs of one user within a minute: the per-minute rate limits are not under test here. */
let positions = 0;
const LIMITS = { userRunsPerMinute: 1000, orgRunsPerMinute: 1000 };

/** Planted values, one or more per class; none of them occurs anywhere else in a request. */
const PLANTED = {
  personal: ['Zephyrine Quillfeather', 'Quillfeather-note-K7'],
  clinical: ['Talocrural-Q9'],
  'clinical-restricted': ['MRI-RESTRICTED-X4 grade 2 tear'],
} as const;

beforeAll(async () => {
  t = tempDb('clearance-');
  s = seedDemo(t.db, { today: '2026-11-20' });
  const u = findUserById(t.db, s.userIds.doctor)!;
  doctor = { id: u.id, name: u.display_name, email: u.email };
  athleteId = addRecord(t.db, s.orgId, s.userIds.owner, 'owner', 'athlete', {
    name: PLANTED.personal[0],
    date_of_birth: '2003-07-19',
    sex: 'female',
    position: 'FW',
    squad_id: s.squadIds.U19,
    dominant_side: 'left',
    status: 'active',
    notes: `${PLANTED.personal[1]} prefers early sessions`,
  });
  injuryId = addRecord(t.db, s.orgId, s.userIds.doctor, 'doctor', 'injury', {
    athlete_id: athleteId,
    body_part: PLANTED.clinical[0],
    side: 'left',
    mechanism: 'non_contact',
    onset_date: '2026-11-01',
    severity: 'moderate',
    status: 'open',
    clinician_notes: PLANTED['clinical-restricted'][0],
  });
  server = await startScriptedAnthropic();
});
afterAll(async () => {
  await server.close();
  t.cleanup();
});

/** The ways a value can appear in a JSON request body: as written, JSON-escaped, or in part. */
function forms(v: string): string[] {
  return [v, JSON.stringify(v).slice(1, -1), v.slice(0, 12), v.slice(-12)];
}

/**
 * One conversation as the doctor with the org's `anthropic` clearance `cleared`: turn 1 reads the
 * athlete, their injuries and both notes, and updates the athlete (approved); turn 2 replays the
 * digest. Returns every raw request body and the run ids.
 */
async function conversation(cleared: readonly Classification[]): Promise<{ raw: string[]; runIds: string[] }> {
  putOrgSetting(t.db, s.orgId, CLEARANCE_SETTING_KEY, { anthropic: cleared });
  const first = server.requests.length;
  const { kx } = testHarness(t.db, defaultToolRegistry(), { baseURL: server.url, limits: LIMITS });
  server.push(
    {
      toolUses: [
        { name: 'get_athlete', input: { id: athleteId } },
        { name: 'list_injuries', input: { athlete_id: athleteId } },
        { name: 'read_injury_notes', input: { id: injuryId } },
        { name: 'read_athlete_notes', input: { id: athleteId } },
      ],
    },
    { toolUses: [{ name: 'update_athlete', input: { id: athleteId, position: `P${++positions}` } }] },
    { text: 'Done.' },
  );
  const one = kx.startRun({ userId: doctor.id, message: 'Tell me about this athlete and set their position.', page: `/athletes/${athleteId}/injuries` });
  for await (const e of kx.subscribe(doctor.id, one.runId)) {
    if (e.event.type !== EventType.CUSTOM) continue;
    const ev = e.event as { name: string; value: { toolCallId: string; argsHash: string } };
    if (ev.name === KINETIX_EVENTS.confirmRequired) kx.confirm(doctor.id, ev.value.toolCallId, { approve: true, argsHash: ev.value.argsHash });
  }
  expect((await kx.waitForRun(one.runId)).status).toBe('completed');
  server.push({ text: 'As established.' });
  const two = kx.startRun({ userId: doctor.id, message: 'And again?', conversationId: one.conversationId });
  expect((await kx.waitForRun(two.runId)).status).toBe('completed');
  const raw = server.requests.slice(first).map((r) => r.raw);
  expect(raw).toHaveLength(4);
  return { raw, runIds: [one.runId, two.runId] };
}

const CASES: { cls: Classification; values: () => string[]; notCleared: readonly Classification[]; cleared: readonly Classification[] }[] = [
  {
    cls: 'personal',
    values: () => [...PLANTED.personal, doctor.name, doctor.email],
    notCleared: clearanceUpTo('internal'),
    cleared: clearanceUpTo('personal'),
  },
  { cls: 'clinical', values: () => [...PLANTED.clinical], notCleared: clearanceUpTo('personal'), cleared: clearanceUpTo('clinical') },
  {
    cls: 'clinical-restricted',
    values: () => [...PLANTED['clinical-restricted']],
    notCleared: clearanceUpTo('clinical'),
    cleared: clearanceUpTo('clinical-restricted'),
  },
];

describe('provider clearance: each class reaches only a provider cleared for it (exact bytes the Messages server received)', () => {
  for (const c of CASES) {
    it(`${c.cls}: withheld from a provider cleared only for ${c.notCleared.join(', ')}; the model is told what it cannot see`, async () => {
      const { raw, runIds } = await conversation(c.notCleared);
      const all = raw.join('\n');
      for (const v of c.values()) for (const f of forms(v)) expect(all.includes(f), `"${f}" (of ${c.cls} value "${v}") reached the provider`).toBe(false);
      const marker = JSON.stringify(withheldMarker(c.cls)).slice(1, -1);
      // In the tool results of turn 1 (and the digest of turn 2 carries markers too; its lines are cut to 280 characters).
      expect(raw[1]).toContain(marker);
      expect(JSON.stringify(JSON.parse(raw[3]!).system)).toContain('[withheld: ');
      // The hard rules tell the model how to say it cannot see a field.
      expect(JSON.stringify(JSON.parse(raw[0]!).system)).toContain('say plainly that you cannot see it');
      // The trace records what was withheld, by class, never the values.
      const trace = K.listTrace(t.db, runIds[0]!).map((x) => JSON.parse(x.data_json) as Record<string, unknown>);
      const withheld = trace.filter((x) => x.decision === 'withheld_fields');
      expect(withheld.length).toBeGreaterThan(0);
      expect(withheld.some((x) => ((x.byClass as Record<string, number>)[c.cls] ?? 0) > 0)).toBe(true);
      for (const v of c.values()) expect(JSON.stringify(withheld)).not.toContain(v);
    });

    it(`${c.cls}: sent to a provider cleared for ${c.cleared.join(', ')}`, async () => {
      const { raw } = await conversation(c.cleared);
      const all = raw.join('\n');
      for (const v of c.values()) expect(all, `${c.cls} value "${v}" should reach a cleared provider`).toContain(JSON.stringify(v).slice(1, -1));
      expect(all).not.toContain(JSON.stringify(withheldMarker(c.cls)).slice(1, -1));
    });
  }

  it('a write result: the changeset summary ("Update athlete <name>") is clinical: withheld below that clearance', async () => {
    const { raw } = await conversation(clearanceUpTo('personal'));
    const applied = (JSON.parse(raw[2]!).messages as { content: unknown }[]).at(-1)!.content as { content: string }[];
    expect(applied[0]!.content).toContain('changeset_id');
    expect(applied[0]!.content).toContain(JSON.stringify(withheldMarker('clinical')).slice(1, -1));
    expect(applied[0]!.content).not.toContain('Update athlete');
  });

  it('a page context that is not an app route is not sent', async () => {
    putOrgSetting(t.db, s.orgId, CLEARANCE_SETTING_KEY, { anthropic: ['internal'] });
    const { kx } = testHarness(t.db, defaultToolRegistry(), { baseURL: server.url, limits: LIMITS });
    server.push({ text: 'ok' });
    const first = server.requests.length;
    await kx.waitForRun(kx.startRun({ userId: doctor.id, message: 'hi', page: `/athletes?search=${PLANTED.personal[0]}` }).runId);
    expect(server.requests[first]!.raw).not.toContain('Quillfeather');
    expect(server.requests[first]!.raw).toContain('page context that is not an app route');
  });
});

describe('provider clearance over MCP (the client’s model is a provider: the org’s `mcp` clearance)', () => {
  it('default: names and clinical values withheld, with an output schema that allows the marker; cleared: sent', async () => {
    putOrgSetting(t.db, s.orgId, CLEARANCE_SETTING_KEY, { anthropic: ['internal'] });
    const session = () => new McpSession({ db: t.db, token: issueMcpToken(t.db, s.userIds.doctor).token });
    const a = session();
    const athlete = await a.callTool('get_athlete', { id: athleteId });
    const injuries = await a.callTool('list_injuries', { athlete_id: athleteId });
    const text = athlete.content[0]!.text + injuries.content[0]!.text;
    for (const v of [...PLANTED.personal, ...PLANTED.clinical, ...PLANTED['clinical-restricted']]) expect(text).not.toContain(v);
    expect(athlete.structuredContent).toMatchObject({ id: athleteId, name: withheldMarker('personal'), dominant_side: 'left' });
    const schema = a.listTools().find((x) => x.name === 'get_athlete')!.outputSchema as unknown as { properties: Record<string, unknown> };
    expect(schema.properties.name).toMatchObject({ anyOf: [expect.anything(), { type: 'string' }] });
    expect(schema.properties.dominant_side).not.toHaveProperty('anyOf');

    putOrgSetting(t.db, s.orgId, CLEARANCE_SETTING_KEY, { mcp: clearanceUpTo('clinical') });
    const b = session();
    const cleared =
      (await b.callTool('get_athlete', { id: athleteId })).content[0]!.text + (await b.callTool('list_injuries', { athlete_id: athleteId })).content[0]!.text;
    expect(cleared).toContain(PLANTED.personal[0]);
    expect(cleared).toContain(PLANTED.clinical[0]);
    expect(cleared).not.toContain(PLANTED['clinical-restricted'][0]);
    expect(
      (b.listTools().find((x) => x.name === 'get_athlete')!.outputSchema as unknown as { properties: Record<string, unknown> }).properties.name,
    ).not.toHaveProperty('anyOf');
  });
});
