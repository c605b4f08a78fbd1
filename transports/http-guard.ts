import { principalKey, type Authenticator } from '../lib/auth.ts'
import { ErrorCode } from '../lib/jsonrpc/errors.ts'
import { assertTokenBucketOptions, memoryRateLimiterStore, type RateLimiter, type RateLimiterStore, type TokenBucketOptions } from '../lib/token-bucket.ts'
import { JSON_HEADERS, replyError, type Exchange, type RefusedIds } from './http-exchange.ts'

/** What a listener's `clientAddress` option reads of a request: its socket's address and its headers. */
export interface ClientRequest {
  /** The address of the peer of the socket (a reverse proxy, when there is one). */
  readonly remoteAddress?: string
  /** A header, case-insensitive name; null when absent. */
  header(name: string): string | null
}

/** The guard's share of the listener's options. */
export interface HttpGuardOptions {
  auth?: Authenticator | undefined
  rateLimit?: TokenBucketOptions | undefined
  failedAuthLimit?: TokenBucketOptions | false | undefined
  rateLimiterStore?: RateLimiterStore | undefined
  clientAddress?: ((request: ClientRequest) => string | undefined) | undefined
  now: () => number
}

/**
 * The budget of failed authentications per client address when the listener has `auth` and no
 * `failedAuthLimit` of its own: 60 at once, then one a second. A client's normal failures (the
 * first request of an OAuth discovery, a token that just expired) are a few a minute; a flood of
 * invalid tokens is answered 429 after 60, and costs the verifier at most one verification a second.
 */
export const DEFAULT_FAILED_AUTH_LIMIT: Readonly<TokenBucketOptions> = { capacity: 60, refillPerSecond: 1 }

/** Addresses remembered as over their failed-authentication budget, at most (least recently blocked forgotten first). */
const MAX_BLOCKED_ADDRESSES = 10_000

/**
 * What the HTTP listener checks about who is calling, before the protocol sees a request: the
 * authenticator's documents and verdicts (401/403), the budget of failed authentications per client
 * address, and the request budget per caller (429). Each check answers the exchange itself when it
 * refuses, and returns false.
 */
export class HttpGuard {
  readonly #auth: Authenticator | undefined
  /** The `rateLimit` budget (one token per request of a POST), or undefined without one. */
  readonly #requests: RateLimiter | undefined
  /** The failed-authentication budget (one token per refused credential), or undefined without `auth`. */
  readonly #failures: RateLimiter | undefined
  readonly #clientAddress: ((request: ClientRequest) => string | undefined) | undefined
  readonly #now: () => number
  /**
   * Addresses over their failed-authentication budget and until when (listener clock): their
   * requests are refused 429 before any verification, so a flood costs the verifier nothing. Kept
   * here even with a shared store, so checking it never waits for Redis.
   */
  readonly #blocked = new Map<string, number>()

  constructor(options: HttpGuardOptions) {
    const { auth, rateLimit, now } = options
    const store = options.rateLimiterStore ?? memoryRateLimiterStore
    this.#auth = auth
    this.#now = now
    this.#clientAddress = options.clientAddress
    if (rateLimit !== undefined) assertTokenBucketOptions(rateLimit)
    this.#requests = rateLimit === undefined ? undefined : store.limiter('requests', { now, ...rateLimit })
    const failed = options.failedAuthLimit ?? DEFAULT_FAILED_AUTH_LIMIT
    if (failed !== false) assertTokenBucketOptions(failed)
    this.#failures = auth === undefined || failed === false ? undefined : store.limiter('auth-failures', { now, ...failed })
  }

