/**
 * The MCP types of revision 2025-11-25, the newest legacy-era revision, which older revisions are
 * subsets of (fields that appeared later are optional here). Written from the official schema
 * (`schema/2025-11-25/schema.ts` of modelcontextprotocol/modelcontextprotocol).
 */
import type { JsonObject, Meta, ProgressToken, RequestId } from '../jsonrpc/message.ts'

// ---- versions ----

/** The newest revision this runtime speaks in the legacy (session) era. */
export const LATEST_PROTOCOL_VERSION = '2025-11-25'

/** Every legacy-era revision supported, newest first. */
export const SUPPORTED_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const

/** One of {@link SUPPORTED_PROTOCOL_VERSIONS}. */
export type ProtocolVersion = (typeof SUPPORTED_PROTOCOL_VERSIONS)[number]

/** Syslog (RFC 5424) severities, least severe first: the order `logging/setLevel` filters by. */
export const LOGGING_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const

/** A logging level. */
export type LoggingLevel = (typeof LOGGING_LEVELS)[number]

// ---- base ----

/** An icon a client may show for a server, tool, resource or prompt (2025-11-25). */
export interface Icon {
  src: string
  mimeType?: string
  sizes?: string[]
  theme?: 'light' | 'dark'
}

/** A name for programs and an optional title for people. */
export interface BaseMetadata {
  name: string
  title?: string
}

/** Who a client or server is. */
export interface Implementation extends BaseMetadata {
  version: string
  description?: string
  websiteUrl?: string
  icons?: Icon[]
}

/** Who content is meant for. */
export type Role = 'user' | 'assistant'

/** Hints about how content is used. */
export interface Annotations {
  audience?: Role[]
  priority?: number
  lastModified?: string
}

/** An opaque pagination cursor. */
export type Cursor = string

/** Params of a paginated list request. */
export interface PaginatedParams {
  cursor?: Cursor
  _meta?: Meta
}

/** Any result: may carry `_meta`. */
export interface Result {
  _meta?: JsonObject
  [key: string]: unknown
}

/** A result that says only "done". */
export type EmptyResult = Result

/** A page of a list. */
export interface PaginatedResult extends Result {
  nextCursor?: Cursor
}

// ---- capabilities ----

/** What a client can do. */
export interface ClientCapabilities {
  experimental?: Record<string, JsonObject>
  roots?: { listChanged?: boolean }
  sampling?: { context?: JsonObject; tools?: JsonObject }
  elicitation?: { form?: JsonObject; url?: JsonObject }
  tasks?: JsonObject
  /** Extensions the client supports (MCP 2026-07-28), by identifier, each with its settings. */
  extensions?: Record<string, JsonObject>
  [key: string]: unknown
}

/** What a server can do. */
export interface ServerCapabilities {
  experimental?: Record<string, JsonObject>
  logging?: JsonObject
  completions?: JsonObject
  prompts?: { listChanged?: boolean }
  resources?: { subscribe?: boolean; listChanged?: boolean }
  tools?: { listChanged?: boolean }
  tasks?: JsonObject
  /** Extensions the server supports (MCP 2026-07-28), by identifier, each with its settings. */
  extensions?: Record<string, JsonObject>
  [key: string]: unknown
}

// ---- lifecycle ----

/** Params of `initialize`. */
export interface InitializeParams {
  protocolVersion: string
  capabilities: ClientCapabilities
  clientInfo: Implementation
  _meta?: Meta
}

/** The result of `initialize`. */
export interface InitializeResult extends Result {
  protocolVersion: string
  capabilities: ServerCapabilities
  serverInfo: Implementation
  instructions?: string
}

// ---- content ----

/** Text. */
export interface TextContent {
  type: 'text'
  text: string
  annotations?: Annotations
  _meta?: JsonObject
}

/** An image, base64 encoded. */
export interface ImageContent {
  type: 'image'
  data: string
  mimeType: string
  annotations?: Annotations
  _meta?: JsonObject
}

