/**
 * The service layer's verb registry: every verb of every record, by name. Pages (through the
 * contract), the assistant's tools, the MCP server, the CLI and the HQ server call these and
 * nothing else.
 */
import * as admin from './admin';
import * as athletes from './athletes';
import * as capture from './capture';
import * as clinical from './clinical';
import * as help from './help';
import * as rates from './rates';
import type { VerbInput, VerbName, VerbOutput } from '../../models/verbs';
import { VERB_NAMES } from '../../models/verbs';
import type { Verb, VerbImpl } from './verb';
import { callVerbByName } from './verb';
import type { ServiceContext } from './context';
import * as workload from './workload';

/**
 * The implementation of every verb of the map (models/verbs.ts), by name. Typed by a mapped
 * type: a verb of the map without an implementation, an implementation under another verb's
 * name, or a body whose input or output differs from the map's schemas is a compile error.
 */
export const VERB_IMPLS: { readonly [K in VerbName]: VerbImpl<K> } = {
  'athletes.list': athletes.listAthletes,
  'athletes.get': athletes.getAthlete,
  'athletes.create': athletes.createAthlete,
  'athletes.update': athletes.updateAthlete,
  'athletes.deactivate': athletes.deactivateAthlete,
  'squads.list': athletes.listSquads,
  'squads.get': athletes.getSquad,
  'squads.create': athletes.createSquad,
  'squads.update': athletes.updateSquad,
  'squads.moveAthletes': athletes.moveAthletes,
  'injuries.list': clinical.listInjuries,
  'injuries.get': clinical.getInjury,
  'injuries.create': clinical.createInjury,
  'injuries.update': clinical.updateInjury,
  'screenings.list': clinical.listScreenings,
  'screenings.get': clinical.getScreening,
  'screenings.create': clinical.createScreening,
  'screenings.update': clinical.updateScreening,
  'rtp.list': clinical.listRtp,
  'rtp.get': clinical.getRtp,
  'rtp.create': clinical.createRtp,
  'rtp.update': clinical.updateRtp,
  'rtp.signoffPhysio': clinical.signoffPhysio,
  'rtp.signoffDoctor': clinical.signoffDoctor,
  'rtp.signoffCoach': clinical.signoffCoach,
  'wellness.list': clinical.listWellness,
  'wellness.get': clinical.getWellness,
  'wellness.getDay': clinical.getWellnessDay,
  'wellness.submit': clinical.submitWellness,
  'vitals.list': clinical.listVitals,
  'vitals.record': clinical.recordVitals,
  'sessions.list': workload.listSessions,
  'sessions.get': workload.getSession,
  'sessions.create': workload.createSession,
  'workload.listLoads': workload.listLoads,
  'workload.logSessionLoads': workload.logSessionLoads,
  'workload.acwr': workload.getAcwr,
  'rates.schedule': rates.getSchedule,
  'rates.listFolders': rates.listFolders,
  'rates.listItems': rates.listItems,
  'rates.createFolder': rates.createFolder,
  'rates.createItem': rates.createItem,
  'rates.updateItem': rates.updateItem,
  'rates.bulkUpdate': rates.bulkUpdate,
  'pose.getMetrics': capture.getPoseMetrics,
  'capture.listSessions': capture.listCaptureSessions,
  'capture.getSession': capture.getCaptureSession,
  'capture.getResults': capture.getCaptureResults,
  'capture.listRigs': capture.listRigs,
  'capture.recordSession': capture.recordSession,
  'capture.saveRig': capture.saveRig,
  'devices.list': admin.listDevices,
  'devices.register': admin.registerDevice,
  'devices.rotateKey': admin.rotateDeviceKey,
  'devices.revoke': admin.revokeDevice,
  'reports.list': admin.listReports,
  'reports.get': admin.getReport,
  'reports.generate': admin.generateReport,
  'users.list': admin.listUsers,
  'users.create': admin.createUser,
  'users.update': admin.updateUser,
  'activity.list': admin.listActivityVerb,
  'changesets.get': admin.getChangesetVerb,
  'changesets.undo': admin.undoChangeset,
  'help.search': help.searchHelpVerb,
  'help.getPage': help.getHelpPageVerb,
  'help.listPages': help.listHelpPagesVerb,
};

/** Every verb by name. */
export const VERBS: ReadonlyMap<string, Verb> = new Map<string, Verb>(VERB_NAMES.map((name) => [name, VERB_IMPLS[name]]));

export type { Verb, VerbImpl, ReadVerb, WriteVerb, VerbContext, PlanResult, WriteResult } from './verb';
export { callVerbByName, runRead, planWrite, applyPlanned, parseInput, inputIssues, boundInput, PolicyDenied, evaluatePolicyWithHistory } from './verb';
export type { InputIssue } from './verb';

/** What {@link callVerb} returns for verb `K`: a read's output, or a write's applied changeset. */
export type VerbResult<K extends VerbName> = VerbOutput<K>;

/** True when `K` is a union of two or more names (e.g. the whole `VerbName`), false for one literal name. */
type IsUnion<K, All = K> = K extends unknown ? ([All] extends [K] ? false : true) : never;

/**
 * The input {@link callVerb} accepts for `K`: verb `K`'s input when `K` is one literal name, and
 * nothing (`never`) when `K` is a union. A name typed only as `VerbName` would otherwise accept
 * the input of any verb (the union of every input); such a name comes from outside and goes
 * through {@link callVerbByName}, which validates the input against that verb's own schema.
 */
export type CallVerbInput<K extends VerbName> = true extends IsUnion<K> ? never : VerbInput<K>;

/**
 * Call verb `name` as the context's user with a typed input and result (reads return their
 * output; writes plan, pass the policy and apply at once, returning the WriteOutput). For code
 * inside main/ that names one verb literally (`callVerb(ctx, 'athletes.get', { id })`); doors
 * that take a name from outside use {@link callVerbByName}.
 * @throws as {@link callVerbByName}
 */
export function callVerb<K extends VerbName>(
  ctx: ServiceContext,
  name: K,
  input: CallVerbInput<K>,
  opts: { idempotencyKey?: string | null } = {},
): VerbResult<K> {
  // VERBS maps every K to VERB_IMPLS[K] (a VerbImpl<K>, checked by the mapped type above), whose
  // output is VerbOutput<K>; only the Map's value type forgets K.
  return callVerbByName(ctx, VERBS, name, input, opts) as VerbResult<K>;
}
export type { ServiceContext, Capability, Actor } from './context';
export { resolveActor, requirePermission, scopeOf } from './context';
export { orgSetAtHq, refuseOrgChangeOnSyncedDevice } from './admin';
