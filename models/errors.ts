import type { PolicyDecision } from './policy';

/**
 * The one error shape that crosses every boundary (service → IPC/HTTP → renderer, tool → model,
 * CLI → stderr). `code` is stable; `message` says what failed and what to do next.
 *
 * The complete list of codes: every error class (models/errors.ts, main/kinetix/errors.ts, the
 * CLI, the data layer's MigrationMismatch, help pages, capture, and sync/'s HQ and shape service)
 * extends {@link AppError} with one of these (a class's finer distinction is its `kind`;
 * scripts/error-codes.test.ts fails on a class that extends `Error` itself), and every code a run records (`assistant_run.error_code`, the AG-UI RUN_ERROR `code`)
 * is one of these. Each has the HTTP status a client acts on ({@link HTTP_STATUS}):
 *
 * | code | HTTP | what the client does |
 * |---|---|---|
 * | Validation | 422 | fix the named fields (`issues`) and resend |
 * | Unauthenticated | 401 | sign in again |
 * | Forbidden | 403 | stop; this role may not do it (do not retry) |
 * | NotFound | 404 | the record (or verb, operation) does not exist for this user |
 * | Conflict | 409 | reload the record (`conflicts` names the rows) and redo the change |
| IdempotencyKeyReused | 422 | the idempotency key was already used for a different request: nothing was written; send the new change under a new key (reopen the form) |
 * | RateLimited | 429 | wait `retryAfterSeconds` (also sent as `Retry-After`), then retry |
 * | TooManyRuns | 429 | wait for, or stop, one of your running assistant requests |
 * | BudgetExceeded | 402 | an administrator raises the monthly cap; retrying will not help |
 * | NotConfigured | 503 | a feature is not set up on this install (no model key, assistant not in this host): an administrator configures it; the rest of the app works |
 * | ProviderError | 502 | the model provider failed or timed out: retry later |
 * | ConfirmTimeout | 410 | a confirmation waited too long and the request was cancelled: ask again |
 * | Stopped | 410 | the request was stopped by the user: ask again if still wanted |
 * | Interrupted | 410 | the app stopped while the request ran (recovery at the next start settles it; nothing was half-applied): ask again |
 * | Refusal | 422 | the model declined the request: rephrase it |
 * | IterationLimit | 422 | the request needed more steps than allowed: split it |
 * | PauseTurn | 502 | the provider paused its turn (a server tool ran long): ask again |
 * | UnknownStopReason | 502 | the provider stopped for a reason this build does not know: ask again; report it if it persists |
 * | Unavailable | 503 | a remote service (the club's HQ server) could not be reached or is not ready: local work is kept; retry later (device sync retries on its own) |
 * | Internal | 500 | a bug: nothing was completed; report it if it persists |
 */
export const ERROR_CODES = [
  'Validation',
  'Unauthenticated',
  'Forbidden',
  'NotFound',
  'Conflict',
  'IdempotencyKeyReused',
  'RateLimited',
  'TooManyRuns',
  'BudgetExceeded',
  'NotConfigured',
  'ProviderError',
  'ConfirmTimeout',
  'Stopped',
  'Interrupted',
  'Refusal',
  'IterationLimit',
  'PauseTurn',
  'UnknownStopReason',
  'Unavailable',
  'Internal',
  'MalformedRequest',
  'PayloadTooLarge',
  'UnsupportedMediaType',
  'MisdirectedRequest',
] as const;
/** One error code of {@link ERROR_CODES}. */
export type ErrorCode = (typeof ERROR_CODES)[number];

/** HTTP status of each code (the web host's replies; the table above says why each). */
export const HTTP_STATUS: Readonly<Record<ErrorCode, number>> = {
  Validation: 422,
  Unauthenticated: 401,
  Forbidden: 403,
  NotFound: 404,
  Conflict: 409,
  IdempotencyKeyReused: 422,
  RateLimited: 429,
  TooManyRuns: 429,
  BudgetExceeded: 402,
  NotConfigured: 503,
  ProviderError: 502,
  ConfirmTimeout: 410,
  Stopped: 410,
  Interrupted: 410,
  Refusal: 422,
  IterationLimit: 422,
  PauseTurn: 502,
  UnknownStopReason: 502,
  Unavailable: 503,
  Internal: 500,
  MalformedRequest: 400,
  PayloadTooLarge: 413,
  UnsupportedMediaType: 415,
  MisdirectedRequest: 421,
};

/** True when `code` is one of {@link ERROR_CODES}. */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && (ERROR_CODES as readonly string[]).includes(code);
}

/** One invalid field: `path` is dotted (`rows.3.rpe`), `message` is human readable. */
export interface FieldIssue {
  path: string;
  message: string;
}

/** Serialisable form of an {@link AppError} (what travels over IPC/HTTP and what the CLI prints). */
export interface ErrorPayload {
  code: ErrorCode;
  message: string;
  issues?: FieldIssue[];
  /** For RateLimited: seconds until a retry may succeed. */
  retryAfterSeconds?: number;
  /** For Conflict: the rows whose version had moved on. */
  conflicts?: { table: string; id: string; expectedVersion: number; actualVersion: number | null }[];
  /** The class's finer distinction within its code (e.g. a capture input error's `ERR_…` kind); a fixed label, never free text. */
  kind?: string;
  /** For BudgetExceeded: the headroom left this month, USD (≤ 0). */
  remainingUsd?: number;
  /** For a policy refusal (Forbidden from PolicyDenied): every decision, for the page to show. */
  decisions?: PolicyDecision[];
  /** For ProviderError: the provider's HTTP status, when it answered with one (never its body or key). */
  providerStatus?: number;
}

