/**
 * The one place the MCP server meets the harness's proposal and exposure rules
 * (main/kinetix/proposals.ts, main/kinetix/gate.ts): which tools an MCP client may be offered,
 * the MCP annotations of a risk tier, and storing a planned changeset as a proposal that waits
 * for approval in the app. main/mcp/ codes against the small {@link KinetixPort} so tests can
 * swap it.
 */
import type { PlannedChangeset, RowChange } from '../../models/changeset';
import type { PolicyDecision } from '../../models/policy';
import type { Permission, Role } from '../../models/roles';
import type { Db } from '../data/db';
import type { McpHints } from '../kinetix/gate';
import { mcpExposableTools, mcpHints } from '../kinetix/gate';
import { proposeChangeset } from '../kinetix/proposals';
import type { Tool } from '../kinetix/tool';

/** MCP tool annotations (the hint subset this server sets). */
export type RiskAnnotations = McpHints;

/** A proposal stored for approval in the app (what the MCP client is shown). */
export interface StoredProposal {
  id: string;
  status: 'proposed' | 'needs_owner';
  contentHash: string;
  summary: string;
  changes: RowChange[];
  verdict: 'allow' | 'needs_owner';
  approverRole: Role | null;
  decisions: PolicyDecision[];
}

/** What the MCP server needs from the harness. */
export interface KinetixPort {
  /** Tools an MCP client may be offered out of a role's available set (never destructive, never UI-only). */
  exposable(tools: readonly Tool[]): Tool[];
  /** MCP annotations from the tool's behaviour (see kinetix/gate.ts mcpHints). */
  annotations(tool: Pick<Tool, 'name' | 'risk' | 'trusted'>): RiskAnnotations;
  /**
   * Store a planned changeset as a proposal (source `mcp`) waiting for approval in the app.
   * @throws PolicyDenied (Forbidden) when the policy refuses it; row-rule errors; nothing stored then
   */
  propose(
    db: Db,
    input: { userId: string; planned: PlannedChangeset; runId: string; toolName: string; title: string; permission: Permission; now?: Date },
  ): StoredProposal;
}

/** The harness-backed port. */
export const kinetixPort: KinetixPort = {
  exposable: (tools) => mcpExposableTools(tools),
  annotations: (tool) => mcpHints(tool),
  propose(db, input) {
    const p = proposeChangeset(db, { ...input, source: 'mcp' });
    return {
      id: p.id,
      status: p.status === 'needs_owner' ? 'needs_owner' : 'proposed',
      contentHash: p.contentHash,
      summary: p.summary,
      changes: p.changes,
      verdict: p.verdict,
      approverRole: p.approverRole,
      decisions: p.decisions,
    };
  },
};
