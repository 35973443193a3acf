/**
 * The assistant panel's state, folded from the run's AG-UI events (the same envelopes over IPC
 * and SSE). Pure: `reduceRun(state, envelope)`; a reload replays from `lastEventId`.
 * Custom event names are the harness's (`kinetix.*`, main/kinetix/harness.ts KINETIX_EVENTS).
 */
import type { AssistantEventNames, RunEventEnvelope } from '../../../models/contract';

/** `CUSTOM` event names the harness emits (typed against the contract, which main checks against the harness). */
export const CUSTOM_EVENTS: AssistantEventNames = {
  toolCall: 'kinetix.tool_call',
  confirmRequired: 'kinetix.confirm_required',
  usage: 'kinetix.usage',
  openPage: 'kinetix.open_page',
  reveal: 'kinetix.reveal',
};

export interface ChatMessage {
  id: string;
  /** Creation order across messages and tool calls, so the panel shows them as they happened. */
  order: number;
  role: 'user' | 'assistant' | string;
  text: string;
  done: boolean;
}

export interface ToolCallView {
  id: string;
  /** Creation order across messages and tool calls. */
  order: number;
  name: string;
  title: string;
  /** Arguments as streamed (already masked by the harness). */
  args: string;
  result: string | null;
  status: string;
  risk: string | null;
  error: string | null;
  /** The applied changeset (a write that executed), for Undo. */
  changesetId: string | null;
  /** Policy decisions on its proposal. */
  policy: PolicyNote[];
  /** The proposal waits in the app for an owner's approval. */
  needsOwner: boolean;
}

/** One proposed row change as shown in the confirm dialog. */
export interface ChangeRow {
  op: string;
  table: string;
  id: string;
  before?: Record<string, unknown>;
  after?: Record<string, unknown>;
}

/** A policy decision shown to the user (models/policy.ts PolicyDecision, loosely). */
export interface PolicyNote {
  effect: string;
  reason: string;
  code?: string;
}

export interface ConfirmRequest {
  toolCallId: string;
  /** The proposed changeset's content hash (the approval is bound to it), when the harness sends one. */
  contentHash: string | null;
  policy: PolicyNote[];
  tool: string;
  title: string;
  summary: string;
  argsHash: string;
  expiresAt: string;
  rows: ChangeRow[];
}

export interface RunState {
  runId: string | null;
  /** What the user asked (kept by the view; the stream carries the answer). */
  request: string | null;
  status: 'idle' | 'running' | 'waiting_confirm' | 'finished' | 'error';
  messages: ChatMessage[];
  toolCalls: ToolCallView[];
  confirm: ConfirmRequest | null;
  lastEventId: string | null;
  error: string | null;
  /** A navigation the assistant asked for (`open_page`), consumed by the panel. */
  openPage: string | null;
  reveal: Record<string, string> | null;
  /** Set when the run's tool set was narrowed (untrusted content entered it). */
  narrowed: string | null;
  /** Set when the run ended cancelled (Stop, or the confirm wait ran out): why. */
  stopped: string | null;
}

/** The empty panel. */
export const EMPTY_RUN: RunState = {
  runId: null,
  request: null,
  status: 'idle',
  messages: [],
  toolCalls: [],
  confirm: null,
  lastEventId: null,
  error: null,
  openPage: null,
  reveal: null,
  narrowed: null,
  stopped: null,
};

type Loose = { type: string; [k: string]: unknown };

const str = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));

function upsertTool(s: RunState, id: string, patch: Partial<ToolCallView>): ToolCallView[] {
  const i = s.toolCalls.findIndex((t) => t.id === id);
  if (i < 0)
    return [
      ...s.toolCalls,
      {
        id,
        order: s.messages.length + s.toolCalls.length,
        name: '',
        title: '',
        args: '',
        result: null,
        status: 'started',
        risk: null,
        error: null,
        changesetId: null,
        policy: [],
        needsOwner: false,
        ...patch,
      },
    ];
  const out = s.toolCalls.slice();
  out[i] = { ...(out[i] as ToolCallView), ...patch };
  return out;
}

function appendText(s: RunState, id: string, delta: string, role = 'assistant'): ChatMessage[] {
  const i = s.messages.findIndex((m) => m.id === id);
  if (i < 0) return [...s.messages, { id, order: s.messages.length + s.toolCalls.length, role, text: delta, done: false }];
  const out = s.messages.slice();
  const m = out[i] as ChatMessage;
  out[i] = { ...m, text: m.text + delta };
  return out;
}

function policyOf(v: unknown): PolicyNote[] {
  const d = Array.isArray(v) ? v : Array.isArray((v as { decisions?: unknown } | null)?.decisions) ? (v as { decisions: unknown[] }).decisions : [];
  return d.map((x) => ({
    effect: str((x as PolicyNote).effect),
    reason: str((x as PolicyNote).reason),
    ...((x as PolicyNote).code ? { code: str((x as PolicyNote).code) } : {}),
  }));
}

