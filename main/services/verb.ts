/**
 * The verb framework: one definition per service function. Reads run directly; writes only
 * *plan* a changeset, which `callVerb` (pages, CLI) applies at once and the assistant proposes
 * for approval first. Every call re-reads the actor, checks the permission (and, for assistant
 * calls, the capability), and validates input with the verb's zod schema.
 */
import type { z } from 'zod';
import type { PlannedChangeset, RuleActor } from '../../models/changeset';
import { AppError, IdempotencyKeyReused, NotFound, ValidationError } from '../../models/errors';
import type { PolicyDecision, PolicyResult } from '../../models/policy';
import { cumulativeTargets, evaluatePolicy, feeCodeTargets } from '../../models/policy';
import type { Permission } from '../../models/roles';
import type { ReadVerbName, VerbName, VerbOutput, VerbParsedInput, VerbSpec, VerbSpecOf, WriteVerbName } from '../../models/verbs';
import { VERB_SPECS } from '../../models/verbs';
import type { AppliedChangeset } from '../data/changesets';
import { applyChangeset, checkChangeset, feeCodeHistory, findByIdempotencyKey, IdempotencyKeyTaken, numericHistory, requestHashOf } from '../data/changesets';
import type { Db } from '../data/db';
import { MAX_TOOL_INPUT_BYTES, boundsIssue, boundsMessage, measureInput } from './bounds';
import type { Actor, ServiceContext } from './context';
import { requirePermission, resolveActor } from './context';

/** What a verb's body receives. */
export interface VerbContext {
  db: Db;
  actor: Actor;
  now: Date;
  service: ServiceContext;
}

/** A write's plan, plus values revealed to the user once after apply (never stored). */
export interface PlanResult {
  planned: PlannedChangeset;
  /** e.g. `{ api_key: "…" }` for a rotated device key. Masked everywhere it could be logged. */
  reveal?: Record<string, string>;
}

/** What a read verb's implementation provides: its body, typed by the verb map. */
export interface ReadImpl<K extends ReadVerbName> {
  run(vc: VerbContext, input: VerbParsedInput<K>): VerbOutput<K>;
}

/** What a write verb's implementation provides: its planner, typed by the verb map. */
export interface WriteImpl<K extends WriteVerbName> {
  /** Read current values and versions; return the changeset. Must not write business data. */
  plan(vc: VerbContext, input: VerbParsedInput<K>): PlanResult;
}

interface VerbBase<K extends VerbName> {
  /** Dotted name, `area.verb` (`athletes.list`), a key of models/verbs.ts `VERB_SPECS`. */
  name: K;
  /** One sentence: what it does, for pages, the CLI and tool descriptions. */
  description: string;
  /** The permission that gates it (checked before anything is read or planned). */
  permission: Permission;
  input: VerbSpecOf<K>['input'];
  output: VerbSpecOf<K>['output'];
  /** Largest accepted input in canonical-JSON bytes (models/verbs.ts `maxInputBytes`, default 64 KiB). */
  maxInputBytes: number;
}

/** A read verb: its definition from the map plus its body. */
export interface ReadVerb<K extends ReadVerbName = ReadVerbName> extends VerbBase<K>, ReadImpl<K> {
  kind: 'read';
}

/** A write verb: its definition from the map plus its planner. */
export interface WriteVerb<K extends WriteVerbName = WriteVerbName> extends VerbBase<K>, WriteImpl<K> {
  kind: 'write';
}

export type Verb = ReadVerb | WriteVerb;

/** The implementation of verb `K` (what main/services/index.ts must provide for every name). */
export type VerbImpl<K extends VerbName> = K extends ReadVerbName ? ReadVerb<K> : K extends WriteVerbName ? WriteVerb<K> : never;

/** Implement read verb `name` of the verb map: its input, output and permission come from the map. */
export function readVerb<K extends ReadVerbName>(name: K, impl: ReadImpl<K>): ReadVerb<K> {
  const spec: VerbSpecOf<K> = VERB_SPECS[name];
  return {
    name,
    kind: 'read',
    description: spec.description,
    permission: spec.permission,
    input: spec.input,
    output: spec.output,
    maxInputBytes: maxBytesOf(spec),
    run: impl.run,
  };
}

