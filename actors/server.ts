import { Observable, Subject, catchError, from, isObservable, lastValueFrom, mergeMap, of, type Subscription } from '../lib/rx.ts'
import { createConnection, type Connection, type IncomingRequest, type InspectionEvent, type RequestOptions } from '../lib/connection.ts'
import type { Transport, TransportServer } from '../lib/transport.ts'
import type { JsonObject, RequestId } from '../lib/jsonrpc/message.ts'
import {
  CapabilityError, InternalError, InvalidParamsError, InvalidRequestError, McpError, MethodNotFoundError, ResourceNotFoundError, TransportError,
} from '../lib/jsonrpc/errors.ts'
import { isJsonObject } from '../lib/jsonrpc/guards.ts'
import { canSendRequest, gateIncomingRequest, stepLifecycle, type LifecycleState } from '../lib/lifecycle.ts'
import { Feature, negotiateVersion } from '../lib/schema/negotiate.ts'
import { hasCapability, requiredCapability } from '../lib/schema/capabilities.ts'
import { pageOf } from '../lib/cursor.ts'
import { resultOf, type RequestEvent } from '../lib/operators/progress.ts'
import { shapeForRevision } from '../lib/schema/shape.ts'
import { checkSchemaShape, loadedJsonSchema, loadJsonSchema, type JsonSchemaCompiler, type Validator } from '../lib/validator.ts'
import {
  isStandardSchema, standardJsonSchema, validateStandard, type InferInput, type InferOutput, type StandardSchemaV1, type StandardVerdict,
} from '../lib/standard-schema.ts'
import { uriTemplate, type UriTemplate } from '../lib/uri-template.ts'
import {
  LOGGING_LEVELS, SUPPORTED_PROTOCOL_VERSIONS,
  type CallToolResult, type ClientCapabilities, type CompleteResult, type CreateMessageParams, type CreateMessageResult,
  type ElicitParams, type ElicitResult, type GetPromptResult, type Icon, type Implementation, type ListRootsResult,
  type LoggingLevel, type Prompt, type PromptArgument, type ReadResourceResult, type Resource, type ResourceContents,
  type ResourceTemplate, type ServerCapabilities, type Tool, type ToolAnnotations, type ServerRequests, type ServerNotifications,
  type ClientNotifications, type ParamsArgument, type RequestParams, type RequestResult, type NotificationParams, type OtherMethod,
  type ObjectJsonSchema, type InferJsonSchema,
} from '../lib/schema/types.ts'
import { createActor, withEffects, type ActorRef } from './actor.ts'
import { BaseContext, type RequestContext } from './context.ts'
import { isPromiseLike, mapOutcome, type HandlerOutcome } from './request.ts'

// ---------------------------------------------------------------------------------------------
// Public types
// ---------------------------------------------------------------------------------------------

/** The context a server handler receives: the request's, plus the session and requests back to the client. */
export interface ServerContext extends RequestContext {
  /** The session the request arrived on. */
  readonly session: ServerSession
  /** The client's declared capabilities (from initialize, or from `_meta` in the modern era). */
  readonly clientCapabilities: ClientCapabilities
  /** The client's name and version, as it gave them in initialize. */
  readonly clientInfo: Implementation | undefined
  /** The least severe level `log()` sends now (`logging/setLevel`, else the server's default). */
  readonly logLevel: LoggingLevel
  /** Sends `notifications/message` to this session, if the level passes its `logging/setLevel`. */
  log(level: LoggingLevel, data: unknown, logger?: string): void
  /** Asks the client's model for a completion (`sampling/createMessage`). */
  sample(params: CreateMessageParams, options?: RequestOptions): Promise<CreateMessageResult>
  /** Asks the user for input (`elicitation/create`, form or URL mode). */
  elicit(params: ElicitParams, options?: RequestOptions): Promise<ElicitResult>
  /** Asks the client for its roots (`roots/list`). */
  listRoots(options?: RequestOptions): Promise<ListRootsResult>
}

/**
 * A tool's handler: arguments (validated against `inputSchema`) in, a result out. With a Standard
 * Schema, `args` is what the schema's validator gave back (defaults and transforms applied); `R`
 * is the result, {@link StructuredToolResult} for a Standard Schema `outputSchema`.
 */
export type ToolHandler<A = Record<string, unknown>, R = CallToolResult> = (args: A, ctx: ServerContext) => HandlerOutcome<R>

/**
 * What the handler of a tool with a Standard Schema `outputSchema` returns: a result whose
 * `structuredContent` is the schema's input type, or a failure (`isError: true`) without it.
 */
export type StructuredToolResult<T> = (CallToolResult & { structuredContent: T }) | (CallToolResult & { isError: true })

/**
 * What a tool's handler returns for an `outputSchema` `O`: typed by a Standard Schema, else any
 * result. (`O` is `never` while TypeScript still infers a handler whose definition has no
 * `outputSchema`; that is any result too.)
 */
export type ToolResultFor<O> = [O] extends [never] ? CallToolResult
  : [O] extends [ObjectStandardSchema] ? StructuredToolResult<InferInput<O>> : CallToolResult

/** A Standard Schema (zod 4, valibot, arktype, ...) whose values are objects, as tool and prompt arguments are. */
export type ObjectStandardSchema = StandardSchemaV1<unknown, object>

/** What a tool's `inputSchema` may be: a JSON Schema of an object, or an {@link ObjectStandardSchema}. */
export type ToolInputSchema = ObjectJsonSchema | ObjectStandardSchema

/** What a tool's `outputSchema` may be: a JSON Schema of an object, or an {@link ObjectStandardSchema}. */
export type ToolOutputSchema = ObjectJsonSchema | ObjectStandardSchema

/** How a tool is described to clients. */
export interface ToolDefinition<S extends ToolInputSchema = ToolInputSchema, O extends ToolOutputSchema = ToolOutputSchema> {
  title?: string
  description?: string
  /**
   * The arguments' schema. Default: any object.
   * - JSON Schema (2020-12 unless `$schema` says otherwise) with `type: 'object'`: sent as is,
   *   checked with the built-in validator.
   * - A Standard Schema (zod 4, valibot, arktype): checked with its own validator (async ones too),
   *   the handler's arguments are inferred from it, and the JSON Schema sent in `tools/list` comes
   *   from its Standard JSON Schema converter (zod 4) or from `inputJsonSchema`.
   */
  inputSchema?: S
  /**
   * The JSON Schema to send for a Standard Schema `inputSchema`, for libraries that cannot convert
   * themselves (valibot, arktype without a converter); wins over the converter when both exist.
   */
  inputJsonSchema?: ObjectJsonSchema
  /**
   * When set, every successful result must carry `structuredContent` matching it (else the call
   * fails with -32603). A JSON Schema is sent as is; a Standard Schema types the handler's
   * `structuredContent`, checks it with its own validator (the value it gives back is what is
   * sent), and is described in `tools/list` by the JSON Schema of its output type, from its
   * converter or from `outputJsonSchema`.
   */
  outputSchema?: O
  /** The JSON Schema to send for a Standard Schema `outputSchema` (of its output type), for libraries that cannot convert themselves. */
  outputJsonSchema?: ObjectJsonSchema
  annotations?: ToolAnnotations
  icons?: Icon[]
  execution?: Tool['execution']
  _meta?: JsonObject
}

/** A registered tool, resource, template or prompt: change or remove it later. */
export interface Registration<D> {
  /** Replaces parts of the definition; clients are told the list changed. */
  update(changes: Partial<D>): void
  /** Hides or shows it without removing it. */
  enable(): void
  disable(): void
  readonly isEnabled: boolean
  /** Removes it; clients are told the list changed. */
  remove(): void
}

