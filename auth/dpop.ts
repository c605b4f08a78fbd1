/**
 * DPoP on the resource server (RFC 9449 §7): a sender-constrained access token comes as
 * `Authorization: DPoP <token>` with a `DPoP` proof, a JWT signed by the client's key that names
 * this request (method and URL), the token (`ath`) and a fresh `jti`. The token's `cnf.jkt` must
 * be that key's thumbprint, so a stolen token is useless without the key.
 */
import { calculateJwkThumbprint, decodeProtectedHeader, importJWK, jwtVerify, type JWK } from 'jose'
import { base64url } from '../lib/base64url.ts'
import { memoryReplayCache, type ReplayCache } from '../lib/replay-cache.ts'

/** Options of DPoP checking (bearerAuth's `dpop`). */
export interface DpopOptions {
  /** Proof signature algorithms accepted (default ES256, ES384, EdDSA, RS256, PS256). */
  algorithms?: readonly string[]
  /**
   * How far a proof's `iat` may be from now, in seconds (default 300). A proof is remembered
   * against replay until its `iat` plus this, the last moment it could be accepted.
   */
  maxAgeSec?: number
  /**
   * Proof ids the default (in-memory) replay cache holds at once (default 100,000). Past it a new
   * proof is refused with 503 and Retry-After, never by forgetting one that could still replay.
   * Ignored with `replayCache`.
   */
  maxReplayEntries?: number
  /**
   * Proof ids of one DPoP key the default (in-memory) replay cache holds at once (default 1,000):
   * past it that key's next proof is refused with 429 and Retry-After (until its oldest id
   * expires), and every other key is still served, so one client cannot fill the cache for all.
   * A key is one client's: a token is bound to it (`cnf.jkt`) by the authorization server, so a
   * fresh key takes a fresh token. At the default `maxAgeSec` a key may send 1,000 proofs in any
   * 5 minutes (3.3 a second on average). Ignored with `replayCache` (give that one its own
   * `maxEntriesPerKey`).
   */
  maxReplayEntriesPerKey?: number
  /**
   * Where proof ids are remembered (default: this process's memory, `maxReplayEntries` of them).
   * Several instances behind one endpoint must share one, or a proof used on one is accepted by
   * the next: `redisReplayCache(redis)` from `rxmcp/transports/redis` (or `redisScaleOut`'s
   * `dpopReplayCache`).
   */
  replayCache?: ReplayCache
}

/** Defaults of {@link DpopOptions}. */
export const DPOP_DEFAULTS = { algorithms: ['ES256', 'ES384', 'EdDSA', 'RS256', 'PS256'], maxAgeSec: 300, maxReplayEntries: 100_000, maxReplayEntriesPerKey: 1_000 } as const

/** Why a proof was refused (never sent to the client in detail). */
export class DpopProofError extends Error {
  override readonly name = 'DpopProofError'
}

/** A valid proof that cannot be accepted now: the replay cache is full (answered 503 with Retry-After). */
export class DpopReplayCacheFullError extends Error {
  override readonly name = 'DpopReplayCacheFullError'
  constructor(readonly retryAfterMs: number) {
    super('The DPoP replay cache is full')
  }
}

/**
 * A valid proof that cannot be accepted now: its key holds its share of the replay cache
 * (answered 429 with Retry-After; other keys are served).
 */
export class DpopKeyQuotaError extends Error {
  override readonly name = 'DpopKeyQuotaError'
  constructor(readonly retryAfterMs: number) {
    super('The DPoP key has too many proofs in the replay cache')
  }
}

/**
 * Checks DPoP proofs, remembering each (by its key and `jti`) in a replay cache until its `iat`
 * plus `maxAgeSec`, so none is used twice.
 */
export class DpopVerifier {
  readonly algorithms: readonly string[]
  readonly #maxAgeSec: number
  readonly #replays: ReplayCache

