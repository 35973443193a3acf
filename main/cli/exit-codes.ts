/**
 * One exit code per typed error code, for every CLI command (`call`, `ask`, `mcp-token`, `enrol`,
 * `sync`, `seed`, `users`, `verbs`) and the MCP server (`npm run mcp`, main/mcp/server.ts MCP_EXIT):
 * scripts can branch on the code whichever command failed.
 * 0 is success; 1 is every code without its own number (a provider error, an internal error…).
 */
import type { ErrorCode } from '../../models/errors';

/** Exit code of each {@link ErrorCode}; codes not listed exit 1. */
export const CLI_EXIT_CODES: Readonly<Partial<Record<ErrorCode, number>>> = {
  Validation: 2,
  Forbidden: 3,
  NotFound: 4,
  Conflict: 5,
  Unavailable: 6,
  Unauthenticated: 7,
  NotConfigured: 8,
  IdempotencyKeyReused: 9,
  /** A limit (a PIN lockout, HQ's rate limits): wait, then try again; the message says how long. */
  RateLimited: 10,
};

/** Exit code for a typed error code (see {@link CLI_EXIT_CODES}); 1 for any other code or a non-code string. */
export function exitCodeFor(code: ErrorCode | string): number {
  return (CLI_EXIT_CODES as Record<string, number | undefined>)[code] ?? 1;
}

/** The exit codes as one line for help texts: `2 Validation, 3 Forbidden, …, 1 other`. */
export const EXIT_CODES_LINE = `${Object.entries(CLI_EXIT_CODES)
  .map(([code, n]) => `${n} ${code}`)
  .join(', ')}, 1 other`;