/** What a resource handler may return: the full result, a list of contents, one content, or text. */
export type ReadOutcome = ReadResourceResult | ResourceContents[] | ResourceContents | string

/** A static resource's reader. */
export type ResourceHandler = (uri: string, ctx: ServerContext) => HandlerOutcome<ReadOutcome>

/** A template resource's reader: receives the variables matched from the URI. */
export type TemplateHandler = (uri: string, variables: Record<string, string | string[]>, ctx: ServerContext) => HandlerOutcome<ReadOutcome>

/** Completes one argument or variable: returns candidate values (at most 100 are sent). */
export type Completer = (value: string, context: { arguments: Record<string, string>; ctx: ServerContext }) =>
  HandlerOutcome<string[] | CompleteResult['completion']>

/** How a static resource is described. */
export type ResourceDefinition = Omit<Resource, 'uri'>

/** How a resource template is described, with optional listing and completion. */
export interface ResourceTemplateDefinition extends Omit<ResourceTemplate, 'uriTemplate'> {
  /** Resources of this template to show in resources/list. */
  list?: (ctx: ServerContext) => HandlerOutcome<Resource[]>
  /** Completers for the template's variables, by variable name. */
  complete?: Record<string, Completer>
}

/** How a prompt is described, with optional completion of its arguments. */
export interface PromptDefinition<S extends ObjectStandardSchema = ObjectStandardSchema> extends Omit<Prompt, 'name'> {
  complete?: Record<string, Completer>
  /**
   * The arguments as a Standard Schema of an object of strings (zod 4, valibot, arktype): `prompts/get`
   * checks them with it (a failure is -32602) and the handler gets what it gives back, typed. Unless
   * `arguments` is given, the listed arguments (name, description, required) come from the
   * schema's JSON Schema: its Standard JSON Schema converter (zod 4) or `argumentsJsonSchema`.
   */
  argumentsSchema?: S
  /** The JSON Schema of `argumentsSchema`, for libraries that cannot convert themselves. */
  argumentsJsonSchema?: JsonObject
}

/** A prompt's handler: string arguments in (or, with `argumentsSchema`, what it gave back), messages out. */
export type PromptHandler<A = Record<string, string>> = (args: A, ctx: ServerContext) => HandlerOutcome<GetPromptResult>

/** Options of {@link createServer}. */
export interface ServerOptions {
  /** Shown to the client in the initialize result. */
  instructions?: string
  /** Capabilities to declare beyond those derived from what is registered. */
  capabilities?: ServerCapabilities
  /** Items per page of every list (default 100). */
  pageSize?: number
  /** Protocol versions this server speaks, newest first (default: every supported revision). */
  protocolVersions?: readonly string[]
  /** Log level of a session before the client sets one (default 'debug': everything is sent). */
  defaultLogLevel?: LoggingLevel
  /** Default timeout of requests the server sends to clients (60 s). */
  timeout?: number
  /** Keep call-site stacks of requests for their timeout errors (see ConnectionOptions.captureStack). */
  captureStack?: boolean
  /** Inspection of every session's connection. */
  inspect?: (event: InspectionEvent) => void
  /** Where errors nobody observes go (default: stderr via console.error). */
  reportUnhandledError?: (error: unknown) => void
  /** Most resource subscriptions one session may hold (default 1000); past it, resources/subscribe is -32600. */
  maxSubscriptions?: number
  /** Most entries of a JSON-RPC batch (2025-03-26 sessions; default 1000, see ConnectionOptions.maxBatchSize). */
  maxBatchSize?: number
}

/** DEFAULTS of {@link ServerOptions}. */
export const SERVER_DEFAULTS = { pageSize: 100, defaultLogLevel: 'debug' as LoggingLevel, timeout: 60_000, maxSubscriptions: 1000, maxBatchSize: 1000 } as const

/** The state of one session, as its actor holds it. */
export interface SessionState {
  status: LifecycleState
  protocolVersion: string
  clientInfo?: Implementation
  clientCapabilities: ClientCapabilities
  logLevel: LoggingLevel
  /**
   * Resource subscriptions of this session, one actor each, by URI. The session's live registry:
   * updated in place (O(1) a change), so it is the same Map from one state to the next.
   */
  subscriptions: ReadonlyMap<string, ActorRef<SubscriptionState, SubscriptionMessage>>
}

/** One session of a server with one client. */
export interface ServerSession {
  readonly id: string
  readonly state: SessionState
  /** The state now and after every change; completes when the session ends. */
  readonly states: Observable<SessionState>
  readonly connection: Connection
  /**
   * Sends a request to the client (capabilities checked locally first), as a cold Observable of
   * progress events and the result. A method of {@link ServerRequests} has its params checked and
   * its result typed: `session.request('roots/list')` emits `RequestEvent<ListRootsResult>`.
   */
  request<M extends keyof ServerRequests>(method: M, ...args: [...ParamsArgument<RequestParams<ServerRequests, M>>, options?: RequestOptions]): Observable<RequestEvent<RequestResult<ServerRequests, M>>>
  /** Any other method: params are a `JsonObject`, and the result is `R` (an unchecked claim). */
  request<R extends JsonObject = JsonObject, M extends string = string>(method: OtherMethod<ServerRequests, M>, params?: JsonObject, options?: RequestOptions): Observable<RequestEvent<R>>
  /** Sends a notification to the client; a method of {@link ServerNotifications} has its params checked. */
  notify<M extends keyof ServerNotifications>(method: M, ...args: ParamsArgument<ServerNotifications[M]>): void
  notify<M extends string>(method: OtherMethod<ServerNotifications, M>, params?: JsonObject): void
  /**
   * Notifications from the client, by method, as their params (e.g. `notifications/roots/list_changed`):
   * typed for a method of {@link ClientNotifications}. Hot; completes when the session ends.
   */
  notifications<M extends keyof ClientNotifications>(method: M): Observable<NotificationParams<ClientNotifications, M>>
  notifications<P extends JsonObject = JsonObject, M extends string = string>(method: OtherMethod<ClientNotifications, M>): Observable<P>
  /** Sends `notifications/message` if `level` passes the session's level. */
  log(level: LoggingLevel, data: unknown, logger?: string): void
  sample(params: CreateMessageParams, options?: RequestOptions): Promise<CreateMessageResult>
  elicit(params: ElicitParams, options?: RequestOptions): Promise<ElicitResult>
  listRoots(options?: RequestOptions): Promise<ListRootsResult>
  /** Tells the client a URL elicitation finished (`notifications/elicitation/complete`). */
  completeElicitation(elicitationId: string): void
  /** Resolves when the session has ended. */
  readonly closed: Promise<void>
  close(): Promise<void>
}

/**
 * An MCP server: registries of tools, resources and prompts, shared by every session it serves.
 * @see createServer
 */
