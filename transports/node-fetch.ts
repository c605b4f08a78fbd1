import type { Agent, ClientRequest, IncomingMessage, RequestOptions } from 'node:http'

/**
 * The HTTP client transport's default exchange on Node: the subset of `fetch` the transport uses
 * (a method, a URL, headers, a string or byte body, a signal; redirects left to the caller as with
 * `redirect: 'manual'`), made with node:http and node:https over keep-alive agents, answered by a
 * light `Response` whose body reads the socket's chunks as they come.
 *
 * Why: Node's global fetch (undici) costs about four times the CPU of node:http per small POST
 * (its Request, Headers, AbortSignal wiring and web streams, about 220 µs of 275 µs per exchange
 * on the bench machine), and an MCP client makes one exchange per request. What the transport reads
 * of a response is `ok`, `status`, `statusText`, `type`, `headers.get` and `body` (`getReader`,
 * `cancel`); the light response has those and `text`, `json`, `arrayBuffer` besides.
 *
 * Anything outside that subset (a `Request` object as input, a stream or form body, a `redirect`
 * mode other than `manual`) goes to the global fetch unchanged. Deno, Bun, browsers and Workers
 * keep the global fetch (see {@link defaultFetch}); node:http is loaded on first use, through a
 * specifier bundlers leave alone, so browser and Worker bundles carry none of it.
 */

/** Chunks a body holds unread before the socket is paused (resumed as they are read). */
const HIGH_WATER_CHUNKS = 16

/** The specifiers, held in variables so that bundlers leave node:http(s) out of browser bundles. */
const NODE_HTTP = 'node:http'
const NODE_HTTPS = 'node:https'

/** node:http and node:https with their keep-alive agents, once loaded. */
interface NodeHttp {
  request: typeof import('node:http').request
  httpsRequest: typeof import('node:https').request
  http: Agent
  https: Agent
}

/** The modules, loaded on the first exchange. */
let loading: Promise<NodeHttp> | undefined
/** The same, once loaded: later exchanges start without a Promise turn. */
let loaded: NodeHttp | undefined

function load(): Promise<NodeHttp> {
  loading ??= Promise.all([import(/* @vite-ignore */ NODE_HTTP), import(/* @vite-ignore */ NODE_HTTPS)]).then(([http, https]) => {
    const modules = http as typeof import('node:http')
    const secure = https as typeof import('node:https')
    // LIFO: the socket used last is the one least likely to have been closed by the server's idle timer.
    const options = { keepAlive: true, scheduling: 'lifo' as const }
    loaded = { request: modules.request, httpsRequest: secure.request, http: new modules.Agent(options), https: new secure.Agent(options) }
    return loaded
  })
  return loading
}

/** True on Node itself (not Deno, Bun or Workers, which have their own fetch and a partial node:http). */
export function isNodeRuntime(): boolean {
  const global = globalThis as { process?: { versions?: { node?: string; bun?: string }; release?: { name?: string } }; Deno?: unknown; Bun?: unknown; navigator?: { userAgent?: string } }
  if (global.Deno !== undefined || global.Bun !== undefined || global.process?.versions?.bun !== undefined) return false
  const agent = global.navigator?.userAgent
  if (agent !== undefined && !agent.startsWith('Node.js')) return false
  return typeof global.process?.versions?.node === 'string' && global.process.release?.name === 'node'
}

/**
 * The fetch the HTTP client transport uses when none is given: {@link nodeFetch} on Node, the
 * global fetch elsewhere (called as a plain function: a browser's fetch throws "Illegal
 * invocation" when called as a method of another object).
 */
export function defaultFetch(): typeof fetch {
  return isNodeRuntime() ? nodeFetch : (input, init) => globalThis.fetch(input, init)
}

/**
 * A fetch over node:http and node:https (see the module's comment for the subset it serves itself).
 * Resolves once the response's head arrived; rejects with what the socket reported (the request
 * is not retried, except once when a reused keep-alive socket was reset before any answer: the
 * server closed it idle, and the request never reached it), or with the signal's reason.
 */
export const nodeFetch: typeof fetch = (input, init) => {
  const body = init?.body
  const isSimple = !(input instanceof Request) && (init?.redirect === undefined || init.redirect === 'manual')
    && (body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array)
  if (!isSimple) return globalThis.fetch(input, init)
  const url = input instanceof URL ? input : new URL(input)
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return globalThis.fetch(input, init)
  if (loaded !== undefined) return exchange(loaded, url, init, true)
  return load().then(modules => exchange(modules, url, init, true))
}

