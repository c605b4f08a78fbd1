import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Principal } from '../lib/auth.ts'
import { after } from './timers.ts'
import type { HeaderList } from './request-info.ts'
import { bodyOfParsed, type BodyLimits, type BodyResult, type Exchange, type Sink } from './http-exchange.ts'

/**
 * The timer functions as the module found them: a test's fake timers, installed later, must not
 * hold an answer back. (Not imported from node:timers: this module stays free of runtime Node
 * imports, so rxmcp/browser may carry what imports it.)
 */
const realSetTimeout = globalThis.setTimeout
const realClearTimeout = globalThis.clearTimeout

/**
 * An Exchange over node:http (and the frameworks on it: Express, Fastify). A body the framework
 * already read is taken from `parsedBody`, else from `req.body` once the request stream has ended
 * (what a body parser leaves), else read from the stream.
 */
export class NodeExchange implements Exchange {
  principal: Principal | undefined = undefined
  /** How long an SSE answer open after its first turn waits for its first event (see NodeSseSink). */
  sseHoldMs = SSE_HOLD_MS
  readonly method: string
  readonly pathname: string
  readonly search: string
  constructor(readonly req: IncomingMessage, readonly res: ServerResponse, readonly extraHeaders: Record<string, string>, readonly parsedBody?: unknown) {
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
    if (this.parsedBody !== undefined) return Promise.resolve(bodyOfParsed(this.parsedBody, limits))
    // A body parser mounted before MCP read the stream to its end and left what it made here.
    const parsed = (req as { body?: unknown }).body
    if (req.readableEnded && parsed !== undefined) return Promise.resolve(bodyOfParsed(parsed, limits))
    const declared = Number(req.headers['content-length'] ?? NaN)
    // Refused before a byte is read: the rest is never read either (see refuse).
    if (declared > limits.maxBytes) return Promise.resolve({ type: 'too-large' })
    if (req.readableEnded) return Promise.resolve({ type: 'body', body: new Uint8Array(0) })
    // Most bodies come in the packet of their headers: by the time this read's microtasks run,
    // node:http has put all the bytes the request declared in its buffer (its end comes a turn
    // later). Taken from there, with no listener and no timer per request.
    return Promise.resolve(req).then(request => declared === request.readableLength && request.readableFlowing !== true ? takeBuffered(request) : this.#read(limits))
  }

  /** The body read as it comes, under the time and size limits. */
  #read(limits: BodyLimits): Promise<BodyResult> {
    const req = this.req
    return new Promise(resolve => {
      const chunks: Buffer[] = []
      let size = 0
      let isDone = false
      // Listeners are left on the request: it is done with once its body is read or refused.
      const done = (result: BodyResult) => {
        if (isDone) return
        isDone = true
        timeout.unsubscribe()
        // Stop reading at once: the socket pauses and nothing more is taken off the wire.
        if (result.type !== 'body') req.pause()
        resolve(result)
      }
      // One deadline for the whole body, so a trickle of bytes cannot hold the request open (a plain
      // timer unless a scheduler was given: RxJS's async one costs an interval per POST).
      const timeout = after(limits.timeoutMs, limits.scheduler, () => done({ type: 'timeout' }))
      const onError = () => done({ type: 'gone' })
      req.on('data', (chunk: Buffer) => {
        if (isDone) return
        size += chunk.length
        if (size > limits.maxBytes) return done({ type: 'too-large' })
        chunks.push(chunk)
      })
      req.on('end', () => done({ type: 'body', body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) }))
      req.on('error', onError)
      req.on('aborted', onError)
    })
  }
  onClose(listener: () => void): void {
    this.res.on('close', listener)
  }
  reply(status: number, headers: Record<string, string>, body?: string): void {
    if (this.res.headersSent || this.res.destroyed) return
    answerWhole(this.res, status, { ...headers, ...this.extraHeaders }, body)
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
    return new NodeSseSink(this.res, status, { ...headers, ...this.extraHeaders }, highWaterMark, this.sseHoldMs)
  }
}

