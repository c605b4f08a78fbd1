/**
 * DPoP on the resource server (RFC 9449 §7): a sender-constrained access token comes as
 * `Authorization: DPoP <token>` with a `DPoP` proof, a JWT signed by the client's key that names
 * this request (method and URL), the token (`ath`) and a fresh `jti`. The token's `cnf.jkt` must
 * be that key's thumbprint, so a stolen token is useless without the key.
 */
import { calculateJwkThumbprint, decodeProtectedHeader, importJWK, jwtVerify, type JWK } from 'jose'
import { base64url } from '../lib/base64url.ts'

/** Options of DPoP checking (bearerAuth's `dpop`). */
export interface DpopOptions {
  /** Proof signature algorithms accepted (default ES256, ES384, EdDSA, RS256, PS256). */
  algorithms?: readonly string[]
  /** How far a proof's `iat` may be from now, in seconds (default 300). */
  maxAgeSec?: number
  /** Proof ids remembered against replay (default 10,000). */
  maxReplayEntries?: number
}

export const DPOP_DEFAULTS = { algorithms: ['ES256', 'ES384', 'EdDSA', 'RS256', 'PS256'], maxAgeSec: 300, maxReplayEntries: 10_000 } as const

/** Why a proof was refused (never sent to the client in detail). */
export class DpopProofError extends Error {
  override readonly name = 'DpopProofError'
}

/** Checks DPoP proofs, remembering their ids for `maxAgeSec` so none is used twice. */
export class DpopVerifier {
  readonly algorithms: readonly string[]
  readonly #maxAgeSec: number
  readonly #maxEntries: number
  /** jti -> when it may be forgotten (ms), oldest first. */
  readonly #seen = new Map<string, number>()

  constructor(options: DpopOptions = {}) {
    this.algorithms = options.algorithms ?? DPOP_DEFAULTS.algorithms
    this.#maxAgeSec = options.maxAgeSec ?? DPOP_DEFAULTS.maxAgeSec
    this.#maxEntries = options.maxReplayEntries ?? DPOP_DEFAULTS.maxReplayEntries
  }

  /**
   * Verifies `proof` for a request (`method`, `url` without query) carrying `accessToken`, and
   * returns the thumbprint of the key that signed it, to compare with the token's `cnf.jkt`.
   */
  async verify(proof: string, method: string, url: string, accessToken: string, now: number): Promise<string> {
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
    if (typeof payload.iat !== 'number' || Math.abs(payload.iat - now / 1000) > this.#maxAgeSec) throw new DpopProofError('iat')
    if (typeof payload.jti !== 'string' || payload.jti.length === 0 || payload.jti.length > 256) throw new DpopProofError('jti')
    if (payload.ath !== await sha256Base64Url(accessToken)) throw new DpopProofError('ath')
    this.#remember(payload.jti, now)
    return calculateJwkThumbprint(jwk, 'sha256')
  }

  #remember(jti: string, now: number): void {
    for (const [id, until] of this.#seen) {
      if (until > now && this.#seen.size < this.#maxEntries) break
      this.#seen.delete(id)
    }
    if (this.#seen.has(jti)) throw new DpopProofError('replayed proof')
    this.#seen.set(jti, now + this.#maxAgeSec * 1000)
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