/** Implement write verb `name` of the verb map. */
export function writeVerb<K extends WriteVerbName>(name: K, impl: WriteImpl<K>): WriteVerb<K> {
  const spec: VerbSpecOf<K> = VERB_SPECS[name];
  return {
    name,
    kind: 'write',
    description: spec.description,
    permission: spec.permission,
    input: spec.input,
    output: spec.output,
    maxInputBytes: maxBytesOf(spec),
    plan: impl.plan,
  };
}

function maxBytesOf(spec: VerbSpec): number {
  return spec.maxInputBytes ?? MAX_TOOL_INPUT_BYTES;
}

/** One field's validation problem, as every door reports it: a dotted path and a message. */
export interface InputIssue {
  path: string;
  message: string;
}

/**
 * zod issues as {@link InputIssue}s: an unknown key is named as its own path (`org_id`), not as
 * the whole input; an issue on the whole input is `(input)`. The one formatter for every door
 * (pages, CLI, web host, the assistant's tool calls, MCP).
 */
export function inputIssues(error: z.ZodError): InputIssue[] {
  return error.issues.flatMap((i) => {
    const base = i.path.map(String).join('.');
    if (i.code === 'unrecognized_keys') return i.keys.map((k) => ({ path: base ? `${base}.${k}` : k, message: 'unknown field (not accepted by this verb)' }));
    return [{ path: base || '(input)', message: issueMessage(i) }];
  });
}

/** Bounds as a person writes them: 400, 0.5, -50 (no float noise such as 0.30000000000000004). */
function bound(n: number | bigint): string {
  return typeof n === 'bigint' ? n.toString() : String(Number(n.toPrecision(12)));
}

/**
 * One zod issue in words a clinician reads, for zod's own default texts ("Too big: expected
 * number to be <=400", "Invalid number: must be a multiple of 0.1", "expected int"): "Too large:
 * at most 400.", "At most 1 decimal place.", "Enter a whole number.". A message a schema wrote
 * itself (anything that is not zod's default text) passes unchanged.
 */
export function issueMessage(i: z.core.$ZodIssue): string {
  const zodDefault = /^(Too big|Too small|Invalid input|Invalid number)\b/.test(i.message);
  if (!zodDefault) return i.message;
  switch (i.code) {
    case 'too_big': {
      const max = bound(i.maximum as number | bigint);
      if (i.origin === 'string') return `Too long: at most ${max} characters.`;
      if (i.origin === 'array' || i.origin === 'set') return `Too many: at most ${max}.`;
      return i.inclusive === false ? `Too large: less than ${max}.` : `Too large: at most ${max}.`;
    }
    case 'too_small': {
      const min = bound(i.minimum as number | bigint);
      if (i.origin === 'string') return min === '1' ? 'Required.' : `Too short: at least ${min} characters.`;
      return i.inclusive === false ? `Too small: more than ${min}.` : `Too small: at least ${min}.`;
    }
    case 'not_multiple_of': {
      const d = Number(i.divisor);
      if (d === 1) return 'Enter a whole number.';
      const places = Math.round(-Math.log10(d));
      if (places > 0 && Math.abs(d - 10 ** -places) < 1e-12) return `At most ${places} decimal place${places === 1 ? '' : 's'}.`;
      return `Use steps of ${bound(d)}.`;
    }
    case 'invalid_type':
      if (/received undefined$/.test(i.message)) return 'Required.';
      if (i.expected === 'int') return 'Enter a whole number.';
      if (i.expected === 'number') return 'Enter a number.';
      return i.message;
    default:
      return i.message;
  }
}

/**
 * Check `raw` for size and depth (main/services/bounds.ts: 64 KiB unless the verb declares more,
 * 32 levels) before anything hashes, stores or validates it; no recursion on the input.
 * @throws Validation naming the limit (the content is never echoed)
 */