export interface McpServer {
  readonly info: Implementation
  /**
   * Registers a tool whose arguments are a Standard Schema (zod 4, valibot, arktype): the handler's
   * arguments are the schema's output type.
   * @throws TypeError when no JSON Schema can be had for it (no converter, no `inputJsonSchema`),
   *   naming the tool, or when that JSON Schema is not of an object.
   * @example
   * server.tool('add', { inputSchema: z.object({ a: z.number(), b: z.number() }) },
   *   ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }))
   */
  tool<S extends ObjectStandardSchema, O extends ToolOutputSchema = ToolOutputSchema>(name: string, definition: ToolDefinition<S, O> & { inputSchema: S }, handler: ToolHandler<InferOutput<S>, ToolResultFor<O>>): Registration<ToolDefinition<S, O>>
  /**
   * Registers a tool whose arguments are a JSON Schema. The handler's arguments are typed from an
   * `as const` schema ({@link InferJsonSchema}), and are `Record<string, unknown>` otherwise.
   */
  tool<S extends ObjectJsonSchema, O extends ToolOutputSchema = ToolOutputSchema>(name: string, definition: ToolDefinition<S, O> & { inputSchema: S }, handler: ToolHandler<InferJsonSchema<S>, ToolResultFor<O>>): Registration<ToolDefinition>
  /**
   * Registers a tool from any definition (a JSON Schema, none, or a `ToolDefinition` value whose
   * schema kind is not known statically), its arguments typed as `A` on the caller's word.
   */
  tool<A = Record<string, unknown>, O extends ToolOutputSchema = ToolOutputSchema>(name: string, definition: ToolDefinition<ToolInputSchema, O>, handler: ToolHandler<A, ToolResultFor<O>>): Registration<ToolDefinition>
  resource(uri: string, definition: ResourceDefinition, handler: ResourceHandler): Registration<ResourceDefinition>
  resourceTemplate(uriTemplate: string, definition: ResourceTemplateDefinition, handler: TemplateHandler): Registration<ResourceTemplateDefinition>
  /**
   * Registers a prompt whose arguments are a Standard Schema; the handler's arguments are its output type.
   * @throws TypeError when the arguments cannot be listed (no `arguments`, no converter, no
   *   `argumentsJsonSchema`), naming the prompt.
   */
  prompt<S extends ObjectStandardSchema>(name: string, definition: PromptDefinition<S> & { argumentsSchema: S }, handler: PromptHandler<InferOutput<S>>): Registration<PromptDefinition<S>>
  prompt(name: string, definition: PromptDefinition, handler: PromptHandler): Registration<PromptDefinition>
  /** Tells every session subscribed to `uri` that it changed. */
  notifyResourceUpdated(uri: string): void
  /**
   * The server's event bus: every list change (once per kind per microtask) and every resource
   * update, as they happen. Sessions take what they asked for from it; an application may watch it
   * too. Hot: a subscriber sees what happens after it subscribed; it never completes.
   */
  readonly events: Observable<ServerEvent>
  /** Sends a log message to every session (each filters by its own level). */
  log(level: LoggingLevel, data: unknown, logger?: string): void
  /** Serves one client over `transport`; resolves once the transport is being read. */
  listen(transport: Transport): Promise<ServerSession>
  /**
   * Serves every session a transport server (an HTTP listener) opens; resolves once it accepts.
   * `close()` stops it too.
   */
  listen(transportServer: TransportServer): Promise<TransportServer>
  /** Sessions now open. */
  readonly sessions: ReadonlySet<ServerSession>
  /** Ends every session. */
  close(): Promise<void>
}

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

// ---------------------------------------------------------------------------------------------
// Registries
// ---------------------------------------------------------------------------------------------

interface ToolEntry {
  name: string
  definition: ToolDefinition
  handler: ToolHandler<any>
  validateInput: Validator | undefined
  /** The JSON Schema of the arguments, compiled into `validateInput` on the first call. */
  jsonInput: object | undefined
  /** The JSON Schema of `structuredContent`, compiled into `validateOutput` on the first call. */
  jsonOutput: object | undefined
  /** The Standard Schema of the arguments, when `inputSchema` is one (then `validateInput` is unset). */
  standardInput: ObjectStandardSchema | undefined
  /** The Standard Schema of `structuredContent`, when `outputSchema` is one (then `validateOutput` is unset). */
  standardOutput: ObjectStandardSchema | undefined
  validateOutput: Validator | undefined
  /** The wire form, rebuilt when the definition changes. */
  wire: Tool
  isEnabled: boolean
}

interface ResourceEntry { uri: string; definition: ResourceDefinition; handler: ResourceHandler; wire: Resource; isEnabled: boolean }
interface TemplateEntry { template: UriTemplate; definition: ResourceTemplateDefinition; handler: TemplateHandler; wire: ResourceTemplate; isEnabled: boolean }
interface PromptEntry {
  name: string; definition: PromptDefinition; handler: PromptHandler<any>; wire: Prompt; isEnabled: boolean
  /** The Standard Schema of the arguments, when the definition has one. */
  standardArguments: ObjectStandardSchema | undefined
}

type ListKind = 'tools' | 'resources' | 'prompts'

/** What the server's event bus carries (see McpServer.events). */
export type ServerEvent =
  | { type: 'list_changed'; kind: ListKind }
  | { type: 'resource_updated'; uri: string }

const ANY_OBJECT_SCHEMA = Object.freeze({ type: 'object' as const })

// ---------------------------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------------------------

class Server implements McpServer {
  readonly info: Implementation
  readonly options: ServerOptions
  readonly pageSize: number
  readonly tools = new Map<string, ToolEntry>()
  readonly resources = new Map<string, ResourceEntry>()
  readonly templates = new Map<string, TemplateEntry>()
  readonly prompts = new Map<string, PromptEntry>()
  readonly #sessions = new Set<Session>()
  /** Transport servers being listened on, with the subscription to their sessions. */
  readonly #listeners = new Map<TransportServer, Subscription>()
  /** Lists that changed since the last flush; list_changed goes out once per microtask. */
  readonly #changed = new Set<ListKind>()
  /** The event bus (see McpServer.events). */
  readonly #events = new Subject<ServerEvent>()
  readonly events: Observable<ServerEvent> = this.#events.asObservable()

  constructor(info: Implementation, options: ServerOptions) {
    this.info = info
    this.options = options
    this.pageSize = options.pageSize ?? SERVER_DEFAULTS.pageSize
  }

