import { Observable, defer, from, map, mergeMap, of, throwError, type Subscription } from '../../lib/rx.ts'
import type { Connection, RequestOptions } from '../../lib/connection.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { ErrorCode, McpError, ResponseLostError } from '../../lib/jsonrpc/errors.ts'
import type { RequestEvent } from '../../lib/operators/progress.ts'
import type { ClientCapabilities, Implementation } from '../../lib/schema/types.ts'
import type { ClientStateSource } from './state.ts'
import { authorizationContextOf, cacheKey, type ResultCache } from './cache.ts'
import type { AuthorizationContext } from '../../lib/authorization-context.ts'
import { answerInputRequest, type InputAnswerHost, type InputHandler } from './handlers.ts'
import { answerThrough } from './input-answers.ts'
import { inputRounds } from './input-rounds.ts'
import { chooseVersion, stampModernMeta, supportedOf, withoutEnvelope } from './modern.ts'

/** What {@link ModernRequests} works with: the client's identity, handlers and state. */
export interface ModernRequestHost {
  /** The client actor's latest state, and its mailbox. */
  readonly state: ClientStateSource
  readonly info: Implementation
  readonly capabilities: ClientCapabilities
  readonly handlers: ReadonlyMap<string, InputHandler>
  /** Modern revisions this client speaks, newest first. */
  readonly modernVersions: readonly string[]
  readonly maxInputRounds: number
  readonly cache: ResultCache | undefined
  /**
   * The extra transport headers of a request (the `Mcp-Param-*` headers of a tools/call of a listed
   * tool with x-mcp-header parameters; see ToolHeaders), undefined for none.
   */
  headersOf(method: string, params: JsonObject | undefined): Record<string, string> | undefined
  /** Lists every tool again (all pages, past the cache) so the headers of a retried call are current. */
  relistTools(connection: Connection): Promise<void>
}

/** A value, or a Promise's, as an Observable: synchronous for a plain value. */
function whenReady<T>(value: T | Promise<T>): Observable<T> {
  return value instanceof Promise ? from(value) : of(value)
}

/** Which one-time corrections a request already used (each is tried once). */
interface Attempt { hasRetriedVersion: boolean; hasRetriedHeaders: boolean; hasReissued: boolean }

const FIRST_ATTEMPT: Attempt = { hasRetriedVersion: false, hasRetriedHeaders: false, hasReissued: false }

/**
 * The client's request path in the modern era (MCP 2026-07-28). Each request:
 *
 * ```
 *   cache hit? --yes--> result
 *      | no
 *   stamp _meta --> connection.request --> inputRounds (answer input_required, resend) --> result --> cache
 *      '-- -32022: switch to a version from data.supported, once --> again
 *      '-- -32020 on tools/call: list tools again, once --> again
 *      '-- response stream lost (HTTP): re-issue under a new id, once --> again
 * ```
 */
export class ModernRequests {
  constructor(private readonly host: ModernRequestHost) {}

  /** A request's params with the modern `_meta` of the version in use now. */
  stamp(params: JsonObject | undefined): JsonObject {
    const state = this.host.state.current
    return stampModernMeta(params, { version: state.protocolVersion, capabilities: this.host.capabilities, info: this.host.info, logLevel: state.logLevel })
  }

  /**
   * A cold Observable of the request's progress and final complete result (see the class
   * diagram), the result without its modern envelope (see `withoutEnvelope`); server/discover's
   * result stays whole, its `_meta` being where the server names itself.
   */
  request<R extends JsonObject>(connection: Connection, method: string, params: JsonObject | undefined, options: RequestOptions | undefined): Observable<RequestEvent<R>> {
    return this.#request(connection, method, params, options, FIRST_ATTEMPT, method !== 'server/discover') as Observable<RequestEvent<R>>
  }

