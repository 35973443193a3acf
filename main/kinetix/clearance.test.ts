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
import { getChangeset } from '../data/changesets';
import { findUserById, putOrgSetting } from '../data/identity';
import { listRows } from '../data/rows';
import * as K from '../data/kinetix';
import { seedDemo, type SeedSummary } from '../data/seed';
import { issueMcpToken } from '../mcp/tokens';
import { McpSession } from '../mcp/session';
import { addRecord, tempDb, testHarness, type TempDb } from '../testing/kinetix-fixtures';
import { startScriptedAnthropic, type ScriptedAnthropic } from '../testing/scripted-anthropic';
import { defaultToolRegistry } from './catalogue';
import { CLEARANCE_SETTING_KEY, RECORD_TEXT_OMITTED, withheldMarker } from './classification';
import { KINETIX_EVENTS } from './events';
import { DEMO_CAPTURE } from '../../models/seed/demo-capture.generated';

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
  personal: ['Zephyrine Quillfeather'],
  clinical: ['Talocrural-Q9'],
  // Athlete notes are free text (issue 9 §12): restricted like clinician notes, not personal.
  'clinical-restricted': ['MRI-RESTRICTED-X4 grade 2 tear', 'Noteworthy-K7 athlete note'],
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
    notes: `${PLANTED['clinical-restricted'][1]}: prefers early sessions`,
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

/**
 * One turn as the doctor (every confirm approved) under the org's `anthropic` clearance `cleared`,
 * the model scripted with `responses`; returns the raw request bodies of this turn.
 */
async function turn(
  cleared: readonly Classification[],
  message: string,
  responses: Parameters<ScriptedAnthropic['push']>,
  opts: { conversationId?: string; page?: string; userId?: string } = {},
): Promise<{ raw: string[]; runId: string; conversationId: string }> {
  putOrgSetting(t.db, s.orgId, CLEARANCE_SETTING_KEY, { anthropic: cleared });
  const first = server.requests.length;
  const { kx } = testHarness(t.db, defaultToolRegistry(), { baseURL: server.url, limits: LIMITS });
  server.push(...responses);
  const userId = opts.userId ?? doctor.id;
  const run = kx.startRun({ userId, message, conversationId: opts.conversationId, page: opts.page });
  for await (const e of kx.subscribe(userId, run.runId)) {
    if (e.event.type !== EventType.CUSTOM) continue;
    const ev = e.event as { name: string; value: { toolCallId: string; argsHash: string } };
    if (ev.name === KINETIX_EVENTS.confirmRequired) kx.confirm(userId, ev.value.toolCallId, { approve: true, argsHash: ev.value.argsHash });
  }
  expect((await kx.waitForRun(run.runId)).status).toBe('completed');
  return { raw: server.requests.slice(first).map((r) => r.raw), ...run };
}

/** The tool_result blocks of the last user message of a raw request body, as text. */
function toolResults(raw: string): { content: string; is_error?: boolean }[] {
  const last = (JSON.parse(raw).messages as { content: unknown }[]).at(-1)!.content;
  return Array.isArray(last) ? (last as { type: string; content: string; is_error?: boolean }[]).filter((b) => b.type === 'tool_result') : [];
}

function athleteFor(name: string): string {
  return addRecord(t.db, s.orgId, s.userIds.owner, 'owner', 'athlete', {
    name,
    date_of_birth: '2002-02-02',
    sex: 'male',
    position: 'DF',
    squad_id: s.squadIds.U19,
    dominant_side: 'right',
    status: 'active',
    notes: '',
  });
}

