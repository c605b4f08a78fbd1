/**
 * The capabilities a server offers a session: what its registries hold (tools, resources and
 * templates, prompts, completers, extensions, tasks), over what `ServerOptions.capabilities`
 * declares. The server keeps the answer until its registries change.
 */
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import type { ServerCapabilities } from '../../lib/schema/types.ts'
import type { ServerOptions } from './options.ts'
import type { RegistriesView } from './registry.ts'
import { LEGACY_TASKS_CAPABILITY, TASKS_EXTENSION } from './tasks.ts'

/** What the capabilities are read off. */
export interface OfferingServer extends RegistriesView {
  readonly options: ServerOptions
  /** Extensions declared with `server.extension`, by identifier, with their settings. */
  readonly extensions: ReadonlyMap<string, JsonObject>
  readonly tasks: { readonly isEnabled: boolean }
}

/**
 * The capabilities `server` offers now: `logging` always; `tools`, `resources` (with subscribe)
 * and `prompts` with listChanged when registered or declared; `completions` when declared or some
 * prompt or template completes; extensions declared; `tasks` (and its extension) when enabled. A
 * new object each call.
 */
export function offeredCapabilities(server: OfferingServer): ServerCapabilities {
  const declared = server.options.capabilities ?? {}
  const capabilities: ServerCapabilities = { ...declared, logging: declared.logging ?? {} }
  if (server.tools.size > 0 || declared.tools) capabilities.tools = { listChanged: true, ...declared.tools }
  if (server.resources.size > 0 || server.templates.size > 0 || declared.resources) {
    capabilities.resources = { subscribe: true, listChanged: true, ...declared.resources }
  }
  if (server.prompts.size > 0 || declared.prompts) capabilities.prompts = { listChanged: true, ...declared.prompts }
  if (declared.completions || hasCompleters(server)) capabilities.completions = { ...declared.completions }
  if (server.extensions.size > 0) capabilities.extensions = { ...declared.extensions, ...Object.fromEntries(server.extensions) }
  if (server.tasks.isEnabled) {
    // Both declarations: initialize (2025-11-25) reads `tasks`, server/discover the extension (and drops `tasks`).
    capabilities.tasks ??= LEGACY_TASKS_CAPABILITY as unknown as JsonObject
    capabilities.extensions = { ...capabilities.extensions, [TASKS_EXTENSION]: capabilities.extensions?.[TASKS_EXTENSION] ?? {} }
  }
  return capabilities
}

/** True when a prompt or a template answers completion/complete (its own `complete`, or its mounted source's). */
function hasCompleters(server: OfferingServer): boolean {
  for (const entry of server.prompts.values()) if (entry.definition.complete || entry.mount?.completions) return true
  for (const entry of server.templates.values()) if (entry.definition.complete || entry.mount?.completions) return true
  return false
}
