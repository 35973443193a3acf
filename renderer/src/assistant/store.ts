/** The assistant panel's store: open/closed, the conversation, the current run's folded state. */
import { create } from 'zustand';
import type { RunEventEnvelope } from '../../../models/contract';
import type { RunState } from './events';
import { EMPTY_RUN, reduceRun } from './events';

export interface AssistantStore {
  open: boolean;
  conversationId: string | null;
  run: RunState;
  setOpen(open: boolean): void;
  /** A new run of the conversation starts (state cleared; events will rebuild it). */
  begin(runId: string, conversationId: string, request: string): void;
  /** Fold one streamed (or replayed) event into the run. */
  apply(env: RunEventEnvelope): void;
  fail(message: string): void;
  clearOpenPage(): void;
  reset(): void;
}

export const useAssistant = create<AssistantStore>((set) => ({
  open: true,
  conversationId: null,
  run: EMPTY_RUN,
  setOpen: (open) => set({ open }),
  begin: (runId, conversationId, request) => set({ conversationId, run: { ...EMPTY_RUN, runId, request, status: 'running' } }),
  apply: (env) => set((s) => ({ run: reduceRun(s.run, env) })),
  fail: (message) => set((s) => ({ run: { ...s.run, status: 'error', error: message } })),
  clearOpenPage: () => set((s) => ({ run: { ...s.run, openPage: null } })),
  reset: () => set({ run: EMPTY_RUN, conversationId: null }),
}));