/** Audio, base64 encoded (2025-03-26). */
export interface AudioContent {
  type: 'audio'
  data: string
  mimeType: string
  annotations?: Annotations
  _meta?: JsonObject
}

/** Text contents of a resource. */
export interface TextResourceContents {
  uri: string
  mimeType?: string
  text: string
  _meta?: JsonObject
}

/** Binary contents of a resource, base64 encoded. */
export interface BlobResourceContents {
  uri: string
  mimeType?: string
  blob: string
  _meta?: JsonObject
}

/** Either kind of resource contents. */
export type ResourceContents = TextResourceContents | BlobResourceContents

/** A resource's contents, inline. */
export interface EmbeddedResource {
  type: 'resource'
  resource: ResourceContents
  annotations?: Annotations
  _meta?: JsonObject
}

/** A pointer to a resource the client may read (2025-06-18). */
export interface ResourceLink extends Resource {
  type: 'resource_link'
}

/** What tool results and prompt messages may contain. */
export type ContentBlock = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource

/** A model's request to call a tool, inside sampling (2025-11-25). */
export interface ToolUseContent {
  type: 'tool_use'
  id: string
  name: string
  input: JsonObject
  _meta?: JsonObject
}

/** The result of a tool call, fed back to the model in sampling (2025-11-25). */
export interface ToolResultContent {
  type: 'tool_result'
  toolUseId: string
  content: ContentBlock[]
  structuredContent?: JsonObject
  isError?: boolean
  _meta?: JsonObject
}

/** What a sampling message may contain. */
export type SamplingContent = TextContent | ImageContent | AudioContent | ToolUseContent | ToolResultContent

// ---- tools ----

/** Hints about a tool's behaviour; untrusted unless the server is. */
export interface ToolAnnotations {
  title?: string
  readOnlyHint?: boolean
  destructiveHint?: boolean
  idempotentHint?: boolean
  openWorldHint?: boolean
}

/** A tool as `tools/list` describes it. */
export interface Tool extends BaseMetadata {
  description?: string
  inputSchema: { type: 'object'; properties?: Record<string, object>; required?: string[]; [key: string]: unknown }
  outputSchema?: { type: 'object'; properties?: Record<string, object>; required?: string[]; [key: string]: unknown }
  annotations?: ToolAnnotations
  icons?: Icon[]
  /** Task support of the tool (2025-11-25). */
  execution?: { taskSupport?: 'forbidden' | 'optional' | 'required' }
  _meta?: JsonObject
}

/** The result of `tools/list`. */
export interface ListToolsResult extends PaginatedResult {
  tools: Tool[]
}

/** Params of `tools/call`. */
export interface CallToolParams {
  name: string
  arguments?: Record<string, unknown>
  task?: TaskMetadata
  _meta?: Meta
}

/** The result of `tools/call`. */
export interface CallToolResult extends Result {
  content: ContentBlock[]
  structuredContent?: Record<string, unknown>
  isError?: boolean
}

// ---- resources ----

/** A resource the server can read. */
export interface Resource extends BaseMetadata {
  uri: string
  description?: string
  mimeType?: string
  size?: number
  annotations?: Annotations
  icons?: Icon[]
  _meta?: JsonObject
}

/** A family of resources named by an RFC 6570 URI template. */
export interface ResourceTemplate extends BaseMetadata {
  uriTemplate: string
  description?: string
  mimeType?: string
  annotations?: Annotations
  icons?: Icon[]
  _meta?: JsonObject
}

/** The result of `resources/list`. */
export interface ListResourcesResult extends PaginatedResult {
  resources: Resource[]
}

/** The result of `resources/templates/list`. */
export interface ListResourceTemplatesResult extends PaginatedResult {
  resourceTemplates: ResourceTemplate[]
}

/** Params of `resources/read`. */
export interface ReadResourceParams { uri: string; _meta?: Meta }

