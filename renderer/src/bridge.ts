/**
 * The one module that talks to the main process. In Electron it uses the preload's
 * `window.athleteIntelligence` (the contract over IPC); in a browser served by the web host it
 * uses fetch with the per-launch token (read from the page's meta tag) in a header, never a URL.
 */
import type {
  CallInput,
  CallName,
  CallOutput,
  CallResult,
  ContractBridge,
  OpInput,
  OpName,
  OpOutput,
  StreamEvents,
  StreamInput,
  StreamName,
} from '../../models/contract';
import type { ErrorPayload } from '../../models/errors';
import { AppError } from '../../models/errors';
import type { EventSourceMessage } from 'eventsource-parser';
import { createParser } from 'eventsource-parser';

declare global {
  interface Window {
    athleteIntelligence?: ContractBridge;
  }
}

/**
 * An error reply, thrown by {@link call}: the typed error of the far side, rebuilt. Switch on
 * `code` (models/errors.ts `ErrorCode`); `issues` names each invalid field of a Validation error
 * (see {@link CallError.fieldErrors}).
 */
export class CallError extends AppError {
  /** The payload as it crossed the bridge. */
  get payload(): ErrorPayload {
    return this.toJSON();
  }
  /** Validation messages by field path (`rows.3.rpe` → "…"); empty for other codes. */
  fieldErrors(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const i of this.issues ?? []) out[i.path] ??= i.message;
    return out;
  }
}

const SESSION_KEY = 'ai-host-session';

/**
 * Read a `text/event-stream` body with the one SSE parser (eventsource-parser): `onMessage` gets
 * each event (`event` name, `id`, `data` with multi-line data joined); comments (the host's
 * heartbeats) are skipped. Returns when the body ends or, after an event, `stop()` is true.
 */
export async function readEventStream(
  body: ReadableStream<BufferSource>,
  onMessage: (m: EventSourceMessage) => void,
  stop: () => boolean = () => false,
): Promise<void> {
  const parser = createParser({ onEvent: onMessage });
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    parser.feed(value);
    if (stop()) {
      await reader.cancel().catch(() => undefined);
      return;
    }
  }
}

