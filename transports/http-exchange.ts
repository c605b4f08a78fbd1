import type { Principal } from '../lib/auth.ts'
import type { SchedulerLike } from '../lib/rx.ts'
import type { HeaderList } from './request-info.ts'
import type { HttpRefusal, RefusedIds } from '../lib/http/refusal.ts'

export type { RefusedIds } from '../lib/http/refusal.ts'

/**
 * Where SSE text goes: a node response or a web ReadableStream. A sink whose peer stops reading is
 * closed once more than its high-water mark is buffered (the client resumes with Last-Event-ID)
 * instead of growing without bound; its exchange's close listeners run then.
 */
export interface Sink {
  write(text: string): void
  end(): void
}

/** What reading a request body gave: the bytes, or why there are none. */
export type BodyResult =
  | { type: 'body'; body: Uint8Array }
  | { type: 'too-large' }
  | { type: 'timeout' }
  /** The client went away mid-body: nobody to answer. */
  | { type: 'gone' }

/** The limits a body is read under. */
export interface BodyLimits {
  /** Largest body in bytes; reading stops as soon as it is passed. */
  maxBytes: number
  /** Time allowed for the whole body, from the first call (a trickled body is cut off). */
  timeoutMs: number
  /** Where the timeout's time comes from. */
  scheduler?: SchedulerLike
}

/**
 * One HTTP request and its answer, as the core handler sees it, whatever the server underneath:
 * node:http objects are used directly (no web-stream conversion on the hot path), a web Request
 * is adapted once. Exactly one of `reply`, `refuse` and `stream` is called.
 */
export interface Exchange {
  readonly method: string
  readonly pathname: string
  readonly search: string
  /** The client's IP address, when the server underneath tells it (node:http does). */
  readonly remoteAddress?: string
  /**
   * Set on an exchange another instance of the listener forwarded (scale-out): `remoteAddress` is
   * then the client's address as that instance resolved it (its `clientAddress` applied there).
   */
  readonly isForwarded?: boolean
  /** Who sent the request, once the listener's `auth` verified its credentials. */
  principal?: Principal
  /**
   * A request header, its name compared without case (HTTP, and MCP 2026-07-28 Streamable HTTP:
   * `MCP-PROTOCOL-VERSION` is `mcp-protocol-version`); null when absent.
   */
  header(name: string): string | null
  /**
   * Every request header, as the server underneath holds them (no copy): for `ctx.requestInfo`,
   * which makes `Headers` of them only when a handler reads them.
   */
  headerList(): HeaderList
  /** Reads the body under `limits`. */
  body(limits: BodyLimits): Promise<BodyResult>
  /** Calls `listener` when the client goes away (or the answer ends). */
  onClose(listener: () => void): void
  reply(status: number, headers: Record<string, string>, body?: string): void
  /** Answers and drops the connection without reading the rest of the request (413, 408). */
  refuse(status: number, headers: Record<string, string>, body?: string): void
  /** Starts an SSE answer; past `highWaterMark` buffered bytes the stream is cut. */
  stream(status: number, headers: Record<string, string>, highWaterMark: number): Sink
}

/** The headers of a JSON answer. */
export const JSON_HEADERS = { 'content-type': 'application/json' }

/** The headers of every SSE answer. */
export const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive' }

/**
 * What the listener needs of any of its sessions (Streamable HTTP or legacy SSE) to apply one
 * policy to both: the idle clock, whether a request is in flight, keep-alives, the end.
 */
export interface ListenerSession {
  readonly id: string
  /** When the client last sent anything (a POST, a GET, a resume), by the listener's clock. */
  lastSeen: number
  hasRequestInFlight(): boolean
  keepAlive(): void
  end(): void
}

/**
 * Answers with a JSON-RPC error body (HTTP-level refusals). `answers` names what the refused body
 * asked: the id of its one request, or the ids of a batch's requests (then the body is a batch of
 * errors, one per id); null (or a batch without requests) gives one error with id null.
 * JSON-RPC 2.0 §5: the response id "MUST be the same as the value of the id member in the Request
 * Object"; only when it could not be read is it null.
 */
export function replyError(exchange: Exchange, status: number, code: number, message: string, headers?: Readonly<Record<string, string>>, answers: RefusedIds = null): void {
  const error = { code, message }
  const body = Array.isArray(answers) && answers.length > 0
    ? answers.map(id => ({ jsonrpc: '2.0', id, error }))
    : { jsonrpc: '2.0', id: Array.isArray(answers) ? null : answers, error }
  exchange.reply(status, { ...JSON_HEADERS, ...headers }, JSON.stringify(body))
}

/**
 * Writes a refusal of the pure rules (lib/http/rules.ts): a JSON-RPC error body (see
 * {@link replyError}) when it has a code, else its message as it is (no body when empty); a
 * refusal that drops the connection (413, 408) is written with `refuse`.
 */
export function answerRefusal(exchange: Exchange, refusal: HttpRefusal): void {
  const { status, code, message, headers } = refusal
  if (code === undefined) return message === '' ? exchange.reply(status, { ...headers }) : exchange.reply(status, { ...headers }, message)
  if (refusal.isDropped === true) {
    return exchange.refuse(status, { ...JSON_HEADERS, ...headers }, JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }))
  }
  if (refusal.data !== undefined) {
    return exchange.reply(status, { ...JSON_HEADERS, ...headers }, JSON.stringify({ jsonrpc: '2.0', id: refusal.id ?? null, error: { code, message, data: refusal.data } }))
  }
  replyError(exchange, status, code, message, headers, refusal.id ?? null)
}

const encoder = new TextEncoder()

/**
 * A body that a framework read before the handler saw the request (Express's `express.json()`,
 * Fastify's JSON parser, `express.text()`, `express.raw()`), as a {@link BodyResult}: bytes and text
 * as they are, any other value as its JSON text. It then goes through the same decoding, size limit
 * and structure checks as a body read here, so a parsed body gets the answers a raw one would. A
 * value JSON cannot write (a cycle, a BigInt) reads as an empty body: -32700, like unreadable JSON.
 */
export function bodyOfParsed(parsed: unknown, limits: BodyLimits): BodyResult {
  let bytes: Uint8Array
  if (parsed instanceof Uint8Array) bytes = parsed
  else {
    let text = ''
    if (typeof parsed === 'string') text = parsed
    else try { text = JSON.stringify(parsed) ?? '' } catch { /* unwritable: stays empty */ }
    bytes = encoder.encode(text)
  }
  return bytes.length > limits.maxBytes ? { type: 'too-large' } : { type: 'body', body: bytes }
}
