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
 * - Audit (kinetix.md §8): every call is recorded before it runs, as one run (`mcp:<uuidv7>`) in
 *   the session's conversation (`mcp:<session id>`) with its tool-call row (kinetix/mcp-audit.ts).
 * - Reads run with a five-minute capability narrowed to the tool's scopes,
 *   `via: { runId: <the call's run>, capability }`. Writes only plan: the changeset is stored
 *   as a proposal (linked to the call's run) that waits for approval in the app, and the client
 *   gets its id and diff.
 * - Data classification: the client's model is a provider like any other. Every result (reads and
 *   proposals) goes out with each field whose class the org's `mcp` clearance does not hold
 *   withheld (default `['internal']`: no names or health data; Settings → Assistant changes it),
 *   and a read's output schema lets such a field be the withheld marker (a string).
 * - Errors: `{ error: { code, message, issues? } }` with `isError: true`; never a stack.
 */
import { uuidv7 } from 'uuidv7';
import type { RowChange } from '../../models/changeset';
import type { ErrorPayload } from '../../models/errors';
import { AppError, toErrorPayload, ValidationError } from '../../models/errors';
import type { PolicyDecision } from '../../models/policy';
import type { Db } from '../data/db';
import type { ProviderClearance } from '../kinetix/classification';
import {
  errorForProvider,
  fieldClass,
  filterNotClearedMessage,
  filtersNotCleared,
  isCleared,
  isUntaggedField,
  withheldMarker,
  withholdForProvider,
  writeFieldsNotCleared,
  writeNotClearedMessage,
} from '../kinetix/classification';
import { providerClearance } from '../kinetix/settings';
import { UnknownTool } from '../kinetix/errors';
import { boundsIssue, boundsMessage } from '../services/bounds';
import { maskSecrets } from '../kinetix/mask';
import type { McpAuditedCall, McpCallOutcome } from '../kinetix/mcp-audit';
import { McpCallAudit } from '../kinetix/mcp-audit';
import { defaultToolRegistry } from '../kinetix/catalogue';
import type { LogFn, ToolRegistry } from '../kinetix/registry';
import type { Tool, ToolContext } from '../kinetix/tool';
import { toolInputDefaults, toolInputSchema, toolOutputSchema, toolStructuredContent } from '../kinetix/tool';
import type { Actor, Capability, ServiceContext } from '../services/context';
import { resolveActor } from '../services/context';
import { parseInput } from '../services/verb';
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
  /** The audit conversation of this session (`mcp:<session id>`); each call is one run in it (kinetix/mcp-audit.ts). */
  readonly conversationId: string;
  /** The user and org the token bound this session to at start. */
  readonly binding: McpBinding;
  private readonly db: Db;
  private readonly token: string;
  private readonly registry: ToolRegistry;
  private readonly port: KinetixPort;
  private readonly log: LogFn;
  private readonly now: () => Date;
  private readonly audit: McpCallAudit;

  /** @throws McpTokenRefused when the token does not authenticate now. */
  constructor(opts: McpSessionOptions) {
    this.db = opts.db;
    this.token = opts.token;
    this.registry = opts.registry ?? defaultToolRegistry();
    this.port = opts.port ?? kinetixPort;
    this.log = opts.log ?? (() => undefined);
    this.now = opts.now ?? (() => new Date());
    this.sessionId = opts.sessionId ?? uuidv7();
    this.conversationId = `mcp:${this.sessionId}`;
    this.binding = verifyMcpToken(this.db, this.token, this.now());
    this.audit = new McpCallAudit(this.db, { sessionId: this.sessionId, now: this.now, log: this.log });
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
    const actor = this.actor();
    const clearance = this.clearance(actor.orgId);
    return this.tools(actor).map((t) => {
      const full = toolOutputSchema(t);
      const outputSchema = full ? allowWithheld(full, t.tables, clearance) : null;
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

  private context(actor: Actor, tool: Tool, runId: string): ToolContext {
    const capability: Capability = {
      id: uuidv7(),
      userId: actor.userId,
      orgId: actor.orgId,
      scopes: [...tool.scopes],
      expiresAt: this.now().getTime() + CAPABILITY_TTL_MS,
    };
    const service: ServiceContext = { db: this.db, userId: actor.userId, via: { runId, capability }, now: this.now };
    return { service, runId, conversationId: this.conversationId, orgId: actor.orgId, userId: actor.userId, page: null, emit: () => undefined };
  }

  /**
   * `tools/call`: run a read, or propose a write. Never throws; errors are tool errors. Every call
   * is recorded before it runs (kinetix/mcp-audit.ts): its run, its audit row (arguments masked,
   * digest), then its outcome.
   */
  async callTool(name: string, args: unknown): Promise<McpCallResult> {
    // Who calls: the token's user, re-verified now. A refused identity is recorded too (under the
    // token's user), then returned as the call's error.
    let actor: Actor | null = null;
    let refused: unknown = null;
    let tools: Tool[] = [];
    try {
      actor = this.actor();
      tools = this.tools(actor);
    } catch (e) {
      refused = e;
    }
    let audited: McpAuditedCall;
    try {
      audited = this.audit.begin(
        {
          userId: this.binding.userId,
          orgId: this.binding.orgId,
          snapshot: actor
            ? {
                userId: actor.userId,
                orgId: actor.orgId,
                role: actor.role,
                displayName: actor.displayName,
                email: actor.email,
                linkedAthleteId: actor.linkedAthleteId,
                mcpTokenId: this.binding.tokenId,
              }
            : { userId: this.binding.userId, orgId: this.binding.orgId, mcpTokenId: this.binding.tokenId },
          tools: tools.map((t) => t.name),
        },
        name,
        args,
        tools.find((t) => t.name === name),
      );
    } catch (e) {
      // A call that cannot be audited does not run.
      this.log('mcp: could not write the audit row; the call did not run', { tool: name.slice(0, 80), error: e instanceof Error ? e.name : 'unknown' });
      return this.failure(new AppError({ code: 'Internal', message: 'The call could not be recorded, so it did not run. Try again.' }), name);
    }
    try {
      if (audited.refusedInput) {
        const r = audited.refusedInput;
        throw new ValidationError(boundsMessage(name.slice(0, 100), { reason: r.issue }), [boundsIssue(r.issue)]);
      }
      if (refused || !actor) throw refused;
      const result = await this.run(actor, tools, name, args, audited.runId);
      this.audit.finish(audited, result.outcome);
      return result.response;
    } catch (e) {
      const payload = toErrorPayload(e);
      this.audit.finish(audited, { status: 'failed', error: payload, ...(audited.refusedInput ? { decision: 'input_out_of_bounds' } : {}) });
      return this.failure(e, name);
    }
  }

  /** Validate, then run a read or store a write's proposal. @throws the call's typed error */
  private async run(actor: Actor, tools: Tool[], name: string, args: unknown, runId: string): Promise<{ response: McpCallResult; outcome: McpCallOutcome }> {
    const tool = tools.find((t) => t.name === name);
    if (!tool) throw new UnknownTool(name);
    const input: unknown = parseInput(tool.input, args, tool.name);
    const clearance = this.clearance(actor.orgId);
    if (tool.kind === 'read') {
      // A filter on a field the client's model is not cleared for would confirm the withheld value: refused before the query runs.
      const notCleared = filtersNotCleared(input, tool.tables, clearance, toolInputDefaults(tool), tool.inputClasses);
      if (notCleared.length > 0)
        throw new ValidationError(
          filterNotClearedMessage(tool.name, notCleared),
          notCleared.map((r) => ({ path: r.field, message: `${r.class}: this model provider is not cleared for it` })),
        );
      const result = maskSecrets((await fromRecords(clearance, () => Promise.resolve(tool.run(this.context(actor, tool, runId), input)))) ?? null);
      return { response: ok(tool, this.outbound(result, tool.tables, clearance, tool.outputClasses)), outcome: { status: 'executed', result } };
    }
    // A value above the client's clearance: refused before planning, as a read's filter is (the diff or "nothing to change" would confirm a guess).
    const notCleared = writeFieldsNotCleared(input, tool.tables, clearance, tool.inputClasses);
    if (notCleared.length > 0)
      throw new ValidationError(
        writeNotClearedMessage(tool.name, notCleared),
        notCleared.map((r) => ({ path: r.field, message: `${r.class}: this model provider is not cleared for it` })),
      );
    const proposal = await fromRecords(clearance, () => tool.plan(this.context(actor, tool, runId), input));
    if (!proposal.changeset) throw new AppError({ code: 'Internal', message: `${tool.name} produced no changeset; nothing was proposed.` });
    if (proposal.reveal) {
      // A new secret (device key) is shown once, to the person who approves, in the app; an
      // MCP proposal would lose it and lock the device out. Refused here, nothing stored.
      throw new AppError({
        code: 'Forbidden',
        message: `"${tool.title}" creates a secret that is shown only once; do it in the Athlete Intelligence app, not through an MCP client. Nothing was proposed.`,
      });
    }
    const planned = proposal.changeset;
    const stored = await fromRecords(clearance, () =>
      this.port.propose(this.db, {
        userId: actor.userId,
        planned,
        runId,
        toolName: tool.name,
        title: tool.title,
        permission: tool.permission,
        now: this.now(),
      }),
    );
    const needsOwner = stored.status === 'needs_owner';
    // The envelope is the app's own words; the rows and the summary carry record values and are classified.
    const changedTables = [...new Set(stored.changes.map((c) => c.table))];
    const response = ok(
      tool,
      maskSecrets({
        status: 'waiting_for_approval',
        proposal_id: stored.id,
        approval: stored.status,
        title: tool.title,
        summary: isCleared(clearance, 'clinical') ? stored.summary : withheldMarker('clinical'),
        rows: stored.changes.length,
        content_hash: stored.contentHash,
        diff: this.outbound(stored.changes.map(diffRow), changedTables, clearance),
        policy: { verdict: stored.verdict, approver_role: stored.approverRole, decisions: stored.decisions.map(decisionView) },
        message: `Nothing was changed. "${tool.title}" (${stored.changes.length} row${stored.changes.length === 1 ? '' : 's'}) waits for approval in the Athlete Intelligence app${needsOwner ? ' by an owner (the policy requires it)' : ''}. Do not call the tool again for the same change.`,
      }),
    );
    return {
      response,
      outcome: {
        status: 'proposed',
        changesetId: stored.id,
        summary: stored.summary,
        changeset: proposal.changeset,
        contentHash: stored.contentHash,
        policy: { verdict: stored.verdict, decisions: stored.decisions },
      },
    };
  }

  /** A result for the client's model: every field its `mcp` clearance does not hold withheld (classification.ts). */
  private outbound<T>(value: T, tables: Tool['tables'], clearance: ProviderClearance, own?: Tool['outputClasses']): T {
    return withholdForProvider(value, tables, clearance, undefined, own).value;
  }

  /** The org's clearance for MCP clients' models, read now (fail closed to `['internal']`, logged). */
  private clearance(orgId: string): ProviderClearance {
    return providerClearance(this.db, orgId, 'mcp', (l) => this.log(l));
  }

  private failure(e: unknown, name: string): McpCallResult {
    const full: ErrorPayload = toErrorPayload(e);
    if (full.code === 'Internal') this.log('mcp: tool call failed', { tool: name.slice(0, 80), error: e instanceof Error ? e.name : 'unknown' });
    // An error raised while reading records may quote stored values: the client's model gets it under its clearance.
    const cleared = typeof e === 'object' && e !== null ? RECORD_ERRORS.get(e) : undefined;
    const payload = cleared ? errorForProvider(full, cleared) : full;
    const error: Record<string, unknown> = { code: payload.code, message: payload.message };
    if (payload.issues?.length) error.issues = payload.issues;
    if (payload.conflicts?.length) error.conflicts = payload.conflicts;
    const decisions = (e as { decisions?: unknown }).decisions;
    if (e instanceof AppError && Array.isArray(decisions))
      error.policy = {
        verdict: 'deny',
        decisions: (cleared
          ? (errorForProvider({ ...full, decisions: decisions as PolicyDecision[] }, cleared).decisions ?? [])
          : (decisions as PolicyDecision[])
        ).map(decisionView),
      };
    // Text content only: a read tool's `outputSchema` describes its result, and MCP clients
    // validate any structured content against it, error or not.
    return { content: [{ type: 'text', text: JSON.stringify({ error }, null, 2) }], isError: true };
  }
}

/** Errors raised by code that reads records, with the clearance of the call they came from (see {@link fromRecords}). */
const RECORD_ERRORS = new WeakMap<object, ProviderClearance>();

/**
 * Run `fn` (a read, a plan or a proposal: code that reads records); an error it throws is marked as
 * possibly quoting stored values, so {@link McpSession} words it for the client under `clearance`.
 * @throws what `fn` throws
 */
async function fromRecords<T>(clearance: ProviderClearance, fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (typeof e === 'object' && e !== null) RECORD_ERRORS.set(e, clearance);
    throw e;
  }
}

/**
 * A read's output JSON Schema as the client may rely on it: each property (at any depth, `$defs`
 * included) whose class `clearance` does not hold, or that is an untagged column, may also be the
 * withheld marker string. Returns `schema` itself when nothing can be withheld.
 */
export function allowWithheld<S extends { type: 'object' }>(schema: S, tables: Tool['tables'], clearance: ProviderClearance): S {
  let changed = false;
  const walk = (node: unknown, depth: number): unknown => {
    if (depth > 64 || node === null || typeof node !== 'object') return node;
    if (Array.isArray(node)) return node.map((x) => walk(x, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
      if (k === 'properties' && v && typeof v === 'object' && !Array.isArray(v)) {
        const props: Record<string, unknown> = {};
        for (const [name, sub] of Object.entries(v as Record<string, unknown>)) {
          const c = fieldClass(name, tables);
          const inner = walk(sub, depth + 1);
          if (!isUntaggedField(name, tables) && (c === null || isCleared(clearance, c))) props[name] = inner;
          else {
            changed = true;
            props[name] = { anyOf: [inner, { type: 'string', description: "Withheld: this client is not cleared for the field's data class." }] };
          }
        }
        out[k] = props;
      } else out[k] = walk(v, depth + 1);
    }
    return out;
  };
  const next = walk(schema, 0) as S;
  return changed ? next : schema;
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
