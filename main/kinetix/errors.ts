/**
 * Typed errors of the assistant harness. Each is an {@link AppError} with an existing code
 * (models/errors.ts), so every boundary (IPC, HTTP, CLI, the model's tool result) sees the one
 * error shape. Messages never carry a key or a secret.
 */
import { AppError } from '../../models/errors';

/** A 4th concurrent run for one user (kinetix.md §4): refused, not queued. */
export class TooManyRuns extends AppError {
  constructor(limit: number) {
    super({ code: 'TooManyRuns', message: `You already have ${limit} Kinetix requests running. Wait for one to finish or stop one, then try again.` });
  }
}

/**
 * Where a budget is changed (said in every budget refusal): the organisation cap through the
 * assistant settings (`updateAssistantSettings`, settings.manage: owner, admin, super-admin), a
 * person's own cap on their user account (`update_user`, user.manage).
 */
export const BUDGET_WHERE =
  "An owner or administrator can raise the organisation's monthly cap under Settings → Kinetix (a person's own cap is on their user account).";

/** The budget gate refused a run before its first paid call. `remainingUsd` is the headroom left (≤ 0). */
export class BudgetExceeded extends AppError {
  readonly remainingUsd: number;
  constructor(reason: string, remainingUsd: number) {
    super({ code: 'BudgetExceeded', message: `${reason} Remaining this month: $${Math.max(0, remainingUsd).toFixed(2)}. ${BUDGET_WHERE}`, remainingUsd });
    this.remainingUsd = remainingUsd;
  }
}

/** A tool name outside the run's snapshot (fabricated, out of role, disabled): nothing ran. */
export class UnknownTool extends AppError {
  constructor(name: string) {
    super({ code: 'NotFound', message: `Unknown tool "${name.slice(0, 80)}". It is not one of the tools available in this conversation; nothing was run.` });
  }
}

/** No provider key is configured: the assistant is off, the rest of the app works (HTTP 503, code NotConfigured). */
export class KinetixNotConfigured extends AppError {
  constructor() {
    super({
      code: 'NotConfigured',
      message:
        'Kinetix is not set up on this device: no Anthropic API key is configured. An administrator can add one under Settings → Kinetix (or set ANTHROPIC_API_KEY). Everything else in the app works without it.',
    });
  }
}

/** The model provider failed (HTTP error, network, or the 90-second per-call timeout): retry later (HTTP 502). */
export class ProviderError extends AppError {
  readonly status: number | null;
  constructor(message: string, status: number | null = null) {
    super(status === null ? { code: 'ProviderError', message } : { code: 'ProviderError', message, providerStatus: status });
    this.status = status;
  }
}
