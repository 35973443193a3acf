/**
 * The MCP server end to end: the MCP SDK's own client talks to `tsx main/mcp/server.ts` over
 * stdio, against a temporary seeded SQLite file. Identity comes only from the token.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listActivity } from '../data/changesets';
import type { Db } from '../data/db';
import { openDb } from '../data/db';
import { countRows, listRows } from '../data/rows';
import type { SeedSummary } from '../data/seed';
import { seedDemo } from '../data/seed';
import { defaultToolRegistry } from '../kinetix/catalogue';
import { approveProposal, getProposal, listProposals } from '../kinetix/proposals';
import { toolInputSchema, toolOutputSchema } from '../kinetix/tool';
import { exitCodeFor } from '../cli/exit-codes';
import { callVerb } from '../services';
import { issueMcpToken, revokeTokenAs } from './tokens';
import { sqlite } from '../data/sqlite';
import { allowWithheld } from './session';
import { CLEARANCE_SETTING_KEY, DEFAULT_CLEARANCE, withheldMarker } from '../kinetix/classification';
import { clearanceUpTo } from '../../models/classification';
import { putOrgSetting } from '../data/identity';

const ROOT = resolve(__dirname, '../..');
const TSX = resolve(ROOT, 'node_modules/.bin/tsx');
const SERVER = resolve(ROOT, 'main/mcp/server.ts');

let dir: string;
let path: string;
let db: Db;
let seed: SeedSummary;
const clients: Client[] = [];

async function connect(token: string): Promise<Client> {
  const transport = new StdioClientTransport({
    command: TSX,
    args: [SERVER, '--db', path, '--token', token],
    cwd: ROOT,
    env: getDefaultEnvironment(),
    stderr: 'pipe',
  });
  // The client says who it is in clientInfo; the server must not care.
  const client = new Client({ name: `owner@${'kestrelvale.test'}`, version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** Run a process to completion with empty stdin. */
function run(cmd: string, args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const p = spawn(cmd, args, { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    p.on('error', fail);
    p.on('close', (status) => done({ status, stdout, stderr }));
    p.stdin.end();
  });
}