export function boundInput(name: string, raw: unknown, maxBytes: number = MAX_TOOL_INPUT_BYTES): void {
  const m = measureInput(raw, maxBytes);
  if (!m.ok) throw new ValidationError(boundsMessage(name, m, maxBytes), [boundsIssue(m.reason)]);
}

/**
 * Parse `raw` with `schema`, turning zod issues into a Validation error that names each field.
 * `label` names what was called in the message (`Invalid input for list_injuries: …`).
 * @throws Validation
 */
export function parseInput<S extends z.ZodType>(schema: S, raw: unknown, label?: string): z.infer<S> {
  const r = schema.safeParse(raw ?? {});
  if (r.success) return r.data;
  const issues = inputIssues(r.error);
  throw new ValidationError(`Invalid input${label ? ` for ${label}` : ''}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
}

function prepare(ctx: ServiceContext, verb: Verb, raw: unknown): { vc: VerbContext; input: unknown } {
  const actor = resolveActor(ctx);
  requirePermission(ctx, actor, verb.permission);
  boundInput(verb.name, raw, verb.maxInputBytes);
  const input = parseInput(verb.input, raw);
  return { vc: { db: ctx.db, actor, now: ctx.now?.() ?? new Date(), service: ctx }, input };
}

/** Result of a write called through {@link callVerb}. */
export interface WriteResult {
  changeset: AppliedChangeset;
  reveal?: Record<string, string>;
}

/**
 * Run a read verb.
 * @throws Forbidden, NotFound, Validation
 */
export function runRead(ctx: ServiceContext, verb: ReadVerb, raw: unknown): unknown {
  const { vc, input } = prepare(ctx, verb, raw);
  // `input` was parsed by this verb's own schema (prepare), so it is this verb's parsed input.
  return verb.run(vc, input as never);
}

/**
 * Plan a write verb without applying it (the assistant's path; nothing is written).
 * @throws Forbidden, NotFound, Validation (including a changeset the rules refuse)
 */
export function planWrite(ctx: ServiceContext, verb: WriteVerb, raw: unknown): PlanResult & { actor: Actor } {
  const { vc, input } = prepare(ctx, verb, raw);
  const res = verb.plan(vc, input as never);
  if (res.planned.changes.length === 0) throw new AppError({ code: 'Validation', message: 'Nothing to change: the record already has these values.' });
  checkChangeset(ctx.db, vc.actor, res.planned.changes);
  return { ...res, actor: vc.actor };
}

/**
 * Apply a planned changeset as the context's user (re-read now, so approval after a role change
 * is judged by the current role). `runId` marks it "via Assistant".
 * @throws Conflict, Forbidden, NotFound, Validation
 */
export function applyPlanned(
  ctx: ServiceContext,
  planned: PlannedChangeset,
  opts: { idempotencyKey?: string | null; changesetId?: string; undoOf?: string; requestHash?: string } = {},
): AppliedChangeset {
  const actor = resolveActor(ctx);
  return applyChangeset(ctx.db, {
    actor,
    planned,
    idempotencyKey: opts.idempotencyKey ?? null,
    // An MCP client has no run trace to link; its changes read "Name via MCP client".
    runId: ctx.via && ctx.via.source !== 'mcp' ? ctx.via.runId : null,
    ...(ctx.via ? { viaLabel: ctx.via.source === 'mcp' ? 'MCP client' : 'Assistant' } : {}),
    ...(opts.changesetId ? { changesetId: opts.changesetId } : {}),
    ...(opts.undoOf ? { undoOf: opts.undoOf } : {}),
    ...(opts.requestHash ? { requestHash: opts.requestHash } : {}),
    ...(ctx.now ? { now: ctx.now() } : {}),
  });
}

/**
 * Run the policy engine (models/policy.ts `evaluatePolicy`) on `planned` for `actor` at `now`, with
 * the applied history of every cumulatively judged value it changes (a rate item's price: see
 * `numericBaselines`), read from this device's changeset log, and the earlier holders of any fee code
 * it gives an item (`feeCodeHistory`). Every device door (forms, `verb.call`
 * and the CLI, the assistant and MCP proposals, and their approval) judges through this one
 * function, so the cumulative 20% rule holds on each. Pure apart from that read.
 */
export function evaluatePolicyWithHistory(db: Db, actor: RuleActor, planned: PlannedChangeset, now: Date): PolicyResult {
  const targets = cumulativeTargets(planned.changes);
  const codes = feeCodeTargets(planned.changes);
  return evaluatePolicy(actor, planned, {
    today: now.toISOString().slice(0, 10),
    now: now.toISOString(),
    ...(targets.length ? { history: numericHistory(db, actor.orgId, targets) } : {}),
    ...(codes.codes.length ? { feeCodes: feeCodeHistory(db, actor.orgId, codes.codes, codes.renamedIds) } : {}),
  });
}

/**
 * The policy's refusal of a change (kinetix.md §3): `deny` for everyone, or `needs_owner` where
 * the caller cannot approve it themselves. Carries every decision for the page to show.
 */
export class PolicyDenied extends AppError {
  readonly decisions: PolicyDecision[];
  constructor(policy: Pick<PolicyResult, 'reasons' | 'decisions'>, message?: string) {
    super({
      code: 'Forbidden',
      message: message ?? `The policy does not allow this change: ${policy.reasons.join(' ')}`.trim(),
      kind: 'PolicyDenied',
      decisions: policy.decisions,
    });
    this.decisions = policy.decisions;
  }
}

/**
 * Call any verb by name as the context's user, for doors where the name and input come from
 * outside (the IPC/web `verb.call`, the CLI's `call`): reads return their result; writes plan,
 * pass the policy and apply at once (a person acting in the app or the CLI is their own
 * approval). A change the policy sends to an owner is refused here, not applied: the form door
 * (`forms.submit`) stores it for an owner's approval instead. Inside the code, use the typed
 * `callVerb` of main/services/index.ts.
 * @throws NotFound (unknown verb or record), Forbidden (permission; policy deny or needs-owner),
 *   Validation (input, bounds, row rules), Conflict (stale row; IdempotencyKeyTaken: the key holds
 *   this request as a pending or declined proposal), IdempotencyKeyReused (the key was used for
 *   another request)
 */
export function callVerbByName(
  ctx: ServiceContext,
  registry: ReadonlyMap<string, Verb>,
  name: string,
  raw: unknown,
  opts: { idempotencyKey?: string | null } = {},
): unknown {
  const verb = registry.get(name);
  if (!verb) throw new NotFound(`Verb "${name}"`);
  if (verb.kind === 'read') return runRead(ctx, verb, raw);
  boundInput(verb.name, raw, verb.maxInputBytes);
  const requestHash = opts.idempotencyKey ? requestHashOf(verb.name, raw) : undefined;
  if (opts.idempotencyKey) {
    // A retry (same user, verb and input) returns the first result without planning again
    // (new inserts would get new ids); another request under the same key is refused.
    const actor = resolveActor(ctx);
    requirePermission(ctx, actor, verb.permission);
    const prior = findByIdempotencyKey(ctx.db, actor.orgId, actor.userId, opts.idempotencyKey);
    if (prior) {
      if (prior.verb !== verb.name || prior.requestHash !== requestHash) throw new IdempotencyKeyReused();
      if (prior.status === 'applied' && prior.result) return { changeset: prior.result };
      throw new IdempotencyKeyTaken(prior.id, prior.status);
    }
  }
  const { planned, reveal, actor } = planWrite(ctx, verb, raw);
  const now = ctx.now?.() ?? new Date();
  const policy = evaluatePolicyWithHistory(ctx.db, actor, planned, now);
  if (policy.verdict === 'deny') throw new PolicyDenied(policy);
  if (policy.verdict === 'needs_owner') {
    throw new PolicyDenied(
      policy,
      `This change needs an owner's approval: ${policy.reasons.join(' ')} Nothing was written. Submit it from its page (it then waits in Approvals for an owner), or ask an owner to make it.`,
    );
  }
  const changeset = applyPlanned(ctx, planned, { ...opts, ...(requestHash ? { requestHash } : {}) });
  return reveal ? { changeset, reveal } : { changeset };
}
