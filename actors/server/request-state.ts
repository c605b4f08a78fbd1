/**
 * The `requestState` of MRTR rounds (MCP 2026-07-28, basic/patterns/mrtr): what a server needs
 * to go on with a request on its retry, carried by the client. The client can read and change it,
 * so it is attacker-controlled input: sealed with HMAC-SHA256 under a server key, bound to the
 * principal, the method and a digest of the request's parameters, and given an expiry. Web Crypto
 * only, so it runs wherever the server does (Node, workers, browsers).
 */
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { base64url, bytesOfBase64url } from '../../lib/base64url.ts'

/** What a round carries to the next one. */
export interface RoundState {
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

  /** The sealed form of a state that expires after the codec's TTL. */
  async seal(state: Omit<RoundState, 'expires'>): Promise<string> {
    const payload = `${VERSION}.${base64url(encoder.encode(JSON.stringify({ ...state, expires: this.#now() + this.#ttlMs })))}`
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
