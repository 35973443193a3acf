/**
 * Compile-time checks that the contract's views (models/contract.ts) match what the harness
 * really returns. No runtime code. (Every service verb's result is checked by the verb map
 * itself: main/services/index.ts implements models/verbs.ts through a mapped type.)
 */
import type { AssistantEventNames, ProposalItemView, RunEventEnvelope as ContractEnvelope, RunTraceView } from '../../models/contract';
import type { ProposalView } from '../kinetix/proposals';
import type { Kinetix } from '../kinetix/harness';
import type { RunEventEnvelope as BusEnvelope } from '../kinetix/bus';
import type { KINETIX_EVENTS } from '../kinetix/events';

type Assert<T extends true> = T;
type Assignable<Actual, Declared> = [Actual] extends [Declared] ? true : false;

/** Each line fails to compile when the harness's shape no longer fits the contract's view. */
export type ContractViewChecks = [
  // The harness's event envelope and custom event names are what the renderer folds.
  Assert<Assignable<BusEnvelope, ContractEnvelope>>,
  // Every event name the renderer folds exists in the harness with the same value.
  Assert<Assignable<typeof KINETIX_EVENTS, AssistantEventNames>>,
  Assert<Assignable<ReturnType<Kinetix['getRunTrace']>, RunTraceView>>,
  Assert<Assignable<ProposalView, ProposalItemView>>,
];