/** The result of `resources/read`. */
export interface ReadResourceResult extends Result {
  contents: ResourceContents[]
}

/** Params of `resources/subscribe`. */
export interface SubscribeParams { uri: string; _meta?: Meta }

/** Params of `resources/unsubscribe`. */
export interface UnsubscribeParams { uri: string; _meta?: Meta }

/** Params of `notifications/resources/updated`. */
export interface ResourceUpdatedNotificationParams { uri: string; _meta?: JsonObject }

// ---- prompts ----

/** An argument a prompt takes. */
export interface PromptArgument extends BaseMetadata {
  description?: string
  required?: boolean
}

/** A prompt as `prompts/list` describes it. */
export interface Prompt extends BaseMetadata {
  description?: string
  arguments?: PromptArgument[]
  icons?: Icon[]
  _meta?: JsonObject
}

/** One message of a prompt. */
export interface PromptMessage {
  role: Role
  content: ContentBlock
}

/** The result of `prompts/list`. */
export interface ListPromptsResult extends PaginatedResult {
  prompts: Prompt[]
}

/** Params of `prompts/get`. */
export interface GetPromptParams { name: string; arguments?: Record<string, string>; _meta?: Meta }

/** The result of `prompts/get`. */
export interface GetPromptResult extends Result {
  description?: string
  messages: PromptMessage[]
}

// ---- completion ----

/** Refers to a prompt, for completion. */
export interface PromptReference { type: 'ref/prompt'; name: string; title?: string }

/** Refers to a resource template, for completion. */
export interface ResourceTemplateReference { type: 'ref/resource'; uri: string }

/** Params of `completion/complete`. */
export interface CompleteParams {
  ref: PromptReference | ResourceTemplateReference
  argument: { name: string; value: string }
  context?: { arguments?: Record<string, string> }
  _meta?: Meta
}

/** The result of `completion/complete`: at most 100 values. */
export interface CompleteResult extends Result {
  completion: { values: string[]; total?: number; hasMore?: boolean }
}

// ---- logging ----

/** Params of `logging/setLevel`. */
export interface SetLevelParams { level: LoggingLevel; _meta?: Meta }

/** Params of `notifications/message`. */
export interface LoggingMessageNotificationParams {
  level: LoggingLevel
  logger?: string
  data: unknown
  _meta?: JsonObject
}

// ---- sampling ----

/** One message of a sampling conversation. */
export interface SamplingMessage {
  role: Role
  content: SamplingContent | SamplingContent[]
  _meta?: JsonObject
}

/** A hint about which model to use. */
export interface ModelHint { name?: string }

/** The server's preferences for model selection. */
export interface ModelPreferences {
  hints?: ModelHint[]
  costPriority?: number
  speedPriority?: number
  intelligencePriority?: number
}

/** How the model may use tools in sampling (2025-11-25). */
export interface ToolChoice { mode?: 'auto' | 'required' | 'none' }

/** Params of `sampling/createMessage`. */
export interface CreateMessageParams {
  messages: SamplingMessage[]
  modelPreferences?: ModelPreferences
  systemPrompt?: string
  includeContext?: 'none' | 'thisServer' | 'allServers'
  temperature?: number
  maxTokens: number
  stopSequences?: string[]
  metadata?: JsonObject
  tools?: Tool[]
  toolChoice?: ToolChoice
  task?: TaskMetadata
  _meta?: Meta
}

/** The result of `sampling/createMessage`. */
export interface CreateMessageResult extends Result {
  role: Role
  content: SamplingContent | SamplingContent[]
  model: string
  stopReason?: 'endTurn' | 'stopSequence' | 'maxTokens' | 'toolUse' | string
}

// ---- elicitation ----

/** A string field of an elicitation form. */
export interface StringSchema {
  type: 'string'
  title?: string
  description?: string
  minLength?: number
  maxLength?: number
  format?: 'email' | 'uri' | 'date' | 'date-time'
  default?: string
}

