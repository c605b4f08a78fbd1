/**
 * The input-answering of a connection (`RequestOptions.answerInput`, and `onLog` alike): a peer's
 * input request (MCP's server-to-client sampling, elicitation, roots) made to serve one of this
 * side's requests goes to that request's answerer, ahead of the connection's own handlers (a log
 * message about it, to its `onLog`). The connection keeps them for its requests in flight by id;
 * this file picks the one a peer's message belongs to.
 */
import type { JsonObject, RequestId } from './jsonrpc/message.ts'
import type { InputAnswerer, RequestHandler } from './connection-contract.ts'
import type { IncomingRequest } from './incoming-request.ts'

/** The requests a peer makes of this side to serve one of this side's (MCP's server-to-client inputs): what `answerInput` answers. */
const INPUT_METHODS: ReadonlySet<string> = new Set(['sampling/createMessage', 'elicitation/create', 'roots/list'])

/**
 * The handler of a peer's `method` request when it is an input request tied to one of this side's
 * requests in `answering` (those sent with `answerInput`, by id): the one the transport named
 * (`related`), else the only one in flight. Undefined for any other method, or when no request
 * can be told: the connection's own handlers answer it then.
 */
export function answererOf(answering: ReadonlyMap<RequestId, InputAnswerer>, related: RequestId | undefined, method: string): RequestHandler | undefined {
  if (!INPUT_METHODS.has(method)) return undefined
  const answer = entryOfRelated(answering, related)
  if (answer === undefined) return undefined
  return (params: JsonObject | undefined, request: IncomingRequest) => answer(method, params, request.signal)
}

/**
 * The entry of `byRequest` (this side's requests in flight, by id) that a peer's message is about:
 * the request the transport named (`related`), else the only one in flight; undefined when none
 * can be told.
 */
export function entryOfRelated<T>(byRequest: ReadonlyMap<RequestId, T>, related: RequestId | undefined): T | undefined {
  return related !== undefined ? byRequest.get(related) : byRequest.size === 1 ? byRequest.values().next().value : undefined
}
