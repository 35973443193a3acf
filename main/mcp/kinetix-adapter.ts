/**
 * The one place the MCP server meets the parts of main/kinetix/ that are still landing: the
 * proposals API (store a planned changeset for approval in the app), the list of MCP-exposable
 * tools and the MCP annotations derived from a tool's risk tier. Everything else in main/mcp/
 * codes against the small {@link KinetixPort} below.
 *
 * INTERIM: until `main/kinetix/proposals.ts` lands, `propose` evaluates the policy engine and
 * hashes the changeset but does NOT persist it (the id is not yet approvable in the app).
 */
import { createHash } from 'node:crypto';
import { uuidv7 } from 'uuidv7';
import type { PlannedChangeset, RowChange } from '../../models/changeset';
import { ValidationError } from '../../models/errors';
import type { PolicyResult } from '../../models/policy';
import { evaluatePolicy } from '../../models/policy';
import type { Db } from '../data/db';
import type { Risk, Tool } from '../kinetix/tool';
import { resolveActor } from '../services/context';

/** MCP tool annotations (the hint subset this server sets). */
export interface RiskAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** A proposal stored for approval in the app. */
export interface StoredProposal {
  id: string;
  status: 'proposed' | 'needs_owner';
  content_hash: string;
  summary: string;
  changes: RowChange[];
  policy: PolicyResult;
}

/** What the MCP server needs from the harness. */
export interface KinetixPort {
  /** Tools an MCP client may be offered out of a role's available set (never destructive, never UI-only). */
  exposable(tools: readonly Tool[]): Tool[];
  /** MCP annotations for a risk tier. */
  annotations(risk: Risk): RiskAnnotations;
  /** Store a planned changeset as a proposal waiting for approval in the app. @throws typed error when the policy denies it */
  propose(db: Db, input: { userId: string; planned: PlannedChangeset; runId: string; toolName: string; title: string; now?: Date }): StoredProposal;
}

/** Tools that only act on the app's own window (no effect for an MCP client). */
const UI_ONLY_TOOLS = new Set(['open_page']);

function canonical(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  return `{${Object.keys(v as Record<string, unknown>).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`;
}

/** The interim port (see the module comment). */
export const kinetixPort: KinetixPort = {
  exposable(tools) {
    return tools.filter((t) => t.risk !== 'destructive' && !UI_ONLY_TOOLS.has(t.name));
  },
  annotations(risk) {
    switch (risk) {
      case 'read':
        return { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
      case 'write':
        return { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
      case 'bulk':
      case 'destructive':
        return { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false };
    }
  },
  propose(db, input) {
    const actor = resolveActor({ db, userId: input.userId });
    const now = input.now ?? new Date();
    const policy = evaluatePolicy(actor, input.planned, { today: now.toISOString().slice(0, 10) });
    if (policy.verdict === 'deny') throw new ValidationError(`The policy refuses this change: ${policy.reasons.join(' ')}`, policy.decisions.filter((d) => d.effect === 'deny').map((d) => ({ path: d.field ?? '(changeset)', message: d.reason })));
    return {
      id: uuidv7(),
      status: policy.verdict === 'needs_owner' ? 'needs_owner' : 'proposed',
      content_hash: createHash('sha256').update(canonical(input.planned)).digest('hex'),
      summary: input.planned.summary,
      changes: input.planned.changes,
      policy,
    };
  },
};
