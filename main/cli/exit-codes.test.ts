import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../models/errors';
import { CLI_EXIT_CODES, EXIT_CODES_LINE, exitCodeFor } from './exit-codes';

describe('CLI exit codes', () => {
  it('every error code has one exit code, the named ones distinct and none 0', () => {
    for (const code of ERROR_CODES) expect(exitCodeFor(code)).toBeGreaterThan(0);
    const named = Object.values(CLI_EXIT_CODES);
    expect(new Set(named).size).toBe(named.length);
    expect(named).not.toContain(1);
    expect(exitCodeFor('ProviderError')).toBe(1);
    expect(exitCodeFor('not a code')).toBe(1);
  });
  it('the help line lists them', () => {
    expect(EXIT_CODES_LINE).toBe(
      '2 Validation, 3 Forbidden, 4 NotFound, 5 Conflict, 6 Unavailable, 7 Unauthenticated, 8 NotConfigured, 9 IdempotencyKeyReused, 10 RateLimited, 1 other',
    );
  });
});