/** A number field of an elicitation form. */
export interface NumberSchema {
  type: 'number' | 'integer'
  title?: string
  description?: string
  minimum?: number
  maximum?: number
  default?: number
}

/** A boolean field of an elicitation form. */
export interface BooleanSchema {
  type: 'boolean'
  title?: string
  description?: string
  default?: boolean
}

/** A single choice from plain values. */
export interface UntitledSingleSelectEnumSchema {
  type: 'string'
  title?: string
  description?: string
  enum: string[]
  default?: string
}

/** A single choice from values with titles. */
export interface TitledSingleSelectEnumSchema {
  type: 'string'
  title?: string
  description?: string
  oneOf: { const: string; title: string }[]
  default?: string
}

/** Several choices from plain values. */
export interface UntitledMultiSelectEnumSchema {
  type: 'array'
  title?: string
  description?: string
  minItems?: number
  maxItems?: number
  items: { type: 'string'; enum: string[] }
  default?: string[]
}

/** Several choices from values with titles. */
export interface TitledMultiSelectEnumSchema {
  type: 'array'
  title?: string
  description?: string
  minItems?: number
  maxItems?: number
  items: { anyOf: { const: string; title: string }[] }
  default?: string[]
}

/** The older titled enum form, with `enumNames` beside `enum`. */
export interface LegacyTitledEnumSchema {
  type: 'string'
  title?: string
  description?: string
  enum: string[]
  enumNames?: string[]
  default?: string
}

/** Any field of an elicitation form. */
export type PrimitiveSchemaDefinition =
  | StringSchema | NumberSchema | BooleanSchema | UntitledSingleSelectEnumSchema | TitledSingleSelectEnumSchema
  | UntitledMultiSelectEnumSchema | TitledMultiSelectEnumSchema | LegacyTitledEnumSchema

/** Params of a form-mode `elicitation/create`. */
export interface ElicitRequestFormParams {
  mode?: 'form'
  message: string
  requestedSchema: { $schema?: string; type: 'object'; properties: Record<string, PrimitiveSchemaDefinition>; required?: string[] }
  task?: TaskMetadata
  _meta?: Meta
}

/** Params of a URL-mode `elicitation/create` (2025-11-25). */
export interface ElicitRequestURLParams {
  mode: 'url'
  message: string
  elicitationId: string
  url: string
  task?: TaskMetadata
  _meta?: Meta
}

/** Params of `elicitation/create`. */
export type ElicitParams = ElicitRequestFormParams | ElicitRequestURLParams

/** The result of `elicitation/create`. */
export interface ElicitResult extends Result {
  action: 'accept' | 'decline' | 'cancel'
  content?: Record<string, string | number | boolean | string[]>
}

/** Params of `notifications/elicitation/complete` (2025-11-25). */
export interface ElicitationCompleteNotificationParams { elicitationId: string }

// ---- roots ----

/** A directory or file the client exposes. */
export interface Root { uri: string; name?: string; _meta?: JsonObject }

/** The result of `roots/list`. */
export interface ListRootsResult extends Result { roots: Root[] }

// ---- notifications ----

/** Params of `notifications/progress`. */
export interface ProgressNotificationParams {
  progressToken: ProgressToken
  progress: number
  total?: number
  message?: string
}

/** Params of `notifications/cancelled`. */
export interface CancelledNotificationParams {
  requestId?: RequestId
  reason?: string
}

// ---- tasks (2025-11-25) ----

/** The state of a task. */
export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled'

/** Asks for a request to run as a task. */
export interface TaskMetadata { ttl?: number }

/** A task. */
export interface Task {
  taskId: string
  status: TaskStatus
  statusMessage?: string
  createdAt: string
  lastUpdatedAt: string
  ttl: number | null
  pollInterval?: number
}

