/**
 * Compile-time check that the result types the pages rely on (`VerbResults` in
 * models/contract.ts) match what the service functions really return. No runtime code.
 */
import type { AssistantEventNames, ProposalItemView, RunEventEnvelope as ContractEnvelope, RunTraceView, VerbResults } from '../../models/contract';
import type { ProposalView } from '../kinetix/proposals';
import type { Kinetix } from '../kinetix/harness';
import type { RunEventEnvelope as BusEnvelope } from '../kinetix/bus';
import type { KINETIX_EVENTS } from '../kinetix/events';
import type * as A from '../services/athletes';
import type * as C from '../services/clinical';
import type * as W from '../services/workload';
import type * as Cap from '../services/capture';
import type * as R from '../services/rates';
import type * as Ad from '../services/admin';
import type * as H from '../services/help';

type Out<V> = V extends { run: (...a: never[]) => infer O } ? O : never;
type Assert<T extends true> = T;
type Assignable<Actual, Declared> = [Actual] extends [Declared] ? true : false;

/** Each line fails to compile when a service's result no longer fits the page's declared type. */
export type VerbResultChecks = [
  Assert<Assignable<Out<typeof A.listAthletes>, VerbResults['athletes.list']>>,
  Assert<Assignable<Out<typeof A.getAthlete>, VerbResults['athletes.get']>>,
  Assert<Assignable<Out<typeof A.listSquads>, VerbResults['squads.list']>>,
  Assert<Assignable<Out<typeof C.listInjuries>, VerbResults['injuries.list']>>,
  Assert<Assignable<Out<typeof C.listRtp>, VerbResults['rtp.list']>>,
  Assert<Assignable<Out<typeof C.listScreenings>, VerbResults['screenings.list']>>,
  Assert<Assignable<Out<typeof C.listWellness>, VerbResults['wellness.list']>>,
  Assert<Assignable<Out<typeof C.listVitals>, VerbResults['vitals.list']>>,
  Assert<Assignable<Out<typeof W.listLoads>, VerbResults['workload.listLoads']>>,
  Assert<Assignable<Out<typeof W.getAcwr>, VerbResults['workload.acwr']>>,
  Assert<Assignable<Out<typeof Cap.getPoseMetrics>, VerbResults['pose.getMetrics']>>,
  Assert<Assignable<Out<typeof Cap.listCaptureSessions>, VerbResults['capture.listSessions']>>,
  Assert<Assignable<Out<typeof R.getSchedule>, VerbResults['rates.schedule']>>,
  Assert<Assignable<Out<typeof Ad.listUsers>, VerbResults['users.list']>>,
  Assert<Assignable<Out<typeof Ad.listActivityVerb>, VerbResults['activity.list']>>,
  Assert<Assignable<Out<typeof Ad.getChangesetVerb>, VerbResults['changesets.get']>>,
  Assert<Assignable<Out<typeof H.searchHelpVerb>, VerbResults['help.search']>>,
  Assert<Assignable<Out<typeof H.getHelpPageVerb>, VerbResults['help.getPage']>>,
  Assert<Assignable<Out<typeof H.listHelpPagesVerb>, VerbResults['help.listPages']>>,
  // The harness's event envelope and custom event names are what the renderer folds.
  Assert<Assignable<BusEnvelope, ContractEnvelope>>,
  // Every event name the renderer folds exists in the harness with the same value.
  Assert<Assignable<typeof KINETIX_EVENTS, AssistantEventNames>>,
  Assert<Assignable<ReturnType<Kinetix['getRunTrace']>, RunTraceView>>,
  Assert<Assignable<ProposalView, ProposalItemView>>,
];
