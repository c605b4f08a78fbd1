import { from, map, mergeMap, type Observable } from '../../lib/rx.ts'
import type { RequestOptions } from '../../lib/connection.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { paginate } from '../../lib/operators/paginate.ts'
import { resultOf, type RequestEvent } from '../../lib/operators/progress.ts'
import type {
  CompleteParams, CompleteResult, GetPromptResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
  LoggingLevel, Prompt, ReadResourceResult, Resource, ResourceTemplate, Tool,
} from '../../lib/schema/types.ts'
import type { ClientMessage, ClientState, ServerDescription } from './api.ts'
import type { ResultCache } from './cache.ts'
import { InvalidResultError } from './errors.ts'
import type { ResourceSubscriptions } from './listen.ts'
import { readDiscover } from './modern.ts'

/**
 * The client's typed requests over the features a server offers (ping and discover, tools,
 * resources, prompts, completion, logging), each a call through the client's request path; the
 * client (actors/client.ts) supplies that path, its state and its caches.
 */
export abstract class ClientCalls {
  /** The client actor's state, as of its latest snapshot. */
  abstract readonly state: ClientState
  /** Sends the client actor a message. */
  protected abstract tell(message: ClientMessage): void
  abstract request<R extends JsonObject = JsonObject>(method: string, params?: object, options?: RequestOptions): Observable<RequestEvent<R>>
  /** One request's result, asked without progress. */
  protected abstract call<R>(method: string, params?: JsonObject, options?: RequestOptions): Promise<R>
  /** The tools to show of a listed page (the client's tool catalog). */
  protected abstract rememberTools(listed: Tool[]): Promise<Tool[]>
  protected abstract get resultCache(): ResultCache | undefined
  protected abstract get resourceSubscriptions(): ResourceSubscriptions

  async ping(options?: RequestOptions): Promise<void> {
    if (this.state.era !== 'modern') return void await this.call('ping', undefined, options)
    // MCP 2026-07-28 has no ping: the one request every modern server answers is discover, asked past the cache.
    this.resultCache?.clear('server/discover')
    await this.call('server/discover', undefined, options)
  }

  async discover(options?: RequestOptions): Promise<ServerDescription> {
    const state = this.state
    if (state.era !== 'modern') {
      return { supportedVersions: [state.protocolVersion], capabilities: state.serverCapabilities, serverInfo: state.serverInfo, instructions: state.instructions }
    }
    const result = await this.call<JsonObject>('server/discover', undefined, options)
    const description = readDiscover(result)
    if (description === undefined) throw new InvalidResultError('server/discover', 'the result has no supportedVersions list')
    this.tell({ type: 'discovered', version: this.state.protocolVersion, description })
    return description
  }

  tools(): Observable<Tool> {
    return paginate(cursor => this.request<ListToolsResult & JsonObject>('tools/list', cursorParams(cursor), { progress: false }).pipe(
      resultOf(), mergeMap(result => from(this.rememberTools(result.tools)).pipe(map(tools => ({ items: tools, nextCursor: result.nextCursor }))))))
  }

  async listTools(cursor?: string, options?: RequestOptions): Promise<ListToolsResult> {
    const result = await this.call<ListToolsResult>('tools/list', cursorParams(cursor), options)
    const tools = await this.rememberTools(result.tools)
    return tools === result.tools ? result : { ...result, tools }
  }

  resources(): Observable<Resource> {
    return paginate(cursor => this.request<ListResourcesResult & JsonObject>('resources/list', cursorParams(cursor), { progress: false }).pipe(
      resultOf(), map(result => ({ items: result.resources, nextCursor: result.nextCursor }))))
  }

  listResources(cursor?: string, options?: RequestOptions): Promise<ListResourcesResult> {
    return this.call('resources/list', cursorParams(cursor), options)
  }

  resourceTemplates(): Observable<ResourceTemplate> {
    return paginate(cursor => this.request<ListResourceTemplatesResult & JsonObject>('resources/templates/list', cursorParams(cursor), { progress: false }).pipe(
      resultOf(), map(result => ({ items: result.resourceTemplates, nextCursor: result.nextCursor }))))
  }

  listResourceTemplates(cursor?: string, options?: RequestOptions): Promise<ListResourceTemplatesResult> {
    return this.call('resources/templates/list', cursorParams(cursor), options)
  }

  readResource(uri: string, options?: RequestOptions): Promise<ReadResourceResult> {
    return this.call('resources/read', { uri }, options)
  }

  async subscribeResource(uri: string, options?: RequestOptions): Promise<void> {
    if (this.state.era !== 'modern') return void await this.call('resources/subscribe', { uri }, options)
    await this.resourceSubscriptions.add(uri)
  }

  async unsubscribeResource(uri: string, options?: RequestOptions): Promise<void> {
    if (this.state.era !== 'modern') return void await this.call('resources/unsubscribe', { uri }, options)
    await this.resourceSubscriptions.remove(uri)
  }

  prompts(): Observable<Prompt> {
    return paginate(cursor => this.request<ListPromptsResult & JsonObject>('prompts/list', cursorParams(cursor), { progress: false }).pipe(
      resultOf(), map(result => ({ items: result.prompts, nextCursor: result.nextCursor }))))
  }

  listPrompts(cursor?: string, options?: RequestOptions): Promise<ListPromptsResult> {
    return this.call('prompts/list', cursorParams(cursor), options)
  }

  getPrompt(name: string, args?: Record<string, string>, options?: RequestOptions): Promise<GetPromptResult> {
    return this.call('prompts/get', args === undefined ? { name } : { name, arguments: args }, options)
  }

  complete(params: CompleteParams, options?: RequestOptions): Promise<CompleteResult> {
    return this.call('completion/complete', params as unknown as JsonObject, options)
  }

  async setLoggingLevel(level: LoggingLevel, options?: RequestOptions): Promise<void> {
    // MCP 2026-07-28 removed logging/setLevel: the level rides in every request's _meta instead.
    if (this.state.era === 'modern') return this.tell({ type: 'logLevel', level })
    await this.call('logging/setLevel', { level }, options)
  }
}

/** The result of a request's last event (a request asked without progress emits only its result). */
export function resultOfLast<R>(event: RequestEvent<R>): R {
  return (event as { result: R }).result
}

/** The params of a list request: the cursor, when there is one. */
export function cursorParams(cursor: string | undefined): JsonObject | undefined {
  return cursor === undefined ? undefined : { cursor }
}
