/**
 * Scripted models for the eval. A script is a list of steps; step *i* answers the *i*-th model
 * request of a run, given what the model has seen so far (the user's message, the tools it was
 * offered, every tool result of this run, parsed out of the harness's data envelopes). The steps
 * are served by the scripted Messages API server, so the harness talks to them through the real
 * Anthropic SDK exactly as it talks to the real model.
 */
import type { RecordedRequest, ScriptedMessage } from '../testing/scripted-anthropic';

/** A tool call a scripted model makes. */
export interface Call {
  name: string;
  input: Record<string, unknown>;
  /** The tool_use id to send (default: a fresh one). */
  id?: string;
  /** Stream this raw JSON instead of `input` (a cut-off or malformed input). */
  rawJson?: string;
  /** Send the input in content_block_start with no deltas (as some gateways do). */
  inputInStart?: boolean;
}

/** One tool result the model has seen. */
export interface Seen {
  name: string;
  input: unknown;
  isError: boolean;
  /** The parsed JSON inside the data envelope (or the error object), or the raw text. */
  value: unknown;
  /** The text exactly as the model received it. */
  raw: string;
}

/** What a step sees when it is asked for the next model response. */
export interface Turn {
  /** 0-based index of this request within the run. */
  index: number;
  /** The user's message of this run. */
  message: string;
  /** Names of the tools the harness offered the model on this request. */
  tools: string[];
  /** System prompt text (rules, identity, digest). */
  system: string;
  /** Every tool result of this run so far, oldest first. */
  results: Seen[];
  /** The latest successful result of tool `name`, parsed (undefined when none). */
  last<T = Record<string, unknown>>(name: string): T | undefined;
}

/** What a step answers: text, tool calls, or both. */
export interface Reply {
  text?: string;
  calls?: Call[];
  /** The response's stop reason (default: tool_use with calls, else end_turn). */
  stopReason?: string;
}

/** One scripted model step. */
export type Step = (t: Turn) => Reply;

/** A scripted model: its steps, in order. After the last step the model ends the turn. */
export type Script = Step[];

/** Parse a tool result as the harness formats it (`<data …>\nJSON\n</data>` or a JSON error). */
export function parseToolContent(raw: string): unknown {
  let body = raw.trim();
  if (body.startsWith('<data ')) {
    const nl = body.indexOf('\n');
    body = body.slice(nl + 1).replace(/\n?<\/data>\s*$/, '');
  }
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return raw;
  }
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((c) => (c && typeof c === 'object' && 'text' in c ? String((c as { text: unknown }).text) : '')).join('');
  return '';
}

/** Rebuild the model's view of the current run from a request the scripted server received. */
export function turnOf(req: RecordedRequest): Turn {
  const msgs = req.body.messages;
  // The run's own messages start at the last plain user message (earlier ones are replayed history).
  let start = 0;
  msgs.forEach((m, i) => {
    if (
      m.role === 'user' &&
      (typeof m.content === 'string' || (Array.isArray(m.content) && !(m.content as { type?: string }[]).some((b) => b.type === 'tool_result')))
    )
      start = i;
  });
  const first = msgs[start];
  const message = first ? textOf(first.content) : '';
  const uses = new Map<string, { name: string; input: unknown }>();
  const results: Seen[] = [];
  let index = 0;
  for (const m of msgs.slice(start + 1)) {
    if (!Array.isArray(m.content)) continue;
    if (m.role === 'assistant') {
      index++;
      for (const b of m.content as { type: string; id?: string; name?: string; input?: unknown }[])
        if (b.type === 'tool_use' && b.id) uses.set(b.id, { name: b.name ?? '', input: b.input });
    } else {
      for (const b of m.content as { type: string; tool_use_id?: string; content?: unknown; is_error?: boolean }[]) {
        if (b.type !== 'tool_result') continue;
        const u = uses.get(b.tool_use_id ?? '');
        const raw = textOf(b.content);
        results.push({ name: u?.name ?? '?', input: u?.input, isError: b.is_error === true, value: parseToolContent(raw), raw });
      }
    }
  }
  const system = Array.isArray(req.body.system) ? req.body.system.map((s) => s.text).join('\n\n') : (req.body.system ?? '');
  return {
    index,
    message,
    tools: (req.body.tools ?? []).map((t) => t.name),
    system,
    results,
    last<T>(name: string): T | undefined {
      for (let i = results.length - 1; i >= 0; i--) {
        const r = results[i]!;
        if (r.name === name && !r.isError) return r.value as T;
      }
      return undefined;
    },
  };
}

/** The scripted server's answer for step `turn.index` of `script` (the end of the turn after the last step). */
export function respond(script: Script, turn: Turn): ScriptedMessage {
  const step = script[turn.index];
  if (!step) return { text: 'Done.' };
  const r = step(turn);
  const msg: ScriptedMessage = {};
  if (r.text) msg.text = r.text;
  if (r.calls && r.calls.length > 0)
    msg.toolUses = r.calls.map((c) => ({
      name: c.name,
      input: c.input,
      ...(c.id ? { id: c.id } : {}),
      ...(c.rawJson !== undefined ? { rawJson: c.rawJson } : {}),
      ...(c.inputInStart ? { inputInStart: true } : {}),
    }));
  if (r.stopReason) msg.stopReason = r.stopReason;
  if (!msg.text && !msg.toolUses) msg.text = 'Done.';
  return msg;
}

/** A step that calls tools (inputs may depend on what was seen). */
export function call(...calls: (Call | ((t: Turn) => Call))[]): Step {
  return (t) => ({ calls: calls.map((c) => (typeof c === 'function' ? c(t) : c)) });
}

/** A step that ends the turn with text (which may quote what was seen). */
export function say(text: string | ((t: Turn) => string)): Step {
  return (t) => ({ text: typeof text === 'function' ? text(t) : text });
}
