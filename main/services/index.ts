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
import type { Verb } from './verb';
import * as workload from './workload';

const ALL: Verb[] = [
  athletes.listAthletes, athletes.getAthlete, athletes.createAthlete, athletes.updateAthlete, athletes.deactivateAthlete,
  athletes.listSquads, athletes.getSquad, athletes.createSquad, athletes.updateSquad,
  clinical.listInjuries, clinical.getInjury, clinical.createInjury, clinical.updateInjury,
  clinical.listScreenings, clinical.getScreening, clinical.createScreening, clinical.updateScreening,
  clinical.listRtp, clinical.getRtp, clinical.createRtp, clinical.updateRtp, clinical.signoffPhysio, clinical.signoffDoctor, clinical.signoffCoach,
  clinical.listWellness, clinical.submitWellness, clinical.listVitals, clinical.recordVitals,
  workload.listSessions, workload.createSession, workload.listLoads, workload.logSessionLoads, workload.getAcwr,
  rates.getSchedule, rates.listFolders, rates.listItems, rates.createFolder, rates.createItem, rates.updateItem, rates.bulkUpdate,
  capture.getPoseMetrics, capture.listCaptureSessions, capture.getCaptureSession, capture.recordSession,
  admin.listDevices, admin.registerDevice, admin.rotateDeviceKey,
  admin.listReports, admin.getReport, admin.generateReport,
  admin.listUsers, admin.createUser, admin.updateUser,
  admin.listActivityVerb, admin.getChangesetVerb, admin.undoChangeset,
  help.searchHelpVerb, help.getHelpPageVerb, help.listHelpPagesVerb,
] as Verb[];

/** Every verb by name. */
export const VERBS: ReadonlyMap<string, Verb> = new Map(ALL.map((v) => [v.name, v]));

export type { Verb, ReadVerb, WriteVerb, VerbContext, PlanResult, WriteResult } from './verb';
export { callVerb, runRead, planWrite, applyPlanned, parseInput } from './verb';
export type { ServiceContext, Capability, Actor } from './context';
export { resolveActor, requirePermission, scopeOf } from './context';
