/**
 * Kinetix, the assistant harness: the public surface for the app hosts (IPC, web/SSE), the MCP
 * server and the eval harness.
 *
 *   const kx = Kinetix.open({ db, tools: defaultToolRegistry() });
 *   const { runId, conversationId } = kx.startRun({ userId, message, conversationId?, page? });
 *   for await (const e of kx.subscribe(userId, runId, lastEventId)) send(e.id, e.event); // AG-UI
 *   kx.confirm(userId, toolCallId, { approve: true, argsHash, contentHash }); // from kinetix.confirm_required
 *   kx.confirm(userId, toolCallId, { approve: false });
 *   kx.stop(userId, runId);
 *   kx.listConversations(userId); kx.getConversation(userId, id); kx.getRunTrace(userId, runId);
 *   // Proposals (MCP writes, needs-owner changes) are approved in the app, never by the model:
 *   proposeChangeset(db, { userId, planned, source: 'mcp', toolName, title });
 *   approveProposal(db, { approverUserId, changesetId, contentHash }); declineProposal(db, { userId, changesetId });
 *   listProposals(db, userId, { status: 'needs_owner' }); getProposal(db, userId, changesetId);
 */
export { Kinetix, type KinetixOptions, type StartRunInput, type RunOutcome, type ProviderConfig } from './harness';
export { KINETIX_EVENTS } from './events';
export type { RunEventEnvelope } from './bus';
export { EventBus, SUBSCRIBER_BUFFER } from './bus';
export { defaultToolRegistry, catalogueTools, openPageTool, deleteVideoTool } from './catalogue';
export {
  isHighPrivilege,
  isUntrusted,
  gateSnapshot,
  mcpExposableTools,
  mcpHints,
  HIGH_PRIVILEGE_PERMISSIONS,
  SIGNOFF_CAPABLE_TOOLS,
  UI_ONLY_TOOLS,
  type McpHints,
} from './gate';
export { ToolRegistry, DISABLED_TOOLS_SETTING_KEY } from './registry';
export { defineTool, toolInputSchema, type Tool, type ReadTool, type WriteTool, type Risk, type Proposal, type ToolContext } from './tool';
export { toolFromVerb, toolsFromVerbs, toolNameForVerb } from './verb-tools';
export { DEFAULT_LIMITS, BUDGET_STOP_MESSAGE, type KinetixLimits } from './limits';
export { DECLINED_MESSAGE, HARD_RULES } from './prompt';
export { AnthropicProvider, type ModelProvider } from './provider';
export { SecretBox, storeProviderKey, describeProviderKey, PROVIDER_KEY_SETTING } from './secrets';
export { CLEARANCE_SETTING_KEY, DEFAULT_CLEARANCE, FIELD_CLASSIFICATION, type Classification, type ProviderClearance } from './classification';
export { TooManyRuns, BudgetExceeded, UnknownTool, KinetixNotConfigured, ProviderError } from './errors';
export { maskSecrets, MASK } from './mask';
export {
  proposeChangeset,
  approveProposal,
  declineProposal,
  listProposals,
  getProposal,
  expireProposal,
  needsOwnerMessage,
  STALE_MESSAGE,
  type ProposeInput,
  type ApproveInput,
  type ProposalView,
  type ProposalStatus,
  type ProposalSource,
} from './proposals';