type ToolResult = { isError?: boolean; structuredContent?: Record<string, unknown>; content: { type: string; text?: string }[] };
// Test helper: the tool's JSON text, read loosely by the assertions that follow.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function body(r: unknown): any {
  const res = r as ToolResult;
  const text = res.content[0]?.text;
  return text ? JSON.parse(text) : null;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ai-mcp-'));
  path = join(dir, 'clinic.sqlite');
  db = openDb(path);
  seed = seedDemo(db, { seed: 1 });
});

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  db?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('MCP server over stdio (SDK client)', () => {
  it("lists the physio's tools with annotations and JSON Schema; the athlete sees only its few", async () => {
    const physio = await connect(issueMcpToken(db, seed.userIds.physio, { label: 'test physio' }).token);
    const athlete = await connect(issueMcpToken(db, seed.userIds.athlete).token);
    const registry = defaultToolRegistry();
    const [p, a] = await Promise.all([physio.listTools(), athlete.listTools()]);
    const pNames = p.tools.map((t) => t.name).sort();
    const aNames = a.tools.map((t) => t.name).sort();
    const expected = (role: string) =>
      registry
        .available(role)
        .filter((t) => t.risk !== 'destructive' && t.name !== 'open_page')
        .map((t) => t.name)
        .sort();
    expect(pNames).toEqual(expected('physio'));
    expect(aNames).toEqual(expected('athlete'));
    expect(aNames.length).toBeLessThan(pNames.length / 2);
    expect(aNames).not.toContain('get_workload_acwr');
    expect(aNames).not.toContain('log_session_load');
    expect(pNames).toContain('log_session_load');
    // No destructive tool is ever listed.
    const destructive = registry
      .all()
      .filter((t) => t.risk === 'destructive')
      .map((t) => t.name);
    for (const n of [...destructive, 'delete_video']) expect(pNames).not.toContain(n);

    const acwr = p.tools.find((t) => t.name === 'get_workload_acwr')!;
    expect(acwr.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true });
    expect(acwr.inputSchema).toEqual(toolInputSchema(registry.get('get_workload_acwr')!));
    // A read lists its verb's output schema (models/verbs.ts), field descriptions included; the
    // SDK client validates every structured result of these tests against it.
    // With the default `mcp` clearance (internal only), a field of a class it lacks may also be the withheld marker (a string).
    const acwrTool = registry.get('get_workload_acwr')!;
    expect(acwr.outputSchema).toEqual(allowWithheld(toolOutputSchema(acwrTool)!, acwrTool.tables, DEFAULT_CLEARANCE));
    expect(acwr.outputSchema).not.toEqual(toolOutputSchema(acwrTool));
    expect((acwr.outputSchema as { properties: Record<string, unknown> }).properties.athlete_name).toMatchObject({
      anyOf: [{ type: 'string' }, { type: 'string' }],
    });
    expect(JSON.stringify(acwr.outputSchema)).toContain('Acute:chronic ratio');
    // Annotations from real behaviour (issue 9 §9): every update, undo and deactivate tool is destructive; additive writes are not; nothing is open-world.
    const changesExisting = p.tools.filter((t) => /^(update|undo|deactivate|signoff|bulk_update|rotate)_/.test(t.name) || t.name === 'submit_wellness');
    expect(changesExisting.map((t) => t.name)).toEqual(expect.arrayContaining(['update_athlete', 'deactivate_athlete', 'undo_changeset', 'update_injury']));
    for (const t of changesExisting) expect(t.annotations, t.name).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: false });
    expect(p.tools.find((t) => t.name === 'deactivate_athlete')!.annotations).toMatchObject({ title: 'Delete (deactivate) athlete', destructiveHint: true });
    for (const t of p.tools.filter((x) => /^(create|record|log)_/.test(x.name))) expect(t.annotations, t.name).toMatchObject({ destructiveHint: false });
    for (const t of p.tools) expect(t.annotations, t.name).toMatchObject({ openWorldHint: false });
    const log = p.tools.find((t) => t.name === 'log_session_load')!;
    expect(log.outputSchema).toBeUndefined();
    expect(log.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: false, title: registry.get('log_session_load')!.title });
    expect(log.description).toMatch(/approves it in the Athlete Intelligence app/);
  });

  it("runs a read tool (get_workload_acwr) as the token's user", async () => {
    const physio = clients[0]!;
    const r = (await physio.callTool({ name: 'get_workload_acwr', arguments: { athlete_id: seed.linkedAthleteId } })) as ToolResult;
    expect(r.isError).toBeFalsy();
    const out = body(r);
    expect(out.athlete_id).toBe(seed.linkedAthleteId);
    expect(out.athlete_name).toBe(withheldMarker('personal'));
    expect(out.results.length).toBe(2);
    expect(r.structuredContent).toEqual(out);
    // Audited like an assistant tool call (kinetix.md §8): a run and a tool-call row in the server's database.
    const row = sqlite(db)
      .prepare(
        `SELECT t.status, t.args_json, r.status AS run_status FROM kinetix_tool_call t JOIN kinetix_run r ON r.id = t.run_id WHERE t.tool_name = 'get_workload_acwr' AND r.user_id = ?`,
      )
      .get(seed.userIds.physio);
    expect(row).toEqual({ status: 'executed', args_json: JSON.stringify({ athlete_id: seed.linkedAthleteId }), run_status: 'completed' });
  });

  it('a write tool (log_session_load over a squad) returns a proposal id and the N-row diff, and writes nothing', async () => {
    const physio = clients[0]!;
    const squadId = seed.squadIds.U19;
    const members = listRows(db, 'athlete', seed.orgId, { eq: { squad_id: squadId, status: 'active' }, limit: 1000 }).length;
    const before = countRows(db, 'session_load', seed.orgId);
    const activityBefore = listActivity(db, seed.orgId, { limit: 1000 }).length;
    const proposalsBefore = listProposals(db, seed.userIds.physio).length;
    // The demo holds today's squad loads: without the acknowledgement the service refuses the plan
    // (Conflict SameDayExists); no proposal is stored, nothing written.
    const dup = (await physio.callTool({
      name: 'log_session_load',
      arguments: { squad_id: squadId, date: seed.today, duration_min: 60, rpe: 6 },
    })) as ToolResult;
    expect(dup.isError).toBe(true);
    expect(body(dup).error.code).toBe('Conflict');
    expect(listProposals(db, seed.userIds.physio)).toHaveLength(proposalsBefore);
    const r = (await physio.callTool({
      name: 'log_session_load',
      arguments: { squad_id: squadId, date: seed.today, duration_min: 60, rpe: 6, second_session_same_day: true },
    })) as ToolResult;
    expect(r.isError).toBeFalsy();
    const out = body(r);
    expect(out.status).toBe('waiting_for_approval');
    expect(out.proposal_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(out.rows).toBe(members);
    expect(out.diff).toHaveLength(members);
    expect(out.diff[0]).toMatchObject({ op: 'insert', table: 'session_load', before: null, after: { rpe: 6, duration_min: 60, load_au: 360 } });
    expect(out.policy.verdict).toBe('allow');
    expect(out.message).toMatch(/Nothing was changed.*waits for approval in the Athlete Intelligence app/);
    expect(countRows(db, 'session_load', seed.orgId)).toBe(before);
    expect(listActivity(db, seed.orgId, { limit: 1000 }).length).toBe(activityBefore);
    // Stored for the app: source mcp, same content hash; a person approves it there.
    const stored = getProposal(db, seed.userIds.physio, out.proposal_id);
    expect(stored).toMatchObject({
      source: 'mcp',
      status: 'proposed',
      toolName: 'log_session_load',
      contentHash: out.content_hash,
      runId: expect.stringMatching(/^mcp:/),
    });
    const applied = approveProposal(db, { approverUserId: seed.userIds.physio, changesetId: out.proposal_id, contentHash: out.content_hash });
    expect(applied.changeset.changes).toHaveLength(members);
    expect(countRows(db, 'session_load', seed.orgId)).toBe(before + members);
    // The activity row says who prepared it, and links no (non-existent) run trace.
    const act = listActivity(db, seed.orgId, { limit: 1000 }).find((a) => a.changeset_id === out.proposal_id);
    expect(act).toMatchObject({ via_assistant: true, run_id: null });
    expect(act?.actor_name).toMatch(/ via MCP client$/);
  });

  it('a 25% rate rise waits for an owner; a policy denial and a one-time secret are refused with nothing stored', async () => {
    const physio = clients[0]!;
    const folder = listRows<{ id: string; name: string }>(db, 'rate_folder', seed.orgId, { eq: { name: 'Private' }, limit: 1 })[0]!;
    const r = body(await physio.callTool({ name: 'bulk_update_rates', arguments: { folder_id: folder.id, pct: 25, item_type: 'treatment' } }));
    expect(r).toMatchObject({ status: 'waiting_for_approval', approval: 'needs_owner', policy: { verdict: 'needs_owner', approver_role: 'owner' } });
    expect(r.diff[0]).toMatchObject({
      op: 'update',
      table: 'rate_item',
      before: { price_cents: expect.any(Number) },
      after: { price_cents: expect.any(Number) },
    });
    expect(r.message).toMatch(/by an owner/);
    // Over 50 records: the policy denies it; nothing is stored.
    const squad = callVerb({ db, userId: seed.userIds.physio }, 'squads.create', { name: 'Academy', season: '2026' }) as {
      changeset: { changes: { id: string }[] };
    };
    const academy = squad.changeset.changes[0]!.id;
    for (let i = 0; i < 51; i++)
      callVerb({ db, userId: seed.userIds.physio }, 'athletes.create', {
        name: `Academy Player ${i}`,
        date_of_birth: '2008-01-01',
        sex: 'female',
        squad_id: academy,
      });
    const proposalsBefore = listProposals(db, seed.userIds.physio).length;
    const denied = (await physio.callTool({
      name: 'log_session_load',
      arguments: { squad_id: academy, date: seed.today, duration_min: 30, rpe: 3 },
    })) as ToolResult;
    expect(denied.isError).toBe(true);
    expect(body(denied).error).toMatchObject({
      code: 'Forbidden',
      policy: { verdict: 'deny', decisions: [expect.objectContaining({ code: 'too_many_records' })] },
    });
    expect(listProposals(db, seed.userIds.physio)).toHaveLength(proposalsBefore);
    const athlete = clients[1]!;
    // A device's name is personal (it often names the athlete): below that clearance the write is refused before planning.
    const below = (await athlete.callTool({ name: 'register_device', arguments: { name: 'My watch', kind: 'wearable' } })) as ToolResult;
    expect(body(below).error).toMatchObject({ code: 'Validation', message: expect.stringContaining('"name" (personal)') });
    putOrgSetting(db, seed.orgId, CLEARANCE_SETTING_KEY, { mcp: clearanceUpTo('personal') });
    const dev = (await athlete.callTool({ name: 'register_device', arguments: { name: 'My watch', kind: 'wearable' } })) as ToolResult;
    putOrgSetting(db, seed.orgId, CLEARANCE_SETTING_KEY, {});
    expect(body(dev).error).toMatchObject({ code: 'Forbidden', message: expect.stringMatching(/shown only once/) });
    expect(listProposals(db, seed.userIds.athlete)).toHaveLength(0);
  });

  it('a destructive or fabricated tool name fails as unknown; nothing runs', async () => {
    const physio = clients[0]!;
    for (const name of [
      'delete_video',
      'apply_changeset',
      ...defaultToolRegistry()
        .all()
        .filter((t) => t.risk === 'destructive')
        .map((t) => t.name),
    ]) {
      const r = (await physio.callTool({ name, arguments: {} })) as ToolResult;
      expect(r.isError).toBe(true);
      expect(body(r).error).toMatchObject({ code: 'NotFound', message: expect.stringMatching(/Unknown tool/) });
    }
    // Out of role for the athlete: unknown too.
    const athlete = clients[1]!;
    const r = (await athlete.callTool({
      name: 'log_session_load',
      arguments: { athlete_id: seed.linkedAthleteId, date: seed.today, duration_min: 10, rpe: 2 },
    })) as ToolResult;
    expect(body(r).error.code).toBe('NotFound');
  });

  it("another org's id is NotFound; bad input is Validation; no stack ever", async () => {
    const physio = clients[0]!;
    const other = listRows<{ id: string }>(db, 'athlete', seed.secondOrgId, { limit: 1 })[0]!;
    const r = (await physio.callTool({ name: 'get_athlete', arguments: { id: other.id } })) as ToolResult;
    expect(r.isError).toBe(true);
    // A service's error text can quote stored values: below full clearance only its code is sent.
    expect(body(r).error.code).toBe('NotFound');
    expect(body(r).error.message).toContain('the user sees it in the app');
    const acwr = (await physio.callTool({ name: 'get_workload_acwr', arguments: { athlete_id: other.id } })) as ToolResult;
    expect(body(acwr).error.code).toBe('NotFound');
    const bad = (await physio.callTool({ name: 'get_workload_acwr', arguments: { athlete_id: 'not-an-id' } })) as ToolResult;
    expect(body(bad).error.code).toBe('Validation');
    for (const x of [r, acwr, bad]) expect(x.content[0]!.text).not.toMatch(/\bat .*\.ts:\d+|node_modules/);
  });

  it('a client-supplied user or org changes nothing', async () => {
    const physio = clients[0]!;
    // Extra identity arguments are refused by the strict input schema…
    const r = (await physio.callTool({ name: 'list_athletes', arguments: { org_id: seed.secondOrgId, user_id: seed.userIds.owner, limit: 5 } })) as ToolResult;
    expect(body(r).error.code).toBe('Validation');
    // …and identity in _meta is ignored: the athlete's token still reads only the linked athlete.
    const athlete = clients[1]!;
    const meta = { userId: seed.userIds.owner, orgId: seed.secondOrgId, user: 'owner@kestrelvale.test' };
    const own = body(await athlete.callTool({ name: 'list_athletes', arguments: { limit: 50 }, _meta: meta }));
    expect(own.athletes.map((a: { id: string }) => a.id)).toEqual([seed.linkedAthleteId]);
    const acwr = (await athlete.callTool({ name: 'get_workload_acwr', arguments: { athlete_id: seed.linkedAthleteId }, _meta: meta })) as ToolResult;
    expect(body(acwr).error.code).toBe('NotFound');
  });

  it('deactivation and revocation take effect at the next call', async () => {
    const { token, info } = issueMcpToken(db, seed.userIds.coach);
    const coach = await connect(token);
    const ok = (await coach.callTool({ name: 'get_workload_acwr', arguments: { athlete_id: seed.linkedAthleteId } })) as ToolResult;
    expect(ok.isError).toBeFalsy();
    callVerb({ db, userId: seed.userIds.owner }, 'users.update', { id: seed.userIds.coach, active: false });
    const after = (await coach.callTool({ name: 'get_workload_acwr', arguments: { athlete_id: seed.linkedAthleteId } })) as ToolResult;
    expect(after.isError).toBe(true);
    expect(body(after).error.code).toBe('Unauthenticated');
    callVerb({ db, userId: seed.userIds.owner }, 'users.update', { id: seed.userIds.coach, active: true });
    expect((await coach.callTool({ name: 'get_workload_acwr', arguments: { athlete_id: seed.linkedAthleteId } })).isError).toBeFalsy();
    revokeTokenAs(db, seed.userIds.coach, info.id);
    const revoked = (await coach.callTool({ name: 'get_workload_acwr', arguments: { athlete_id: seed.linkedAthleteId } })) as ToolResult;
    expect(body(revoked).error).toMatchObject({ code: 'Unauthenticated', message: expect.stringMatching(/revoked/) });
    // A role change ends a connected client's token at its next call, as it ends sessions and runs (issue 13 re-review).
    const second = await connect(issueMcpToken(db, seed.userIds.coach).token);
    expect((await second.callTool({ name: 'get_workload_acwr', arguments: { athlete_id: seed.linkedAthleteId } })).isError).toBeFalsy();
    callVerb({ db, userId: seed.userIds.owner }, 'users.update', { id: seed.userIds.coach, role: 'analyst' });
    try {
      const changed = (await second.callTool({ name: 'get_workload_acwr', arguments: { athlete_id: seed.linkedAthleteId } })) as ToolResult;
      expect(body(changed).error).toMatchObject({ code: 'Unauthenticated', message: expect.stringMatching(/changed since the token was issued/) });
    } finally {
      callVerb({ db, userId: seed.userIds.owner }, 'users.update', { id: seed.userIds.coach, role: 'coach' });
    }
  });

  it('a revoked, unknown or malformed token refuses to start (stderr, exit 7: Unauthenticated, as the CLI)', async () => {
    const { token, info } = issueMcpToken(db, seed.userIds.analyst);
    revokeTokenAs(db, seed.userIds.analyst, info.id);
    const cases = [
      [token, /revoked/],
      [`aimcp_${'A'.repeat(43)}`, /not known/],
      ['hello', /format/],
    ] as const;
    const [runs, noDb, noToken] = await Promise.all([
      Promise.all(cases.map(([t]) => run(TSX, [SERVER, '--db', path, '--token', t]))),
      run(TSX, [SERVER, '--db', join(dir, 'absent.sqlite'), '--token', token]),
      run(TSX, [SERVER, '--db', path]),
    ]);
    // The other start failures exit as the CLI does for the same failure: NotFound 4, Validation 2.
    expect(noDb.status).toBe(4);
    expect(noDb.stderr).toMatch(/no database at/);
    expect(noToken.status).toBe(2);
    runs.forEach((r, i) => {
      expect(r.status).toBe(7);
      expect(r.status).toBe(exitCodeFor('Unauthenticated'));
      expect(r.stderr).toMatch(/refused to start/);
      expect(r.stderr).toMatch(cases[i]![1]);
      expect(r.stdout).toBe('');
      expect(r.stderr).not.toContain(token);
    });
  });
});