describe('free text a person typed never rides in generated text (issue 9 §12)', () => {
  it('a deactivation reason is stored in its own restricted column, never in the summary: at clinical clearance list_activity, get_changeset and Undo send no trace of it', async () => {
    const reason = 'Vestibulocochlear-Z3 surgery, out until spring';
    const id = athleteFor('Barnaby Reasonless');
    // Writing the reason needs a provider cleared for it (a write above the clearance is refused); what follows runs at clinical.
    const one = await turn(clearanceUpTo('clinical-restricted'), 'Deactivate Barnaby.', [
      { toolUses: [{ name: 'deactivate_athlete', input: { id, reason } }] },
      { text: 'Deactivated.' },
    ]);
    const row = K.recentExecutedToolCalls(t.db, one.conversationId, 1)[0]!;
    const changesetId = row.changeset_id!;
    const two = await turn(
      clearanceUpTo('clinical'),
      'What changed, and undo it.',
      [
        {
          toolUses: [
            { name: 'list_activity', input: { record_id: id } },
            { name: 'get_changeset', input: { id: changesetId } },
          ],
        },
        { toolUses: [{ name: 'undo_changeset', input: { changeset_id: changesetId } }] },
        { toolUses: [{ name: 'list_activity', input: { record_id: id } }] },
        { text: 'Undone.' },
      ],
      { conversationId: one.conversationId },
    );
    const all = [...one.raw, ...two.raw].join('\n');
    // The model itself wrote the reason in its tool_use (its own words, in this run): every later
    // request must not carry it back in a result, a summary, the digest or the replay.
    const afterWrite = [...one.raw.slice(1), ...two.raw].map((r) => JSON.stringify(JSON.parse(r).system) + JSON.stringify(toolResults(r)));
    for (const body of afterWrite) for (const f of forms(reason)) expect(body.includes(f), `"${f}" reached the provider`).toBe(false);
    for (const f of ['Vestibulocochlear', 'out until spring']) expect(two.raw.join('\n')).not.toContain(f);
    // The summary is still there, generated from structured fields (clinical clearance sends summaries).
    expect(all).toContain('Deactivate athlete Barnaby Reasonless');
    expect(two.raw.join('\n')).toContain('Undo: Deactivate athlete Barnaby Reasonless');
    // The reason is kept, in its own column, where the app shows it and Undo clears it.
    expect(K.getToolCall(t.db, row.id)!.status).toBe('executed');
    const stored = listRows<{ id: string; deactivation_reason: string; status: string }>(t.db, 'athlete', s.orgId, {
      eq: { id },
    })[0]!;
    expect(stored).toMatchObject({ status: 'active', deactivation_reason: '' });
    const cs = getChangeset(t.db, s.orgId, changesetId)!;
    expect(cs.summary).toBe('Deactivate athlete Barnaby Reasonless');
    expect(cs.changes[0]).toMatchObject({ after: { status: 'deactivated', deactivation_reason: reason } });
  });

  it('the reason reaches a provider only through the untrusted read_athlete_notes tool, and only when cleared for clinical-restricted', async () => {
    const reason = 'Pericardial-W8 effusion';
    const id = athleteFor('Cosmo Notesworth');
    const one = await turn(clearanceUpTo('clinical-restricted'), 'Deactivate Cosmo.', [
      { toolUses: [{ name: 'deactivate_athlete', input: { id, reason } }] },
      { toolUses: [{ name: 'get_athlete', input: { id } }] },
      { toolUses: [{ name: 'read_athlete_notes', input: { id } }] },
      { text: 'ok' },
    ]);
    // get_athlete: record text is a pointer, not the text.
    expect(toolResults(one.raw[2]!)[0]!.content).not.toContain('Pericardial');
    expect(toolResults(one.raw[2]!)[0]!.content).toContain(RECORD_TEXT_OMITTED);
    // read_athlete_notes: the text, in the data envelope; the gate then drops high-privilege tools.
    expect(toolResults(one.raw[3]!)[0]!.content).toContain(reason);
    const below = await turn(clearanceUpTo('clinical'), 'Read the notes again.', [
      { toolUses: [{ name: 'read_athlete_notes', input: { id } }] },
      { text: 'ok' },
    ]);
    expect(below.raw.join('\n')).not.toContain('Pericardial');
    expect(toolResults(below.raw[1]!)[0]!.content).toContain(JSON.stringify(withheldMarker('clinical-restricted')).slice(1, -1));
  });
});

