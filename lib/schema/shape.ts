/**
 * What one side sends, shaped for the revision the session negotiated: a field that revision does
 * not define is not sent to a peer that speaks it (a 2024-11-05 client gets no `icons`,
 * `outputSchema`, `execution`; a 2025-06-18 client is asked for sampling without `tools`). Both
 * directions: results and requests (and notifications) a server sends, and those a client sends.
 *
 * Driven by one table of the fields each revision added, read off the official schemas
 * (`schema/<revision>/schema.ts` in modelcontextprotocol/modelcontextprotocol, revisions 2024-11-05,
 * 2025-03-26, 2025-06-18 and 2025-11-25). No wire field was renamed across those four revisions
 * (`ResourceReference` became `ResourceTemplateReference` in 2025-06-18, a TypeScript name only: the
 * wire `type` stays `"ref/resource"`), so shaping only leaves fields out.
 */
import type { JsonObject } from '../jsonrpc/message.ts'

/** The revision each field of a shape first appeared in; fields not named here are always sent. */
type Since = Readonly<Record<string, string>>

/** 2025-06-18 made names metadata (`title`) and added `_meta` on listed items; 2025-11-25 added `icons`. */
const LISTED: Since = { title: '2025-06-18', _meta: '2025-06-18', icons: '2025-11-25' }

/** `TaskAugmentedRequestParams.task` (2025-11-25): a request may ask to run as a task. */
const TASK_AUGMENTED: Since = { task: '2025-11-25' }

/**
 * The fields that came after 2024-11-05, per shape, with the revision that added each (from the
 * official schemas: e.g. `Tool.outputSchema` first appears in schema/2025-06-18/schema.ts).
 */
export const FIELDS_SINCE = {
  // results a server sends
  tool: { ...LISTED, annotations: '2025-03-26', outputSchema: '2025-06-18', execution: '2025-11-25' },
  resource: LISTED,
  resourceTemplate: LISTED,
  resourceContents: { _meta: '2025-06-18' },
  prompt: LISTED,
  promptArgument: { title: '2025-06-18' },
  implementation: { title: '2025-06-18', icons: '2025-11-25', description: '2025-11-25', websiteUrl: '2025-11-25' },
  serverCapabilities: { completions: '2025-03-26', tasks: '2025-11-25' },
  callToolResult: { structuredContent: '2025-06-18' },
  // requests a server sends
  createMessageRequest: { ...TASK_AUGMENTED, tools: '2025-11-25', toolChoice: '2025-11-25' },
  samplingMessage: { _meta: '2025-11-25' },
  elicitRequest: { ...TASK_AUGMENTED, mode: '2025-11-25' },
  requestedSchema: { $schema: '2025-11-25' },
  // requests and results a client sends
  clientCapabilities: { elicitation: '2025-06-18', tasks: '2025-11-25' },
  callToolRequest: TASK_AUGMENTED,
  completeRequest: { context: '2025-06-18' },
  root: { _meta: '2025-06-18' },
  // notifications either side sends
  progressNotification: { message: '2025-03-26' },
} as const satisfies Record<string, Since>

/** What is shaped: a request's params, a result, or a notification's params. */
export type ShapeKind = 'request' | 'result' | 'notification'

/** The newest revision any field of the table needs: sessions at or past it are sent payloads as they are. */
const NEWEST = Object.values(FIELDS_SINCE).flatMap(since => Object.values(since) as string[]).reduce((a, b) => (a > b ? a : b))

/**
 * `payload` (a request's params, a result, or a notification's params, by `kind`) of `method` as a
 * peer of `version` may receive it. Returns `payload` itself when nothing needs to go (always at
 * the newest revision and later, without looking at it); otherwise a shallow copy along the path to
 * each field the revision does not define, with that field left out. Only the shapes named in
 * {@link FIELDS_SINCE} are looked at, never whole payloads (no walk into content or schemas).
 * Revisions are ISO dates and compare as strings. The method (with the kind) tells which side sends,
 * so one function serves both directions.
 * @example
 * shapeForRevision('result', 'tools/list', { tools: [{ name: 'a', inputSchema, icons }] }, '2024-11-05') // no icons
 * shapeForRevision('request', 'sampling/createMessage', { messages, maxTokens: 9, tools }, '2025-06-18') // no tools
 */
