/**
 * What the OAuth client may reach, and how much of an answer it reads. Every URL it requests
 * (Protected Resource Metadata, authorization server metadata, registration, token, an enterprise
 * IdP) or hands to the browser (the authorization endpoint) comes from the MCP server or from
 * documents it points to, so none of them is trusted:
 *
 *   url ──> scheme: http(s) ──────────────────────────────────────────── else EndpointRefused
 *       ──> host: the literal's kind, else (with a lookup) every address ─ public, allowed host,
 *           or loopback while the MCP server is on loopback ────────────── else EndpointRefused
 *       ──> http only to a loopback literal (or allowInsecureRequests) ─── else EndpointRefused
 *       ──> fetch (redirect: manual; GET redirects followed, each hop checked again)
 *       ──> body read whole, at most maxResponseBytes ─────────────────── else FrameTooLargeError
 *       (all of it within timeoutMs) ──────────────────────────────────── else TimeoutError
 */
import { FrameTooLargeError, TimeoutError } from '../../lib/jsonrpc/errors.ts'
import { addressKind, hostKind, normalizeHost, type AddressKind } from './address.ts'
import { AuthorizationError, AuthorizationErrorCode } from './errors.ts'
import { discardBody } from '../../lib/http/discard-body.ts'

/** Resolves a host name to its IP addresses, as `dns.lookup(name, { all: true })` does. */
export type HostLookup = (hostname: string) => Promise<readonly string[]>

/** The limits of the OAuth client's own requests (see oauthFetch's options of the same names). */
export interface EndpointPolicy {
  /** http:// beyond loopback hosts. */
  allowInsecureRequests: boolean
  /** true: any address; a list: these hosts (names or IP literals), whatever they resolve to. */
  allowPrivateNetwork: boolean | readonly string[]
  /** Resolves names, so that their addresses are checked too; undefined: the literal only. */
  lookup: HostLookup | undefined
  /** Bytes of an answer read at most. */
  maxResponseBytes: number
  /** Ms for one request: checks, connection, redirects and the whole body. */
  timeoutMs: number
  /** Redirects followed for one GET. */
  maxRedirects: number
}

/**
 * Refuses (AuthorizationError EndpointRefused) a URL the OAuth client must not request for the
 * MCP server at `serverUrl`: see the module comment. Resolves when it may be requested.
 */
export async function checkEndpoint(url: URL, serverUrl: URL, policy: EndpointPolicy, signal?: AbortSignal): Promise<void> {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw refusal(url, `the scheme ${url.protocol} is not http(s)`)
  const literal = hostKind(url.hostname)
  await checkAddress(url, literal, serverUrl, policy, signal)
  if (url.protocol === 'http:' && literal !== 'loopback' && !policy.allowInsecureRequests) {
    // OAuth 2.1 §1.5: TLS for every endpoint; RFC 8252 §8.3: loopback is the one exception.
    throw refusal(url, 'http:// is allowed for loopback hosts only (allowInsecureRequests allows it)')
  }
}

/** Refuses a host whose literal, or (with a lookup) any of whose addresses, the policy does not allow. */
async function checkAddress(url: URL, literal: AddressKind | undefined, serverUrl: URL, policy: EndpointPolicy, signal: AbortSignal | undefined): Promise<void> {
  const host = normalizeHost(url.hostname)
  const allowed = policy.allowPrivateNetwork
  if (allowed === true || (allowed !== false && allowed.some(entry => normalizeHost(entry) === host))) return
  const isServerOnLoopback = hostKind(serverUrl.hostname) === 'loopback'
  const isReachable = (kind: AddressKind) => kind === 'public' || (kind === 'loopback' && isServerOnLoopback)
  if (literal !== undefined) {
    if (!isReachable(literal)) throw refusal(url, reasonFor(literal, host, isServerOnLoopback))
    return
  }
  if (policy.lookup === undefined) return
  // A name is judged by what it resolves to now. The connection resolves it again, so a name that
  // changes its answer in between (DNS rebinding) is beyond this check: see the lookup option.
  let addresses: readonly string[]
  try {
    addresses = await abortable(policy.lookup(host), signal)
  } catch (error) {
    if (signal?.aborted === true) throw error
    // Unresolvable here: the request fails by itself, or goes through a proxy that resolves it.
    return
  }
  for (const address of addresses) {
    const kind = addressKind(address) ?? 'special'
    if (!isReachable(kind)) throw refusal(url, `${host} resolves to ${reasonFor(kind, address, isServerOnLoopback)}`)
  }
}

/**
 * A fetch for the OAuth client's requests about the MCP server at `serverUrl`: each URL checked
 * by {@link checkEndpoint} before it is requested (redirect hops included), every answer read
 * whole into memory up to `maxResponseBytes` (FrameTooLargeError past it, the stream cancelled),
 * all within `timeoutMs` (TimeoutError, the request aborted). Returns a Response whose body is
 * the bytes read. The caller's signal still aborts it.
 */
