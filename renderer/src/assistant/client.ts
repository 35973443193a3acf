/**
 * Talks to the assistant through the contract: start a turn, follow its events (replaying from
 * the start after a reload, resuming from the last event id after a dropped connection), approve
 * or decline a proposed write, stop. The run being followed is remembered per tab.
 */
import type { ErrorPayload } from '../../../models/errors';
import { bridge, request } from '../bridge';
import { useAssistant } from './store';

const ACTIVE_KEY = 'ai-assistant-run';
const MAX_RESUMES = 5;

interface Remembered {
  userId: string;
  runId: string;
  conversationId: string;
  request: string;
}

let unsubscribe: (() => void) | null = null;

function remember(r: Remembered | null): void {
  if (r) sessionStorage.setItem(ACTIVE_KEY, JSON.stringify(r));
  else sessionStorage.removeItem(ACTIVE_KEY);
}

/** Follow `runId`'s events from `lastEventId` (none = from the start). */
function follow(runId: string, lastEventId: string | null, resumes = 0): void {
  unsubscribe?.();
  const st = useAssistant.getState();
  unsubscribe = bridge.subscribe(
    'assistant.events',
    { run_id: runId, ...(lastEventId ? { last_event_id: lastEventId } : {}) },
    (env) => useAssistant.getState().apply(env),
    (error?: ErrorPayload) => {
      unsubscribe = null;
      const now = useAssistant.getState().run;
      if (!error) return;
      // A dropped connection mid-run: resume from the last event id (bounded).
      if (error.code === 'Internal' && now.runId === runId && now.status !== 'finished' && now.status !== 'error' && resumes < MAX_RESUMES) {
        setTimeout(() => follow(runId, now.lastEventId, resumes + 1), 250 * (resumes + 1));
        return;
      }
      useAssistant.getState().fail(error.message);
    },
  );
  void st;
}

/** Ask the assistant. `page` is the in-app path the user is on. */
export async function ask(userId: string, message: string, page: string): Promise<ErrorPayload | null> {
  const st = useAssistant.getState();
  const r = await request('assistant.start', { message, page, ...(st.conversationId ? { conversation_id: st.conversationId } : {}) });
  if (!r.ok) return r.error;
  st.begin(r.value.run_id, r.value.conversation_id, message);
  remember({ userId, runId: r.value.run_id, conversationId: r.value.conversation_id, request: message });
  follow(r.value.run_id, null);
  return null;
}

/** After a reload: replay the remembered run of this user from its first event. */
export function resumeRemembered(userId: string): void {
  const raw = sessionStorage.getItem(ACTIVE_KEY);
  if (!raw) return;
  let r: Remembered;
  try {
    r = JSON.parse(raw) as Remembered;
  } catch {
    remember(null);
    return;
  }
  if (r.userId !== userId) {
    remember(null);
    return;
  }
  useAssistant.getState().begin(r.runId, r.conversationId, r.request);
  follow(r.runId, null);
}

/** Approve or decline the pending write. */
export async function decide(approve: boolean): Promise<ErrorPayload | null> {
  const c = useAssistant.getState().run.confirm;
  if (!c) return null;
  const r = await request('assistant.confirm', {
    tool_call_id: c.toolCallId,
    approve,
    ...(approve ? { args_hash: c.argsHash, ...(c.contentHash ? { content_hash: c.contentHash } : {}) } : {}),
  });
  return r.ok ? null : r.error;
}

/** Stop the current run. */
export async function stopRun(): Promise<ErrorPayload | null> {
  const runId = useAssistant.getState().run.runId;
  if (!runId) return null;
  const r = await request('assistant.stop', { run_id: runId });
  return r.ok ? null : r.error;
}

/** Forget the conversation (sign-out, "New conversation"). */
export function forget(): void {
  unsubscribe?.();
  unsubscribe = null;
  remember(null);
  useAssistant.getState().reset();
}
