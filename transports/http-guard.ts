import { principalKey, type Authenticator } from '../lib/auth.ts'
import { ErrorCode } from '../lib/jsonrpc/errors.ts'
import { TokenBuckets, type TokenBucketOptions } from '../lib/token-bucket.ts'
import { replyError, type Exchange, type RefusedIds } from './http-exchange.ts'

/**
 * What the HTTP listener checks about who is calling, before the protocol sees a request: the
 * authenticator's documents and verdicts (401/403), and the request budget per caller (429). Each
 * check answers the exchange itself when it refuses, and returns false.
 */
export class HttpGuard {
  readonly #auth: Authenticator | undefined
  readonly #buckets: TokenBuckets | undefined

  constructor(auth: Authenticator | undefined, rateLimit: TokenBucketOptions | undefined, now: () => number) {
    this.#auth = auth
    this.#buckets = rateLimit === undefined ? undefined : new TokenBuckets({ now, ...rateLimit })
  }

  /**
   * Serves the authenticator's own documents (false: answered), then, on a guarded path, verifies
   * the credentials: the principal goes on the exchange, or the refusal is answered.
   */
  async admit(exchange: Exchange, isGuarded: boolean): Promise<boolean> {
    const auth = this.#auth
    if (auth === undefined) return true
    const document = auth.serve?.(exchange)
    if (document !== undefined) {
      exchange.reply(document.status, { ...document.headers }, document.body)
      return false
    }
    if (!isGuarded) return true
    const outcome = await auth.authenticate(exchange)
    if (outcome.type === 'refuse') {
      exchange.reply(outcome.answer.status, { ...outcome.answer.headers }, outcome.answer.body)
      return false
    }
    exchange.principal = outcome.principal
    return true
  }

  /** False once a POST whose principal lacks scopes its payload needs was answered 403 (step-up). */
  authorize(exchange: Exchange, payload: unknown): boolean {
    const auth = this.#auth
    if (auth?.authorize === undefined || exchange.principal === undefined) return true
    const refusal = auth.authorize(exchange.principal, payload, exchange)
    if (refusal === undefined) return true
    exchange.reply(refusal.status, { ...refusal.headers }, refusal.body)
    return false
  }

  /** True when payloads must be read before they are handed on (scopes per operation, or budgets per request). */
  get readsPayloads(): boolean { return this.#auth?.authorize !== undefined || this.#buckets !== undefined }

  /** False once a POST over its caller's budget (one token per request) was answered 429 with Retry-After. */
  withinBudget(exchange: Exchange, requests: number, answers: RefusedIds): boolean {
    if (this.#buckets === undefined || requests === 0) return true
    const key = principalKey(exchange.principal) || `address:${exchange.remoteAddress ?? ''}`
    const waitMs = this.#buckets.take(key, requests)
    if (waitMs === 0) return true
    const seconds = Math.max(1, Math.ceil(waitMs / 1000))
    replyError(exchange, 429, ErrorCode.RateLimited, `Too many requests: try again in ${seconds} s`, { 'retry-after': String(seconds) }, answers)
    return false
  }

  /** True when the exchange's principal is the one that made a session (`principalKey` of both). */
  owns(sessionPrincipal: string, exchange: Exchange): boolean {
    return sessionPrincipal === principalKey(exchange.principal)
  }
}
