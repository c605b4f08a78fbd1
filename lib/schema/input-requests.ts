/**
 * What MCP requires of the requests a server asks of a client (`sampling/createMessage`,
 * `elicitation/create`) and of the roots a client offers, checked the same way on both sides: a
 * server refuses to send a malformed request (its handler's mistake), a client answers one -32602,
 * and neither holds a root that is not a `file://` URI. Pure: each check returns what is wrong,
 * in words for an error message, or undefined. A leaf of lib/ (lib/jsonrpc/errors.ts reads it), so
 * it imports nothing.
 */

/**
 * What is wrong with the params of an input request of `method`, or undefined (also for a method
 * this file has no rule for, and for `roots/list`, which takes no params).
 */
export function inputRequestProblem(method: string, params: unknown): string | undefined {
  if (method === 'sampling/createMessage') return isObject(params) ? samplingMessagesProblem(params.messages) : 'sampling/createMessage needs params with messages'
  if (method === 'elicitation/create') return elicitParamsProblem(params)
  return undefined
}

/**
 * What is wrong with the `messages` of a sampling request, or undefined. MCP 2025-11-25 and
 * 2026-07-28 sampling:
 *
 * - each message has a `role` of "user" or "assistant" and a `content`: a content block (an
 *   object with a string `type`) or a list of them ("Sampling messages MUST contain a role field
 *   of user or assistant; and a content field");
 * - a user message that holds a `tool_result` holds only tool results ("Tool Result Messages");
 * - an assistant message that holds `tool_use` blocks is followed at once by a user message of
 *   only tool results, one per tool use, each naming its `id` as `toolUseId` ("Tool Use and
 *   Result Balance": "before any other message"), so the last message is never such an
 *   assistant message.
 */
export function samplingMessagesProblem(messages: unknown): string | undefined {
  if (!Array.isArray(messages)) return 'messages must be a list'
  /** The ids of the previous message's tool uses, which this message must answer one each. */
  let pending: string[] | undefined
  for (let index = 0; index < messages.length; index++) {
    const message: unknown = messages[index]
    const at = `messages[${index}]`
    if (!isObject(message)) return `${at} must be an object`
    if (message.role !== 'user' && message.role !== 'assistant') return `${at}.role must be "user" or "assistant"`
    const blocks = Array.isArray(message.content) ? message.content as unknown[] : message.content === undefined ? undefined : [message.content]
    if (blocks === undefined) return `${at} has no content`
    for (let each = 0; each < blocks.length; each++) {
      const block = blocks[each]
      if (!isObject(block) || typeof block.type !== 'string') return `${at}.content${Array.isArray(message.content) ? `[${each}]` : ''} must be a content block with a type`
    }
    const results = blocks.filter(block => (block as Record<string, unknown>).type === 'tool_result') as Array<Record<string, unknown>>
    if (message.role === 'user' && results.length > 0 && results.length !== blocks.length) return `${at} mixes tool results with other content; a user message with tool results holds only tool results`
    if (pending !== undefined) {
      const answered = results.map(result => result.toolUseId)
      if (message.role !== 'user' || results.length === 0) return `${at} must be a user message of tool results answering the tool uses of messages[${index - 1}]`
      if (answered.length !== pending.length || answered.some(id => typeof id !== 'string') || new Set(answered).size !== answered.length || !pending.every(id => answered.includes(id))) {
        return `${at} must answer each tool use of messages[${index - 1}] once by its id (${pending.map(id => JSON.stringify(id)).join(', ')})`
      }
      pending = undefined
    }
    if (message.role === 'assistant') {
      const uses = blocks.filter(block => (block as Record<string, unknown>).type === 'tool_use') as Array<Record<string, unknown>>
      if (uses.length > 0) {
        if (uses.some(use => typeof use.id !== 'string')) return `${at} has a tool use without a string id`
        pending = uses.map(use => use.id as string)
      }
    }
  }
  if (pending !== undefined) return `messages[${messages.length - 1}] has tool uses that no user message of tool results follows`
  return undefined
}

/**
 * What is wrong with the params of an `elicitation/create`, or undefined. MCP 2025-11-25 and
 * 2026-07-28 elicitation: a `mode` of "form" (or none, which is form) or "url", and a `message`;
 * a URL-mode request has a `url` that is a valid URL and an `elicitationId` ("URL mode requests
 * MUST specify mode url, a message, ... The url parameter MUST contain a valid URL"); a form
 * asks with a `requestedSchema` object. The `elicitationId` is opaque: any non-empty string.
 */
export function elicitParamsProblem(params: unknown): string | undefined {
  if (!isObject(params)) return 'elicitation/create needs params'
  const mode = params.mode
  if (mode !== undefined && mode !== 'form' && mode !== 'url') return `mode must be "form" or "url", not ${JSON.stringify(mode)}`
  if (typeof params.message !== 'string') return 'an elicitation needs a message (a string)'
  if (mode !== 'url') return isObject(params.requestedSchema) ? undefined : 'a form elicitation needs a requestedSchema object'
  if (typeof params.elicitationId !== 'string' || params.elicitationId === '') return 'a URL elicitation needs an elicitationId (a non-empty string)'
  if (typeof params.url !== 'string' || !isUrl(params.url)) return 'a URL elicitation needs a url that is a valid URL'
  return undefined
}

/**
 * What is wrong with the `elicitations` a URLElicitationRequiredError (-32042) lists, or
 * undefined. MCP 2025-11-25 elicitation: the error MUST list the elicitations to complete before
 * a retry, and each MUST be a URL-mode elicitation with an `elicitationId`.
 */
export function urlElicitationsProblem(elicitations: unknown): string | undefined {
  if (!Array.isArray(elicitations) || elicitations.length === 0) return 'data.elicitations must list the URL elicitations to complete before a retry'
  for (let index = 0; index < elicitations.length; index++) {
    const elicitation: unknown = elicitations[index]
    if (!isObject(elicitation) || elicitation.mode !== 'url') return `data.elicitations[${index}] must be a URL elicitation (mode "url")`
    const problem = elicitParamsProblem(elicitation)
    if (problem !== undefined) return `data.elicitations[${index}]: ${problem}`
  }
  return undefined
}

/**
 * What is wrong with a list of roots, or undefined. MCP 2025-11-25 and 2026-07-28 roots: each
 * root's `uri` "MUST be a file:// URI"; its `name`, when present, is a string.
 */
export function rootsProblem(roots: unknown): string | undefined {
  if (!Array.isArray(roots)) return 'roots must be a list'
  for (let index = 0; index < roots.length; index++) {
    const root: unknown = roots[index]
    if (!isObject(root)) return `roots[${index}] must be an object`
    if (typeof root.uri !== 'string' || !isFileUri(root.uri)) return `roots[${index}].uri must be a file:// URI, not ${JSON.stringify(root.uri)}`
    if (root.name !== undefined && typeof root.name !== 'string') return `roots[${index}].name must be a string`
  }
  return undefined
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isUrl(text: string): boolean {
  try {
    new URL(text)
    return true
  } catch {
    return false
  }
}

/** A URI whose scheme is `file` (schemes are case-insensitive; WHATWG URL lowers it). */
function isFileUri(text: string): boolean {
  try {
    return new URL(text).protocol === 'file:'
  } catch {
    return false
  }
}
