/** HTTP form of the one error shape (models/errors.ts): `{ error: ErrorPayload }` with its status. */
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { AppError, type ErrorPayload, HTTP_STATUS, toErrorPayload } from '../../models/errors';

/**
 * Status per code: the one mapping (models/errors.ts HTTP_STATUS), except Validation, which the
 * HQ server answers 400 as the Electric shape protocol's clients expect.
 */
const STATUS: Record<ErrorPayload['code'], ContentfulStatusCode> = {
  ...(HTTP_STATUS as Record<ErrorPayload['code'], ContentfulStatusCode>),
  Validation: 400,
};

/** Answer `e` as JSON with the status its code implies (`status` overrides, e.g. 413). */
export function errorResponse(c: Context, e: unknown, status?: ContentfulStatusCode): Response {
  const payload = toErrorPayload(e);
  if (payload.retryAfterSeconds !== undefined) c.header('Retry-After', String(payload.retryAfterSeconds));
  return c.json({ error: payload }, status ?? STATUS[payload.code]);
}

/** A request body over the endpoint's size limit (`PayloadTooLarge`, HTTP 413); nothing was read or applied. */
export function payloadTooLarge(message: string): AppError {
  return new AppError({ code: 'PayloadTooLarge', message });
}

/** A Validation error with a message (and optional field issues). */
export function badRequest(message: string, issues?: ErrorPayload['issues']): AppError {
  return new AppError(issues ? { code: 'Validation', message, issues } : { code: 'Validation', message });
}
