/** Names of the CUSTOM AG-UI events the harness emits (beside the standard AG-UI event types), with their `value` shapes. */
export const KINETIX_EVENTS = {
  /**
   * `{ toolCallId, tool, title, risk, status, error?, changesetId?, undo? }` on every tool-call
   * status change; an `executed` write carries `changesetId` and `undo: { verb: 'changesets.undo', changesetId }`.
   */
  toolCall: 'kinetix.tool_call',
  /**
   * `{ toolCallId, tool, title, risk, args (masked), argsHash, summary, changeset (masked),
   * changesetId, contentHash, policy: { verdict, decisions }, expiresAt }`.
   */
  confirmRequired: 'kinetix.confirm_required',
  /** `{ toolCallId, tool, changesetId | null, verdict: 'allow'|'deny'|'needs_owner', decisions }`: every policy decision, shown to the user. */
  policy: 'kinetix.policy',
  /** `{ toolCallId, tool, title, changesetId, contentHash, summary, changeset (masked), decisions, approverRole }`: waits for an owner in the app. */
  needsOwner: 'kinetix.needs_owner',
  /** `{ reason: 'untrusted_content', source, dropped: string[] }`: the run's tool set narrowed. */
  toolsNarrowed: 'kinetix.tools_narrowed',
  /** `{ requestIndex, model, inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, costUsd }`. */
  usage: 'kinetix.usage',
  /** `{ path }`: the assistant asks the UI to navigate. */
  openPage: 'kinetix.open_page',
  /** Live-only, never persisted: `{ toolCallId, values }` shown once (e.g. a new device key). */
  reveal: 'kinetix.reveal',
} as const;