/** The body of a request whose declared bytes (within the limit, checked before) all wait in its buffer, taken from there. */
function takeBuffered(req: IncomingMessage): BodyResult {
  const chunks: Buffer[] = []
  for (let chunk = req.read() as Buffer | null; chunk !== null; chunk = req.read() as Buffer | null) chunks.push(chunk)
  return { type: 'body', body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) }
}

/** How long an SSE answer open after its first turn waits for its first event before it starts (see NodeSseSink). */
export const SSE_HOLD_MS = 10

/**
 * An SSE answer over node:http. What is written in the turn it starts (the answer a POST's requests
 * got while its body was handled is written at once) waits a microtask: an answer complete by then
 * goes out as one body with its length (the same headers and bytes, one write instead of headers,
 * chunks and a last chunk). One still open after that turn, with nothing but what that turn wrote
 * (a priming event), waits up to {@link SSE_HOLD_MS} more for its first event: an answer that ends
 * it by then still goes out as one body (a call answered a few milliseconds later, as a gateway's
 * or any tool that awaits I/O is, made two writes: headers and priming, then the answer and the
 * last chunk); the first event, or the end of the wait, starts the stream.
 */
class NodeSseSink implements Sink {
  /** What was written before the answer started; undefined once it did. */
  #early: string[] | undefined = []
  #isEnded = false
  /** The wait for a first event after the first turn (see the class comment); undefined when none runs. */
  #hold: ReturnType<typeof realSetTimeout> | undefined

  constructor(readonly res: ServerResponse, readonly status: number, readonly headers: Record<string, string>, readonly highWaterMark: number, readonly holdMs: number) {
    queueMicrotask(() => this.#afterFirstTurn())
  }

  write(text: string): void {
    if (this.#early === undefined) return this.#write(text)
    if (this.#isEnded) return
    this.#early.push(text)
    // The first event after the first turn: the answer starts at the end of this turn (one body
    // with its length if the end comes in it too, a stream otherwise).
    if (this.#hold !== undefined) {
      realClearTimeout(this.#hold)
      this.#hold = undefined
      queueMicrotask(() => this.#start())
    }
  }

  end(): void {
    if (this.#early !== undefined) {
      this.#isEnded = true
      if (this.#hold !== undefined) this.#startHeld()
      return
    }
    const res = this.res
    if (!res.writableEnded && !res.destroyed) res.end()
  }

  #afterFirstTurn(): void {
    if (this.#isEnded || this.res.destroyed || this.holdMs <= 0) return this.#start()
    this.#hold = realSetTimeout(() => this.#startHeld(), this.holdMs)
    // Node's timers can be unref'd: an answer being held keeps no process open.
    ;(this.#hold as { unref?: () => void }).unref?.()
  }

  #startHeld(): void {
    realClearTimeout(this.#hold)
    this.#hold = undefined
    this.#start()
  }

  #start(): void {
    const { res, headers } = this
    const early = this.#early!
    this.#early = undefined
    if (res.headersSent || res.destroyed) return
    const text = early.length === 1 ? early[0]! : early.join('')
    if (this.#isEnded) return answerWhole(res, this.status, headers, text)
    // SSE events are small and must go out at once, not wait for Nagle's algorithm.
    res.socket?.setNoDelay(true)
    res.writeHead(this.status, headers)
    if (text === '') res.flushHeaders()
    else this.#write(text)
  }

  #write(text: string): void {
    const res = this.res
    if (res.writableEnded || res.destroyed) return
    // A peer that does not read: cut the stream rather than buffer without bound. The first
    // write past the mark still goes out whole, so one large event always fits.
    if (res.writableLength > this.highWaterMark) { res.destroy(); return }
    res.write(text)
  }
}

/**
 * Answers with the whole body at once. With its length the answer is one write (headers and body
 * together), not chunked framing; a 204 or 304 carries no body and no length. `headers` is the
 * answer's own object (the length is added to it).
 */
function answerWhole(res: ServerResponse, status: number, headers: Record<string, string>, body: string | undefined): void {
  if (status !== 204 && status !== 304) headers['content-length'] = body === undefined ? '0' : String(Buffer.byteLength(body))
  res.writeHead(status, headers)
  res.end(body)
}
