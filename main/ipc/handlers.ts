/**
 * The one implementation of the renderer↔main contract (models/contract.ts), on top of the
 * service layer. Both transports (Electron IPC in main/electron, HTTP + SSE in main/host/web.ts)
 * call {@link dispatch}; neither holds a rule of its own. Pages a role cannot use are refused by
 * the services, whatever the UI shows.
 */
import type { CallResult, Handlers, Me, OpName, OpOutput, SignInUser, StreamEvents, StreamHandlers, StreamName } from '../../models/contract';
import { CONTRACT, STREAMS, isOpName, isStreamName } from '../../models/contract';
import type { ErrorPayload } from '../../models/errors';
import { AppError, NotConfigured, NotFound, RateLimited, toErrorPayload } from '../../models/errors';
import { MAX_PIN_FAILURES, PIN_LOCK_MS } from '../../models/signin';
import type { Role } from '../../models/roles';
import type { Db } from '../data/db';
import { accountStamp, findOrganization, findUserById, listAllUsers } from '../data/identity';
import { isVerbName } from '../../models/verbs';
import { VERBS, callVerbByName, parseInput } from '../services';
import { verifyPin } from '../services/pin';
import { readOrganisation, updateOrganisation } from '../services/admin';
import { parseSignInOrgs, signInScope } from '../app/signin-scope';
import type { Kinetix } from '../kinetix/harness';
import type { ToolRegistry } from '../kinetix/registry';
import { readAssistantSettings, updateAssistantSettings } from '../kinetix/settings';
import type { AppSync } from '../app/sync-runner';
import { statusStream } from '../app/sync-runner';
import { narrowProposal, submitForm } from './forms';
import { captureHandlers } from './capture';
import { LiveRoom, liveHandlers } from './capture-live';
import { rigHandlers } from './capture-rig';
import type { CaptureWorkspace } from '../capture/workspace';
import { setPin, syncConflicts, syncDiscard, syncEnrol, syncEnrolmentCode, syncHqSignIn, syncSignInToHq, syncStatus } from './sync';

/** The signed-in state of one window (Electron) or one browser tab session (web host). */
export interface WindowSession {
  userId: string | null;
  /** Assistant runs started from this window's session (stopped when it signs out). */
  runIds?: Set<string>;
  /**
   * What the account was when this session signed in ({@link accountStamp}): its role, athlete
   * link, PIN hash and active flag, hashed. A call finding the account changed ends the session.
   */
  stamp?: string;
}

/** Operations that work signed out: the stamp check ends a stale session before them silently. */
const SIGNED_OUT_OPS: ReadonlySet<string> = new Set(['session.users', 'session.signIn', 'session.me', 'session.signOut']);

/**
 * End `ctx`'s session when its account changed since sign-in ({@link accountStamp}): its runs are
 * stopped and it is signed out; then, for an operation that needs a session, an Unauthenticated
 * error saying why. A session without a stamp (made outside `session.signIn`, e.g. by a test) is
 * stamped now. No-op when signed out.
 * @throws AppError Unauthenticated
 */
function checkAccountUnchanged(deps: HandlerDeps, ctx: CallContext, op: string): void {
  const userId = ctx.session.userId;
  if (!userId) return;
  const now = accountStamp(deps.db, userId);
  if (ctx.session.stamp === undefined && now !== null) {
    ctx.session.stamp = now;
    return;
  }
  if (now !== null && now === ctx.session.stamp) return;
  endSession(deps, ctx);
  deps.log?.('session ended: the account changed since sign-in');
  if (!SIGNED_OUT_OPS.has(op))
    throw new AppError({
      code: 'Unauthenticated',
      message: 'Your account was changed since you signed in (its role, athlete link, PIN or status), so you were signed out. Sign in again.',
    });
}

/** Sign the window out: stop the assistant runs it started, forget the user. */
function endSession(deps: HandlerDeps, ctx: CallContext): void {
  const userId = ctx.session.userId;
  const runs = ctx.session.runIds;
  if (userId && runs?.size && deps.kinetix) {
    try {
      deps.kinetix.stopRuns(userId, runs);
    } catch (e) {
      deps.log?.(`sign-out: could not stop assistant runs (${e instanceof Error ? e.name : 'unknown'})`);
    }
  }
  ctx.session.runIds = new Set();
  ctx.session.userId = null;
  delete ctx.session.stamp;
}

/** What every handler receives besides its input. */
export interface CallContext {
  session: WindowSession;
}

/** The lockout rule (shared with the HQ's device enrolment): 5 wrong PINs lock a user for 5 minutes. */
export { MAX_PIN_FAILURES, PIN_LOCK_MS };

