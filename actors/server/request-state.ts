/**
 * The `requestState` of MRTR rounds (MCP 2026-07-28, basic/patterns/mrtr): what a server needs
 * to go on with a request on its retry, carried by the client. The client can read and change it,
 * so it is attacker-controlled input: sealed with HMAC-SHA256 under a server key, bound to the
 * principal, the method and a digest of the request's parameters, and given an expiry. Web Crypto
 * only, so it runs wherever the server does (Node, workers, browsers).
 *
 * Those bind a state to one request of one principal for a while, but do not make it single-use
 * (the spec's warning): each state also carries a random id, and a {@link RequestStateStore}
 * remembers the ids used until they expire, so a state continues its request once.
 */
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { RateLimitedError } from '../../lib/jsonrpc/errors.ts'
import { base64url, bytesOfBase64url } from '../../lib/base64url.ts'
import type { RequestStateStore } from '../../lib/request-state-store.ts'

/** What a round carries to the next one. */
export interface RoundState {
  /** Random (128 bits), made when the state is sealed: what a {@link RequestStateStore} remembers it by. */
  readonly id: string
  /** The method of the request the state belongs to. */
  readonly method: string
  /** SHA-256 of the request's parameters (without `_meta`, `inputResponses`, `requestState`). */
  readonly digest: string
  /** Who the request was made by ('' without authentication). */
  readonly principal: string
  /** Ms since the epoch after which the state is refused. */
  readonly expires: number
  /** The input requests of the last round, key to method: only their answers are taken. */
  readonly asked: Readonly<Record<string, string>>
  /** Every answer so far, key to result (earlier rounds' answers are not sent again by the client). */
  readonly answers: Readonly<Record<string, unknown>>
  /** What the handler chose to carry (`ctx.setRequestState`). */
  readonly data?: unknown
}

/** Why a state was refused. */
export type OpenFailure = 'malformed' | 'forged' | 'expired'

const VERSION = 'v1'
const encoder = new TextEncoder()

/** Seals and opens round states under one key. */
export class RequestStateCodec {
  readonly #key: Promise<CryptoKey>
  readonly #ttlMs: number
  readonly #now: () => number

  /**
   * @param key the HMAC key (at least 32 bytes of secret; a string is taken as UTF-8). Default: 32
   *   random bytes per server, so a state only opens on the process that sealed it: give every
   *   instance of a scaled-out server the same key.
   */
  constructor(key: string | Uint8Array | undefined, ttlMs: number, now: () => number = Date.now) {
    const raw = key === undefined ? crypto.getRandomValues(new Uint8Array(32)) : typeof key === 'string' ? encoder.encode(key) : key
    if (raw.byteLength < 16) throw new TypeError('requestStateKey must be at least 16 bytes (32 recommended)')
    this.#key = crypto.subtle.importKey('raw', raw as Uint8Array<ArrayBuffer>, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify'])
    this.#ttlMs = ttlMs
    this.#now = now
  }