  /** The request as {@link request} makes it; `isUnwrapped`: results without their envelope. */
  #request(connection: Connection, method: string, params: JsonObject | undefined, options: RequestOptions | undefined, attempt: Attempt, isUnwrapped: boolean): Observable<RequestEvent<JsonObject>> {
    const cache = this.host.cache
    if (cache === undefined || cacheKey(method, params) === undefined) return this.#send(connection, method, params, options, attempt, undefined, isUnwrapped)
    // MCP 2026-07-28 caching: a private result serves only the authorization context it came in,
    // the one the transport names for the request about to go out.
    return whenReady(authorizationContextOf(connection)).pipe(mergeMap(context => {
      const cached = cache.get(method, params, context)
      return cached !== undefined ? of<RequestEvent<JsonObject>>({ type: 'result', result: isUnwrapped ? withoutEnvelope(cached) : cached })
        : this.#send(connection, method, params, options, attempt, context, isUnwrapped)
    }))
  }

  /** Sends the request (its input rounds and corrections included); `context` is where its result may be cached, undefined for nowhere. */
  #send(connection: Connection, method: string, params: JsonObject | undefined, options: RequestOptions | undefined, attempt: Attempt, context: AuthorizationContext | undefined, isUnwrapped: boolean): Observable<RequestEvent<JsonObject>> {
    const cache = context === undefined ? undefined : this.host.cache
    // Each round is cached on its own params: a retry carries inputResponses or requestState, which
    // no cache key takes (MCP caching: results of MRTR retries MUST NOT be cached).
    const send = (next: JsonObject | undefined) => {
      const events = defer(() => connection.request<JsonObject>(method, this.stamp(next), this.#withHeaders(method, next, options)))
      if (cache === undefined) return events
      // Kept only while the context is the one asked in: a credential that changed meanwhile (a new
      // authorization) may not be the one the result came with.
      return events.pipe(mergeMap(event => event.type !== 'result' ? of(event) : whenReady(authorizationContextOf(connection)).pipe(map(now => {
        if (now === context) cache.set(method, next, event.result, context!)
        return event
      }))))
    }
    const rounds = inputRounds({
      method, params, resend: send, maxRounds: this.host.maxInputRounds,
      // The request's own answerer when it has one (a proxy answering with its caller), else the client's handlers.
      answer: options?.answerInput !== undefined ? (_, request) => answerThrough(options.answerInput!, request) : (key, request) => answerInputRequest(this.#inputHost(connection), key, request),
    })(send(params))
    // One stage for both ends of the request (most requests pass nothing else): results unwrapped,
    // and an error given its one-time correction.
    return new Observable<RequestEvent<JsonObject>>(subscriber => {
      let recovery: Subscription | undefined
      const first = rounds.subscribe({
        next: event => subscriber.next(isUnwrapped && event.type === 'result' ? { type: 'result', result: withoutEnvelope(event.result) } : event),
        error: (error: unknown) => {
          try {
            recovery = this.#recover(error, connection, method, params, options, attempt, isUnwrapped).subscribe(subscriber)
          } catch (thrown) {
            subscriber.error(thrown)
          }
        },
        complete: () => subscriber.complete(),
      })
      return () => { first.unsubscribe(); recovery?.unsubscribe() }
    })
  }

  /** What a handler answering an input request sees: the client's handlers, and its requests on `connection` (made when one asks). */
  #inputHost(connection: Connection): InputAnswerHost {
    const source = this.host.state
    return {
      handlers: this.host.handlers,
      capabilities: this.host.capabilities,
      get protocolVersion() { return source.current.protocolVersion },
      request: <T extends JsonObject>(inner: string, innerParams: JsonObject | undefined, innerOptions: RequestOptions) =>
        this.request<T>(connection, inner, innerParams, innerOptions),
    }
  }

  /**
   * `options` with the request's own transport headers (MCP 2026-07-28 Streamable HTTP: a tools/call
   * mirrors its x-mcp-header arguments into `Mcp-Param-*` headers), over any the caller gave. Read
   * as each attempt goes out, so a call retried after -32020 has the headers of the tools listed
   * again. The caller's options as they are when there are none (no object per request).
   */
  #withHeaders(method: string, params: JsonObject | undefined, options: RequestOptions | undefined): RequestOptions | undefined {
    const headers = this.host.headersOf(method, params)
    if (headers === undefined) return options
    return { ...options, headers: options?.headers === undefined ? headers : { ...options.headers, ...headers } }
  }

  /** The one-time corrections a modern error allows; any other error goes to the caller as it is. */
  #recover(error: unknown, connection: Connection, method: string, params: JsonObject | undefined, options: RequestOptions | undefined, attempt: Attempt, isUnwrapped: boolean): Observable<RequestEvent<JsonObject>> {
    // MCP 2026-07-28 Streamable HTTP: a broken response stream loses its request, which the client
    // MUST re-issue as a new request (new id). Once: a second loss goes to the caller.
    if (error instanceof ResponseLostError && !attempt.hasReissued) return this.#request(connection, method, params, options, { ...attempt, hasReissued: true }, isUnwrapped)
    if (!(error instanceof McpError)) return throwError(() => error)
    if (error.code === ErrorCode.UnsupportedProtocolVersion && !attempt.hasRetriedVersion) {
      // MCP versioning: the client SHOULD pick a mutually supported version from `supported` and retry.
      const next = chooseVersion(supportedOf(error), this.host.modernVersions)
      if (next === undefined || next === this.host.state.current.protocolVersion) return throwError(() => error)
      this.host.state.send({ type: 'version', version: next })
      return this.#request(connection, method, params, options, { ...attempt, hasRetriedVersion: true }, isUnwrapped)
    }
    if (error.code === ErrorCode.HeaderMismatch && method === 'tools/call' && !attempt.hasRetriedHeaders) {
      // MCP Streamable HTTP: on HeaderMismatch the client SHOULD list tools again and retry.
      return from(this.host.relistTools(connection)).pipe(
        mergeMap(() => this.#request(connection, method, params, options, { ...attempt, hasRetriedHeaders: true }, isUnwrapped)))
    }
    return throwError(() => error)
  }
}
