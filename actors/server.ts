import type { Implementation } from '../lib/schema/types.ts'
import type { McpServer } from './server/api.ts'
import type { ServerOptions } from './server/options.ts'
import { Server } from './server/server.ts'

export { SERVER_DEFAULTS, type ServerOptions, type ServerTaskOptions } from './server/options.ts'
export { type SubscriptionState, type SubscriptionMessage, type ServerContext, type TaskHandle, type InputOptions, type CacheHint, type ToolHandler, type StructuredToolResult, type ToolResultFor, type ObjectStandardSchema, type ToolInputSchema, type ToolOutputSchema, type ToolDefinition, type Registration, type ReadOutcome, type ResourceHandler, type TemplateHandler, type Completer, type ResourceDefinition, type ResourceTemplateDefinition, type PromptDefinition, type MethodHandler, type MethodOptions, type PromptHandler, type SessionState, type ServerSession, type McpServer, type McpRequest, type McpHandler, type Middleware, type ServerHealth } from './server/api.ts'
export type { EventBus, ServerEvent, BusEvent, RegistryMessage, RegistryChange } from '../lib/events.ts'
export type { Mount, Mountable, MountCaller, MountCallerSession, MountLog, MountOffer, MountOptions, WatchEvent } from './server/mountable.ts'
export { proxy, proxyClientOptions, mountableServer, PROXY_DEFAULTS, type ListedOffer, type ProxyOptions } from './proxy.ts'
export { RegistryMismatchWarning, type RegistryHealth, type RegistryDifference } from './server/registry-sync.ts'
export { DRAIN_DEFAULTS, type DrainOptions } from '../lib/transport.ts'
export type { TelemetryOptions } from '../lib/request-observer.ts'
export { memoryRequestStateStore, REQUEST_STATE_STORE_DEFAULTS, type RequestStateStore } from './server/request-state.ts'
export { permissionVisibility, type AuditOptions } from './server/middleware.ts'
export type { ListVisibility } from './server/list-views.ts'

/**
 * Creates an MCP server. Register tools, resources and prompts, then `listen` on a transport.
 *
 * @example
 * const server = createServer({ name: 'weather', version: '1.0.0' })
 * server.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
 *   ({ text }) => ({ content: [{ type: 'text', text: String(text) }] }))
 * await server.listen(stdio())
 */
export function createServer(info: Implementation, options: ServerOptions = {}): McpServer {
  return new Server(info, options)
}