  /** @param now the clock of the default replay cache (bearerAuth's) */
  constructor(options: DpopOptions = {}, now: () => number = Date.now) {
    this.algorithms = options.algorithms ?? DPOP_DEFAULTS.algorithms
    this.#maxAgeSec = options.maxAgeSec ?? DPOP_DEFAULTS.maxAgeSec
    this.#replays = options.replayCache ?? memoryReplayCache({
      maxEntries: options.maxReplayEntries ?? DPOP_DEFAULTS.maxReplayEntries,
      maxEntriesPerKey: options.maxReplayEntriesPerKey ?? DPOP_DEFAULTS.maxReplayEntriesPerKey,
      now,
    })
  }

  /**
   * Verifies `proof` for a request (`method`, `url` without query) carrying `accessToken` bound to
   * the key of thumbprint `boundTo` (the token's `cnf.jkt`), and only then remembers it, so a
   * proof that fails any check takes no room in the replay cache. Throws {@link DpopProofError}
   * for a bad or replayed proof, {@link DpopKeyQuotaError} when its key holds its share of the
   * replay cache, {@link DpopReplayCacheFullError} when the cache is full, and the replay cache's
   * own error when it cannot be asked.
   */
  async verify(proof: string, method: string, url: string, accessToken: string, boundTo: unknown, now: number): Promise<void> {
    let header: ReturnType<typeof decodeProtectedHeader>
    try { header = decodeProtectedHeader(proof) } catch { throw new DpopProofError('malformed proof') }
    if (header.typ !== 'dpop+jwt' || typeof header.alg !== 'string' || !this.algorithms.includes(header.alg)) throw new DpopProofError('proof type or algorithm')
    const jwk = header.jwk as JWK | undefined
    if (jwk === undefined || typeof jwk !== 'object' || 'd' in jwk) throw new DpopProofError('proof key')
    let payload: Record<string, unknown>
    try {
      const key = await importJWK(jwk, header.alg)
      ;({ payload } = await jwtVerify(proof, key, { typ: 'dpop+jwt', algorithms: [...this.algorithms], currentDate: new Date(now) }))
    } catch { throw new DpopProofError('proof signature') }
    if (payload.htm !== method) throw new DpopProofError('htm')
    if (typeof payload.htu !== 'string' || stripQuery(payload.htu) !== url) throw new DpopProofError('htu')
    if (typeof payload.iat !== 'number' || !Number.isFinite(payload.iat) || Math.abs(payload.iat - now / 1000) > this.#maxAgeSec) throw new DpopProofError('iat')
    if (typeof payload.jti !== 'string' || payload.jti.length === 0 || payload.jti.length > 256) throw new DpopProofError('jti')
    if (payload.ath !== await sha256Base64Url(accessToken)) throw new DpopProofError('ath')
    const thumbprint = await calculateJwkThumbprint(jwk, 'sha256')
    if (thumbprint !== boundTo) throw new DpopProofError('cnf.jkt')
    // RFC 9449 §11.1: a proof is accepted until |iat - now| passes maxAgeSec, so that is how long
    // it is remembered (a proof dated ahead is remembered longer). Keyed by the key and the jti, in
    // a fixed size: one client's choice of jti cannot collide with another's proofs. It counts
    // against its key's share (the thumbprint: one client's key), so one client cannot fill it.
    const verdict = await this.#replays.remember(await sha256Base64Url(`${thumbprint}.${payload.jti}`), (payload.iat + this.#maxAgeSec) * 1000 + 1, thumbprint)
    if (verdict.type === 'replayed') throw new DpopProofError('replayed proof')
    if (verdict.type === 'over-quota') throw new DpopKeyQuotaError(verdict.retryAfterMs)
    if (verdict.type === 'full') throw new DpopReplayCacheFullError(verdict.retryAfterMs)
  }
}

function stripQuery(url: string): string {
  try {
    const parsed = new URL(url)
    return `${parsed.origin}${parsed.pathname}`
  } catch { return '' }
}

async function sha256Base64Url(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)))
  return base64url(digest)
}