/** One exchange; `canRetry` allows the one retry on a reset reused socket. */
function exchange(modules: NodeHttp, url: URL, init: RequestInit | undefined, canRetry: boolean): Promise<Response> {
  const signal = init?.signal ?? undefined
  if (signal?.aborted) return Promise.reject(abortReason(signal))
  const body = init?.body as string | Uint8Array | undefined | null
  const headers = headerRecord(init?.headers)
  if (body !== undefined && body !== null && headers['content-length'] === undefined) {
    headers['content-length'] = String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength)
  }
  const isHttps = url.protocol === 'https:'
  const options: RequestOptions = { ...targetOf(url), method: init?.method ?? 'GET', headers, agent: isHttps ? modules.https : modules.http }
  return new Promise<Response>((resolve, reject) => {
    const request: ClientRequest = (isHttps ? modules.httpsRequest : modules.request)(options)
    let isAnswered = false
    const onAbort = () => request.destroy(abortReason(signal!) as Error)
    signal?.addEventListener('abort', onAbort, { once: true })
    request.once('response', response => {
      isAnswered = true
      resolve(new NodeResponse(response, url, signal, () => signal?.removeEventListener('abort', onAbort)) as unknown as Response)
    })
    // `on`, not `once`: a socket error after the head arrived is the body's (it breaks off), and must not go unhandled here.
    request.on('error', error => {
      if (isAnswered) return
      signal?.removeEventListener('abort', onAbort)
      // Node's advice for keep-alive agents: a reused socket the server closed while idle resets at once.
      if (canRetry && request.reusedSocket && (error as NodeJS.ErrnoException).code === 'ECONNRESET' && !signal?.aborted) {
        resolve(exchange(modules, url, init, false))
        return
      }
      reject(signal?.aborted ? abortReason(signal) : error)
    })
    request.end(body ?? undefined)
  })
}

/** Where a URL points, as node:http's options (what it would otherwise derive from the URL on every request). */
interface Target { protocol: string; hostname: string; port: string | undefined; path: string; auth: string | undefined }

/** Targets by URL object: a transport sends every request to the same URL object. */
const targets = new WeakMap<URL, { href: string; target: Target }>()

function targetOf(url: URL): Target {
  const known = targets.get(url)
  // A URL object can be changed in place: the href says whether the target still holds.
  if (known !== undefined && known.href === url.href) return known.target
  const target: Target = {
    protocol: url.protocol,
    // node:http wants an IPv6 literal without its brackets.
    hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
    port: url.port === '' ? undefined : url.port,
    path: `${url.pathname}${url.search}`,
    auth: url.username === '' && url.password === '' ? undefined : `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`,
  }
  targets.set(url, { href: url.href, target })
  return target
}

/** The headers of a request as node:http takes them (lower-case names). */
function headerRecord(headers: HeadersInit | undefined): Record<string, string> {
  const record: Record<string, string> = {}
  if (headers === undefined) return record
  if (headers instanceof Headers) headers.forEach((value, name) => { record[name] = value })
  else if (Array.isArray(headers)) for (const [name, value] of headers) record[name!.toLowerCase()] = value!
  else for (const name of Object.keys(headers)) record[name.toLowerCase()] = (headers as Record<string, string>)[name]!
  return record
}

/** What an aborted signal rejects with: its reason, as fetch does. */
function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError')
}

/** The light `Response` of {@link nodeFetch}. */
class NodeResponse {
  readonly type = 'basic'
  readonly redirected = false
  readonly url: string
  readonly status: number
  readonly statusText: string
  readonly ok: boolean
  readonly headers: NodeHeaders
  readonly body: NodeBody | null
  constructor(message: IncomingMessage, url: URL, signal: AbortSignal | undefined, done: () => void) {
    this.url = url.href
    this.status = message.statusCode ?? 0
    this.statusText = message.statusMessage ?? ''
    this.ok = this.status >= 200 && this.status < 300
    this.headers = new NodeHeaders(message.headers)
    this.body = new NodeBody(message, signal, done)
  }

  get bodyUsed(): boolean { return this.body?.isUsed ?? false }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = await this.bytes()
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer
  }

  async bytes(): Promise<Uint8Array> {
    const chunks: Uint8Array[] = []
    if (this.body !== null) for (;;) {
      const { done, value } = await this.body.read()
      if (done) break
      chunks.push(value)
    }
    return Buffer.concat(chunks)
  }

  async text(): Promise<string> { return new TextDecoder().decode(await this.bytes()) }
  async json(): Promise<unknown> { return JSON.parse(await this.text()) }
}

