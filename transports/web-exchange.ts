import type { Principal } from '../lib/auth.ts'
import type { SchedulerLike } from '../lib/rx.ts'
import { encodeSseComment } from '../lib/codec/sse.ts'
import { after, every } from './timers.ts'
import type { HeaderList } from './request-info.ts'
import { bodyOfParsed, type BodyLimits, type BodyResult, type Exchange, type Sink } from './http-exchange.ts'

const encoder = new TextEncoder()

/** The keep-alive of a web exchange's streams: the listener's `keepAliveMs` (0: none) and `scheduler`. */
export interface StreamKeepAlive {
  readonly ms: number
  readonly scheduler?: SchedulerLike
}

/** How often a stream's own timer runs when keep-alives are off: it only holds the request then. */
const HOLD_MS = 30_000
const KEEP_ALIVE = encoder.encode(encodeSseComment('keep-alive'))

/**
 * An Exchange over a web-standard Request; `response` settles with the Response. A body the
 * caller already read is taken from `parsedBody` (see `bodyOfParsed`), else read from the request.
 *
 * Web streams cost more than the work they carry on a small answer (on Node, a `ReadableStream`
 * and the adapter's reader are several times the CPU of the MCP call behind them), so each is made
 * only when needed: a body with a Content-Length within the limit is read whole (`arrayBuffer`,
 * which adapters such as @hono/node-server serve from the socket directly); an SSE answer that
 * ends before the Response is handed over (a tool that answers at once) goes out as one text body
 * with the same headers and bytes; and the request's abort signal is only listened to once
 * something waits for the client to go away.
 *
 * A live SSE stream runs a timer of its own, set while its request is being served: Cloudflare
 * Workers tie a timer to the request that set it (the listener's sweep, set by an earlier request,
 * stops when that one ends) and cancel, as hung, a request whose streamed response waits on
 * nothing of its own (a listen stream written only when other requests raise events). The timer
 * sends the keep-alive comment when nothing else was written since its last run, so where the
 * sweep's keep-alives arrive too (Node, a Durable Object) it sends none of its own.
 */