/** The immediate answer to a request run as a task. */
export interface CreateTaskResult extends Result { task: Task }

/** Params of `tasks/get`, `tasks/result`, `tasks/cancel`. */
export interface GetTaskParams { taskId: string; _meta?: Meta }

/** The result of `tasks/list`. */
export interface ListTasksResult extends PaginatedResult { tasks: Task[] }

// ---- JSON Schema as a type ----

/**
 * A JSON Schema of an object, as a tool's `inputSchema` is: the wire type {@link Tool}`['inputSchema']`,
 * loosened to take an `as const` schema (readonly arrays).
 */
export interface ObjectJsonSchema {
  type: 'object'
  properties?: { readonly [name: string]: object }
  required?: readonly string[]
  [key: string]: unknown
}

/**
 * The arguments an `as const` JSON Schema of an object describes: each property typed by its
 * `type` (`string`, `number`/`integer`, `boolean`, `null`, `array` with `items`, `object` with
 * `properties`, or a list of them), `enum` or `const`; optional unless `required`. A schema whose
 * types were widened (one written inline, without `as const`), or with a property that has no
 * literal `type`, gives `Record<string, unknown>`, as untyped JSON Schema always did.
 * @example
 * const schema = { type: 'object', properties: { text: { type: 'string' }, n: { type: 'integer' } }, required: ['text'] } as const
 * type Args = InferJsonSchema<typeof schema> // { text: string; n?: number }
 */
export type InferJsonSchema<S> = S extends { readonly properties: infer P }
  ? IsLiteralSchema<S, P> extends true ? ObjectOf<P, RequiredOf<S>> : Record<string, unknown>
  : Record<string, unknown>

/** True when every property has a literal `type` and `required` (if any) is a readonly list: an `as const` schema. */
type IsLiteralSchema<S, P> = [keyof P] extends [never] ? false
  : S extends { required: string[] } ? false
  : { [K in keyof P]: P[K] extends { readonly type: infer T } ? (string extends T ? false : true) : false }[keyof P] extends true ? true : false

type RequiredOf<S> = S extends { readonly required: readonly (infer R)[] } ? R : never

type ObjectOf<P, R> = Flatten<
  { -readonly [K in keyof P as K extends R ? K : never]: JsonValueOf<P[K]> } &
  { -readonly [K in keyof P as K extends R ? never : K]?: JsonValueOf<P[K]> }>

type Flatten<T> = { [K in keyof T]: T[K] } & {}

type JsonValueOf<P> =
  P extends { readonly enum: readonly (infer E)[] } ? E
  : P extends { readonly const: infer C } ? C
  : P extends { readonly type: infer T } ? JsonTypeValue<T, P>
  : unknown

type JsonTypeValue<T, P> =
  T extends 'string' ? string
  : T extends 'number' | 'integer' ? number
  : T extends 'boolean' ? boolean
  : T extends 'null' ? null
  : T extends 'array' ? (P extends { readonly items: infer I } ? JsonValueOf<I>[] : unknown[])
  : T extends 'object' ? (P extends { readonly properties: infer Q } ? ObjectOf<Q, RequiredOf<P>> : Record<string, unknown>)
  : T extends readonly (infer U)[] ? JsonTypeValue<U, P>
  : unknown

// ---- method maps ----