function rowsOf(changeset: unknown): ChangeRow[] {
  const changes = (changeset as { changes?: unknown } | null)?.changes;
  return Array.isArray(changes) ? (changes as ChangeRow[]) : [];
}

/** Fold one event into the run state. Events at or before `lastEventId` (replays) are ignored. */
export function reduceRun(s: RunState, env: RunEventEnvelope): RunState {
  if (s.runId && env.runId !== s.runId) return s;
  if (!env.ephemeral && s.lastEventId !== null && env.seq <= Number(s.lastEventId)) return s;
  const e = env.event as unknown as Loose;
  const next: RunState = { ...s, runId: env.runId, lastEventId: env.ephemeral ? s.lastEventId : env.id };
  switch (e.type) {
    case 'RUN_STARTED':
      return { ...next, status: 'running', error: null };
    case 'RUN_FINISHED': {
      const outcome = (e.outcome ?? {}) as { type?: string };
      const reason = ((e.result ?? {}) as { reason?: unknown }).reason;
      return { ...next, status: 'finished', confirm: null, stopped: outcome.type === 'cancelled' ? str(reason) || 'Stopped.' : null };
    }
    case 'RUN_ERROR':
      return { ...next, status: 'error', confirm: null, error: str(e.message) || 'The run failed.' };
    case 'TEXT_MESSAGE_START':
      return { ...next, messages: appendText(s, str(e.messageId), '', str(e.role) || 'assistant') };
    case 'TEXT_MESSAGE_CONTENT':
    case 'TEXT_MESSAGE_CHUNK':
      return { ...next, messages: appendText(s, str(e.messageId), str(e.delta)) };
    case 'TEXT_MESSAGE_END':
      return { ...next, messages: s.messages.map((m) => (m.id === e.messageId ? { ...m, done: true } : m)) };
    case 'TOOL_CALL_START':
      return { ...next, toolCalls: upsertTool(s, str(e.toolCallId), { name: str(e.toolCallName) }) };
    case 'TOOL_CALL_ARGS': {
      const prev = s.toolCalls.find((t) => t.id === e.toolCallId);
      return { ...next, toolCalls: upsertTool(s, str(e.toolCallId), { args: (prev?.args ?? '') + str(e.delta) }) };
    }
    case 'TOOL_CALL_END':
      return next;
    case 'TOOL_CALL_RESULT':
      return { ...next, toolCalls: upsertTool(s, str(e.toolCallId), { result: str(e.content) }) };
    case 'CUSTOM': {
      const v = (e.value ?? {}) as Record<string, unknown>;
      switch (e.name) {
        case CUSTOM_EVENTS.toolCall: {
          const status = str(v.status);
          const tools = upsertTool(s, str(v.toolCallId), {
            name: str(v.tool),
            title: str(v.title),
            risk: v.risk ? str(v.risk) : null,
            status,
            error: v.error ? str((v.error as { message?: unknown }).message ?? v.error) : null,
            ...(v.changesetId ? { changesetId: str(v.changesetId) } : {}),
          });
          const confirm = s.confirm && s.confirm.toolCallId === v.toolCallId && status !== 'proposed' ? null : s.confirm;
          return { ...next, toolCalls: tools, confirm, status: confirm ? 'waiting_confirm' : next.status === 'waiting_confirm' ? 'running' : next.status };
        }
        case CUSTOM_EVENTS.confirmRequired:
          return {
            ...next,
            status: 'waiting_confirm',
            confirm: {
              toolCallId: str(v.toolCallId),
              tool: str(v.tool),
              title: str(v.title),
              summary: str(v.summary),
              argsHash: str(v.argsHash),
              expiresAt: str(v.expiresAt),
              rows: rowsOf(v.changeset),
              contentHash: v.contentHash ? str(v.contentHash) : null,
              policy: policyOf(v.policy),
            },
          };
        case 'kinetix.policy':
          return { ...next, toolCalls: upsertTool(s, str(v.toolCallId), { policy: policyOf(v.decisions) }) };
        case 'kinetix.needs_owner':
          return {
            ...next,
            toolCalls: upsertTool(s, str(v.toolCallId), {
              needsOwner: true,
              title: str(v.title) || (s.toolCalls.find((t) => t.id === v.toolCallId)?.title ?? ''),
            }),
          };
        case 'kinetix.tools_narrowed':
          return { ...next, narrowed: 'Record text entered this conversation, so tools that change data were switched off for the rest of this answer.' };
        case CUSTOM_EVENTS.openPage:
          return { ...next, openPage: str(v.path) };
        case CUSTOM_EVENTS.reveal:
          return { ...next, reveal: (v.values ?? null) as Record<string, string> | null };
        default:
          return next;
      }
    }
    default:
      return next;
  }
}