  /** The sealed form of a state, given a fresh id, that expires after the codec's TTL. */
  async seal(state: Omit<RoundState, 'expires' | 'id'>): Promise<string> {
    const id = base64url(crypto.getRandomValues(new Uint8Array(16)))
    const payload = `${VERSION}.${base64url(encoder.encode(JSON.stringify({ id, ...state, expires: this.#now() + this.#ttlMs })))}`
    const mac = new Uint8Array(await crypto.subtle.sign('HMAC', await this.#key, encoder.encode(payload)))
    return `${payload}.${base64url(mac)}`
  }

  /** The state a sealed string holds, or why it is refused. */
  async open(sealed: unknown): Promise<RoundState | OpenFailure> {
    if (typeof sealed !== 'string' || sealed.length > 8 * 1024 * 1024) return 'malformed'
    const parts = sealed.split('.')
    if (parts.length !== 3 || parts[0] !== VERSION) return 'malformed'
    const mac = bytesOfBase64url(parts[2]!)
    if (mac === undefined) return 'malformed'
    const isAuthentic = await crypto.subtle.verify('HMAC', await this.#key, mac as Uint8Array<ArrayBuffer>, encoder.encode(`${parts[0]}.${parts[1]}`))
    if (!isAuthentic) return 'forged'
    const body = bytesOfBase64url(parts[1]!)
    let state: RoundState
    try {
      state = JSON.parse(new TextDecoder().decode(body)) as RoundState
    } catch {
      return 'malformed'
    }
    if (typeof state !== 'object' || state === null || typeof state.id !== 'string') return 'malformed'
    if (typeof state.expires !== 'number' || this.#now() > state.expires) return 'expired'
    return state
  }
}

/**
 * The digest a state is bound to: SHA-256 over the parameters in a canonical form (keys sorted),
 * leaving out what changes between rounds or is not the request's own (`_meta`, `inputResponses`,
 * `requestState`).
 */
export async function paramsDigest(params: JsonObject | undefined): Promise<string> {
  const { _meta: _m, inputResponses: _i, requestState: _s, ...own } = params ?? {}
  const hash = await crypto.subtle.digest('SHA-256', encoder.encode(canonicalJson(own)))
  return base64url(new Uint8Array(hash))
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort()
    return `{${keys.map(key => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

/** The store contract lives in lib/ (the Redis store in transports/ implements it too); re-exported for the server's imports. */
export type { RequestStateStore } from '../../lib/request-state-store.ts'

/** DEFAULTS of {@link memoryRequestStateStore}. */
export const REQUEST_STATE_STORE_DEFAULTS = { maxEntries: 100_000 } as const

/**
 * The default {@link RequestStateStore}: used ids in memory until their states expire, at most
 * `maxEntries` (default 100,000, a few MiB). An unexpired id is never dropped to make room, since
 * that would let its state be used again: when the store is full, `claim` throws
 * `RateLimitedError` (-31029, `data.retryAfterMs` until the first id expires) and the retry is
 * refused.
 */
export function memoryRequestStateStore(options: { maxEntries?: number; now?: () => number } = {}): RequestStateStore {
  return new MemoryRequestStateStore(options.maxEntries ?? REQUEST_STATE_STORE_DEFAULTS.maxEntries, options.now ?? Date.now)
}

class MemoryRequestStateStore implements RequestStateStore {
  /** Used ids, to their states' expiry. */
  readonly #expiries = new Map<string, number>()
  /** The same ids as a binary min-heap on expiry (parallel arrays), to drop expired ones first. */
  readonly #heapExpiry: number[] = []
  readonly #heapId: string[] = []

  constructor(readonly maxEntries: number, readonly now: () => number) {}

  claim(id: string, expiresAt: number): boolean {
    const now = this.now()
    // A state is refused as expired once its clock passes `expires`: its id may go then.
    while (this.#heapExpiry.length > 0 && this.#heapExpiry[0]! < now) this.#expiries.delete(this.#pop())
    if (this.#expiries.has(id)) return false
    if (this.#expiries.size >= this.maxEntries) {
      throw new RateLimitedError('Too many requests: the server remembers as many used requestStates as it can; retry later', { retryAfterMs: Math.max(1, this.#heapExpiry[0]! - now + 1) })
    }
    this.#expiries.set(id, expiresAt)
    this.#push(expiresAt, id)
    return true
  }

  #push(expiry: number, id: string): void {
    const expiries = this.#heapExpiry
    const ids = this.#heapId
    let at = expiries.length
    expiries.push(expiry)
    ids.push(id)
    while (at > 0) {
      const parent = (at - 1) >> 1
      if (expiries[parent]! <= expiry) break
      expiries[at] = expiries[parent]!
      ids[at] = ids[parent]!
      at = parent
    }
    expiries[at] = expiry
    ids[at] = id
  }

  #pop(): string {
    const expiries = this.#heapExpiry
    const ids = this.#heapId
    const top = ids[0]!
    const lastExpiry = expiries.pop()!
    const lastId = ids.pop()!
    if (expiries.length === 0) return top
    let at = 0
    for (;;) {
      let child = 2 * at + 1
      if (child >= expiries.length) break
      if (child + 1 < expiries.length && expiries[child + 1]! < expiries[child]!) child++
      if (expiries[child]! >= lastExpiry) break
      expiries[at] = expiries[child]!
      ids[at] = ids[child]!
      at = child
    }
    expiries[at] = lastExpiry
    ids[at] = lastId
    return top
  }
}