  get sessions(): ReadonlySet<ServerSession> { return this.#sessions }

  tool(name: string, definition: ToolDefinition<any>, handler: ToolHandler<any>): Registration<ToolDefinition<any>> {
    if (typeof name !== 'string' || name.length === 0) throw new TypeError('A tool needs a name')
    if (this.tools.has(name)) throw new TypeError(`Tool ${JSON.stringify(name)} is already registered`)
    const entry = { name, handler, isEnabled: true } as ToolEntry
    const apply = (next: ToolDefinition) => {
      const label = `Tool ${JSON.stringify(name)}`
      const standard = isStandardSchema(next.inputSchema) ? next.inputSchema : undefined
      if (standard === undefined && next.inputJsonSchema !== undefined) throw new TypeError(`${label}: inputJsonSchema goes with a Standard Schema inputSchema`)
      const inputSchema = standard !== undefined ? wireSchemaOf(standard, next.inputJsonSchema, label, 'inputSchema', 'input') : next.inputSchema ?? ANY_OBJECT_SCHEMA
      if (!isJsonObject(inputSchema) || inputSchema.type !== 'object') throw new TypeError(`${label}: inputSchema must have type "object"`)
      const standardOutput = isStandardSchema(next.outputSchema) ? next.outputSchema : undefined
      if (standardOutput === undefined && next.outputJsonSchema !== undefined) throw new TypeError(`${label}: outputJsonSchema goes with a Standard Schema outputSchema`)
      const outputSchema = standardOutput !== undefined ? wireSchemaOf(standardOutput, next.outputJsonSchema, label, 'outputSchema', 'output') : next.outputSchema
      if (standardOutput !== undefined && (outputSchema as JsonObject).type !== 'object') throw new TypeError(`${label}: outputSchema must have type "object"`)
      entry.definition = next
      entry.standardInput = standard
      entry.standardOutput = standardOutput
      entry.jsonInput = next.inputSchema === undefined || standard !== undefined ? undefined : inputSchema
      entry.jsonOutput = next.outputSchema === undefined || standardOutput !== undefined ? undefined : next.outputSchema as object
      if (entry.jsonOutput !== undefined) checkSchemaShape(entry.jsonOutput)
      if (entry.jsonInput !== undefined) checkSchemaShape(entry.jsonInput)
      entry.validateInput = entry.validateOutput = undefined
      // JSON Schemas compile on the tool's first call, when the compiler (ajv) loads: importing
      // rxmcp and answering initialize never pay for it. Once it is loaded, they compile here.
      const compiler = loadedJsonSchema()
      if (compiler !== undefined) compileToolSchemas(entry, compiler, TypeError)
      entry.wire = compact({
        name, title: next.title, description: next.description, inputSchema, outputSchema,
        annotations: next.annotations, icons: next.icons, execution: next.execution, _meta: next._meta,
      }) as Tool
    }
    apply(definition)
    this.tools.set(name, entry)
    this.changed('tools')
    return this.#registration(entry, apply, () => this.tools.delete(name) && this.changed('tools'), 'tools')
  }

  resource(uri: string, definition: ResourceDefinition, handler: ResourceHandler): Registration<ResourceDefinition> {
    if (this.resources.has(uri)) throw new TypeError(`Resource ${JSON.stringify(uri)} is already registered`)
    const entry = { uri, handler, isEnabled: true } as ResourceEntry
    const apply = (next: ResourceDefinition) => {
      entry.definition = next
      entry.wire = compact({ uri, ...next }) as Resource
    }
    apply(definition)
    this.resources.set(uri, entry)
    this.changed('resources')
    return this.#registration(entry, apply, () => this.resources.delete(uri) && this.changed('resources'), 'resources')
  }

  resourceTemplate(template: string, definition: ResourceTemplateDefinition, handler: TemplateHandler): Registration<ResourceTemplateDefinition> {
    if (this.templates.has(template)) throw new TypeError(`Resource template ${JSON.stringify(template)} is already registered`)
    const entry = { template: uriTemplate(template), handler, isEnabled: true } as TemplateEntry
    const apply = (next: ResourceTemplateDefinition) => {
      entry.definition = next
      const { list: _list, complete: _complete, ...described } = next
      entry.wire = compact({ uriTemplate: template, ...described }) as ResourceTemplate
    }
    apply(definition)
    this.templates.set(template, entry)
    this.changed('resources')
    return this.#registration(entry, apply, () => this.templates.delete(template) && this.changed('resources'), 'resources')
  }

  prompt(name: string, definition: PromptDefinition<any>, handler: PromptHandler<any>): Registration<PromptDefinition<any>> {
    if (this.prompts.has(name)) throw new TypeError(`Prompt ${JSON.stringify(name)} is already registered`)
    const entry = { name, handler, isEnabled: true } as PromptEntry
    const apply = (next: PromptDefinition) => {
      const { complete: _complete, argumentsSchema: schema, argumentsJsonSchema: jsonSchema, ...described } = next
      const label = `Prompt ${JSON.stringify(name)}`
      if (schema !== undefined && !isStandardSchema(schema)) throw new TypeError(`${label}: argumentsSchema must be a Standard Schema (zod 4, valibot, arktype)`)
      if (schema === undefined && jsonSchema !== undefined) throw new TypeError(`${label}: argumentsJsonSchema goes with argumentsSchema`)
      // Arguments given by hand win; otherwise they are read off the schema's JSON Schema.
      const listed = schema === undefined || described.arguments !== undefined ? described.arguments
        : promptArgumentsOf(wireSchemaOf(schema, jsonSchema, label, 'argumentsSchema', 'input'), label)
      entry.definition = next
      entry.standardArguments = schema
      entry.wire = compact({ name, ...described, arguments: listed }) as Prompt
    }
    apply(definition)
    this.prompts.set(name, entry)
    this.changed('prompts')
    return this.#registration(entry, apply, () => this.prompts.delete(name) && this.changed('prompts'), 'prompts')
  }

  #registration<D>(entry: { definition: D; isEnabled: boolean }, apply: (next: D) => void, remove: () => unknown, kind: ListKind): Registration<D> {
    return {
      update: changes => { apply({ ...entry.definition, ...changes }); this.changed(kind) },
      enable: () => { if (!entry.isEnabled) { entry.isEnabled = true; this.changed(kind) } },
      disable: () => { if (entry.isEnabled) { entry.isEnabled = false; this.changed(kind) } },
      get isEnabled() { return entry.isEnabled },
      remove: () => { remove() },
    }
  }

