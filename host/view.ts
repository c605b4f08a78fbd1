/**
 * What the host offers the rest of an application: the aggregated view of every server's tools,
 * and calls routed to the server that owns each tool. The LLM integration (conversation, model
 * adapters) and the gateway are written against this interface, not against the host's internals.
 */
import type { Observable } from '../lib/rx.ts'
import type { CallToolResult, Tool } from '../lib/schema/types.ts'

/** One tool of the aggregated view: its namespaced name, the server that owns it, and its definition as that server gave it. */
export interface HostTool {
  /** The name in the aggregated view (`<server>__<tool>`, see `namespacedName`): unique, at most 64 characters of `[A-Za-z0-9_-]`. */
  readonly name: string
  /** The configured name of the server that owns it. */
  readonly server: string
  /** The tool as the server listed it (its own `name`). */
  readonly tool: Tool
}

/** Progress a tool reported while running. */
export interface HostProgress {
  readonly progress: number
  readonly total?: number
  readonly message?: string
}

/** Options of one routed tool call. */
export interface HostCallOptions {
  /** Aborting cancels the call at its server. */
  signal?: AbortSignal
  onProgress?: (event: HostProgress) => void
  /** The `ui://` URI of the MCP App view that makes the call, told to the consent hook (set by host/apps.ts). */
  app?: string
}

/** The host's aggregated tools and routed calls. */
export interface HostView {
  /** The aggregated tools now and on every change (replays the current list to a new subscriber). */
  readonly tools: Observable<readonly HostTool[]>
  /** The aggregated tools now. */
  currentTools(): readonly HostTool[]
  /**
   * Calls a tool by its aggregated name, at the server that owns it. Fails at once (never hangs)
   * when that server is not ready or goes away during the call.
   */
  callTool(name: string, args?: Record<string, unknown>, options?: HostCallOptions): Promise<CallToolResult>
}