/** Everything the handlers need. */
export interface HandlerDeps {
  db: Db;
  /** Clock, injectable for tests. */
  now?: () => number;
  /** Diagnostics (never given a PIN, token or record content). */
  log?: (line: string) => void;
  /** The assistant harness; without it the assistant operations answer that it is not available. */
  kinetix?: Kinetix | null;
  /** The tool catalogue (settings: tools that can be switched off). */
  tools?: ToolRegistry | null;
  /**
   * Which organisations this installation's sign-in picker lists and lets sign in (ids or names,
   * case-insensitive). Unset: `ATHLETE_SIGNIN_ORGS` (comma-separated); empty or unset there too:
   * every organisation in this database. See main/app/signin-scope.ts.
   */
  signInOrgs?: readonly string[] | null;
  /** The capture workspace (recordings and processing jobs); without it the `capture.*` operations answer NotConfigured. */
  capture?: CaptureWorkspace | null;
  /** The open camera rig of this app (one per host; created on first use). */
  liveRoom?: LiveRoom;
  /** Background device sync (main/app/sync-runner.ts); without it the device reads as not enrolled. */
  sync?: AppSync | null;
}

function tools(deps: HandlerDeps): ToolRegistry {
  if (!deps.tools) throw new NotConfigured('The assistant is not available in this app host; the rest of the app works.');
  return deps.tools;
}

function signedInUser(ctx: CallContext): string {
  if (!ctx.session.userId) throw unauthenticated();
  return ctx.session.userId;
}

function harness(deps: HandlerDeps): Kinetix {
  if (!deps.kinetix) throw new NotConfigured('The assistant is not available in this app host; the rest of the app works.');
  return deps.kinetix;
}

function unauthenticated(): AppError {
  return new AppError({ code: 'Unauthenticated', message: 'You are not signed in. Choose your name and enter your PIN.' });
}

/**
 * Build the contract's handlers. Typed by {@link Handlers}: a missing or renamed operation is a
 * compile error. Every operation first checks that a signed-in session's account is unchanged
 * since sign-in (checkAccountUnchanged).
 */
export function createHandlers(deps: HandlerDeps): Handlers<CallContext> {
  const inner = createInnerHandlers(deps);
  const out = {} as Record<string, (ctx: CallContext, input: unknown) => unknown>;
  for (const [op, fn] of Object.entries(inner) as [string, (ctx: CallContext, input: unknown) => unknown][])
    out[op] = (ctx, input) => {
      checkAccountUnchanged(deps, ctx, op);
      return fn(ctx, input);
    };
  return out as unknown as Handlers<CallContext>;
}

