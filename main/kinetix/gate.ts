/**
 * Exposure rules that sit on top of the role map: the untrusted-content gate (kinetix.md §6,
 * issue 4 §6) and what an MCP client may be offered, with the MCP hints derived from the risk tier.
 *
 * Untrusted-content gate: from the point output of an untrusted tool (`trusted: false`, e.g. a
 * user-registered MCP/OpenAPI integration, or `recordText: true`, the tool that returns the free
 * text people typed into records) enters a run, that run's snapshot loses every
 * high-privilege tool (bulk changes, RTP sign-offs and entries that carry them, device keys, user
 * and settings management, system administration). The run starts gated when the conversation's
 * replayed facts (the tool digest) already contain untrusted output. Gating only removes tools.
 */
import type { Permission } from '../../models/roles';
import type { Tool } from './tool';

/** Permissions whose tools are high-privilege (dropped once untrusted content is in a run). */
export const HIGH_PRIVILEGE_PERMISSIONS: ReadonlySet<Permission> = new Set<Permission>([
  'rtp.signoff_physio',
  'rtp.signoff_doctor',
  'rtp.signoff_coach',
  'device.manage',
  'user.manage',
  'settings.manage',
  'system.admin',
]);

/** Tools that can set or withdraw RTP sign-offs although their permission is `rtp.write`. */
export const SIGNOFF_CAPABLE_TOOLS: ReadonlySet<string> = new Set(['create_rtp_entry', 'update_rtp_entry']);

/**
 * True for a high-privilege tool: a tool that changes something (never a read) and is bulk or
 * destructive, gated by a listed permission, or a sign-off-capable RTP tool.
 */
export function isHighPrivilege(tool: Pick<Tool, 'name' | 'risk' | 'permission'>): boolean {
  if (tool.risk === 'read') return false;
  return tool.risk === 'bulk' || tool.risk === 'destructive' || HIGH_PRIVILEGE_PERMISSIONS.has(tool.permission) || SIGNOFF_CAPABLE_TOOLS.has(tool.name);
}

/** True when the tool's output is untrusted content: an integration's output, or record text people typed. */
export function isUntrusted(tool: Pick<Tool, 'trusted' | 'recordText'>): boolean {
  return tool.trusted === false || tool.recordText === true;
}

/** The snapshot after the gate closes: every tool that is not high-privilege. */
export function gateSnapshot<T extends Pick<Tool, 'name' | 'risk' | 'permission'>>(tools: readonly T[]): { kept: T[]; dropped: string[] } {
  return { kept: tools.filter((t) => !isHighPrivilege(t)), dropped: tools.filter((t) => isHighPrivilege(t)).map((t) => t.name) };
}

/** Tools that act only on the app's own window (no meaning for an MCP client). */
export const UI_ONLY_TOOLS: ReadonlySet<string> = new Set(['open_page']);

/**
 * Tools an MCP client may be offered out of a role's available set: never destructive, never
 * UI-only, never an untrusted integration's tool (an MCP client is itself outside the clinic).
 */
export function mcpExposableTools<T extends Pick<Tool, 'name' | 'risk' | 'trusted'>>(tools: readonly T[]): T[] {
  return tools.filter((t) => t.risk !== 'destructive' && !UI_ONLY_TOOLS.has(t.name) && t.trusted !== false);
}

/** MCP tool annotations (the hint subset the server sets). */
export interface McpHints {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** Write tools whose change only adds records (a new row; nothing existing is changed or removed). */
const ADDITIVE_WRITE = /^(create|record|log|register|generate)_/;

/**
 * MCP hints from the tool's real behaviour (MCP spec, ToolAnnotations):
 * - `readOnlyHint`: reads only.
 * - `destructiveHint`: true for every write that changes or removes what exists — updates, undo,
 *   deactivation, sign-off (it can withdraw one), key rotation (the old key stops working), a
 *   questionnaire that replaces that day's, bulk price changes — and for any write not known to
 *   be additive (fail closed). `create_`/`record_`/`log_`/`register_`/`generate_` tools only add.
 * - `idempotentHint`: reads only; every write call stores a new proposal.
 * - `openWorldHint`: only an untrusted integration's tool reaches outside this clinic's database.
 */
export function mcpHints(tool: Pick<Tool, 'name' | 'risk' | 'trusted'>): McpHints {
  const openWorldHint = tool.trusted === false;
  if (tool.risk === 'read') return { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint };
  const destructiveHint = tool.risk === 'destructive' || !ADDITIVE_WRITE.test(tool.name);
  return { readOnlyHint: false, destructiveHint, idempotentHint: false, openWorldHint };
}