  /**
   * Serves the authenticator's own documents (false: answered), then, on a guarded path, verifies
   * the credentials: the principal goes on the exchange, or the refusal is answered. A refusal with a
   * 4xx status (401: a missing, invalid or expired credential) costs the client's address a token of
   * the failed-authentication budget; an address that has none left is answered 429 with
   * Retry-After, and is not verified at all until its bucket has a token again.
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
    // A client whose address is unknown (a web Request carries none) is not budgeted by address:
    // one bucket for all of them would let one client lock every other out.
    const address = this.#failures === undefined ? undefined : this.addressKey(exchange)
    const failures = address === undefined ? undefined : this.#failures
    if (address !== undefined && this.#isBlocked(exchange, address)) return false
    const outcome = await auth.authenticate(exchange)
    if (outcome.type === 'refuse') {
      // Every credential refused as the client's fault (4xx) is charged, a missing one included: it
      // is the same verification. A 5xx (the verifier cannot decide now) is the server's, not charged.
      const isClientFault = outcome.answer.status < 500
      const wait = failures === undefined || !isClientFault ? 0 : await failures.take(address!)
      if (wait > 0) {
        this.#block(address!, wait)
        return this.#refuseFailures(exchange, wait)
      }
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
  get readsPayloads(): boolean { return this.#auth?.authorize !== undefined || this.#requests !== undefined }

  /**
   * False once a POST over its caller's budget (one token per request) was answered 429 with
   * Retry-After. Answers synchronously unless the budget is kept in a shared store (Redis): without
   * one, the request path awaits nothing here.
   */
  withinBudget(exchange: Exchange, requests: number, answers: RefusedIds): boolean | Promise<boolean> {
    if (this.#requests === undefined || requests === 0) return true
    // Without a principal or an address, callers share one bucket: the limit the operator asked for still holds.
    const wait = this.#requests.take(this.clientKey(exchange) ?? 'address:', requests)
    if (typeof wait === 'number') return this.#answerBudget(exchange, wait, answers)
    return wait.then(ms => this.#answerBudget(exchange, ms, answers))
  }

  /** True when the exchange's principal is the one that made a session (`principalKey` of both). */
  owns(sessionPrincipal: string, exchange: Exchange): boolean {
    return sessionPrincipal === principalKey(exchange.principal)
  }

  /**
   * Whose budgets a request spends: its principal's (`principalKey`) once authenticated, else its
   * client address's (see {@link addressKey}); undefined when neither is known (a web Request
   * without `clientAddress`): such a client is held to the listener's totals only.
   */
  clientKey(exchange: Exchange): string | undefined {
    return principalKey(exchange.principal) || this.addressKey(exchange)
  }

  /**
   * The client address of a request as a budget key: the listener's `clientAddress` (behind a
   * trusted proxy), else the socket's. IPv6 addresses count by their /64 prefix (one host is
   * usually given a whole /64, so its addresses are one client); an IPv4-mapped one is its IPv4.
   * Undefined when the address is unknown.
   */
  addressKey(exchange: ClientRequest): string | undefined {
    const key = clientAddressKey(this.clientAddress(exchange))
    return key === '' ? undefined : `address:${key}`
  }

  /**
   * The client's address: the listener's `clientAddress` (behind a trusted proxy), else the
   * socket's. What sessions and exchanges report as their `remoteAddress`, for every limit per address.
   */
  clientAddress(exchange: ClientRequest): string | undefined {
    return this.#clientAddress === undefined ? exchange.remoteAddress : this.#clientAddress(exchange) ?? exchange.remoteAddress
  }

  #answerBudget(exchange: Exchange, waitMs: number, answers: RefusedIds): boolean {
    if (waitMs === 0) return true
    const seconds = retryAfterSeconds(waitMs)
    replyError(exchange, 429, ErrorCode.RateLimited, `Too many requests: try again in ${seconds} s`, { 'retry-after': String(seconds) }, answers)
    return false
  }

  /** True once a request from an address over its failed-authentication budget was answered 429. */
  #isBlocked(exchange: Exchange, address: string): boolean {
    const until = this.#blocked.get(address)
    if (until === undefined) return false
    const wait = until - this.#now()
    if (wait <= 0) { this.#blocked.delete(address); return false }
    this.#refuseFailures(exchange, wait)
    return true
  }

  #block(address: string, waitMs: number): void {
    this.#blocked.delete(address)
    if (this.#blocked.size >= MAX_BLOCKED_ADDRESSES) this.#blocked.delete(this.#blocked.keys().next().value!)
    this.#blocked.set(address, this.#now() + waitMs)
  }

  #refuseFailures(exchange: Exchange, waitMs: number): false {
    const seconds = retryAfterSeconds(waitMs)
    const body = { jsonrpc: '2.0', id: null, error: { code: ErrorCode.RateLimited, message: `Too many failed authentications: try again in ${seconds} s` } }
    exchange.reply(429, { ...JSON_HEADERS, 'retry-after': String(seconds) }, JSON.stringify(body))
    return false
  }
}

/** Retry-After in whole seconds, at least 1. */
export function retryAfterSeconds(waitMs: number): number {
  return Math.max(1, Math.ceil(waitMs / 1000))
}

/**
 * A client address as a budget key: an IPv4 address as it is; an IPv4-mapped IPv6 address as its
 * IPv4; any other IPv6 address as its /64 prefix (zone dropped), since a host gets a whole /64 and
 * could otherwise spend a fresh budget per address; '' when unknown.
 */
export function clientAddressKey(address: string | undefined): string {
  if (address === undefined || address === '') return ''
  if (!address.includes(':')) return address
  const lower = address.toLowerCase().replace(/%.*$/, '')
  const mapped = /^(?:::|(?:0{1,4}:){5})ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(lower)
  if (mapped !== null) return mapped[1]!
  const [head = '', tail] = lower.split('::', 2)
  const left = head === '' ? [] : head.split(':')
  const right = tail === undefined || tail === '' ? [] : tail.split(':')
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right]
  return `${groups.slice(0, 4).map(group => group.replace(/^0+(?=.)/, '')).join(':')}::/64`
}