function createInnerHandlers(deps: HandlerDeps): Handlers<CallContext> {
  const now = deps.now ?? Date.now;
  const failures = new Map<string, { count: number; lockedUntil: number }>();
  const scope = signInScope(deps.signInOrgs === undefined ? parseSignInOrgs(process.env.ATHLETE_SIGNIN_ORGS) : deps.signInOrgs);

  function meOf(userId: string): Me | null {
    const u = findUserById(deps.db, userId);
    if (!u || !u.active) return null;
    const org = findOrganization(deps.db, u.org_id);
    return {
      user_id: u.id,
      display_name: u.display_name,
      email: u.email,
      role: u.role as Role,
      org_id: u.org_id,
      org_name: org?.name ?? '',
      linked_athlete_id: u.linked_athlete_id,
    };
  }

  return {
    'session.users': () => {
      const users: SignInUser[] = listAllUsers(deps.db)
        .filter((u) => u.active && scope.includes({ id: u.org_id, name: u.org_name }))
        .map((u) => ({ id: u.id, display_name: u.display_name, email: u.email, role: u.role as Role, org_name: u.org_name, has_pin: Boolean(u.pin_hash) }));
      return { users };
    },
    'session.signIn': (ctx, { user_id, pin }) => {
      const t = now();
      const f = failures.get(user_id);
      if (f && f.lockedUntil > t) {
        throw new RateLimited('Too many wrong PINs for this user. Wait a few minutes, then try again.', Math.ceil((f.lockedUntil - t) / 1000));
      }
      const found = findUserById(deps.db, user_id);
      // A user of an organisation this installation does not list is treated as unknown.
      const u = found && scope.includes({ id: found.org_id, name: findOrganization(deps.db, found.org_id)?.name ?? '' }) ? found : null;
      // Same answer for an unknown user, an inactive user and a wrong PIN (no existence oracle).
      if (!u || !u.active || !verifyPin(pin, u.pin_hash)) {
        // Counted only for real users (the map cannot be filled with made-up ids).
        if (u) {
          const next = { count: (f && f.lockedUntil <= t && f.lockedUntil !== 0 ? 0 : (f?.count ?? 0)) + 1, lockedUntil: 0 };
          if (next.count >= MAX_PIN_FAILURES) next.lockedUntil = t + PIN_LOCK_MS;
          failures.set(user_id, next);
        }
        throw new AppError({ code: 'Unauthenticated', message: 'That PIN is not right for this user. Try again.' });
      }
      failures.delete(user_id);
      ctx.session.userId = u.id;
      ctx.session.stamp = accountStamp(deps.db, u.id) ?? undefined;
      const me = meOf(u.id);
      if (!me) throw unauthenticated();
      deps.log?.(`sign-in: ${u.role}`);
      return me;
    },
    'session.people': (ctx) => {
      const me = ctx.session.userId ? meOf(ctx.session.userId) : null;
      if (!me) throw unauthenticated();
      const people = listAllUsers(deps.db)
        .filter((u) => u.org_id === me.org_id)
        .map((u) => ({ id: u.id, display_name: u.display_name, role: u.role as Role }));
      return { people };
    },
    'session.signOut': (ctx) => {
      // The user's runs started here stop now (a waiting confirmation is not left holding a run slot).
      endSession(deps, ctx);
      return { signed_out: true as const };
    },
    'session.me': (ctx) => {
      if (!ctx.session.userId) return null;
      const me = meOf(ctx.session.userId);
      if (!me) ctx.session.userId = null;
      return me;
    },
    'verb.call': (ctx, { verb, input, idempotency_key }) => {
      if (!ctx.session.userId) throw unauthenticated();
      if (!isVerbName(verb)) throw new NotFound(`Verb "${verb}"`);
      return callVerbByName({ db: deps.db, userId: ctx.session.userId }, VERBS, verb, input ?? {}, idempotency_key ? { idempotencyKey: idempotency_key } : {});
    },
    'assistant.start': (ctx, { message, conversation_id, page }) => {
      const userId = signedInUser(ctx);
      const r = harness(deps).startRun({ userId, message, ...(conversation_id ? { conversationId: conversation_id } : {}), page: page ?? null });
      (ctx.session.runIds ??= new Set()).add(r.runId);
      return { run_id: r.runId, conversation_id: r.conversationId };
    },
    'assistant.confirm': (ctx, { tool_call_id, approve, args_hash, content_hash }) => {
      // Not an object literal at the call, so a harness without content hashes still accepts it.
      const decision: { approve: boolean; argsHash?: string; contentHash?: string } = { approve };
      if (args_hash) decision.argsHash = args_hash;
      if (content_hash) decision.contentHash = content_hash;
      return harness(deps).confirm(signedInUser(ctx), tool_call_id, decision);
    },
    'assistant.stop': (ctx, { run_id }) => {
      harness(deps).stop(signedInUser(ctx), run_id);
      return { stopped: true as const };
    },
    'assistant.trace': (ctx, { run_id }) => harness(deps).getRunTrace(signedInUser(ctx), run_id),
    // Through the harness, so a run whose dialog waits on the same proposal learns the decision.
    'proposals.list': (ctx, { status, limit }) => harness(deps).listProposals(signedInUser(ctx), { ...(status ? { status } : {}), limit }),
    'proposals.approve': (ctx, { changeset_id, content_hash }) => harness(deps).approveProposal(signedInUser(ctx), changeset_id, content_hash),
    'proposals.decline': (ctx, { changeset_id }) => harness(deps).declineProposal(signedInUser(ctx), changeset_id),
    'proposals.narrow': (ctx, input) => narrowProposal(deps.db, signedInUser(ctx), input, new Date(now())),
    'forms.submit': (ctx, input) => submitForm(deps.db, signedInUser(ctx), input, new Date(now())),
    'admin.setPin': (ctx, input) => setPin(deps.db, deps.sync, signedInUser(ctx), input),
    'settings.organisation': (ctx) => readOrganisation({ db: deps.db, userId: signedInUser(ctx) }),
    'settings.updateOrganisation': (ctx, input) => updateOrganisation({ db: deps.db, userId: signedInUser(ctx) }, input),
    'settings.assistant': (ctx) => readAssistantSettings({ db: deps.db, tools: tools(deps), ...(deps.log ? { log: deps.log } : {}) }, signedInUser(ctx)),
    ...captureHandlers<CallContext>(deps.db, deps.capture, signedInUser),
    ...liveHandlers<CallContext>(deps.db, deps.capture, deps.liveRoom ?? (deps.liveRoom = new LiveRoom()), signedInUser),
    ...rigHandlers<CallContext>(deps.db, deps.capture, deps.liveRoom, signedInUser),
    'settings.updateAssistant': (ctx, input) => {
      const patch: Parameters<typeof updateAssistantSettings>[2] = {};
      if (input.api_key !== undefined) patch.api_key = input.api_key;
      if (input.disabled_tools !== undefined) patch.disabled_tools = input.disabled_tools;
      if (input.budget_cap_usd !== undefined) patch.budget_cap_usd = input.budget_cap_usd;
      if (input.provider_clearance !== undefined) patch.provider_clearance = input.provider_clearance;
      patch.expected_version = input.expected_version;
      return updateAssistantSettings({ db: deps.db, tools: tools(deps), ...(deps.log ? { log: deps.log } : {}) }, signedInUser(ctx), patch);
    },
    'sync.status': (ctx) => {
      signedInUser(ctx);
      return syncStatus(deps.sync);
    },
    'sync.enrol': (ctx, input) => syncEnrol(deps.db, deps.sync, signedInUser(ctx), input),
    'sync.now': (ctx) => {
      signedInUser(ctx);
      if (!deps.sync) throw new NotConfigured('Device sync is not available in this app host.');
      return deps.sync.syncNow();
    },
    'sync.conflicts': (ctx) => syncConflicts(deps.db, deps.sync, signedInUser(ctx)),
    'sync.discard': (ctx, { changesetId }) => syncDiscard(deps.db, deps.sync, signedInUser(ctx), changesetId),
    'sync.hqSignIn': (ctx) => syncHqSignIn(deps.db, deps.sync, signedInUser(ctx)),
    'sync.signInToHq': (ctx, input) => syncSignInToHq(deps.db, deps.sync, signedInUser(ctx), input),
    'sync.enrolmentCode': (ctx, { userId }) => syncEnrolmentCode(deps.db, deps.sync, signedInUser(ctx), userId),
  };
}