/** The headers of a {@link NodeResponse}: read-only, as a response's are. */
class NodeHeaders {
  readonly #headers: IncomingMessage['headers']
  constructor(headers: IncomingMessage['headers']) { this.#headers = headers }

  get(name: string): string | null {
    const value = this.#headers[name.toLowerCase()]
    return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value
  }

  has(name: string): boolean { return this.#headers[name.toLowerCase()] !== undefined }
  getSetCookie(): string[] { return this.#headers['set-cookie'] ?? [] }
  forEach(callback: (value: string, name: string, parent: NodeHeaders) => void): void { for (const [name, value] of this.entries()) callback(value, name, this) }
  *entries(): IterableIterator<[string, string]> { for (const name of Object.keys(this.#headers).sort()) yield [name, this.get(name)!] }
  *keys(): IterableIterator<string> { for (const [name] of this.entries()) yield name }
  *values(): IterableIterator<string> { for (const [, value] of this.entries()) yield value }
  [Symbol.iterator](): IterableIterator<[string, string]> { return this.entries() }
  set(): never { throw new TypeError('The headers of a response are immutable') }
  append(): never { throw new TypeError('The headers of a response are immutable') }
  delete(): never { throw new TypeError('The headers of a response are immutable') }
}

/**
 * The body of a {@link NodeResponse}, which is its own reader: chunks as the socket delivers
 * them, the socket paused while {@link HIGH_WATER_CHUNKS} wait unread. A body that breaks off
 * (the connection closed before its end) rejects the next read, as fetch's does; `cancel` closes
 * the connection.
 */
class NodeBody {
  readonly #message: IncomingMessage
  /** Chunks delivered and not yet read. */
  readonly #chunks: Uint8Array[] = []
  /** Set once the body ended, was cancelled or broke. */
  #isDone = false
  #error: unknown
  /** The read waiting for the next chunk. */
  #waiting: { resolve: (result: ReadableStreamReadResult<Uint8Array>) => void; reject: (error: unknown) => void } | undefined
  isUsed = false

  constructor(message: IncomingMessage, signal: AbortSignal | undefined, done: () => void) {
    this.#message = message
    message.on('data', (chunk: Buffer) => {
      const waiting = this.#waiting
      if (waiting !== undefined) { this.#waiting = undefined; waiting.resolve({ done: false, value: chunk }); return }
      this.#chunks.push(chunk)
      if (this.#chunks.length >= HIGH_WATER_CHUNKS) message.pause()
    })
    message.once('end', () => { done(); this.#finish(undefined) })
    // A body that breaks off fails as fetch's does: TypeError 'terminated', with what the socket said as its cause.
    const brokeOff = (cause?: unknown) => this.#finish(signal?.aborted ? abortReason(signal) : new TypeError('terminated: the connection closed before the body ended', { cause }))
    message.on('error', brokeOff)
    message.once('close', () => {
      done()
      if (!message.complete) brokeOff()
    })
  }

  /** Ends the body: reads after the buffered chunks see `error`, or the end. */
  #finish(error: unknown): void {
    if (this.#isDone) return
    this.#isDone = true
    this.#error = error
    const waiting = this.#waiting
    this.#waiting = undefined
    if (waiting === undefined) return
    if (error === undefined) waiting.resolve({ done: true, value: undefined })
    else waiting.reject(error)
  }

  getReader(): this {
    this.isUsed = true
    return this
  }

  read(): Promise<ReadableStreamReadResult<Uint8Array>> {
    const chunk = this.#chunks.shift()
    if (chunk !== undefined) {
      if (this.#chunks.length === 0 && this.#message.isPaused() && !this.#isDone) this.#message.resume()
      return Promise.resolve({ done: false, value: chunk })
    }
    if (this.#isDone) return this.#error === undefined ? Promise.resolve({ done: true, value: undefined }) : Promise.reject(this.#error)
    return new Promise((resolve, reject) => { this.#waiting = { resolve, reject } })
  }

  cancel(): Promise<void> {
    this.#chunks.length = 0
    this.#finish(undefined)
    // A body already read to its end gave its socket back to the agent: nothing to close.
    if (!this.#message.complete) this.#message.destroy()
    return Promise.resolve()
  }

  releaseLock(): void {}
}
