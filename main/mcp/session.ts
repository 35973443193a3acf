/**
 * One MCP session: the tool list and tool calls of an MCP client, bound to the one local user of
 * its token. Transport-free (server.ts wires it to the SDK over stdio), so it is testable
 * in-process too.
 *
 * - Identity: the token, re-verified on every request (a revoked or expired token stops working
 *   at the next call); the user's role and active flag are re-read on every request. Nothing the
 *   client sends (arguments, `_meta`, client info) names the user or the org.
 * - Tools: the Kinetix registry, `available(role)` → `availableEnabled`, minus destructive and
 *   UI-only tools; annotations from the tool's behaviour (destructive unless additive); input JSON Schema from the zod input.
 * - Reads run with a five-minute capability narrowed to the tool's scopes,
 *   `via: { runId: 'mcp:<session id>', capability }`. Writes only plan: the changeset is stored
 *   as a proposal that waits for approval in the app, and the client gets its id and diff.
 * - Errors: `{ error: { code, message, issues? } }` with `isError: true`; never a stack.
 */
import { uuidv7 } from 'uuidv7';
import type { RowChange } from '../../models/changeset';
import type { ErrorPayload } from '../../models/errors';
import { AppError, toErrorPayload } from '../../models/errors';
import type { PolicyDecision } from '../../models/policy';
import type { Db } from '../data/db';
import { withholdRestricted } from '../kinetix/classification';
import { UnknownTool } from '../kinetix/errors';
import { maskSecrets } from '../kinetix/mask';
import { defaultToolRegistry } from '../kinetix/catalogue';
import type { LogFn, ToolRegistry } from '../kinetix/registry';
import type { Tool, ToolContext } from '../kinetix/tool';
import { toolInputSchema, toolOutputSchema, toolStructuredContent } from '../kinetix/tool';
import type { Actor, Capability, ServiceContext } from '../services/context';
import { resolveActor } from '../services/context';
import { boundInput, parseInput } from '../services/verb';
import type { KinetixPort, RiskAnnotations } from './kinetix-adapter';
import { kinetixPort } from './kinetix-adapter';
import type { McpBinding } from './tokens';
import { verifyMcpToken } from './tokens';

/** Lifetime of a per-call capability (kinetix.md §2). */
export const CAPABILITY_TTL_MS = 5 * 60_000;

/** A tool as listed to an MCP client (the `tools/list` shape). */
export interface McpToolDescriptor {
  name: string;
  title: string;
  description: string;
  inputSchema: { type: 'object'; [k: string]: unknown };
  /** For reads: the JSON Schema of `structuredContent` (the verb's output schema, models/verbs.ts). */
  outputSchema?: { type: 'object'; [k: string]: unknown };
  annotations: RiskAnnotations & { title: string };
}

/** A `tools/call` result. */
export interface McpCallResult {
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [k: string]: unknown;
}

/** Options of {@link McpSession}. */
export interface McpSessionOptions {
  db: Db;
  /** The token the server was started with; re-verified on every request. */
  token: string;
  registry?: ToolRegistry;
  port?: KinetixPort;
  /** Diagnostics sink (stderr in the server; never a secret). */
  log?: LogFn;
  now?: () => Date;
  sessionId?: string;
}

const WRITE_NOTE =
  ' Through this connection the change is only proposed: it returns a proposal id and the rows before → after, and nothing changes until a person approves it in the Athlete Intelligence app.';

/** An MCP client's session, bound to one local user by its token. */
export class McpSession {
  readonly sessionId: string;
  /** `via.runId` of every service call this session makes. */
  readonly runId: string;
  /** The user and org the token bound this session to at start. */
  readonly binding: McpBinding;
  private readonly db: Db;
  private readonly token: string;
  private readonly registry: ToolRegistry;
  private readonly port: KinetixPort;
  private readonly log: LogFn;
  private readonly now: () => Date;

  /** @throws McpTokenRefused when the token does not authenticate now. */
  constructor(opts: McpSessionOptions) {
    this.db = opts.db;
    this.token = opts.token;
    this.registry = opts.registry ?? defaultToolRegistry();
    this.port = opts.port ?? kinetixPort;
    this.log = opts.log ?? (() => undefined);
    this.now = opts.now ?? (() => new Date());
    this.sessionId = opts.sessionId ?? uuidv7();
    this.runId = `mcp:${this.sessionId}`;
    this.binding = verifyMcpToken(this.db, this.token, this.now());
  }

  /** The bound user, re-read now (token still valid, user active). @throws McpTokenRefused, Forbidden */
  actor(): Actor {
    const b = verifyMcpToken(this.db, this.token, this.now());
    if (b.userId !== this.binding.userId || b.orgId !== this.binding.orgId)
      throw new AppError({ code: 'Unauthenticated', message: 'The MCP token no longer matches this session. Restart the MCP server.' });
    return resolveActor({ db: this.db, userId: b.userId });
  }

  /** The tools this user may be offered right now. */
  private tools(actor: Actor): Tool[] {
    return this.port.exposable(this.registry.availableEnabled(this.db, actor.orgId, actor.role, this.log));
  }

  /** `tools/list`: the user's tools now (recomputed on every call). @throws McpTokenRefused, Forbidden */
  listTools(): McpToolDescriptor[] {
    return this.tools(this.actor()).map((t) => {
      const outputSchema = toolOutputSchema(t);
      return {
        name: t.name,
        title: t.title,
        description: t.kind === 'write' ? `${t.description}${WRITE_NOTE}` : t.description,
        inputSchema: toolInputSchema(t),
        ...(outputSchema ? { outputSchema } : {}),
        annotations: { title: t.title, ...this.port.annotations(t) },
      };
    });
  }