/** Requests a client sends, with their params and results. */
export interface ClientRequests {
  'initialize': { params: InitializeParams; result: InitializeResult }
  'ping': { params: undefined; result: EmptyResult }
  'tools/list': { params: PaginatedParams | undefined; result: ListToolsResult }
  'tools/call': { params: CallToolParams; result: CallToolResult }
  'resources/list': { params: PaginatedParams | undefined; result: ListResourcesResult }
  'resources/templates/list': { params: PaginatedParams | undefined; result: ListResourceTemplatesResult }
  'resources/read': { params: ReadResourceParams; result: ReadResourceResult }
  'resources/subscribe': { params: SubscribeParams; result: EmptyResult }
  'resources/unsubscribe': { params: UnsubscribeParams; result: EmptyResult }
  'prompts/list': { params: PaginatedParams | undefined; result: ListPromptsResult }
  'prompts/get': { params: GetPromptParams; result: GetPromptResult }
  'completion/complete': { params: CompleteParams; result: CompleteResult }
  'logging/setLevel': { params: SetLevelParams; result: EmptyResult }
  'tasks/get': { params: GetTaskParams; result: Task & Result }
  'tasks/result': { params: GetTaskParams; result: Result }
  'tasks/list': { params: PaginatedParams | undefined; result: ListTasksResult }
  'tasks/cancel': { params: GetTaskParams; result: Task & Result }
}

/** Requests a server sends, with their params and results. */
export interface ServerRequests {
  'ping': { params: undefined; result: EmptyResult }
  'sampling/createMessage': { params: CreateMessageParams; result: CreateMessageResult }
  'elicitation/create': { params: ElicitParams; result: ElicitResult }
  'roots/list': { params: undefined; result: ListRootsResult }
}

/** Notifications a client sends. */
export interface ClientNotifications {
  'notifications/initialized': undefined
  'notifications/cancelled': CancelledNotificationParams
  'notifications/progress': ProgressNotificationParams
  'notifications/roots/list_changed': undefined
}

/** Notifications a server sends. */
export interface ServerNotifications {
  'notifications/cancelled': CancelledNotificationParams
  'notifications/progress': ProgressNotificationParams
  'notifications/message': LoggingMessageNotificationParams
  'notifications/resources/updated': ResourceUpdatedNotificationParams
  'notifications/resources/list_changed': undefined
  'notifications/tools/list_changed': undefined
  'notifications/prompts/list_changed': undefined
  'notifications/elicitation/complete': ElicitationCompleteNotificationParams
}

/**
 * The params argument of a method, as a tuple to spread into a signature: optional when the method
 * may be sent without params (`ping`, `tools/list`), required otherwise. For a notification map
 * ({@link ClientNotifications}, {@link ServerNotifications}) pass the map's entry itself.
 * @example
 * type A = ParamsArgument<ClientRequests['tools/call']['params']> // [params: CallToolParams]
 * type B = ParamsArgument<ClientRequests['ping']['params']>       // [params?: undefined]
 */
export type ParamsArgument<P> = undefined extends P ? [params?: Exclude<P, undefined>] : [params: P]

/** The params of request method `M` of a request map ({@link ClientRequests}, {@link ServerRequests}). */
export type RequestParams<Map, M extends keyof Map> = Map[M] extends { params: infer P } ? P : never

/** The result of request method `M` of a request map ({@link ClientRequests}, {@link ServerRequests}). */
export type RequestResult<Map, M extends keyof Map> = Map[M] extends { result: infer R } ? R : never

/**
 * What `notifications(method)` emits for notification `M` of map `Map`: its params, or an empty
 * object (possibly with `_meta`) for a notification without params.
 */
export type NotificationParams<Map, M extends keyof Map> = [Map[M]] extends [undefined] ? JsonObject : Exclude<Map[M], undefined>

/**
 * `M` when it is not a method of `Map`, `never` when it is: the untyped ("any other method")
 * overloads take their method as this, so a known method is held to its typed signature.
 */
export type OtherMethod<Map, M extends string> = M extends keyof Map ? never : M

/** The revision a method first appeared in, for those added after 2024-11-05. */
export const METHOD_SINCE: Readonly<Record<string, ProtocolVersion>> = {
  'completion/complete': '2025-03-26',
  'elicitation/create': '2025-06-18',
  'notifications/elicitation/complete': '2025-11-25',
  'tasks/get': '2025-11-25',
  'tasks/result': '2025-11-25',
  'tasks/list': '2025-11-25',
  'tasks/cancel': '2025-11-25',
}