describe('search and filter inputs on a field above the clearance are refused before the query runs (issue 9 §12)', () => {
  it('list_athletes {search} at the default clearance: refused with a clear message; no count, no id, no row is sent', async () => {
    const r = await turn(clearanceUpTo('internal'), 'Is there a Zephyrine?', [
      {
        toolUses: [
          { name: 'list_athletes', input: { search: 'Zeph' } },
          { name: 'list_athletes', input: { search: 'Zeph', squad_id: s.squadIds.U19 } },
        ],
      },
      { text: 'I cannot search by name.' },
    ]);
    const results = toolResults(r.raw[1]!);
    expect(results).toHaveLength(2);
    for (const res of results) {
      expect(res.is_error).toBe(true);
      expect(res.content).toContain('list_athletes was not run');
      expect(res.content).toContain('not cleared to search or filter on \\"search\\" (personal)');
      expect(res.content).not.toContain(athleteId);
      expect(res.content).not.toContain('total');
    }
    const trace = K.listTrace(t.db, r.runId).map((x) => JSON.parse(x.data_json) as { decision?: string });
    expect(trace.filter((x) => x.decision === 'filter_not_cleared')).toHaveLength(2);
    // Cleared for personal: the same search runs.
    const ok = await turn(clearanceUpTo('personal'), 'Is there a Zephyrine?', [
      { toolUses: [{ name: 'list_athletes', input: { search: 'Zeph' } }] },
      { text: 'Yes.' },
    ]);
    expect(toolResults(ok.raw[1]!)[0]!.content).toContain(athleteId);
  });

  it('list_injuries {status} below clinical: refused (it would say which athletes have an open injury); left at its default it runs', async () => {
    const r = await turn(clearanceUpTo('personal'), 'Open injuries?', [
      {
        toolUses: [
          { name: 'list_injuries', input: { athlete_id: athleteId, status: 'open' } },
          { name: 'list_injuries', input: { athlete_id: athleteId, status: 'all' } },
        ],
      },
      { text: 'ok' },
    ]);
    const [filtered, unfiltered] = toolResults(r.raw[1]!);
    expect(filtered!.is_error).toBe(true);
    expect(filtered!.content).toContain('\\"status\\" (clinical)');
    expect(filtered!.content).not.toContain(injuryId);
    expect(unfiltered!.is_error).toBeFalsy();
    expect(unfiltered!.content).toContain(injuryId);
    expect(unfiltered!.content).toContain(JSON.stringify(withheldMarker('clinical')).slice(1, -1));
    const cleared = await turn(clearanceUpTo('clinical'), 'Open injuries?', [
      { toolUses: [{ name: 'list_injuries', input: { athlete_id: athleteId, status: 'open' } }] },
      { text: 'ok' },
    ]);
    expect(toolResults(cleared.raw[1]!)[0]!.content).toContain(PLANTED.clinical[0]);
  });

  it('the same refusal over MCP, under the org’s `mcp` clearance', async () => {
    putOrgSetting(t.db, s.orgId, CLEARANCE_SETTING_KEY, {});
    const session = new McpSession({ db: t.db, token: issueMcpToken(t.db, s.userIds.doctor).token });
    const r = await session.callTool('list_athletes', { search: 'Zeph' });
    expect(r.isError).toBe(true);
    expect(r.content[0]!.text).toContain('not cleared to search or filter on \\"search\\" (personal)');
    expect(r.content[0]!.text).not.toContain(athleteId);
    putOrgSetting(t.db, s.orgId, CLEARANCE_SETTING_KEY, { mcp: clearanceUpTo('personal') });
    const ok = await new McpSession({ db: t.db, token: issueMcpToken(t.db, s.userIds.doctor).token }).callTool('list_athletes', { search: 'Zeph' });
    expect(ok.isError).toBeFalsy();
    expect(ok.content[0]!.text).toContain(athleteId);
  });
});

describe('page context: only slugs and anchors of shipped help pages (issue 9 §12)', () => {
  it('a help-shaped path with free text is not sent; a real help page is', async () => {
    const bad = await turn(clearanceUpTo('internal'), 'hi', [{ text: 'ok' }], { page: '/help/zephyrine-quillfeather-acl' });
    expect(bad.raw[0]!.toLowerCase()).not.toContain('zephyrine');
    expect(bad.raw[0]).toContain('page context that is not an app route');
    const anchor = await turn(clearanceUpTo('internal'), 'hi', [{ text: 'ok' }], { page: '/help/using-kinetix#zephyrine' });
    expect(anchor.raw[0]!.toLowerCase()).not.toContain('zephyrine');
    const good = await turn(clearanceUpTo('internal'), 'hi', [{ text: 'ok' }], { page: '/help/using-kinetix#limits' });
    expect(good.raw[0]).toContain('/help/using-kinetix#limits');
  });
});