export class WebExchange implements Exchange {
  principal: Principal | undefined = undefined
  readonly method: string
  readonly pathname: string
  readonly search: string
  readonly response: Promise<Response>
  #resolve!: (response: Response) => void
  /** Listeners waiting for the client to go away or the answer to end; undefined until the first. */
  #closeListeners: (() => void)[] | undefined
  constructor(
    readonly request: Request, readonly extraHeaders: Record<string, string>, readonly parsedBody?: unknown, readonly remoteAddress?: string,
    readonly keepAlive: StreamKeepAlive = { ms: 0 },
  ) {
    const url = request.url
    // The path and query without a URL object: the scheme and authority end at the first '/' after '//'.
    const pathStart = url.indexOf('/', url.indexOf('//') + 2)
    const path = pathStart < 0 ? '/' : url.slice(pathStart)
    const question = path.indexOf('?')
    const hash = path.indexOf('#')
    const end = hash < 0 ? path.length : hash
    this.method = request.method
    this.pathname = question < 0 || question > end ? path.slice(0, end) : path.slice(0, question)
    this.search = question < 0 || question > end ? '' : path.slice(question, end)
    this.response = new Promise(resolve => { this.#resolve = resolve })
  }
  #closed(): void {
    const listeners = this.#closeListeners
    if (listeners === undefined) return
    this.#closeListeners = []
    for (const listener of listeners) listener()
  }
  header(name: string): string | null { return this.request.headers.get(name) }
  headerList(): HeaderList { return this.request.headers }
  body(limits: BodyLimits): Promise<BodyResult> {
    return this.parsedBody === undefined ? readBody(this.request, limits) : Promise.resolve(bodyOfParsed(this.parsedBody, limits))
  }
  onClose(listener: () => void): void {
    if (this.#closeListeners === undefined) {
      this.#closeListeners = []
      // Whether the client went away matters only while the answer is still open: an answer that
      // is out within the microtask (most are) never makes the adapter build its abort signal.
      queueMicrotask(() => {
        if (!this.#isAnswered) this.request.signal?.addEventListener('abort', () => this.#closed(), { once: true })
      })
    }
    this.#closeListeners.push(listener)
  }
  /** True once the whole answer was handed over (a plain body); a live stream stays open. */
  #isAnswered = false
  reply(status: number, headers: Record<string, string>, body?: string): void {
    this.#isAnswered = true
    this.#resolve(new Response(body ?? null, { status, headers: { ...headers, ...this.extraHeaders } }))
  }
  refuse(status: number, headers: Record<string, string>, body?: string): void {
    this.reply(status, { ...headers, connection: 'close' }, body)
  }
  stream(status: number, headers: Record<string, string>, highWaterMark: number): Sink {
    const init: ResponseInit = { status, headers: { ...headers, ...this.extraHeaders } }
    // What was written before the Response is handed over (a microtask from now); then the live sink.
    let early: string[] | undefined = []
    let isEnded = false
    let live: Sink | undefined
    queueMicrotask(() => {
      const text = early!.join('')
      early = undefined
      if (isEnded) {
        // The whole answer is here: one text body, no stream (the bytes a reader would have read).
        this.#isAnswered = true
        this.#resolve(new Response(text, init))
        this.#closed()
        return
      }
      live = this.#liveStream(init, highWaterMark)
      if (text !== '') live.write(text)
    })
    return {
      write: text => { if (live !== undefined) live.write(text); else if (!isEnded) early!.push(text) },
      end: () => { if (live !== undefined) live.end(); else isEnded = true },
    }
  }

  /** Answers with a ReadableStream body and gives the sink that feeds it. */
  #liveStream(init: ResponseInit, highWaterMark: number): Sink {
    let controller!: ReadableStreamDefaultController<Uint8Array>
    let isOpen = true
    // Set by every write, cleared by each run of the timer: true when the stream said something since.
    let hasWritten = false
    const { ms, scheduler } = this.keepAlive
    const timer = every(ms > 0 ? ms : HOLD_MS, scheduler, () => {
      if (ms > 0 && !hasWritten) enqueue(KEEP_ALIVE)
      hasWritten = false
    })
    const over = () => { isOpen = false; timer.unsubscribe() }
    const body = new ReadableStream<Uint8Array>({
      start: c => { controller = c },
      cancel: () => { over(); this.#closed() },
    }, new ByteLengthQueuingStrategy({ highWaterMark }))
    this.#resolve(new Response(body, init))
    const cut = () => {
      over()
      try { controller.error(new Error('SSE stream over its high-water mark')) } catch { /* already closed */ }
      this.#closed()
    }
    const enqueue = (bytes: Uint8Array) => {
      if (!isOpen) return
      // desiredSize goes negative by the bytes queued beyond the mark: a reader that stopped.
      if ((controller.desiredSize ?? 0) < 0) return cut()
      hasWritten = true
      try { controller.enqueue(bytes) } catch { over() }
    }
    return {
      write: text => enqueue(encoder.encode(text)),
      end: () => { if (isOpen) { over(); try { controller.close() } catch { /* cancelled */ } } this.#closed() },
    }
  }
}

/**
 * Reads a web Request body under `limits`. A declared Content-Length within the limit is read
 * whole (the runtime stops at the declared length); a body without one is read chunk by chunk and
 * cut off as soon as it passes the limit.
 */
async function readBody(request: Request, limits: BodyLimits): Promise<BodyResult> {
  const length = request.headers.get('content-length')
  const declared = length === null ? NaN : Number(length)
  if (declared > limits.maxBytes) return { type: 'too-large' }
  // Checked before `request.body` is touched: adapters make their web stream on that first read.
  if (declared >= 0) return declared === 0 ? Promise.resolve({ type: 'body', body: new Uint8Array(0) }) : readDeclared(request, limits)
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

/** A body of declared length, read whole under the time limit. */
function readDeclared(request: Request, limits: BodyLimits): Promise<BodyResult> {
  return new Promise(resolve => {
    let isSettled = false
    const settle = (result: BodyResult) => {
      if (isSettled) return
      isSettled = true
      timeout.unsubscribe()
      resolve(result)
    }
    const timeout = after(limits.timeoutMs, limits.scheduler, () => {
      settle({ type: 'timeout' })
      // Stop reading what is left: the answer is out.
      request.body?.cancel().catch(() => undefined)
    })
    request.arrayBuffer().then(buffer => {
      // A runtime that let more through than declared: the limit still holds.
      settle(buffer.byteLength > limits.maxBytes ? { type: 'too-large' } : { type: 'body', body: new Uint8Array(buffer) })
    }, () => settle({ type: 'gone' }))
  })
}
