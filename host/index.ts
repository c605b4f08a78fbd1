/**
 * `rxmcp/host`: the host of the MCP architecture. Many supervised clients from an `mcpServers`
 * config, one aggregated view, a security policy (consent, allow/deny, roots), the LLM integration
 * (Anthropic and OpenAI adapters over fetch, the tool-use loop, sampling through a model), and the
 * gateway that serves the view as one MCP server.
 */
export { createHost, startServerClient } from './host.ts'
export type { Host, HostOptions, HostElicitation, HostResource, HostPrompt, HostLog, ConsentRequest, ConsentAnswer } from './host.ts'
export { supervisorLogic, restartPolicy, RESTART_DEFAULTS } from './supervisor.ts'
export { hostLogic } from './host-logic.ts'
export type { HostState, HostMessage, HostServer } from './host-logic.ts'
export { HOST_LIMIT_DEFAULTS } from './bounds.ts'
export type { HostLimits } from './bounds.ts'
export type { ServerState, RestartPolicy, FullRestartPolicy, StartedClient, SupervisorState, SupervisorMessage, SupervisorReport, RunEvent } from './supervisor.ts'
export type { HostView, HostTool, HostCallOptions, HostProgress } from './view.ts'
export { hostApps } from './apps.ts'
export type { HostApps, HostApp, AppContent, AppBridgeFunctions } from './apps.ts'
export { hostServer } from './gateway.ts'
export type { Gateway, GatewayOptions } from './gateway.ts'
export { gatewayProduct, gatewayAuthenticator, gatewayPolicy, gatewayHealth, healthEndpoint } from './gateway-product.ts'
export type { GatewayProduct, GatewayProductOptions, GatewayHealth, HealthEndpointOptions } from './gateway-product.ts'
export { parseGatewayConfig, DEFAULT_HEALTH_PATH, DEFAULT_REDACTED_KEYS } from '../lib/gateway-config.ts'
export type { GatewayConfig, GatewayAuthConfig, GatewayAuditConfig, GatewayPolicyRule, GatewayPrincipalMatch } from '../lib/gateway-config.ts'
export { anthropicModel, openaiModel, samplingViaModel, lastMessage, MODEL_DEFAULTS, ModelHttpError, ModelStreamError, ModelErrorCode } from './model.ts'
export type { ModelAdapter, AnthropicModelOptions, OpenAiModelOptions, SamplingViaModelOptions } from './model.ts'
export { converse, CONVERSATION_DEFAULTS } from './conversation.ts'
export type { ConverseOptions, ConversationEvent, ConversationStopReason, ToolCallRequest, ToolCallDecision } from './conversation.ts'
export type { ModelMessage, ModelRequest, ModelEvent, ModelContent, StopReason, ModelUsage } from '../lib/llm/messages.ts'
export { parseHostConfig, diffHostConfig, expandVariables, redactExpansions, HostConfigError, MIN_REDACTED_LENGTH } from '../lib/host-config.ts'
export type { HostConfig, HostServerConfig, HostConfigChange, ServerTransportKind, ServerOAuthConfig } from '../lib/host-config.ts'
export { namespacedNames, MAX_TOOL_NAME } from '../lib/tool-names.ts'