describe('history replayed after the clearance is lowered is re-masked under the current clearance (issue 9 §12)', () => {
  it("tool results and the model's own arguments in the digest are re-masked; an answer written under the higher clearance is not replayed; the user's own prompt is", async () => {
    const prompt = 'Tell me about the athlete whose name starts with Zeph (my own words).';
    const answer = `${PLANTED.personal[0]} has a ${PLANTED.clinical[0]} injury; notes say ${PLANTED['clinical-restricted'][0]}.`;
    const one = await turn(clearanceUpTo('clinical-restricted'), prompt, [
      {
        toolUses: [
          { name: 'list_athletes', input: { search: 'Zephyrine Quill' } },
          { name: 'get_injury', input: { id: injuryId } },
        ],
      },
      { toolUses: [{ name: 'read_injury_notes', input: { id: injuryId } }] },
      { text: answer },
    ]);
    expect(one.raw.join('\n')).toContain(PLANTED.clinical[0]);
    const two = await turn(clearanceUpTo('internal'), 'And again?', [{ text: 'As before.' }], { conversationId: one.conversationId });
    const body = two.raw[0]!;
    const values = [...PLANTED.personal, ...PLANTED.clinical, ...PLANTED['clinical-restricted'], 'Zephyrine Quill'];
    for (const v of values)
      for (const f of forms(v).filter((x) => x !== 'Tell me about')) expect(body.includes(f), `"${f}" (of "${v}") was replayed`).toBe(false);
    const sent = JSON.parse(body) as { system: unknown; messages: { role: string; content: unknown }[] };
    // The earlier answer: withheld whole, with the reason.
    expect(sent.messages.find((m) => m.role === 'assistant')!.content).toMatch(
      /^\[withheld: an earlier answer of this conversation, written when this model provider was cleared for personal, clinical, clinical-restricted data/,
    );
    // The digest: the search argument and the results under today's clearance.
    const system = JSON.stringify(sent.system);
    expect(system).toContain('list_athletes(');
    expect(system).toContain(JSON.stringify(JSON.stringify(withheldMarker('personal')).slice(1, -1)).slice(1, -1));
    // The user's own prompt is replayed as typed: what they chose to send (help page, "What data the assistant may see").
    expect(sent.messages[0]).toEqual({ role: 'user', content: prompt });
    // Raised again: the answer is replayed.
    const three = await turn(clearanceUpTo('clinical-restricted'), 'Once more?', [{ text: 'ok' }], { conversationId: one.conversationId });
    expect(three.raw[0]).toContain(PLANTED.clinical[0]);
  });
});

describe('joint-angle readings are clinical: a capture’s series, repetition peaks and condition details reach only a provider cleared for clinical (issue 9 §12)', () => {
  /**
   * The demo capture session (seeded) and what of its readings a request could carry: each series'
   * first six angles as JSON writes them, each reading's full-precision value, the condition detail.
   */
  function demoCapture(): { id: string; readings: string[] } {
    const session = listRows<{ id: string }>(t.db, 'capture_session', s.orgId, { eq: { athlete_id: s.linkedAthleteId }, limit: 5 })[0]!;
    const readings = [
      ...DEMO_CAPTURE.angle_series.series.map((x) => x.values.slice(0, 6).join(',')),
      ...DEMO_CAPTURE.metrics.flatMap((m) => (m.value_deg === null ? [] : [String(m.value_deg)])),
      'values reach',
    ];
    return { id: session.id, readings };
  }
  /** The readings found in `text`, and any peak or angle list with a number in it (JSON-escaped or not). */
  const leaked = (text: string, readings: string[]) => [
    ...readings.filter((v) => text.includes(v)),
    ...(text.match(/(peak_deg|values|value_deg)\\*":\s*\[?-?\d/g) ?? []),
  ];

  it('get_capture_results at personal clearance: no angle, no peak, no condition detail in the bytes sent; at clinical they are sent', async () => {
    const { id, readings } = demoCapture();
    const r = await turn(clearanceUpTo('personal'), 'How did the balance test go?', [
      { toolUses: [{ name: 'get_capture_results', input: { id } }] },
      { text: 'ok' },
    ]);
    const sent = r.raw.join('\n');
    expect(leaked(sent, readings)).toEqual([]);
    const result = toolResults(r.raw[1]!)[0]!;
    expect(result.is_error).toBeFalsy();
    expect(result.content).toContain(JSON.stringify(withheldMarker('clinical')).slice(1, -1));
    // The session's bookkeeping still reaches the model: it can say a session exists and what was withheld.
    expect(result.content).toContain(id);
    const cleared = await turn(clearanceUpTo('clinical'), 'How did the balance test go?', [
      { toolUses: [{ name: 'get_capture_results', input: { id } }] },
      { text: 'ok' },
    ]);
    const clearedText = toolResults(cleared.raw[1]!)[0]!.content;
    expect(leaked(clearedText, readings).length).toBeGreaterThan(20);
    expect(clearedText).toContain('values reach');
  });

  it('the same over MCP under the org’s `mcp` clearance', async () => {
    const { id, readings } = demoCapture();
    putOrgSetting(t.db, s.orgId, CLEARANCE_SETTING_KEY, { mcp: clearanceUpTo('personal') });
    const r = await new McpSession({ db: t.db, token: issueMcpToken(t.db, s.userIds.doctor).token }).callTool('get_capture_results', { id });
    expect(r.isError).toBeFalsy();
    expect(leaked(JSON.stringify(r), readings)).toEqual([]);
    expect(r.content[0]!.text).toContain(withheldMarker('clinical'));
    putOrgSetting(t.db, s.orgId, CLEARANCE_SETTING_KEY, { mcp: clearanceUpTo('clinical') });
    const ok = await new McpSession({ db: t.db, token: issueMcpToken(t.db, s.userIds.doctor).token }).callTool('get_capture_results', { id });
    expect(leaked(ok.content[0]!.text, readings).length).toBeGreaterThan(20);
  });
});

describe('a write carrying a value above the clearance is refused before it is planned: no guess is confirmed (issue 9 §12)', () => {
  /** The tool results' text with the tool's own name, ids and field paths taken out: what could differ between a right and a wrong guess. */
  const shape = (text: string) => text.replaceAll(athleteId, 'ID').replaceAll(injuryId, 'ID');

  it('update_athlete {name} and update_injury {side, severity} below the clearance: refused alike for a right and a wrong guess; nothing proposed', async () => {
    const r = await turn(clearanceUpTo('internal'), 'Is the name right?', [
      {
        toolUses: [
          { name: 'update_athlete', input: { id: athleteId, name: PLANTED.personal[0] } },
          { name: 'update_athlete', input: { id: athleteId, name: 'Wrong Guess' } },
          { name: 'update_athlete', input: { id: athleteId, date_of_birth: '2003-07-19', sex: 'female' } },
        ],
      },
      { text: 'I cannot check that.' },
    ]);
    const [right, wrong, dob] = toolResults(r.raw[1]!);
    for (const res of [right!, wrong!, dob!]) {
      expect(res.is_error).toBe(true);
      expect(res.content).toContain('update_athlete was not run and nothing was proposed');
      expect(res.content).toContain('make this change in the app');
      expect(res.content).not.toContain('Nothing to change');
    }
    expect(right!.content).toContain('\\"name\\" (personal)');
    expect(shape(right!.content)).toBe(shape(wrong!.content));
    expect(dob!.content).toContain('\\"date_of_birth\\" (personal), \\"sex\\" (personal)');
    const trace = K.listTrace(t.db, r.runId).map((x) => JSON.parse(x.data_json) as { decision?: string });
    expect(trace.filter((x) => x.decision === 'write_not_cleared')).toHaveLength(3);
    expect(K.listTrace(t.db, r.runId).some((x) => x.data_json.includes('confirm_required'))).toBe(false);

    const inj = await turn(clearanceUpTo('personal'), 'Is it the left side?', [
      {
        toolUses: [
          { name: 'update_injury', input: { id: injuryId, side: 'left', severity: 'moderate', status: 'open' } },
          { name: 'update_injury', input: { id: injuryId, side: 'right' } },
        ],
      },
      { text: 'ok' },
    ]);
    const [a, b] = toolResults(inj.raw[1]!);
    expect(a!.content).toContain('\\"side\\" (clinical), \\"severity\\" (clinical), \\"status\\" (clinical)');
    expect(b!.content).toContain('\\"side\\" (clinical)');
    for (const res of [a!, b!]) expect(res.content).not.toContain('Nothing to change');

    // Cleared for every class: the write plans as before, and a service's refusal is worded in full ("Nothing to change").
    const ok = await turn(clearanceUpTo('clinical-restricted'), 'Same name?', [
      { toolUses: [{ name: 'update_athlete', input: { id: athleteId, name: PLANTED.personal[0] } }] },
      { text: 'ok' },
    ]);
    expect(toolResults(ok.raw[1]!)[0]!.content).toContain('Nothing to change');
  });

  it('the same over MCP: no proposal, no diff, the same reply for a right and a wrong guess', async () => {
    putOrgSetting(t.db, s.orgId, CLEARANCE_SETTING_KEY, { mcp: clearanceUpTo('personal') });
    const session = new McpSession({ db: t.db, token: issueMcpToken(t.db, s.userIds.doctor).token });
    const right = await session.callTool('update_injury', { id: injuryId, side: 'left', severity: 'moderate' });
    const wrong = await session.callTool('update_injury', { id: injuryId, side: 'right', severity: 'severe' });
    for (const r of [right, wrong]) {
      expect(r.isError).toBe(true);
      expect(r.content[0]!.text).toContain('update_injury was not run and nothing was proposed');
      expect(r.content[0]!.text).not.toContain('diff');
      expect(r.content[0]!.text).not.toContain('proposal_id');
    }
    expect(shape(right.content[0]!.text)).toBe(shape(wrong.content[0]!.text));
    putOrgSetting(t.db, s.orgId, CLEARANCE_SETTING_KEY, { mcp: clearanceUpTo('internal') });
    const name = await new McpSession({ db: t.db, token: issueMcpToken(t.db, s.userIds.doctor).token }).callTool('update_athlete', {
      id: athleteId,
      name: PLANTED.personal[0],
      sex: 'female',
    });
    expect(name.isError).toBe(true);
    expect(name.content[0]!.text).toContain('\\"name\\" (personal), \\"sex\\" (personal)');
    // Cleared: the write is proposed as before.
    putOrgSetting(t.db, s.orgId, CLEARANCE_SETTING_KEY, { mcp: clearanceUpTo('clinical') });
    const proposed = await new McpSession({ db: t.db, token: issueMcpToken(t.db, s.userIds.doctor).token }).callTool('update_injury', {
      id: injuryId,
      severity: 'severe',
    });
    expect(proposed.isError).toBeFalsy();
    expect(proposed.content[0]!.text).toContain('waiting_for_approval');
  });
});

describe('a service error that quotes stored values reaches only a provider cleared for every class (issue 9 §12)', () => {
  it("log_session_load dated before the athlete's birth: below full clearance the name and date of birth are not sent, the code and field are; cleared, the full reason is", async () => {
    const name = 'Zephyrine Quillfeather';
    const id = athleteFor(name);
    const call = (): Parameters<ScriptedAnthropic['push']> => [
      { toolUses: [{ name: 'log_session_load', input: { athlete_id: id, date: '1990-01-01', duration_min: 60, rpe: 5 } }] },
      { text: 'ok' },
    ];
    for (const cleared of [clearanceUpTo('internal'), clearanceUpTo('clinical')]) {
      const r = await turn(cleared, 'Log it', call(), { userId: s.userIds.physio });
      const [res] = toolResults(r.raw[1]!);
      expect(res!.is_error).toBe(true);
      expect(res!.content).toContain('Validation');
      expect(res!.content).toContain('the user sees it in the app');
      for (const raw of r.raw) {
        expect(raw).not.toContain(name);
        expect(raw).not.toContain('2002-02-02');
      }
      // The user still sees the full reason: the audit row keeps it.
      const row = K.listToolCalls(t.db, r.runId)[0]!;
      expect(row.error_json).toContain(name);
    }
    const full = await turn(clearanceUpTo('clinical-restricted'), 'Log it', call(), { userId: s.userIds.physio });
    expect(toolResults(full.raw[1]!)[0]!.content).toContain(`${name}'s date of birth (2002-02-02)`);
  });

  it('the same over MCP, under the org’s `mcp` clearance', async () => {
    const name = 'Oberon Vanishwell';
    const id = athleteFor(name);
    const input = { athlete_id: id, date: '1990-01-01', duration_min: 60, rpe: 5 };
    putOrgSetting(t.db, s.orgId, CLEARANCE_SETTING_KEY, { mcp: clearanceUpTo('personal') });
    const withheld = await new McpSession({ db: t.db, token: issueMcpToken(t.db, s.userIds.physio).token }).callTool('log_session_load', input);
    expect(withheld.isError).toBe(true);
    expect(withheld.content[0]!.text).toContain('Validation');
    expect(withheld.content[0]!.text).not.toContain(name);
    expect(withheld.content[0]!.text).not.toContain('2002-02-02');
    putOrgSetting(t.db, s.orgId, CLEARANCE_SETTING_KEY, { mcp: clearanceUpTo('clinical-restricted') });
    const full = await new McpSession({ db: t.db, token: issueMcpToken(t.db, s.userIds.physio).token }).callTool('log_session_load', input);
    expect(full.content[0]!.text).toContain(name);
    putOrgSetting(t.db, s.orgId, CLEARANCE_SETTING_KEY, { mcp: clearanceUpTo('internal') });
  });
});
