/**
 * What every stage of the harness shares: a run in flight ({@link ActiveRun}), how a run ends
 * ({@link RunOutcome}), what the loop decided about a tool call before it is dispatched
 * ({@link PreCheck}), and the harness's dependencies ({@link HarnessDeps}). No behaviour here.
 */
import type { Span } from '@opentelemetry/api';
import { trace as otel } from '@opentelemetry/api';
import type { ErrorPayload } from '../../models/errors';
import type { AppError } from '../../models/errors';
import type { Db } from '../data/db';
import type * as K from '../data/kinetix';
import type { EventBus } from './bus';
import type { KinetixLimits } from './limits';
import type { TokenCounts } from './pricing';
import type { ChatTurn } from './prompt';
import type { ModelMessage, ModelProvider, ToolInputIssue } from './provider';
import type { LogFn, ToolRegistry } from './registry';
import type { Scheduler } from './scheduler';
import type { Tool } from './tool';

/** How a run ended. */
export interface RunOutcome {
  runId: string;
  conversationId: string;
  status: K.RunStatus;
  /** The assistant's final text (empty when none). */
  text: string;
  error?: ErrorPayload & { runCode?: string };
}

/** A user decision on a pending write. */
export type Decision = 'approve' | 'decline' | 'timeout' | 'stopped';

/** One run in flight in this process. */
export interface ActiveRun {
  id: string;
  conversationId: string;
  orgId: string;
  userId: string;
  page: string | null;
  model: string;
  tools: ReadonlyMap<string, Tool>;
  provider: ModelProvider;
  abort: AbortController;
  cancelReason: null | 'stopped' | 'confirm_timeout';
  seq: number;
  traceSeq: number;
  costUsd: number;
  remainingUsd: number;
  iterations: number;
  history: ChatTurn[];
  digest: string;
  messages: ModelMessage[];
  release: () => void;
  done: Promise<RunOutcome>;
  resolveDone: (o: RunOutcome) => void;
  partial: { requestIndex: number; id: string | null; model: string; usage: TokenCounts } | null;
  /** OpenTelemetry span of the run (a no-op unless the app registered a tracer provider). */
  span: Span;
  /** True once untrusted content entered the run: high-privilege tools are gone from `tools`. */
  gated: boolean;
  /** Every tool_use id the model sent in this run (a repeated id is refused). */
  toolUseIds: Set<string>;
  /** A model of this run whose price is unknown (its responses were counted at the price ceiling). */
  unpriced: string | null;
  /** The account as it was when the run started (main/data/identity.ts `accountStamp`): a change stops the run. */
  accountStamp: string | null;
}

/** Why a run stops when its account changed since it started (main/data/identity.ts `accountStamp`). */
export const ACCOUNT_CHANGED =
  'Your account changed while this request ran (its role, athlete link, PIN or status), so the request was stopped and nothing more was read or changed. Sign in again.';

/** What the loop decided about a tool call before it is dispatched. */
export interface PreCheck {
  /** The provider found the input unusable (oversized, over-deep, cut off). */
  issue?: ToolInputIssue;
  /** Refused outright (repeated id, over the per-response cap); recorded, not run. */
  refusal?: AppError;
  /** The response stopped at max_tokens. */
  truncated?: boolean;
}

/** What the stages of one harness share (one per process and database). */
export interface HarnessDeps {
  db: Db;
  tools: ToolRegistry;
  scheduler: Scheduler;
  /** One-line log sink; lines are scrubbed and fields masked before they get here. */
  log: LogFn;
  env: NodeJS.ProcessEnv;
  limits: KinetixLimits;
  bus: EventBus;
  /** Runs in flight in this process, by id. */
  active: Map<string, ActiveRun>;
}

/**
 * Spans mirror runs, model calls and tool calls with ids, names, statuses and token counts only:
 * no message text, arguments, results or keys (content capture is off).
 */
export const tracer = otel.getTracer('athlete-intelligence.kinetix');
