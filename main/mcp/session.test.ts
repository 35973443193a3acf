/** McpSession in-process: the per-call capability and the service context each tool call gets. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Db } from '../data/db';
import { openDb } from '../data/db';
import type { SeedSummary } from '../data/seed';
import { seedDemo } from '../data/seed';
import { getRun, listOwnConversations, listToolCalls, listTrace } from '../data/kinetix';
import { callVerbByName, VERBS } from '../services';
import { ToolRegistry } from '../kinetix/registry';
import type { ToolContext } from '../kinetix/tool';
import { defineTool } from '../kinetix/tool';
import { CAPABILITY_TTL_MS, McpSession } from './session';
import { issueMcpToken } from './tokens';
import { sqlite } from '../data/sqlite';

let dir: string;
let db: Db;
let seed: SeedSummary;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ai-mcp-sess-'));
  db = openDb(join(dir, 'clinic.sqlite'));
  seed = seedDemo(db, { seed: 3 });
});

afterAll(() => {
  db?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('McpSession', () => {
  it("gives each call a five-minute capability narrowed to the tool's scopes, via mcp:<session>", async () => {
    const seen: ToolContext[] = [];
    const probe = defineTool({
      kind: 'read',
      name: 'probe',
      title: 'Probe',
      description: 'test',
      permission: 'workload.read',
      scopes: ['workload:read'],
      tables: [],
      input: z.object({}).strict(),
      run: (ctx) => {
        seen.push(ctx);
        return { ok: true };
      },
    });
    const secret = defineTool({
      kind: 'read',
      name: 'secret_probe',
      title: 'Secret',
      description: 'test',
      permission: 'workload.read',
      tables: ['injury'],
      input: z.object({}).strict(),
      run: () => ({ device: { api_key: 'k-123456789', clinician_notes: 'private narrative' } }),
    });
    const now = new Date('2026-11-20T12:00:00Z');
    const s = new McpSession({
      db,
      token: issueMcpToken(db, seed.userIds.physio).token,
      registry: new ToolRegistry([probe, secret]),
      now: () => now,
      sessionId: 'sess-1',
    });
    expect(s.listTools().map((t) => t.name)).toEqual(['probe', 'secret_probe']);
    expect((await s.callTool('probe', {})).isError).toBeFalsy();
    const ctx = seen[0]!;
    // Each call is its own audited run in the session's conversation.
    expect(ctx.runId).toMatch(/^mcp:[0-9a-f-]{36}$/);
    expect(ctx.conversationId).toBe('mcp:sess-1');
    expect(getRun(db, ctx.runId)).toMatchObject({ conversation_id: 'mcp:sess-1', user_id: seed.userIds.physio, status: 'completed' });
    expect(ctx.userId).toBe(seed.userIds.physio);
    expect(ctx.orgId).toBe(seed.orgId);
    expect(ctx.service.via?.runId).toBe(ctx.runId);
    expect(ctx.service.via?.capability).toMatchObject({
      userId: seed.userIds.physio,
      orgId: seed.orgId,
      scopes: ['workload:read'],
      expiresAt: now.getTime() + CAPABILITY_TTL_MS,
    });
    expect(CAPABILITY_TTL_MS).toBe(300_000);
    // Secrets masked, restricted clinical narrative withheld.
    const text = (await s.callTool('secret_probe', {})).content[0]!.text;
    expect(text).not.toContain('k-123456789');
    expect(text).not.toContain('private narrative');
    // A role without the permission does not see the tools, and calling one is unknown.
    const a = new McpSession({ db, token: issueMcpToken(db, seed.userIds.athlete).token, registry: new ToolRegistry([probe]) });
    expect(a.listTools()).toEqual([]);
    expect(JSON.parse((await a.callTool('probe', {})).content[0]!.text).error.code).toBe('NotFound');
    expect(seen).toHaveLength(1);
  });
});

describe('McpSession audit (kinetix.md §8)', () => {
  it('writes the tool-call row before the call runs, then its outcome, as one run per call in the session conversation', async () => {
    const token = issueMcpToken(db, seed.userIds.physio).token;
    let seenBeforeRun: unknown = 'not run';
    const probe = defineTool({
      kind: 'read',
      name: 'audit_probe',
      title: 'Audit probe',
      description: 'test',
      permission: 'workload.read',
      tables: [],
      inputClasses: { note: 'internal', password: 'internal' },
      input: z.object({ note: z.string().optional(), password: z.string().optional() }).strict(),
      run: (ctx) => {
        seenBeforeRun = listToolCalls(db, ctx.runId).map((r) => r.status);
        return { ok: true };
      },
    });
    const s = new McpSession({ db, token, registry: new ToolRegistry([probe]), sessionId: 'audit-1' });
    expect((await s.callTool('audit_probe', { note: 'hello', password: 'hunter2-secret' })).isError).toBeFalsy();
    expect(seenBeforeRun).toEqual(['proposed']);
    const runs = sqlite(db).prepare(`SELECT * FROM kinetix_run WHERE conversation_id = 'mcp:audit-1'`).all() as {
      id: string;
      status: string;
      model: string;
      request_text: string;
    }[];
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: 'completed', model: 'mcp-client', request_text: 'tools/call audit_probe' });
    const [row] = listToolCalls(db, runs[0]!.id);
    expect(row).toMatchObject({ tool_name: 'audit_probe', title: 'Audit probe', risk: 'read', status: 'executed', requires_confirm: 0, iteration: 1 });
    expect(row!.args_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(row!.args_json).toContain('hello');
    expect(row!.args_json).not.toContain('hunter2-secret');
    expect(JSON.parse(row!.result_json!)).toEqual({ ok: true });
    expect(listTrace(db, runs[0]!.id).map((t) => t.kind)).toEqual(['request', 'tool_call', 'finish']);
  });

  it('records reads, proposals and every kind of refusal of the real catalogue; the audit conversation is not a chat', async () => {
    const { token } = issueMcpToken(db, seed.userIds.physio);
    const s = new McpSession({ db, token, sessionId: 'audit-2' });
    const count = (table: string) => (sqlite(db).prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
    const [runsBefore, callsBefore] = [count('kinetix_run'), count('kinetix_tool_call')];
    const rows = () =>
      sqlite(db)
        .prepare(`SELECT t.* FROM kinetix_tool_call t JOIN kinetix_run r ON r.id = t.run_id WHERE r.conversation_id = 'mcp:audit-2' ORDER BY t.iteration`)
        .all() as {
        run_id: string;
        tool_name: string;
        status: string;
        args_json: string;
        args_hash: string;
        error_json: string | null;
        changeset_id: string | null;
      }[];

    // A read: executed.
    expect((await s.callTool('list_injuries', {})).isError).toBeFalsy();
    expect(count('kinetix_run')).toBe(runsBefore + 1);
    expect(count('kinetix_tool_call')).toBe(callsBefore + 1);
    expect(rows()[0]).toMatchObject({ tool_name: 'list_injuries', status: 'executed' });

    // A write: the proposal waits in the app, linked to the call's run.
    const w = JSON.parse(
      (await s.callTool('log_session_load', { athlete_id: seed.linkedAthleteId, date: seed.today, duration_min: 30, rpe: 4, second_session_same_day: true }))
        .content[0]!.text,
    ) as { proposal_id: string };
    const write = rows()[1]!;
    expect(write).toMatchObject({ tool_name: 'log_session_load', status: 'proposed', changeset_id: w.proposal_id });
    expect(sqlite(db).prepare('SELECT run_id FROM changeset_proposal WHERE id = ?').get(w.proposal_id)).toEqual({ run_id: write.run_id });
    expect(listTrace(db, write.run_id).map((t) => t.kind)).toEqual(['request', 'tool_call', 'policy', 'decision', 'finish']);

    // Refusals: bad input (a secret in it is masked), unknown tool, over-deep input.
    await s.callTool('list_athletes', { api_key: 'sk-live-should-not-be-stored', limit: 5 });
    await s.callTool('delete_video', { video_id: 'v1' });
    let deep: unknown = 'x';
    for (let i = 0; i < 40; i++) deep = { d: deep };
    const tooDeep = await s.callTool('list_athletes', deep);
    // The same wording as every other door (models/bounds.ts boundsIssue).
    expect(JSON.parse(tooDeep.content[0]!.text).error).toMatchObject({ code: 'Validation', issues: [{ path: '(input)', message: 'nested too deep' }] });
    const [, , bad, unknown, over] = rows();
    expect(bad).toMatchObject({ tool_name: 'list_athletes', status: 'failed' });
    expect(bad!.args_json).not.toContain('sk-live-should-not-be-stored');
    expect(JSON.parse(bad!.error_json!).code).toBe('Validation');
    expect(unknown).toMatchObject({ tool_name: 'delete_video', status: 'failed' });
    expect(JSON.parse(unknown!.error_json!).code).toBe('NotFound');
    expect(JSON.parse(over!.args_json)).toMatchObject({ refused_input: 'depth', sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(over!.args_json).not.toContain('"d"');
    expect(getRun(db, over!.run_id)).toMatchObject({ status: 'failed', error_code: 'Validation' });

    // A deactivated user's call is recorded under the token's user, and refused.
    callVerbAs(seed.userIds.owner, 'users.update', { id: seed.userIds.physio, active: false });
    try {
      expect((await s.callTool('list_injuries', {})).isError).toBe(true);
    } finally {
      callVerbAs(seed.userIds.owner, 'users.update', { id: seed.userIds.physio, active: true });
    }
    const last = rows().at(-1)!;
    expect(last).toMatchObject({ tool_name: 'list_injuries', status: 'failed' });
    expect(getRun(db, last.run_id)).toMatchObject({ user_id: seed.userIds.physio, status: 'failed', error_code: 'Unauthenticated' });

    // No run of the session is left running; the conversation is not in the assistant's list.
    expect(sqlite(db).prepare(`SELECT COUNT(*) AS n FROM kinetix_run WHERE conversation_id = 'mcp:audit-2' AND status = 'running'`).get()).toEqual({ n: 0 });
    expect(listOwnConversations(db, seed.orgId, seed.userIds.physio).map((c) => c.id)).not.toContain('mcp:audit-2');
  });
});

function callVerbAs(userId: string, verb: string, input: unknown): void {
  callVerbByName({ db, userId }, VERBS, verb, input);
}
