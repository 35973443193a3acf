import { describe, expect, it } from 'vitest';
import { AppError, ERROR_CODES, HTTP_STATUS, NotConfigured, errorFromPayload, isErrorCode, toErrorPayload } from './errors';

describe('error codes', () => {
  it('give every code an HTTP status a client can act on (4xx for the caller, 5xx for the server side)', () => {
    expect(Object.keys(HTTP_STATUS).sort()).toEqual([...ERROR_CODES].sort());
    expect(HTTP_STATUS.NotConfigured).toBe(503);
    expect(HTTP_STATUS.ProviderError).toBe(502);
    expect(HTTP_STATUS.Validation).toBe(422);
    expect(HTTP_STATUS.ConfirmTimeout).toBe(410);
    expect(HTTP_STATUS.Stopped).toBe(410);
    expect(HTTP_STATUS.Internal).toBe(500);
  });

  it('includes the codes a run records', () => {
    for (const c of ['ConfirmTimeout', 'Stopped', 'Refusal', 'IterationLimit', 'PauseTurn', 'UnknownStopReason', 'BudgetExceeded'])
      expect(isErrorCode(c), c).toBe(true);
    expect(isErrorCode('Oops')).toBe(false);
  });

  it('round-trip through a payload keeps code, message, issues; an unknown code becomes Internal', () => {
    const e = errorFromPayload({ code: 'Validation', message: 'bad', issues: [{ path: 'x', message: 'required' }] });
    expect(e).toBeInstanceOf(AppError);
    expect(e.toJSON()).toEqual({ code: 'Validation', message: 'bad', issues: [{ path: 'x', message: 'required' }] });
    const foreign = errorFromPayload({ code: 'Teapot', message: 'short and stout' } as never);
    expect(foreign.code).toBe('Internal');
    expect(foreign.message).toBe('short and stout');
    expect(toErrorPayload(new NotConfigured('No key.'))).toEqual({ code: 'NotConfigured', message: 'No key.' });
    expect(toErrorPayload(new Error('secret path /home/x'))).toMatchObject({ code: 'Internal' });
  });

  it('details travel: kind, remainingUsd, decisions and providerStatus survive toJSON and errorFromPayload', () => {
    const payload = {
      code: 'BudgetExceeded' as const,
      message: 'Over the cap.',
      kind: 'org_cap',
      remainingUsd: -0.25,
      decisions: [{ code: 'date_in_future' as const, effect: 'deny' as const, reason: 'In the future.', rule: 'domain.md' }],
      providerStatus: 529,
    };
    const wire = JSON.parse(JSON.stringify(new AppError(payload))) as typeof payload;
    expect(wire).toEqual(payload);
    const back = errorFromPayload(wire);
    expect(back.details).toEqual({ kind: 'org_cap', remainingUsd: -0.25, decisions: payload.decisions, providerStatus: 529 });
    expect(back.toJSON()).toEqual(payload);
    // A plain error carries no details at all.
    expect(new NotConfigured('No key.').details).toEqual({});
  });
});
