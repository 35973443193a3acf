/**
 * The one module that talks to the main process. In Electron it uses the preload's
 * `window.athleteIntelligence` (the contract over IPC); in a browser served by the web host it
 * uses fetch with the per-launch token (read from the page's meta tag) in a header, never a URL.
 */
import type { CallResult, ContractBridge, OpInput, OpName, OpOutput, TypedVerb, VerbResults, WriteVerbResult } from '../../models/contract';
import type { ErrorPayload } from '../../models/errors';

declare global {
  interface Window {
    athleteIntelligence?: ContractBridge;
  }
}

/** An error reply, thrown by {@link readVerb}/{@link writeVerb}; carries the typed payload. */
export class CallError extends Error {
  readonly payload: ErrorPayload;
  constructor(payload: ErrorPayload) {
    super(payload.message);
    this.name = payload.code;
    this.payload = payload;
  }
}

const SESSION_KEY = 'ai-host-session';

function webBridge(): ContractBridge {
  const token = document.querySelector('meta[name="ai-host-token"]')?.getAttribute('content') ?? '';
  return {
    async call<K extends OpName>(op: K, input: OpInput<K>): Promise<CallResult<OpOutput<K>>> {
      const headers: Record<string, string> = { 'content-type': 'application/json', 'x-ai-token': token };
      const session = sessionStorage.getItem(SESSION_KEY);
      if (session) headers['x-ai-session'] = session;
      let res: Response;
      try {
        res = await fetch(`/api/call/${op}`, { method: 'POST', headers, body: JSON.stringify(input ?? {}), credentials: 'omit', cache: 'no-store' });
      } catch {
        return { ok: false, error: { code: 'Internal', message: 'The app host is not reachable. Check that `npm run web` is still running, then reload.' } };
      }
      const issued = res.headers.get('x-ai-session');
      if (issued) sessionStorage.setItem(SESSION_KEY, issued);
      try {
        return (await res.json()) as CallResult<OpOutput<K>>;
      } catch {
        return { ok: false, error: { code: 'Internal', message: `The app host answered ${res.status} without a result.` } };
      }
    },
  };
}

/** The transport in use. */
export const bridge: ContractBridge = typeof window !== 'undefined' && window.athleteIntelligence ? window.athleteIntelligence : webBridge();

/** Call a contract operation; returns the result envelope (never throws). */
export function call<K extends OpName>(op: K, input: OpInput<K>): Promise<CallResult<OpOutput<K>>> {
  return bridge.call(op, input);
}

/** Call an operation and return its value. @throws CallError */
export async function callOrThrow<K extends OpName>(op: K, input: OpInput<K>): Promise<OpOutput<K>> {
  const r = await bridge.call(op, input);
  if (!r.ok) throw new CallError(r.error);
  return r.value;
}

/** Run a read verb with a typed result. @throws CallError */
export async function readVerb<V extends TypedVerb>(verb: V, input: Record<string, unknown> = {}): Promise<VerbResults[V]> {
  return (await callOrThrow('verb.call', { verb, input })) as VerbResults[V];
}

/** Run a write verb (applied at once: the user is their own approval). @throws CallError */
export async function writeVerb(verb: string, input: Record<string, unknown>, idempotencyKey: string = newKey()): Promise<WriteVerbResult> {
  return (await callOrThrow('verb.call', { verb, input, idempotency_key: idempotencyKey })) as WriteVerbResult;
}

/** A fresh idempotency key. */
export function newKey(): string {
  return typeof crypto !== 'undefined' && 'randomUUID' in crypto ? crypto.randomUUID() : `k-${Date.now()}-${Math.random().toString(36).slice(2)}`;
}