/** Build the contract's stream handlers (typed by {@link StreamHandlers}). */
export function createStreamHandlers(deps: HandlerDeps): StreamHandlers<CallContext> {
  return {
    'assistant.events': (ctx, { run_id, last_event_id }) => {
      checkAccountUnchanged(deps, ctx, 'assistant.events');
      return harness(deps).subscribe(signedInUser(ctx), run_id, last_event_id ?? null);
    },
    'sync.events': (ctx) => {
      checkAccountUnchanged(deps, ctx, 'sync.events');
      signedInUser(ctx);
      return statusStream(deps.sync ?? { status: () => syncStatus(null), onChange: () => () => undefined });
    },
  };
}

/**
 * Validate and open one stream; never throws. A refusal (not signed in, another user's run,
 * unknown stream, invalid input) comes back as a typed error before any event.
 */
export function openStream(
  streams: StreamHandlers<CallContext>,
  ctx: CallContext,
  name: unknown,
  rawInput: unknown,
): { ok: true; events: AsyncIterable<StreamEvents[StreamName]> } | { ok: false; error: ErrorPayload } {
  try {
    if (!isStreamName(name)) throw new NotFound(`Stream "${String(name).slice(0, 60)}"`);
    const input = parseInput(STREAMS[name].input, rawInput ?? {});
    const open = streams[name] as (c: CallContext, i: unknown) => AsyncIterable<StreamEvents[StreamName]>;
    return { ok: true, events: open(ctx, input) };
  } catch (e) {
    return { ok: false, error: toErrorPayload(e) };
  }
}

/**
 * Validate and run one operation; never throws. Unknown operations and invalid input come back
 * as typed errors (`NotFound`, `Validation`); anything unexpected as `Internal` (logged by name).
 */
export async function dispatch(
  handlers: Handlers<CallContext>,
  ctx: CallContext,
  op: unknown,
  rawInput: unknown,
  log?: (line: string) => void,
): Promise<CallResult<unknown>> {
  try {
    if (!isOpName(op)) throw new NotFound(`Operation "${String(op).slice(0, 60)}"`);
    const input = parseInput(CONTRACT[op].input, rawInput ?? {});
    const fn = handlers[op] as (c: CallContext, i: unknown) => OpOutput<OpName> | Promise<OpOutput<OpName>>;
    const value = await fn(ctx, input);
    return { ok: true, value: value === undefined ? null : value };
  } catch (e) {
    if (!(e instanceof AppError)) log?.(`internal error in ${isOpName(op) ? op : 'unknown op'}: ${e instanceof Error ? e.name : typeof e}`);
    return { ok: false, error: toErrorPayload(e) };
  }
}
