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
import { ToolRegistry } from '../kinetix/registry';
import type { ToolContext } from '../kinetix/tool';
import { defineTool } from '../kinetix/tool';
import { CAPABILITY_TTL_MS, McpSession } from './session';
import { issueMcpToken } from './tokens';

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
    expect(ctx.runId).toBe('mcp:sess-1');
    expect(ctx.userId).toBe(seed.userIds.physio);
    expect(ctx.orgId).toBe(seed.orgId);
    expect(ctx.service.via?.runId).toBe('mcp:sess-1');
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
