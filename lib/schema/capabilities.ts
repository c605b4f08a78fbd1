import { isJsonObject } from '../jsonrpc/guards.ts'

/**
 * The capability a method needs from the side that receives it, as a path into the capabilities
 * object (`['resources', 'subscribe']`). `undefined` means no capability is needed.
 *
 * Used both ways: a sender refuses locally, with a clear error, a request its peer did not declare;
 * a receiver answers -32601 for a method it did not declare.
 */
export function requiredCapability(method: string, params?: unknown): readonly string[] | undefined {
  switch (method) {
    // Client -> server: the server's capabilities.
    case 'tools/list': case 'tools/call': return TOOLS
    case 'resources/list': case 'resources/read': case 'resources/templates/list': return RESOURCES
    case 'resources/subscribe': case 'resources/unsubscribe': return RESOURCES_SUBSCRIBE
    case 'prompts/list': case 'prompts/get': return PROMPTS
    case 'logging/setLevel': return LOGGING
    case 'completion/complete': return COMPLETIONS
    // Server -> client: the client's capabilities.
    case 'sampling/createMessage':
      return isJsonObject(params) && Array.isArray(params.tools) ? SAMPLING_TOOLS : SAMPLING
    case 'elicitation/create':
      return isJsonObject(params) && params.mode === 'url' ? ELICITATION_URL : ELICITATION
    case 'roots/list': return ROOTS
    // Notifications: the sender's own capabilities.
    case 'notifications/tools/list_changed': return TOOLS_LIST_CHANGED
    case 'notifications/resources/list_changed': return RESOURCES_LIST_CHANGED
    case 'notifications/prompts/list_changed': return PROMPTS_LIST_CHANGED
    case 'notifications/resources/updated': return RESOURCES_SUBSCRIBE
    case 'notifications/message': return LOGGING
    case 'notifications/roots/list_changed': return ROOTS_LIST_CHANGED
    default: return undefined
  }
}

const TOOLS = ['tools']
const RESOURCES = ['resources']
const RESOURCES_SUBSCRIBE = ['resources', 'subscribe']
const PROMPTS = ['prompts']
const LOGGING = ['logging']
const COMPLETIONS = ['completions']
const SAMPLING = ['sampling']
const SAMPLING_TOOLS = ['sampling', 'tools']
const ELICITATION = ['elicitation']
const ELICITATION_URL = ['elicitation', 'url']
const ROOTS = ['roots']
const TOOLS_LIST_CHANGED = ['tools', 'listChanged']
const RESOURCES_LIST_CHANGED = ['resources', 'listChanged']
const PROMPTS_LIST_CHANGED = ['prompts', 'listChanged']
const ROOTS_LIST_CHANGED = ['roots', 'listChanged']

/**
 * True when `capabilities` declares the capability at `path`. An object or `true` counts as
 * declared; a missing key, `false` or `undefined` does not.
 */
export function hasCapability(capabilities: unknown, path: readonly string[]): boolean {
  let node: unknown = capabilities
  for (const key of path) {
    if (!isJsonObject(node)) return false
    node = Object.hasOwn(node, key) ? node[key] : undefined
    if (node === undefined || node === false || node === null) return false
  }
  return true
}
