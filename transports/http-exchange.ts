import type { Principal } from '../lib/auth.ts'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { SchedulerLike } from '../lib/rx.ts'
import { after } from './timers.ts'
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

const encoder = new TextEncoder()

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

/** An Exchange over node:http. */
export class NodeExchange implements Exchange {
  principal: Principal | undefined = undefined
  readonly method: string
  readonly pathname: string
  readonly search: string
  constructor(readonly req: IncomingMessage, readonly res: ServerResponse, readonly extraHeaders: Record<string, string>) {
    this.method = req.method ?? 'GET'
    const url = req.url ?? '/'
    const question = url.indexOf('?')
    this.pathname = question < 0 ? url : url.slice(0, question)
    this.search = question < 0 ? '' : url.slice(question)
  }
  get remoteAddress(): string | undefined { return this.req.socket?.remoteAddress }
  header(name: string): string | null {
    // node:http keys the headers lower-cased: the name is too, so any spelling finds its header.
    const value = this.req.headers[name.toLowerCase()]
    return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value
  }
  headerList(): HeaderList { return this.req.rawHeaders }
  body(limits: BodyLimits): Promise<BodyResult> {
    const req = this.req
    const declared = Number(req.headers['content-length'] ?? NaN)
    // Refused before a byte is read: the rest is never read either (see refuse).
    if (declared > limits.maxBytes) return Promise.resolve({ type: 'too-large' })
    if (req.readableEnded) return Promise.resolve({ type: 'body', body: new Uint8Array(0) })
    return new Promise(resolve => {
      const chunks: Buffer[] = []
      let size = 0
      const done = (result: BodyResult) => {
        timeout.unsubscribe()
        req.off('data', onData)
        req.off('end', onEnd)
        req.off('error', onError)
        req.off('aborted', onError)
        // Stop reading at once: the socket pauses and nothing more is taken off the wire.
        if (result.type !== 'body') req.pause()
        resolve(result)
      }
      const onData = (chunk: Buffer) => {
        size += chunk.length
        if (size > limits.maxBytes) return done({ type: 'too-large' })
        chunks.push(chunk)
      }
      const onEnd = () => done({ type: 'body', body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) })
      const onError = () => done({ type: 'gone' })
      // One deadline for the whole body, so a trickle of bytes cannot hold the request open (a plain
      // timer unless a scheduler was given: RxJS's async one costs an interval per POST).
      const timeout = after(limits.timeoutMs, limits.scheduler, () => done({ type: 'timeout' }))
      req.on('data', onData)
      req.on('end', onEnd)
      req.on('error', onError)
      req.on('aborted', onError)
    })
  }
  onClose(listener: () => void): void {
    this.res.on('close', listener)
  }
  reply(status: number, headers: Record<string, string>, body?: string): void {
    if (this.res.headersSent || this.res.destroyed) return
    this.res.writeHead(status, { ...headers, ...this.extraHeaders })
    this.res.end(body)
  }
  refuse(status: number, headers: Record<string, string>, body?: string): void {
    const { req, res } = this
    // Connection: close makes node end the socket after the answer instead of draining the body.
    this.reply(status, { ...headers, connection: 'close' }, body)
    const socket = req.socket
    // Once the answer is out, the connection goes, with the unread rest of the body.
    res.once('finish', () => socket.destroySoon())
  }
  stream(status: number, headers: Record<string, string>, highWaterMark: number): Sink {
    const res = this.res
    // SSE events are small and must go out at once, not wait for Nagle's algorithm.
    res.socket?.setNoDelay(true)
    res.writeHead(status, { ...headers, ...this.extraHeaders })
    res.flushHeaders()
    return {
      write: text => {
        if (res.writableEnded || res.destroyed) return
        // A peer that does not read: cut the stream rather than buffer without bound. The first
        // write past the mark still goes out whole, so one large event always fits.
        if (res.writableLength > highWaterMark) { res.destroy(); return }
        res.write(text)
      },
      end: () => { if (!res.writableEnded && !res.destroyed) res.end() },
    }
  }
}

/** An Exchange over a web-standard Request; `response` settles with the Response. */
export class WebExchange implements Exchange {
  principal: Principal | undefined = undefined
  readonly method: string
  readonly pathname: string
  readonly search: string
  readonly response: Promise<Response>
  #resolve!: (response: Response) => void
  readonly #closeListeners: (() => void)[] = []
  constructor(readonly request: Request, readonly extraHeaders: Record<string, string>) {
    const url = new URL(request.url)
    this.method = request.method
    this.pathname = url.pathname
    this.search = url.search
    this.response = new Promise(resolve => { this.#resolve = resolve })
    request.signal?.addEventListener('abort', () => this.#closed(), { once: true })
  }
  #closed(): void {
    for (const listener of this.#closeListeners.splice(0)) listener()
  }
  header(name: string): string | null { return this.request.headers.get(name) }
  headerList(): HeaderList { return this.request.headers }
  body(limits: BodyLimits): Promise<BodyResult> { return readBody(this.request, limits) }
  onClose(listener: () => void): void { this.#closeListeners.push(listener) }
  reply(status: number, headers: Record<string, string>, body?: string): void {
    this.#resolve(new Response(body ?? null, { status, headers: { ...headers, ...this.extraHeaders } }))
  }
  refuse(status: number, headers: Record<string, string>, body?: string): void {
    this.reply(status, { ...headers, connection: 'close' }, body)
  }
  stream(status: number, headers: Record<string, string>, highWaterMark: number): Sink {
    let controller!: ReadableStreamDefaultController<Uint8Array>
    let isOpen = true
    const body = new ReadableStream<Uint8Array>({
      start: c => { controller = c },
      cancel: () => { isOpen = false; this.#closed() },
    }, new ByteLengthQueuingStrategy({ highWaterMark }))
    this.#resolve(new Response(body, { status, headers: { ...headers, ...this.extraHeaders } }))
    const cut = () => {
      isOpen = false
      try { controller.error(new Error('SSE stream over its high-water mark')) } catch { /* already closed */ }
      this.#closed()
    }
    return {
      write: text => {
        if (!isOpen) return
        // desiredSize goes negative by the bytes queued beyond the mark: a reader that stopped.
        if ((controller.desiredSize ?? 0) < 0) return cut()
        try { controller.enqueue(encoder.encode(text)) } catch { isOpen = false }
      },
      end: () => { if (isOpen) { isOpen = false; try { controller.close() } catch { /* cancelled */ } } this.#closed() },
    }
  }
}

/** Reads a web Request body under `limits`. */
async function readBody(request: Request, limits: BodyLimits): Promise<BodyResult> {
  const declared = Number(request.headers.get('content-length') ?? NaN)
  if (declared > limits.maxBytes) return { type: 'too-large' }
  if (request.body === null) return { type: 'body', body: new Uint8Array(0) }
  const reader = request.body.getReader()
  let isTimedOut = false
  const timeout = after(limits.timeoutMs, limits.scheduler, () => { isTimedOut = true; void reader.cancel() })
  const chunks: Uint8Array[] = []
  let size = 0
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (isTimedOut) return { type: 'timeout' }
      if (done) break
      size += value.length
      if (size > limits.maxBytes) { void reader.cancel(); return { type: 'too-large' } }
      chunks.push(value)
    }
  } catch {
    return { type: isTimedOut ? 'timeout' : 'gone' }
  } finally {
    timeout.unsubscribe()
  }
  if (chunks.length === 1) return { type: 'body', body: chunks[0]! }
  const body = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) { body.set(chunk, offset); offset += chunk.length }
  return { type: 'body', body }
}