export function shapeForRevision(kind: ShapeKind, method: string, payload: JsonObject, version: string): JsonObject {
  if (version >= NEWEST) return payload
  switch (kind) {
    case 'result': return shapeResultOf(method, payload, version)
    case 'request': return shapeRequestOf(method, payload, version)
    case 'notification': return method === 'notifications/progress' ? trim(payload, FIELDS_SINCE.progressNotification, version) : payload
  }
}

/**
 * The result of `method` as a peer of `version` may receive it: {@link shapeForRevision} for results.
 * @see shapeForRevision
 */
export function shapeResult(method: string, result: JsonObject, version: string): JsonObject {
  return shapeForRevision('result', method, result, version)
}

function shapeResultOf(method: string, result: JsonObject, version: string): JsonObject {
  switch (method) {
    case 'initialize': return trimFields(result, { serverInfo: FIELDS_SINCE.implementation, capabilities: FIELDS_SINCE.serverCapabilities }, version)
    case 'tools/list': return trimList(result, 'tools', FIELDS_SINCE.tool, version)
    case 'resources/list': return trimList(result, 'resources', FIELDS_SINCE.resource, version)
    case 'resources/templates/list': return trimList(result, 'resourceTemplates', FIELDS_SINCE.resourceTemplate, version)
    case 'resources/read': return trimList(result, 'contents', FIELDS_SINCE.resourceContents, version)
    case 'prompts/list': return trimList(result, 'prompts', FIELDS_SINCE.prompt, version, prompt => trimList(prompt, 'arguments', FIELDS_SINCE.promptArgument, version))
    case 'tools/call': return trim(result, FIELDS_SINCE.callToolResult, version)
    case 'roots/list': return trimList(result, 'roots', FIELDS_SINCE.root, version)
    default: return result
  }
}

function shapeRequestOf(method: string, params: JsonObject, version: string): JsonObject {
  switch (method) {
    case 'sampling/createMessage': return trimList(trim(params, FIELDS_SINCE.createMessageRequest, version), 'messages', FIELDS_SINCE.samplingMessage, version)
    case 'elicitation/create': return trimFields(trim(params, FIELDS_SINCE.elicitRequest, version), { requestedSchema: FIELDS_SINCE.requestedSchema }, version)
    case 'tools/call': return trim(params, FIELDS_SINCE.callToolRequest, version)
    case 'completion/complete': return trim(params, FIELDS_SINCE.completeRequest, version)
    case 'initialize': return trimFields(params, { clientInfo: FIELDS_SINCE.implementation, capabilities: FIELDS_SINCE.clientCapabilities }, version)
    default: return params
  }
}

/** `value` without the fields newer than `version`; `value` itself when it has none of them. */
function trim(value: JsonObject, since: Since, version: string): JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value
  let out: JsonObject | undefined
  for (const key in since) {
    if (since[key]! > version && Object.hasOwn(value, key)) {
      out ??= { ...value }
      delete out[key]
    }
  }
  return out ?? value
}

/** `value` with each named object member trimmed by its table; `value` itself when none changed. */
function trimFields(value: JsonObject, members: Readonly<Record<string, Since>>, version: string): JsonObject {
  let out: JsonObject | undefined
  for (const key in members) {
    const member = value[key] as JsonObject | undefined
    if (typeof member !== 'object' || member === null || Array.isArray(member)) continue
    const trimmed = trim(member, members[key]!, version)
    if (trimmed !== member) (out ??= { ...value })[key] = trimmed
  }
  return out ?? value
}

/**
 * `value` with each item of its array member `key` trimmed (and passed through `inner`, for a
 * nested list); `value` itself when no item changed.
 */
function trimList(value: JsonObject, key: string, since: Since, version: string, inner?: (item: JsonObject) => JsonObject): JsonObject {
  const items = value[key]
  if (!Array.isArray(items)) return value
  let out: unknown[] | undefined
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as JsonObject
    let trimmed = trim(item, since, version)
    if (inner !== undefined && typeof trimmed === 'object' && trimmed !== null && !Array.isArray(trimmed)) trimmed = inner(trimmed)
    if (trimmed !== item) (out ??= items.slice())[i] = trimmed
  }
  return out === undefined ? value : { ...value, [key]: out } as JsonObject
}
