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
 * Each SSE stream it answers with runs a timer of its own, set while the request is being served:
 * Cloudflare Workers tie a timer to the request that set it (the listener's sweep, set by an
 * earlier request, stops when that one ends) and cancel, as hung, a request whose streamed response
 * waits on nothing of its own (a listen stream written only when other requests raise events).
 * The timer sends the keep-alive comment when nothing else was written since its last run, so
 * where the sweep's keep-alives arrive too (Node, a Durable Object) it sends none of its own.
 */
export class WebExchange implements Exchange {
  principal: Principal | undefined = undefined
  readonly method: string
  readonly pathname: string
  readonly search: string
  readonly response: Promise<Response>
  #resolve!: (response: Response) => void
  readonly #closeListeners: (() => void)[] = []
  constructor(
    readonly request: Request, readonly extraHeaders: Record<string, string>, readonly parsedBody?: unknown, readonly remoteAddress?: string,
    readonly keepAlive: StreamKeepAlive = { ms: 0 },
  ) {
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
  body(limits: BodyLimits): Promise<BodyResult> {
    return this.parsedBody === undefined ? readBody(this.request, limits) : Promise.resolve(bodyOfParsed(this.parsedBody, limits))
  }
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
    this.#resolve(new Response(body, { status, headers: { ...headers, ...this.extraHeaders } }))
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
