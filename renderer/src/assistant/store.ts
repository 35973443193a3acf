/** The assistant panel's store: open/closed, the current run's folded state. */
import { create } from 'zustand';
import type { RunEventEnvelope } from '../../../models/contract';
import type { RunState } from './events';
import { EMPTY_RUN, reduceRun } from './events';

export interface AssistantStore {
  open: boolean;
  run: RunState;
  setOpen(open: boolean): void;
  /** Fold one streamed (or replayed) event into the run. */
  apply(env: RunEventEnvelope): void;
  reset(): void;
}

export const useAssistant = create<AssistantStore>((set) => ({
  open: true,
  run: EMPTY_RUN,
  setOpen: (open) => set({ open }),
  apply: (env) => set((s) => ({ run: reduceRun(s.run, env) })),
  reset: () => set({ run: EMPTY_RUN }),
}));