function webBridge(): ContractBridge {
  const token = document.querySelector('meta[name="ai-host-token"]')?.getAttribute('content') ?? '';
  const headers = (): Record<string, string> => {
    const h: Record<string, string> = { 'content-type': 'application/json', 'x-ai-token': token };
    const session = sessionStorage.getItem(SESSION_KEY);
    if (session) h['x-ai-session'] = session;
    return h;
  };
  return {
    subscribe<K extends StreamName>(
      stream: K,
      input: StreamInput<K>,
      onEvent: (e: StreamEvents[K]) => void,
      onEnd: (error?: ErrorPayload) => void,
    ): () => void {
      const ctl = new AbortController();
      let ended = false;
      const finish = (error?: ErrorPayload) => {
        if (ended) return;
        ended = true;
        onEnd(error);
      };
      void (async () => {
        try {
          const res = await fetch(`/api/stream/${stream}`, {
            method: 'POST',
            headers: headers(),
            body: JSON.stringify(input ?? {}),
            credentials: 'omit',
            cache: 'no-store',
            signal: ctl.signal,
          });
          if (!res.ok || !res.body) {
            const body = (await res.json().catch(() => null)) as { error?: ErrorPayload } | null;
            finish(body?.error ?? { code: 'Internal', message: `The stream was refused (${res.status}).` });
            return;
          }
          await readEventStream(
            res.body,
            (m) => {
              if (ended) return;
              if (m.event === 'end') finish();
              else if (m.event === 'error') finish(JSON.parse(m.data) as ErrorPayload);
              else onEvent(JSON.parse(m.data) as StreamEvents[K]);
            },
            () => ended,
          );
          finish({ code: 'Internal', message: 'The connection to the app host was lost; reconnecting resumes from the last event.' });
        } catch {
          if (!ctl.signal.aborted) finish({ code: 'Internal', message: 'The connection to the app host was lost; reconnecting resumes from the last event.' });
        }
      })();
      return () => {
        ended = true;
        ctl.abort();
      };
    },
    async call<K extends OpName>(op: K, input: OpInput<K>): Promise<CallResult<OpOutput<K>>> {
      let res: Response;
      try {
        res = await fetch(`/api/call/${op}`, { method: 'POST', headers: headers(), body: JSON.stringify(input ?? {}), credentials: 'omit', cache: 'no-store' });
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

const sessionEndedListeners = new Set<(error: ErrorPayload) => void>();

/**
 * Call `fn` when a call is answered `Unauthenticated` and the host no longer holds this window's
 * session (its account changed, or it was signed out elsewhere), so the shell can return to sign-in
 * instead of showing the old user (issue 13 re-review minor). A refused sign-in or a wrong PIN in a
 * form (the session still stands) is not one. Returns the unsubscribe function.
 */
export function onSessionEnded(fn: (error: ErrorPayload) => void): () => void {
  sessionEndedListeners.add(fn);
  return () => sessionEndedListeners.delete(fn);
}

async function watched<K extends OpName>(op: K, input: OpInput<K>): Promise<CallResult<OpOutput<K>>> {
  const r = await bridge.call(op, input);
  // Unauthenticated also answers a wrong PIN in a form (signing in to HQ, enrolling): only a session
  // the host no longer holds (session.me → null) sends the window back to sign-in.
  if (!r.ok && r.error.code === 'Unauthenticated' && op !== 'session.signIn' && op !== 'session.me' && sessionEndedListeners.size > 0) {
    const me = await bridge.call('session.me', {});
    if (me.ok && me.value === null) for (const fn of sessionEndedListeners) fn(r.error);
  }
  return r;
}

/** Call a contract operation; returns the result envelope (never throws). */
export function request<K extends OpName>(op: K, input: OpInput<K>): Promise<CallResult<OpOutput<K>>> {
  return watched(op, input);
}

/**
 * The contract's operations that are not verbs (everything else is a verb, carried by
 * `verb.call`). A `Record` over the names, so a new operation must be listed to compile.
 */
const OPERATIONS: Readonly<Record<Exclude<OpName, 'verb.call'>, true>> = {
  'session.users': true,
  'session.signIn': true,
  'session.people': true,
  'session.signOut': true,
  'session.me': true,
  'assistant.start': true,
  'assistant.confirm': true,
  'assistant.stop': true,
  'assistant.trace': true,
  'settings.assistant': true,
  'settings.updateAssistant': true,
  'settings.organisation': true,
  'settings.updateOrganisation': true,
  'proposals.list': true,
  'proposals.approve': true,
  'proposals.decline': true,
  'proposals.narrow': true,
  'forms.submit': true,
  'capture.recordings': true,
  'capture.importTrial': true,
  'capture.process': true,
  'capture.job': true,
  'capture.cancel': true,
  'capture.sources': true,
  'capture.openRig': true,
  'capture.closeRig': true,
  'capture.preview': true,
  'capture.rigStatus': true,
  'capture.startRecording': true,
  'capture.stopRecording': true,
  'capture.tapFrame': true,
  'capture.tap': true,
  'capture.calibStart': true,
  'capture.calibState': true,
  'capture.calibFrame': true,
  'capture.calibSet': true,
  'capture.calibCapture': true,
  'capture.calibRetake': true,
  'capture.calibIntrinsics': true,
  'capture.calibExtrinsics': true,
  'capture.calibImport': true,
  'capture.calibLayout': true,
  'capture.calibSave': true,
  'capture.calibClose': true,
  'sync.status': true,
  'sync.enrol': true,
  'sync.now': true,
  'sync.conflicts': true,
  'sync.discard': true,
  'sync.hqSignIn': true,
  'sync.signInToHq': true,
  'sync.enrolmentCode': true,
  'admin.setPin': true,
};
function isOperation(name: CallName): name is Exclude<OpName, 'verb.call'> {
  return Object.prototype.hasOwnProperty.call(OPERATIONS, name);
}

/** Options of {@link call}. */
export interface CallOptions {
  /**
   * For a write verb: reuse the same key when retrying the same submission (a retry then returns
   * the first result instead of writing twice). Defaults to a fresh key per call.
   */
  idempotencyKey?: string;
}

/**
 * Call an operation or a service verb by name, with its input and result typed by the verb map
 * (models/verbs.ts) or the contract: `await call('athletes.list', { squad_id })` is a
 * `{ total, athletes }`. A write verb is applied at once (the user is their own approval) and
 * returns `{ changeset, reveal? }`.
 * @throws CallError (code NotFound, Forbidden, Validation with `issues`, Conflict, …)
 */
export async function call<K extends CallName>(name: K, input: CallInput<K>, opts: CallOptions = {}): Promise<CallOutput<K>> {
  const r = isOperation(name)
    ? await watched(name, input as OpInput<typeof name>)
    : await watched('verb.call', { verb: name, input, idempotency_key: opts.idempotencyKey ?? newKey() });
  if (!r.ok) throw new CallError(r.error);
  // The one place a reply is given its type: both ends are typed by the same map (the services
  // implement models/verbs.ts through a mapped type; the contract types the operations).
  return r.value as CallOutput<K>;
}

/** A fresh idempotency key. */
export function newKey(): string {
  return typeof crypto !== 'undefined' && 'randomUUID' in crypto ? crypto.randomUUID() : `k-${Date.now()}-${Math.random().toString(36).slice(2)}`;
}
