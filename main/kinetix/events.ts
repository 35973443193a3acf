/** Names of the CUSTOM AG-UI events the harness emits (beside the standard AG-UI event types), with their `value` shapes. */
export const KINETIX_EVENTS = {
  /** `{ toolCallId, tool, title, risk, status, error? }` on every tool-call status change. */
  toolCall: 'kinetix.tool_call',
  /** `{ toolCallId, tool, title, risk, args (masked), argsHash, summary, changeset (masked), expiresAt }`. */
  confirmRequired: 'kinetix.confirm_required',
  /** `{ requestIndex, model, inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, costUsd }`. */
  usage: 'kinetix.usage',
  /** `{ path }`: the assistant asks the UI to navigate. */
  openPage: 'kinetix.open_page',
  /** Live-only, never persisted: `{ toolCallId, values }` shown once (e.g. a new device key). */
  reveal: 'kinetix.reveal',
} as const;