  /** Marks a list changed; sessions hear of it once, at the end of the current microtask. */
  changed(kind: ListKind): true {
    if (!this.#events.observed) return true
    if (this.#changed.size === 0) queueMicrotask(() => this.#flushChanged())
    this.#changed.add(kind)
    return true
  }

  #flushChanged(): void {
    const kinds = [...this.#changed]
    this.#changed.clear()
    for (const kind of kinds) this.#events.next({ type: 'list_changed', kind })
  }

  /** The capabilities a session is offered: what is registered, plus what the options add. */
  capabilities(): ServerCapabilities {
    const declared = this.options.capabilities ?? {}
    const capabilities: ServerCapabilities = { ...declared, logging: declared.logging ?? {} }
    if (this.tools.size > 0 || declared.tools) capabilities.tools = { listChanged: true, ...declared.tools }
    if (this.resources.size > 0 || this.templates.size > 0 || declared.resources) {
      capabilities.resources = { subscribe: true, listChanged: true, ...declared.resources }
    }
    if (this.prompts.size > 0 || declared.prompts) capabilities.prompts = { listChanged: true, ...declared.prompts }
    if (declared.completions || this.#hasCompleters()) capabilities.completions = { ...declared.completions }
    return capabilities
  }

  #hasCompleters(): boolean {
    for (const entry of this.prompts.values()) if (entry.definition.complete) return true
    for (const entry of this.templates.values()) if (entry.definition.complete) return true
    return false
  }

  notifyResourceUpdated(uri: string): void {
    this.#events.next({ type: 'resource_updated', uri })
  }

  log(level: LoggingLevel, data: unknown, logger?: string): void {
    for (const session of this.#sessions) session.log(level, data, logger)
  }

  listen(transport: Transport): Promise<ServerSession>
  listen(transportServer: TransportServer): Promise<TransportServer>
  async listen(source: Transport | TransportServer): Promise<ServerSession | TransportServer> {
    if (!('connections' in source)) return this.#open(source)
    const subscription = source.connections.subscribe({
      next: transport => { this.#open(transport) },
      error: error => this.report(error),
    })
    this.#listeners.set(source, subscription)
    await source.start?.()
    return source
  }

  #open(transport: Transport): ServerSession {
    const session = new Session(this, transport)
    this.#sessions.add(session)
    // A legacy session hears list changes (once operating) and updates of what it subscribed to.
    const events = this.#events.subscribe(event => event.type === 'list_changed' ? session.listChanged(event.kind) : session.resourceUpdated(event.uri))
    void session.closed.then(() => { events.unsubscribe(); this.#sessions.delete(session) })
    session.connection.start()
    return session
  }

  async close(): Promise<void> {
    const listeners = [...this.#listeners]
    this.#listeners.clear()
    for (const [, subscription] of listeners) subscription.unsubscribe()
    await Promise.all([...listeners.map(([listener]) => listener.close()), ...[...this.#sessions].map(session => session.close())])
  }

  report(error: unknown): void {
    if (this.options.reportUnhandledError) this.options.reportUnhandledError(error)
    else console.error('[rxmcp]', error)
  }
}

// ---------------------------------------------------------------------------------------------
// Subscription actor
// ---------------------------------------------------------------------------------------------

/** The state of one resources/subscribe. */
export interface SubscriptionState { uri: string; updates: number }
/** What a subscription actor hears. */
export type SubscriptionMessage = { type: 'updated' }

function subscriptionActor(uri: string, session: Session): ActorRef<SubscriptionState, SubscriptionMessage> {
  return createActor<SubscriptionState, SubscriptionMessage>({ uri, updates: 0 }, state =>
    withEffects({ uri: state.uri, updates: state.updates + 1 }, [() => session.notify('notifications/resources/updated', { uri })]),
  { name: `subscription:${uri}`, reportError: error => session.server.report(error) })
}

// ---------------------------------------------------------------------------------------------
// Session actor
// ---------------------------------------------------------------------------------------------

type SessionMessage =
  | { type: 'initialize'; protocolVersion: string; clientInfo?: Implementation; clientCapabilities: ClientCapabilities }
  | { type: 'initialized' }
  | { type: 'set-level'; level: LoggingLevel }
  | { type: 'subscribe'; uri: string }
  | { type: 'unsubscribe'; uri: string }
  | { type: 'closed' }

function sessionBehaviour(session: Session) {
  return (state: SessionState, message: SessionMessage) => {
    switch (message.type) {
      case 'initialize':
        return { ...state, status: stepLifecycle(state.status, message), protocolVersion: message.protocolVersion, clientInfo: message.clientInfo, clientCapabilities: message.clientCapabilities }
      case 'initialized':
        return { ...state, status: stepLifecycle(state.status, message) }
      case 'set-level':
        return { ...state, logLevel: message.level }
      // The map is changed in place: copying it per change made n subscribes cost O(n^2), and
      // 40,000 of them in one session held the event loop for seconds. The state object is still new.
      case 'subscribe': {
        if (state.subscriptions.has(message.uri)) return state
        ;(state.subscriptions as Map<string, ActorRef<SubscriptionState, SubscriptionMessage>>).set(message.uri, subscriptionActor(message.uri, session))
        return { ...state }
      }
      case 'unsubscribe': {
        const actor = state.subscriptions.get(message.uri)
        if (actor === undefined) return state
        ;(state.subscriptions as Map<string, ActorRef<SubscriptionState, SubscriptionMessage>>).delete(message.uri)
        return withEffects({ ...state }, [() => void actor.stop()])
      }
      case 'closed': {
        const actors = [...state.subscriptions.values()]
        return withEffects({ ...state, status: stepLifecycle(state.status, message), subscriptions: new Map() }, actors.map(actor => () => void actor.stop()))
      }
    }
  }
}

let sessionCount = 0

class Session implements ServerSession {
  readonly id: string
  readonly server: Server
  readonly connection: Connection
  readonly actor: ActorRef<SessionState, SessionMessage>
  readonly closed: Promise<void>
  /** What this session was offered at initialize; fixed for its life, as MCP negotiates it once. */
  #capabilities: ServerCapabilities = {}
  /** Set for transports that carry one exchange without a session (stateless HTTP). */
  readonly #isStateless: boolean

  constructor(server: Server, transport: Transport) {
    this.id = `session-${++sessionCount}`
    this.server = server
    this.#isStateless = transport.isStateless === true
    if (this.#isStateless) this.#capabilities = server.capabilities()
    const options = server.options
    this.actor = createActor<SessionState, SessionMessage>({
      status: 'awaiting-initialize',
      protocolVersion: (options.protocolVersions ?? SUPPORTED_PROTOCOL_VERSIONS)[0]!,
      clientCapabilities: {},
      logLevel: options.defaultLogLevel ?? SERVER_DEFAULTS.defaultLogLevel,
      subscriptions: new Map(),
    }, sessionBehaviour(this), { name: this.id, reportError: error => server.report(error) })
    this.connection = createConnection(transport, {
      gateRequest: request => this.#gate(request),
      gateOutgoing: (method, params) => this.#gateOutgoing(method, params),
      onNotification: notification => {
        if (notification.method === 'notifications/initialized') this.actor.send({ type: 'initialized' })
      },
      allowBatch: () => Feature.batch(this.actor.state.protocolVersion) && this.actor.state.status !== 'awaiting-initialize',
      // What goes out fits the negotiated revision (initialize is answered after the version is set).
      shapeOutgoing: (kind, method, payload) => shapeForRevision(kind, method, payload, this.actor.state.protocolVersion),
      maxBatchSize: options.maxBatchSize,
      timeout: options.timeout,
      captureStack: options.captureStack,
      inspect: options.inspect,
      reportUnhandledError: error => server.report(error),
    })
    this.#registerHandlers()
    this.closed = this.connection.closed.then(() => {
      this.actor.send({ type: 'closed' })
      void this.actor.stop()
    })
  }

  get state(): SessionState { return this.actor.state }
  get states(): Observable<SessionState> { return this.actor.states }
  get protocolVersion(): string { return this.actor.state.protocolVersion }

  #gate(request: IncomingRequest): McpError | undefined {
    const state = this.actor.state
    // A stateless transport has no session to initialize: each exchange stands alone.
    if (!this.#isStateless) {
      const refusal = gateIncomingRequest('server', state.status, request.method)
      if (refusal !== undefined) return refusal
    }
    // A method whose capability this server did not offer at initialize does not exist for this client.
    const needed = requiredCapability(request.method)
    if (needed !== undefined && !hasCapability(this.#capabilities, needed)) {
      return new MethodNotFoundError(`Method not found: ${request.method} (capability ${needed.join('.')} not offered)`)
    }
    return undefined
  }

  #gateOutgoing(method: string, params: JsonObject | undefined): Error | undefined {
    const state = this.actor.state
    if (!canSendRequest('server', state.status, method)) {
      return new CapabilityError(`Cannot send ${method} before the client has finished initializing`)
    }
    const needed = requiredCapability(method, params)
    if (needed !== undefined && !hasCapability(state.clientCapabilities, needed)) {
      return new CapabilityError(`The client did not declare the ${needed.join('.')} capability, which ${method} needs`)
    }
    return undefined
  }

  request<R extends JsonObject = JsonObject>(method: string, params?: object, options?: RequestOptions): Observable<RequestEvent<R>> {
    return this.connection.request<R>(method, params as JsonObject | undefined, { progress: false, ...options })
  }

  notify(method: string, params?: object, relatedRequestId?: RequestId): void {
    if (this.connection.isClosed) return
    try {
      const written = this.connection.notify(method, params as JsonObject | undefined, relatedRequestId)
      written?.catch(error => this.#reportSend(error))
    } catch (error) { this.#reportSend(error) }
  }

  /** A notification that cannot be written because the transport just went is not worth a report. */
  #reportSend(error: unknown): void {
    if (!(error instanceof TransportError)) this.server.report(error)
  }

  notifications<P extends JsonObject = JsonObject>(method: string): Observable<P> {
    return this.connection.notifications<P>(method)
  }

  log(level: LoggingLevel, data: unknown, logger?: string, relatedRequestId?: RequestId): void {
    const state = this.actor.state
    // MCP logging: send only at or above the level the client set; never before initialize.
    if (state.status !== 'operating' && state.status !== 'initializing') return
    if (LOGGING_LEVELS.indexOf(level) < LOGGING_LEVELS.indexOf(state.logLevel)) return
    this.notify('notifications/message', logger === undefined ? { level, data } : { level, logger, data }, relatedRequestId)
  }

  sample(params: CreateMessageParams, options?: RequestOptions): Promise<CreateMessageResult> {
    return lastValueFrom(this.request<CreateMessageResult & JsonObject>('sampling/createMessage', params as unknown as JsonObject, options).pipe(resultOf()))
  }

  elicit(params: ElicitParams, options?: RequestOptions): Promise<ElicitResult> {
    return lastValueFrom(this.request<ElicitResult & JsonObject>('elicitation/create', params as unknown as JsonObject, options).pipe(resultOf()))
  }

  listRoots(options?: RequestOptions): Promise<ListRootsResult> {
    return lastValueFrom(this.request<ListRootsResult & JsonObject>('roots/list', undefined, options).pipe(resultOf()))
  }

  completeElicitation(elicitationId: string): void {
    this.notify('notifications/elicitation/complete', { elicitationId })
  }

  listChanged(kind: ListKind): void {
    const state = this.actor.state
    if (state.status !== 'operating') return
    this.notify(`notifications/${kind}/list_changed`)
  }

  resourceUpdated(uri: string): void {
    this.actor.state.subscriptions.get(uri)?.send({ type: 'updated' })
  }

  async close(): Promise<void> {
    await this.connection.close()
    await this.closed
  }

  // ---- handlers ----

  #registerHandlers(): void {
    const connection = this.connection
    const server = this.server
    const context = (request: IncomingRequest) => new SessionContext(this, request)

    connection.setRequestHandler('initialize', params => this.#initialize(params))

    connection.setRequestHandler('logging/setLevel', params => {
      const level = params?.level
      if (typeof level !== 'string' || !LOGGING_LEVELS.includes(level as LoggingLevel)) throw new InvalidParamsError(`Invalid params: unknown logging level ${JSON.stringify(level)}`)
      this.actor.send({ type: 'set-level', level: level as LoggingLevel })
      return {}
    })

    connection.setRequestHandler('tools/list', params => {
      const page = pageOf('tools', enabledWire(server.tools), params?.cursor, server.pageSize)
      return withCursor({ tools: page.items }, page.nextCursor)
    })
    connection.setRequestHandler('tools/call', (params, request) => this.#callTool(params, context(request)))

    connection.setRequestHandler('resources/list', (params, request) => this.#listResources(params, context(request)))
    connection.setRequestHandler('resources/templates/list', params => {
      const page = pageOf('templates', enabledWire(server.templates), params?.cursor, server.pageSize)
      return withCursor({ resourceTemplates: page.items }, page.nextCursor)
    })
    connection.setRequestHandler('resources/read', (params, request) => this.#readResource(params, context(request)))
    connection.setRequestHandler('resources/subscribe', params => {
      const uri = requireString(params, 'uri')
      const subscriptions = this.actor.state.subscriptions
      const limit = server.options.maxSubscriptions ?? SERVER_DEFAULTS.maxSubscriptions
      if (!subscriptions.has(uri) && subscriptions.size >= limit) {
        throw new InvalidRequestError(`Invalid Request: this session already holds ${limit} resource subscriptions, the limit; unsubscribe first`, { limit })
      }
      if (!this.#resourceExists(uri)) throw new ResourceNotFoundError(`Resource not found: ${uri}`, { uri })
      this.actor.send({ type: 'subscribe', uri })
      return {}
    })
    connection.setRequestHandler('resources/unsubscribe', params => {
      this.actor.send({ type: 'unsubscribe', uri: requireString(params, 'uri') })
      return {}
    })

    connection.setRequestHandler('prompts/list', params => {
      const page = pageOf('prompts', enabledWire(server.prompts), params?.cursor, server.pageSize)
      return withCursor({ prompts: page.items }, page.nextCursor)
    })
    connection.setRequestHandler('prompts/get', (params, request) => this.#getPrompt(params, context(request)))
    connection.setRequestHandler('completion/complete', (params, request) => this.#complete(params, context(request)))
  }

  #initialize(params: JsonObject | undefined): JsonObject {
    const server = this.server
    const supported = server.options.protocolVersions ?? SUPPORTED_PROTOCOL_VERSIONS
    const protocolVersion = negotiateVersion(params?.protocolVersion, supported)
    const clientCapabilities = isJsonObject(params?.capabilities) ? params!.capabilities as ClientCapabilities : {}
    const clientInfo = isJsonObject(params?.clientInfo) ? params!.clientInfo as unknown as Implementation : undefined
    this.actor.send({ type: 'initialize', protocolVersion, clientInfo, clientCapabilities })
    this.#capabilities = server.capabilities()
    const result: JsonObject = { protocolVersion, capabilities: this.#capabilities as JsonObject, serverInfo: server.info as unknown as JsonObject }
    if (server.options.instructions !== undefined) result.instructions = server.options.instructions
    return result
  }

  #callTool(params: JsonObject | undefined, ctx: SessionContext): HandlerOutcome<JsonObject> {
    const name = params?.name
    const entry = typeof name === 'string' ? this.server.tools.get(name) : undefined
    // MCP tools: an unknown tool is a protocol error (-32602), not a tool result.
    if (entry === undefined || !entry.isEnabled) throw new InvalidParamsError(`Invalid params: unknown tool ${JSON.stringify(name)}`)
    const args = params!.arguments ?? {}
    if (!isJsonObject(args)) return toolError(`Invalid arguments for tool ${entry.name}: arguments must be an object`)
    if ((entry.jsonInput !== undefined && entry.validateInput === undefined) || (entry.jsonOutput !== undefined && entry.validateOutput === undefined)) {
      const compiler = loadedJsonSchema()
      if (compiler === undefined) return afterVerdict(loadJsonSchema(), () => this.#callTool(params, ctx), rethrow)
      compileToolSchemas(entry, compiler, InternalError)
    }
    if (entry.validateInput !== undefined) {
      const check = entry.validateInput(args)
      // MCP 2025-11-25: input validation errors are tool execution errors, so the model can retry.
      if (!check.valid) return toolError(`Invalid arguments for tool ${entry.name}: ${check.message}`)
    } else if (entry.standardInput !== undefined) {
      return this.#callStandardTool(entry, entry.standardInput, args, ctx)
    }
    if (entry.standardOutput !== undefined) return this.#runWithStandardOutput(entry, entry.standardOutput, args, ctx)
    return mapOutcome(() => entry.handler(args, ctx), result => this.#checkToolResult(entry, result), toolFailure)
  }

  /** A tools/call of a tool with a Standard Schema: its own validator (maybe async), then the handler with its output. */
  #callStandardTool(entry: ToolEntry, schema: ObjectStandardSchema, args: JsonObject, ctx: SessionContext): HandlerOutcome<JsonObject> {
    const output = entry.standardOutput
    const run = (check: StandardVerdict<object>): HandlerOutcome<JsonObject> => !check.valid
      // Same answer as a JSON Schema failure: a tool execution error the model can read and retry.
      ? toolError(`Invalid arguments for tool ${entry.name}: ${check.message}`)
      : output !== undefined ? this.#runWithStandardOutput(entry, output, check.value, ctx)
      : mapOutcome(() => entry.handler(check.value, ctx), result => this.#checkToolResult(entry, result), toolFailure)
    let check: StandardVerdict<object> | Promise<StandardVerdict<object>>
    try {
      check = validateStandard(schema, args)
    } catch (error) {
      return toolFailure(error)
    }
    return check instanceof Promise ? afterVerdict(check, run, toolFailure) : run(check)
  }

  /** Runs the handler of a tool whose `outputSchema` is a Standard Schema; its (maybe async) check follows the handler's outcome. */
  #runWithStandardOutput(entry: ToolEntry, schema: ObjectStandardSchema, args: object, ctx: SessionContext): HandlerOutcome<JsonObject> {
    const outcome = mapOutcome<CallToolResult, CallToolResult>(() => entry.handler(args, ctx), result => result, error => toolFailure(error) as unknown as CallToolResult)
    const check = (result: CallToolResult) => this.#checkStandardResult(entry, schema, result)
    if (isObservable(outcome)) return outcome.pipe(mergeMap(result => from(Promise.resolve(check(result)))))
    if (isPromiseLike(outcome)) return Promise.resolve(outcome).then(check)
    return check(outcome)
  }

  #checkStandardResult(entry: ToolEntry, schema: ObjectStandardSchema, result: CallToolResult): JsonObject | Promise<JsonObject> {
    if (!isJsonObject(result)) throw new InternalError(`Tool ${entry.name} returned no result object`)
    if (result.isError === true) return this.#checkToolResult(entry, result)
    if (result.structuredContent === undefined) throw new InternalError(`Tool ${entry.name} has an outputSchema but returned no structuredContent`)
    // What the schema gives back is sent: its output type is what tools/list describes.
    const finish = (check: StandardVerdict<object>) => {
      if (!check.valid) throw new InternalError(`Tool ${entry.name} returned structuredContent that does not match its outputSchema: ${check.message}`)
      return this.#checkToolResult(entry, { ...result, structuredContent: check.value as Record<string, unknown> })
    }
    const check = validateStandard(schema, result.structuredContent)
    return check instanceof Promise ? check.then(finish) : finish(check)
  }

  #checkToolResult(entry: ToolEntry, result: CallToolResult): JsonObject {
    if (!isJsonObject(result)) throw new InternalError(`Tool ${entry.name} returned no result object`)
    if (entry.validateOutput !== undefined && result.isError !== true) {
      if (result.structuredContent === undefined) throw new InternalError(`Tool ${entry.name} has an outputSchema but returned no structuredContent`)
      const check = entry.validateOutput(result.structuredContent)
      if (!check.valid) throw new InternalError(`Tool ${entry.name} returned structuredContent that does not match its outputSchema: ${check.message}`)
    }
    if (!Array.isArray(result.content)) {
      // MCP: a tool returning structured content SHOULD also return it serialized in a text block.
      const content = result.structuredContent !== undefined ? [{ type: 'text', text: JSON.stringify(result.structuredContent) }] : []
      return { ...result, content } as JsonObject
    }
    return result as unknown as JsonObject
  }

  #listResources(params: JsonObject | undefined, ctx: SessionContext): HandlerOutcome<JsonObject> {
    const server = this.server
    const listing = [...server.templates.values()].filter(entry => entry.isEnabled && entry.definition.list !== undefined)
    const finish = (extra: Resource[]) => {
      const page = pageOf('resources', [...enabledWire(server.resources), ...extra], params?.cursor, server.pageSize)
      return withCursor({ resources: page.items }, page.nextCursor)
    }
    if (listing.length === 0) return finish([])
    return Promise.all(listing.map(entry => outcomeToPromise(entry.definition.list!(ctx)))).then(lists => finish(lists.flat()))
  }

  #resourceExists(uri: string): boolean {
    if (this.server.resources.get(uri)?.isEnabled) return true
    for (const entry of this.server.templates.values()) if (entry.isEnabled && entry.template.match(uri) !== undefined) return true
    return false
  }

  #readResource(params: JsonObject | undefined, ctx: SessionContext): HandlerOutcome<JsonObject> {
    const uri = requireString(params, 'uri')
    const entry = this.server.resources.get(uri)
    if (entry?.isEnabled) return mapOutcome(() => entry.handler(uri, ctx), read => toReadResult(uri, read, entry.definition.mimeType), rethrow)
    for (const template of this.server.templates.values()) {
      if (!template.isEnabled) continue
      const variables = template.template.match(uri)
      if (variables !== undefined) return mapOutcome(() => template.handler(uri, variables, ctx), read => toReadResult(uri, read, template.definition.mimeType), rethrow)
    }
    throw new ResourceNotFoundError(`Resource not found: ${uri}`, { uri })
  }

  #getPrompt(params: JsonObject | undefined, ctx: SessionContext): HandlerOutcome<JsonObject> {
    const name = params?.name
    const entry = typeof name === 'string' ? this.server.prompts.get(name) : undefined
    if (entry === undefined || !entry.isEnabled) throw new InvalidParamsError(`Invalid params: unknown prompt ${JSON.stringify(name)}`)
    const given = params!.arguments ?? {}
    if (!isJsonObject(given)) throw new InvalidParamsError('Invalid params: prompt arguments must be an object')
    const args: Record<string, string> = {}
    for (const [key, value] of Object.entries(given)) {
      if (typeof value !== 'string') throw new InvalidParamsError(`Invalid params: argument ${JSON.stringify(key)} must be a string`)
      if (key !== '__proto__') args[key] = value
    }
    for (const argument of entry.wire.arguments ?? []) {
      if (argument.required && args[argument.name] === undefined) throw new InvalidParamsError(`Invalid params: missing required argument ${JSON.stringify(argument.name)} of prompt ${entry.name}`)
    }
    const schema = entry.standardArguments
    if (schema === undefined) return mapOutcome(() => entry.handler(args, ctx), result => result as unknown as JsonObject, rethrow)
    const run = (check: StandardVerdict<object>): HandlerOutcome<JsonObject> => {
      // MCP prompts: invalid arguments are -32602.
      if (!check.valid) throw new InvalidParamsError(`Invalid params: invalid arguments for prompt ${entry.name}: ${check.message}`, { issues: check.errors })
      return mapOutcome(() => entry.handler(check.value, ctx), result => result as unknown as JsonObject, rethrow)
    }
    const check = validateStandard(schema, args)
    return check instanceof Promise ? afterVerdict(check, run, rethrow) : run(check)
  }

  #complete(params: JsonObject | undefined, ctx: SessionContext): HandlerOutcome<JsonObject> {
    const ref = params?.ref
    const argument = params?.argument
    if (!isJsonObject(ref) || !isJsonObject(argument) || typeof argument.name !== 'string' || typeof argument.value !== 'string') {
      throw new InvalidParamsError('Invalid params: completion needs ref and argument {name, value}')
    }
    let completers: Record<string, Completer> | undefined
    if (ref.type === 'ref/prompt') {
      const entry = typeof ref.name === 'string' ? this.server.prompts.get(ref.name) : undefined
      if (entry === undefined) throw new InvalidParamsError(`Invalid params: unknown prompt ${JSON.stringify(ref.name)}`)
      completers = entry.definition.complete
    } else if (ref.type === 'ref/resource') {
      const entry = typeof ref.uri === 'string' ? this.server.templates.get(ref.uri) ?? this.#templateFor(ref.uri) : undefined
      if (entry === undefined) throw new InvalidParamsError(`Invalid params: unknown resource template ${JSON.stringify(ref.uri)}`)
      completers = entry.definition.complete
    } else {
      throw new InvalidParamsError(`Invalid params: unknown reference type ${JSON.stringify(ref.type)}`)
    }
    const completer = completers !== undefined && Object.hasOwn(completers, argument.name) ? completers[argument.name] : undefined
    if (completer === undefined) return { completion: { values: [], hasMore: false } }
    const context = isJsonObject(params!.context) && isJsonObject(params!.context.arguments) ? params!.context.arguments as Record<string, string> : {}
    return mapOutcome(() => completer(argument.value as string, { arguments: context, ctx }), toCompletion, rethrow)
  }

  #templateFor(uri: string): TemplateEntry | undefined {
    for (const entry of this.server.templates.values()) if (entry.template.match(uri) !== undefined) return entry
    return undefined
  }
}

// ---------------------------------------------------------------------------------------------
// Context
// ---------------------------------------------------------------------------------------------

class SessionContext extends BaseContext implements ServerContext {
  constructor(readonly session: Session, incoming: IncomingRequest) {
    super(session, incoming)
  }
  get clientCapabilities(): ClientCapabilities { return this.session.state.clientCapabilities }
  get clientInfo(): Implementation | undefined { return this.session.state.clientInfo }
  get logLevel(): LoggingLevel { return this.session.state.logLevel }
  log(level: LoggingLevel, data: unknown, logger?: string): void { this.session.log(level, data, logger, this.requestId) }
  sample(params: CreateMessageParams, options?: RequestOptions): Promise<CreateMessageResult> {
    return this.session.sample(params, { signal: this.signal, relatedRequestId: this.requestId, ...options })
  }
  elicit(params: ElicitParams, options?: RequestOptions): Promise<ElicitResult> {
    return this.session.elicit(params, { signal: this.signal, relatedRequestId: this.requestId, ...options })
  }
  listRoots(options?: RequestOptions): Promise<ListRootsResult> {
    return this.session.listRoots({ signal: this.signal, relatedRequestId: this.requestId, ...options })
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

function enabledWire<W>(entries: Map<string, { wire: W; isEnabled: boolean }>): W[] {
  const out: W[] = []
  for (const entry of entries.values()) if (entry.isEnabled) out.push(entry.wire)
  return out
}

function withCursor(result: JsonObject, nextCursor: string | undefined): JsonObject {
  if (nextCursor !== undefined) result.nextCursor = nextCursor
  return result
}

function toolError(text: string): JsonObject {
  return { content: [{ type: 'text', text }], isError: true }
}

/** A tool's failure: an McpError stays a JSON-RPC error, anything else is an `isError` result. */
function toolFailure(error: unknown): JsonObject {
  if (error instanceof McpError) throw error
  return toolError(error instanceof Error ? error.message : String(error))
}

/**
 * Goes on with a verdict that arrives later (an async Standard Schema validator). An Observable, so
 * a handler that returns one keeps its progress and cancellation; `recover` handles a rejection.
 */
/**
 * Compiles a tool's JSON Schemas. A schema the compiler refuses becomes `Failure` naming the tool:
 * a TypeError at registration, an InternalError (-32603) on a call.
 */
function compileToolSchemas(entry: ToolEntry, compiler: JsonSchemaCompiler, Failure: new (message: string) => Error): void {
  const compile = (schema: object, key: string): Validator => {
    try {
      return compiler.compileSchema(schema)
    } catch (error) {
      throw new Failure(`Tool ${JSON.stringify(entry.name)}: ${key}: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  if (entry.jsonInput !== undefined) entry.validateInput = compile(entry.jsonInput, 'inputSchema')
  if (entry.jsonOutput !== undefined) entry.validateOutput = compile(entry.jsonOutput, 'outputSchema')
}

function afterVerdict<V>(verdict: Promise<V>, run: (verdict: V) => HandlerOutcome<JsonObject>, recover: (error: unknown) => JsonObject): Observable<JsonObject> {
  return from(verdict).pipe(
    mergeMap(value => {
      const outcome = run(value)
      return isObservable(outcome) ? outcome : from(Promise.resolve(outcome))
    }),
    catchError(error => of(recover(error))),
  )
}

/**
 * The JSON Schema to send for a Standard Schema: the one the user gave, else the schema's own
 * conversion. Throws a TypeError naming the tool or prompt when there is neither.
 */
function wireSchemaOf(schema: StandardSchemaV1, given: JsonObject | undefined, label: string, key: string, direction: 'input' | 'output'): JsonObject {
  if (given !== undefined) return given
  let converted: JsonObject | undefined
  try {
    converted = standardJsonSchema(schema, direction)
  } catch (error) {
    throw new TypeError(`${label}: the ${schema['~standard'].vendor} schema of ${key} cannot be converted to JSON Schema (${error instanceof Error ? error.message : String(error)}); pass its JSON Schema as ${key.replace('Schema', 'JsonSchema')}`, { cause: error })
  }
  if (converted === undefined) {
    throw new TypeError(`${label}: the ${schema['~standard'].vendor} schema of ${key} has no JSON Schema converter; pass its JSON Schema as ${key.replace('Schema', 'JsonSchema')}`)
  }
  return converted
}

/** A prompt's arguments, read off the JSON Schema of an object: each property, its description, whether required. */
function promptArgumentsOf(schema: JsonObject, label: string): PromptArgument[] {
  if (schema.type !== 'object' || (schema.properties !== undefined && !isJsonObject(schema.properties))) {
    throw new TypeError(`${label}: argumentsSchema must describe an object`)
  }
  const required = Array.isArray(schema.required) ? schema.required : []
  return Object.entries(schema.properties ?? {}).map(([name, property]) => {
    const described = isJsonObject(property) ? property : {}
    return compact({
      name,
      title: typeof described.title === 'string' ? described.title : undefined,
      description: typeof described.description === 'string' ? described.description : undefined,
      required: required.includes(name),
    })
  })
}

function rethrow(error: unknown): never {
  throw error
}

function requireString(params: JsonObject | undefined, key: string): string {
  const value = params?.[key]
  if (typeof value !== 'string') throw new InvalidParamsError(`Invalid params: ${key} must be a string`)
  return value
}

function toReadResult(uri: string, read: ReadOutcome, mimeType: string | undefined): JsonObject {
  if (typeof read === 'string') return { contents: [mimeType === undefined ? { uri, text: read } : { uri, mimeType, text: read }] }
  if (Array.isArray(read)) return { contents: read }
  if (isJsonObject(read) && Array.isArray(read.contents)) return read as unknown as JsonObject
  return { contents: [read] }
}

function toCompletion(completion: string[] | CompleteResult['completion']): JsonObject {
  const values = Array.isArray(completion) ? completion : completion.values
  // MCP completion: at most 100 values per response; say how many there were and that more exist.
  if (values.length > 100) return { completion: { values: values.slice(0, 100), total: values.length, hasMore: true } }
  if (Array.isArray(completion)) return { completion: { values, total: values.length, hasMore: false } }
  return { completion: compact({ values, total: completion.total, hasMore: completion.hasMore ?? false }) }
}

function outcomeToPromise<T>(outcome: HandlerOutcome<T>): Promise<T> {
  if (outcome instanceof Observable) return lastValueFrom(outcome)
  return Promise.resolve(outcome)
}

/** Drops keys whose value is undefined, so the wire form carries no `"x": null` noise. */
function compact<T extends object>(value: T): T {
  const out: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) if (item !== undefined) out[key] = item
  return out as T
}
