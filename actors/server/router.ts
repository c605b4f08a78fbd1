import { Observable, catchError, from, isObservable, mergeMap, of } from '../../lib/rx.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { InternalError, InvalidParamsError, McpError, ResourceNotFoundError } from '../../lib/jsonrpc/errors.ts'
import { isJsonObject } from '../../lib/jsonrpc/guards.ts'
import { pageOf, withCursor } from '../../lib/cursor.ts'
import { validateStandard, type StandardVerdict } from '../../lib/standard-schema.ts'
import type { CallToolResult, CompleteResult, Resource } from '../../lib/schema/types.ts'
import type { Completer, ObjectStandardSchema, ReadOutcome, ServerContext } from './api.ts'
import { isPromiseLike, mapOutcome, outcomePromise, type HandlerOutcome } from '../request.ts'
import type { CacheHint } from './api.ts'
import { compact, compileToolSchemas, type MountedRef, type TemplateEntry, type ToolEntry } from './registry.ts'
import type { RouterCore, ServerCore } from './core.ts'
import { TaskContext } from './task-context.ts'
import { checkParamHeaders } from './param-headers.ts'
import type { RouteHandler } from './api.ts'
import type { Mountable } from './mountable.ts'

export type { RouteHandler } from './api.ts'

/**
 * The server's methods over its registries, written once for both eras: a legacy session and a
 * modern stateless request both call {@link Router.route} with a context their era filled. What
 * differs between the eras (the lifecycle, `_meta`, MRTR, listen) stays outside.
 */
export class Router implements RouterCore {
  /** The handler of each method the registries answer. */
  readonly routes: ReadonlyMap<string, RouteHandler>