  private context(actor: Actor, tool: Tool): ToolContext {
    const capability: Capability = {
      id: uuidv7(),
      userId: actor.userId,
      orgId: actor.orgId,
      scopes: [...tool.scopes],
      expiresAt: this.now().getTime() + CAPABILITY_TTL_MS,
    };
    const service: ServiceContext = { db: this.db, userId: actor.userId, via: { runId: this.runId, capability }, now: this.now };
    return { service, runId: this.runId, conversationId: this.runId, orgId: actor.orgId, userId: actor.userId, page: null, emit: () => undefined };
  }

  /** `tools/call`: run a read, or propose a write. Never throws; errors are tool errors. */
  async callTool(name: string, args: unknown): Promise<McpCallResult> {
    try {
      const actor = this.actor();
      const tool = this.tools(actor).find((t) => t.name === name);
      if (!tool) throw new UnknownTool(name);
      boundInput(tool.name, args);
      const input: unknown = parseInput(tool.input, args, tool.name);
      if (tool.kind === 'read') {
        const result = await Promise.resolve(tool.run(this.context(actor, tool), input));
        return ok(tool, this.outbound(maskSecrets(result ?? null), tool.tables));
      }
      const proposal = tool.plan(this.context(actor, tool), input);
      if (!proposal.changeset) throw new AppError({ code: 'Internal', message: `${tool.name} produced no changeset; nothing was proposed.` });
      if (proposal.reveal) {
        // A new secret (device key) is shown once, to the person who approves, in the app; an
        // MCP proposal would lose it and lock the device out. Refused here, nothing stored.
        throw new AppError({
          code: 'Forbidden',
          message: `"${tool.title}" creates a secret that is shown only once; do it in the Athlete Intelligence app, not through an MCP client. Nothing was proposed.`,
        });
      }
      const stored = this.port.propose(this.db, {
        userId: actor.userId,
        planned: proposal.changeset,
        runId: this.runId,
        toolName: tool.name,
        title: tool.title,
        permission: tool.permission,
        now: this.now(),
      });
      const needsOwner = stored.status === 'needs_owner';
      return ok(
        tool,
        this.outbound(
          maskSecrets({
            status: 'waiting_for_approval',
            proposal_id: stored.id,
            approval: stored.status,
            title: tool.title,
            summary: stored.summary,
            rows: stored.changes.length,
            content_hash: stored.contentHash,
            diff: stored.changes.map(diffRow),
            policy: { verdict: stored.verdict, approver_role: stored.approverRole, decisions: stored.decisions.map(decisionView) },
            message: `Nothing was changed. "${tool.title}" (${stored.changes.length} row${stored.changes.length === 1 ? '' : 's'}) waits for approval in the Athlete Intelligence app${needsOwner ? ' by an owner (the policy requires it)' : ''}. Do not call the tool again for the same change.`,
          }),
          'unknown',
        ),
      );
    } catch (e) {
      return this.failure(e, name);
    }
  }

  /** Restricted clinical fields never leave the device through MCP (the client's model is not a cleared provider). */
  private outbound<T>(value: T, tables: Tool['tables']): T {
    return withholdRestricted(value, tables, new Set()).value;
  }

  private failure(e: unknown, name: string): McpCallResult {
    const payload: ErrorPayload = toErrorPayload(e);
    if (payload.code === 'Internal') this.log('mcp: tool call failed', { tool: name.slice(0, 80), error: e instanceof Error ? e.name : 'unknown' });
    const error: Record<string, unknown> = { code: payload.code, message: payload.message };
    if (payload.issues?.length) error.issues = payload.issues;
    if (payload.conflicts?.length) error.conflicts = payload.conflicts;
    const decisions = (e as { decisions?: unknown }).decisions;
    if (e instanceof AppError && Array.isArray(decisions)) error.policy = { verdict: 'deny', decisions: (decisions as PolicyDecision[]).map(decisionView) };
    // Text content only: a read tool's `outputSchema` describes its result, and MCP clients
    // validate any structured content against it, error or not.
    return { content: [{ type: 'text', text: JSON.stringify({ error }, null, 2) }], isError: true };
  }
}

function diffRow(c: RowChange): Record<string, unknown> {
  if (c.op === 'insert') return { op: c.op, table: c.table, id: c.id, before: null, after: c.after };
  if (c.op === 'update') return { op: c.op, table: c.table, id: c.id, version: c.version, before: c.before, after: c.after };
  return { op: c.op, table: c.table, id: c.id, version: c.version };
}

function decisionView(d: PolicyDecision): Record<string, unknown> {
  return {
    code: d.code,
    effect: d.effect,
    reason: d.reason,
    ...(d.table ? { table: d.table } : {}),
    ...(d.rowId ? { row_id: d.rowId } : {}),
    ...(d.field ? { field: d.field } : {}),
  };
}

/** A tool's result as text and, shaped by the tool's declared output (kinetix/tool.ts toolStructuredContent), as structured content. */
function ok(tool: Tool, value: unknown): McpCallResult {
  const text = JSON.stringify(value ?? null, null, 2);
  const structured = toolStructuredContent(tool, value);
  return { content: [{ type: 'text', text }], ...(structured ? { structuredContent: structured } : {}) };
}