/** The optional details of a payload, copied field by field (so a new detail is added in one place). */
const DETAIL_KEYS = ['issues', 'retryAfterSeconds', 'conflicts', 'kind', 'remainingUsd', 'decisions', 'providerStatus'] as const;

/**
 * Base of all typed errors. Never carries secrets; safe to log and to show. Its details (the
 * optional fields of {@link ErrorPayload}) travel with it: `toJSON()` writes every one that is
 * set, and {@link errorFromPayload} rebuilds them on the far side of IPC/HTTP.
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  /** The payload's optional details as given (see {@link ErrorPayload}). */
  readonly details: Omit<ErrorPayload, 'code' | 'message'>;
  constructor(payload: ErrorPayload) {
    super(payload.message);
    this.name = payload.code;
    this.code = payload.code;
    const details: Omit<ErrorPayload, 'code' | 'message'> = {};
    for (const k of DETAIL_KEYS) if (payload[k] !== undefined) Object.assign(details, { [k]: payload[k] });
    this.details = details;
  }
  /** Validation issues by field (Validation only). */
  get issues(): FieldIssue[] | undefined {
    return this.details.issues;
  }
  /** Seconds until a retry may succeed (RateLimited only). */
  get retryAfterSeconds(): number | undefined {
    return this.details.retryAfterSeconds;
  }
  /** Rows whose version had moved on (Conflict only). */
  get conflicts(): ErrorPayload['conflicts'] {
    return this.details.conflicts;
  }
  /** `{ code, message, …details }`: what crosses IPC/HTTP and what the CLI prints. */
  toJSON(): ErrorPayload {
    return { code: this.code, message: this.message, ...this.details };
  }
}

/** The record does not exist, is deleted, or belongs to another organisation (no existence oracle). */
export class NotFound extends AppError {
  constructor(what: string) {
    super({ code: 'NotFound', message: `${what} was not found.` });
  }
}

/** The actor's role lacks the permission, or the record is outside the actor's self-scope. */
export class Forbidden extends AppError {
  constructor(message: string) {
    super({ code: 'Forbidden', message });
  }
}

/** A row changed since it was read (stale `version`, HTTP 409 semantics). Nothing was written. */
export class Conflict extends AppError {
  constructor(message: string, conflicts?: ErrorPayload['conflicts']) {
    super(conflicts ? { code: 'Conflict', message, conflicts } : { code: 'Conflict', message });
  }
}

/**
 * An idempotency key came back with a different request (another verb or other input) than the
 * one it was first used for (HTTP 422, as the IETF Idempotency-Key draft says). Nothing was
 * written: the first request's outcome stands, and the new change must be sent under a new key.
 */
export class IdempotencyKeyReused extends AppError {
  constructor(
    message = 'This request key was already used for a different change. Nothing was written; open the form again and send your change as a new request.',
  ) {
    super({ code: 'IdempotencyKeyReused', message });
  }
}

/**
 * A record of this kind already exists for the athlete on that day, and the input did not say a
 * second one is meant (a re-measurement, a second session): Conflict, `kind` `SameDayExists`.
 * Nothing was written. The message names the stored record(s); `issues` points at the
 * acknowledgement field of the verb's input (`ackField`, e.g. `second_set_same_day`), which sent
 * as `true` records the second one. `items` (optional): one line per stored record (a squad load:
 * one per athlete who already has a load that day), each given as its own issue on `ackField`;
 * without it the single issue carries the message.
 */
export class SameDayExists extends AppError {
  constructor(message: string, ackField: string, items?: readonly string[]) {
    super({
      code: 'Conflict',
      kind: 'SameDayExists',
      message,
      issues: items?.length ? items.map((m) => ({ path: ackField, message: m })) : [{ path: ackField, message }],
    });
  }
}

/** Input failed validation; `issues` name each field. */
export class ValidationError extends AppError {
  constructor(message: string, issues: FieldIssue[] = []) {
    super({ code: 'Validation', message, issues });
  }
}

/** Too many requests in the window; retry after `retryAfterSeconds`. */
export class RateLimited extends AppError {
  constructor(message: string, retryAfterSeconds: number) {
    super({ code: 'RateLimited', message, retryAfterSeconds });
  }
}

/** A feature is not set up on this install (no model key; the assistant absent from this host). */
export class NotConfigured extends AppError {
  constructor(message: string) {
    super({ code: 'NotConfigured', message });
  }
}

/**
 * Rebuild a typed error from its payload (e.g. on the far side of IPC/HTTP): an AppError with
 * the same code, message, issues, retry delay and conflicts. A payload from an older or foreign
 * peer with an unknown code becomes `Internal`, keeping its message.
 */
export function errorFromPayload(p: ErrorPayload): AppError {
  const code: ErrorCode = isErrorCode(p.code) ? p.code : 'Internal';
  return new AppError({ ...p, code });
}

/** True when `e` is an AppError (or its serialised payload). */
export function isAppError(e: unknown): e is AppError {
  return e instanceof AppError;
}

/** Convert anything thrown into a payload; unknown errors become `Internal` with a generic message. */
export function toErrorPayload(e: unknown): ErrorPayload {
  if (e instanceof AppError) return e.toJSON();
  return { code: 'Internal', message: 'An internal error occurred. The action was not completed; try again, and report it if it persists.' };
}