export function guardedFetch(baseFetch: typeof fetch, serverUrl: URL, policy: EndpointPolicy): typeof fetch {
  return async (input, init) => {
    const first = new URL(input instanceof Request ? input.url : input instanceof URL ? input.href : input)
    const deadline = new AbortController()
    const timer = setTimeout(() => deadline.abort(new TimeoutError(`no complete answer from ${describe(first)} within ${policy.timeoutMs} ms`, policy.timeoutMs)), policy.timeoutMs)
    const signal = init?.signal == null ? deadline.signal : AbortSignal.any([init.signal, deadline.signal])
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase()
    try {
      let url = first
      let request: RequestInfo | URL = input
      let requestInit: RequestInit = { ...init, redirect: 'manual', signal }
      for (let hops = 0; ; hops++) {
        await checkEndpoint(url, serverUrl, policy, signal)
        const response = await abortable(baseFetch(request, requestInit), signal, late => discardBody(late))
        const location = response.headers.get('location')
        if (REDIRECT_STATUSES.has(response.status) && location !== null && (method === 'GET' || method === 'HEAD')) {
          discardBody(response)
          if (hops >= policy.maxRedirects) throw new AuthorizationError(AuthorizationErrorCode.RequestFailed, `${describe(first)} redirected more than ${policy.maxRedirects} times`)
          url = new URL(location, url)
          request = url
          requestInit = { method, headers: init?.headers, redirect: 'manual', signal }
          continue
        }
        const body = await readCapped(response, policy.maxResponseBytes, url, signal)
        return new Response(NULL_BODY_STATUSES.has(response.status) ? null : body, { status: response.status, statusText: response.statusText, headers: response.headers })
      }
    } catch (error) {
      // Past the deadline, whatever fetch or the stream made of the abort, the caller sees the TimeoutError.
      if (deadline.signal.aborted) throw deadline.signal.reason
      throw error
    } finally {
      clearTimeout(timer)
    }
  }
}

/** The system resolver (node:dns, loaded on first use) where there is one, else undefined (browsers). */
export function systemLookup(): HostLookup | undefined {
  if (typeof process !== 'object' || process.versions?.node === undefined) return undefined
  return async hostname => {
    const { lookup } = await import('node:dns/promises')
    return (await lookup(hostname, { all: true, verbatim: true })).map(entry => entry.address)
  }
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308])
/** Statuses whose Response may not have a body. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304])

/** Reads a body whole; past `limit` bytes (declared or read) the stream is cancelled and FrameTooLargeError thrown. */
async function readCapped(response: Response, limit: number, url: URL, signal: AbortSignal): Promise<Uint8Array<ArrayBuffer>> {
  if (response.body === null) return new Uint8Array(0)
  const tooLarge = (size?: number) => new FrameTooLargeError(limit, `the answer of ${describe(url)} exceeds ${limit} bytes (maxResponseBytes)`, size === undefined ? {} : { size })
  const declared = Number(response.headers.get('content-length') ?? Number.NaN)
  if (declared > limit) {
    void response.body.cancel().catch(() => undefined)
    throw tooLarge(declared)
  }
  const reader = response.body.getReader()
  // A fetch that does not end its stream on abort is ended here (a pending read then settles).
  const onAbort = () => { void reader.cancel(signal.reason).catch(() => undefined) }
  signal.addEventListener('abort', onAbort, { once: true })
  const chunks: Uint8Array[] = []
  let size = 0
  try {
    for (;;) {
      const { done, value } = await reader.read()
      signal.throwIfAborted()
      if (done) break
      size += value.byteLength
      if (size > limit) {
        await reader.cancel().catch(() => undefined)
        throw tooLarge()
      }
      chunks.push(value)
    }
  } finally {
    signal.removeEventListener('abort', onAbort)
    reader.releaseLock()
  }
  const body = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) { body.set(chunk, offset); offset += chunk.byteLength }
  return body
}

/** `promise`, or the signal's reason once it aborts; `onLate` gets a value that came after the abort. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined, onLate?: (value: T) => void): Promise<T> {
  if (signal === undefined) return promise
  if (signal.aborted) {
    promise.then(value => onLate?.(value), () => undefined)
    return Promise.reject(signal.reason)
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(value => {
      signal.removeEventListener('abort', onAbort)
      if (signal.aborted) onLate?.(value)
      else resolve(value)
    }, error => {
      signal.removeEventListener('abort', onAbort)
      reject(error)
    })
  })
}

function refusal(url: URL, reason: string): AuthorizationError {
  return new AuthorizationError(AuthorizationErrorCode.EndpointRefused, `refused to request ${describe(url)}: ${reason}`)
}

function reasonFor(kind: AddressKind, address: string, isServerOnLoopback: boolean): string {
  if (kind === 'loopback' && !isServerOnLoopback) return `the loopback address ${address}, while the MCP server is not on loopback (allowPrivateNetwork allows it)`
  return `${kind === 'special' ? 'the special-purpose' : `the ${kind}`} address ${address} (allowPrivateNetwork allows it)`
}

/** A URL as named in messages: no query or fragment. */
function describe(url: URL): string {
  return `${url.origin}${url.pathname}`
}