  constructor(readonly server: ServerCore) {
    const listed = (kind: 'tools' | 'prompts' | 'templates', key: string, entries: () => ReadonlyMap<string, { wire: unknown; isEnabled: boolean }>): RouteHandler =>
      params => {
        const page = pageOf(kind, enabledWire(entries()), params?.cursor, server.pageSize)
        return withCursor({ [key]: page.items }, page.nextCursor)
      }
    this.routes = new Map<string, RouteHandler>([
      ['tools/list', listed('tools', 'tools', () => server.tools)],
      ['tools/call', (params, ctx) => this.#callTool(params, ctx)],
      ['resources/list', (params, ctx) => this.#listResources(params, ctx)],
      ['resources/templates/list', listed('templates', 'resourceTemplates', () => server.templates)],
      ['resources/read', (params, ctx) => this.#readResource(params, ctx)],
      ['prompts/list', listed('prompts', 'prompts', () => server.prompts)],
      ['prompts/get', (params, ctx) => this.#getPrompt(params, ctx)],
      ['completion/complete', (params, ctx) => this.#complete(params, ctx)],
      ['tasks/get', (params, ctx) => server.tasks.get(params, ctx)],
      ['tasks/result', (params, ctx) => server.tasks.result(params, ctx)],
      ['tasks/list', (params, ctx) => server.tasks.list(params, ctx)],
      ['tasks/cancel', (params, ctx) => server.tasks.cancel(params, ctx)],
      ['tasks/update', (params, ctx) => server.tasks.update(params, ctx)],
    ])
  }

  /** The cache hints a resource's or its template's registration gives its reads, if any. */
  cacheHintOfResource(uri: string): CacheHint | undefined {
    const entry = this.server.resources.get(uri)
    if (entry?.isEnabled) return entry.definition.cache
    return this.#templateFor(uri)?.definition.cache
  }

  mountOf(uri: string): Mountable | undefined {
    const resource = this.server.resources.get(uri)
    if (resource !== undefined) return resource.mount?.source
    for (const entry of this.server.templates.values()) if (entry.template.match(uri) !== undefined) return entry.mount?.source
    return undefined
  }

  /** True when `uri` names an enabled resource or matches an enabled template. */
  resourceExists(uri: string): boolean {
    if (this.server.resources.get(uri)?.isEnabled) return true
    for (const entry of this.server.templates.values()) if (entry.isEnabled && entry.template.match(uri) !== undefined) return true
    return false
  }

  #callTool(params: JsonObject | undefined, ctx: ServerContext): HandlerOutcome<JsonObject> {
    const name = params?.name
    const entry = typeof name === 'string' ? this.server.tools.get(name) : undefined
    // MCP tools: an unknown tool is a protocol error (-32602), not a tool result.
    if (entry === undefined || !entry.isEnabled) throw new InvalidParamsError(`Invalid params: unknown tool ${JSON.stringify(name)}`)
    // A modern call over Streamable HTTP mirrors arguments in `Mcp-Param-*` headers: checked here, where the tool is found.
    if (ctx.era === 'modern' && !(ctx instanceof TaskContext)) {
      const mismatch = checkParamHeaders(entry, ctx.requestInfo, params)
      if (mismatch !== undefined) throw mismatch
    }
    const support = entry.definition.execution?.taskSupport ?? 'forbidden'
    // A task-capable call becomes a task here, before its handler, unless the handler decides (taskStart 'handler').
    if (!(ctx instanceof TaskContext) && entry.definition.taskStart !== 'handler' && this.server.tasks.decide(support, params, ctx)) {
      return this.server.tasks.start(ctx, params, taskCtx => this.#callTool(params, taskCtx))
    }
    if (support === 'required' && entry.definition.taskStart === 'handler' && !(ctx instanceof TaskContext)) this.server.tasks.decide(support, params, ctx)
    // A mounted tool: forwarded with its own name; its server checks the arguments and the result.
    if (entry.mount !== undefined) return forward(entry.mount, 'tools/call', renamed(params!, 'name', entry.mount.original), ctx)
    const args = params!.arguments ?? {}
    if (!isJsonObject(args)) return toolError(`Invalid arguments for tool ${entry.name}: arguments must be an object`)
    if ((entry.jsonInput !== undefined && entry.validateInput === undefined) || (entry.jsonOutput !== undefined && entry.validateOutput === undefined)) {
      const compiler = this.server.jsonSchema.loaded()
      if (compiler === undefined) return afterVerdict(this.server.jsonSchema.load(), () => this.#callTool(params, ctx), rethrow)
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
  #callStandardTool(entry: ToolEntry, schema: ObjectStandardSchema, args: JsonObject, ctx: ServerContext): HandlerOutcome<JsonObject> {
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
  #runWithStandardOutput(entry: ToolEntry, schema: ObjectStandardSchema, args: object, ctx: ServerContext): HandlerOutcome<JsonObject> {
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
    // The handler made the call a task (ctx.runAsTask): its CreateTaskResult goes as it is.
    if (isCreateTaskResult(result)) return result as unknown as JsonObject
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

  #listResources(params: JsonObject | undefined, ctx: ServerContext): HandlerOutcome<JsonObject> {
    const server = this.server
    const listing = [...server.templates.values()].filter(entry => entry.isEnabled && entry.definition.list !== undefined)
    const finish = (extra: Resource[]) => {
      const page = pageOf('resources', [...enabledWire(server.resources), ...extra], params?.cursor, server.pageSize)
      return withCursor({ resources: page.items }, page.nextCursor)
    }
    if (listing.length === 0) return finish([])
    return Promise.all(listing.map(entry => outcomePromise(entry.definition.list!(ctx)))).then(lists => finish(lists.flat()))
  }

  #readResource(params: JsonObject | undefined, ctx: ServerContext): HandlerOutcome<JsonObject> {
    const uri = requireString(params, 'uri')
    const entry = this.server.resources.get(uri)
    if (entry?.isEnabled) return mapOutcome(() => entry.handler(uri, ctx), read => toReadResult(uri, read, entry.definition.mimeType), rethrow)
    for (const template of this.server.templates.values()) {
      if (!template.isEnabled) continue
      const variables = template.template.match(uri)
      if (variables !== undefined) return mapOutcome(() => template.handler(uri, variables, ctx), read => toReadResult(uri, read, template.definition.mimeType), rethrow)
    }
    // MCP 2026-07-28 changed the code of an unknown resource to -32602; earlier revisions use -32002.
    if (ctx.era === 'modern') throw new InvalidParamsError(`Resource not found: ${uri}`, { uri })
    throw new ResourceNotFoundError(`Resource not found: ${uri}`, { uri })
  }

  #getPrompt(params: JsonObject | undefined, ctx: ServerContext): HandlerOutcome<JsonObject> {
    const name = params?.name
    const entry = typeof name === 'string' ? this.server.prompts.get(name) : undefined
    if (entry === undefined || !entry.isEnabled) throw new InvalidParamsError(`Invalid params: unknown prompt ${JSON.stringify(name)}`)
    if (entry.mount !== undefined) return forward(entry.mount, 'prompts/get', renamed(params!, 'name', entry.mount.original), ctx)
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

  #complete(params: JsonObject | undefined, ctx: ServerContext): HandlerOutcome<JsonObject> {
    const ref = params?.ref
    const argument = params?.argument
    if (!isJsonObject(ref) || !isJsonObject(argument) || typeof argument.name !== 'string' || typeof argument.value !== 'string') {
      throw new InvalidParamsError('Invalid params: completion needs ref and argument {name, value}')
    }
    let completers: Record<string, Completer> | undefined
    if (ref.type === 'ref/prompt') {
      const entry = typeof ref.name === 'string' ? this.server.prompts.get(ref.name) : undefined
      if (entry === undefined) throw new InvalidParamsError(`Invalid params: unknown prompt ${JSON.stringify(ref.name)}`)
      if (entry.mount !== undefined) return forward(entry.mount, 'completion/complete', { ...params!, ref: renamed(ref, 'name', entry.mount.original) }, ctx)
      completers = entry.definition.complete
    } else if (ref.type === 'ref/resource') {
      const entry = typeof ref.uri === 'string' ? this.server.templates.get(ref.uri) ?? this.#templateFor(ref.uri) : undefined
      if (entry === undefined) throw new InvalidParamsError(`Invalid params: unknown resource template ${JSON.stringify(ref.uri)}`)
      if (entry.mount !== undefined) return forward(entry.mount, 'completion/complete', params!, ctx)
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
// Helpers
// ---------------------------------------------------------------------------------------------

/** A CreateTaskResult of either era (legacy `{ task }`, modern `resultType: 'task'`). */
function isCreateTaskResult(result: object): boolean {
  return (result as JsonObject).resultType === 'task' || (isJsonObject((result as JsonObject).task) && (result as JsonObject).content === undefined)
}

/**
 * A request of a mounted entry, to its source: `params` as the caller sent them (names restored),
 * without what belongs to the caller's exchange with this server: `_meta` (the forwarding client
 * adds its own), `task` (a task is this server's), and a modern retry's `inputResponses` and
 * `requestState` (this server's rounds; the source's are the forwarding client's business).
 */
function forward(mount: MountedRef, method: string, params: JsonObject, ctx: ServerContext): HandlerOutcome<JsonObject> {
  const { _meta: _ignored, task: _task, inputResponses: _responses, requestState: _state, ...rest } = params
  return mount.source.forward(method, rest, ctx)
}

/** `params` with `key` set to `value`. */
function renamed(params: JsonObject, key: string, value: string): JsonObject {
  return { ...params, [key]: value }
}

function enabledWire<W>(entries: ReadonlyMap<string, { wire: W; isEnabled: boolean }>): W[] {
  const out: W[] = []
  for (const entry of entries.values()) if (entry.isEnabled) out.push(entry.wire)
  return out
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
function afterVerdict<V>(verdict: Promise<V>, run: (verdict: V) => HandlerOutcome<JsonObject>, recover: (error: unknown) => JsonObject): Observable<JsonObject> {
  return from(verdict).pipe(
    mergeMap(value => {
      const outcome = run(value)
      return isObservable(outcome) ? outcome : from(Promise.resolve(outcome))
    }),
    catchError(error => of(recover(error))),
  )
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


