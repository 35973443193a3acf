/** HTTP form of the one error shape (models/errors.ts): `{ error: ErrorPayload }` with its status. */
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { AppError, type ErrorPayload, toErrorPayload } from '../../models/errors';

const STATUS: Record<ErrorPayload['code'], ContentfulStatusCode> = {
  Validation: 400,
  Unauthenticated: 401,
  Forbidden: 403,
  NotFound: 404,
  Conflict: 409,
  RateLimited: 429,
  TooManyRuns: 429,
  BudgetExceeded: 402,
  Internal: 500,
};

/** Answer `e` as JSON with the status its code implies (`status` overrides, e.g. 413). */
export function errorResponse(c: Context, e: unknown, status?: ContentfulStatusCode): Response {
  const payload = toErrorPayload(e);
  if (payload.retryAfterSeconds !== undefined) c.header('Retry-After', String(payload.retryAfterSeconds));
  return c.json({ error: payload }, status ?? STATUS[payload.code]);
}

/** A Validation error with a message (and optional field issues). */
export function badRequest(message: string, issues?: ErrorPayload['issues']): AppError {
  return new AppError(issues ? { code: 'Validation', message, issues } : { code: 'Validation', message });
}
