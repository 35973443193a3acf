/**
 * The one error shape that crosses every boundary (service → IPC/HTTP → renderer, tool → model,
 * CLI → stderr). `code` is stable; `message` says what failed and what to do next.
 */
export type ErrorCode =
  | 'NotFound'
  | 'Forbidden'
  | 'Conflict'
  | 'Validation'
  | 'RateLimited'
  | 'TooManyRuns'
  | 'BudgetExceeded'
  | 'Unauthenticated'
  | 'Internal';

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
}

/** Base of all typed errors. Never carries secrets; safe to log and to show. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly issues?: FieldIssue[];
  readonly retryAfterSeconds?: number;
  readonly conflicts?: ErrorPayload['conflicts'];
  constructor(payload: ErrorPayload) {
    super(payload.message);
    this.name = payload.code;
    this.code = payload.code;
    if (payload.issues) this.issues = payload.issues;
    if (payload.retryAfterSeconds !== undefined) this.retryAfterSeconds = payload.retryAfterSeconds;
    if (payload.conflicts) this.conflicts = payload.conflicts;
  }
  toJSON(): ErrorPayload {
    const out: ErrorPayload = { code: this.code, message: this.message };
    if (this.issues) out.issues = this.issues;
    if (this.retryAfterSeconds !== undefined) out.retryAfterSeconds = this.retryAfterSeconds;
    if (this.conflicts) out.conflicts = this.conflicts;
    return out;
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

/** Rebuild a typed error from its payload (e.g. on the far side of IPC/HTTP). */
export function errorFromPayload(p: ErrorPayload): AppError {
  return new AppError(p);
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
