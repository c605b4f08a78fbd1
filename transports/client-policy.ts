/**
 * The per-client policy every listener applies (Streamable HTTP, legacy HTTP+SSE, WebSocket): who
 * a client is (its principal, else its address), its budget of failed authentications per address,
 * and its request budget. Transport-neutral: each listener answers a refusal in its own terms (an
 * HTTP 429, a refused upgrade, a JSON-RPC error on a socket); the rule and the counting are here.
 */
import { principalKey, type Principal } from '../lib/auth.ts'
import { clientAddressKey } from '../lib/client-address.ts'
import { assertTokenBucketOptions, createMemoryRateLimiterStore, type RateLimiter, type RateLimiterStore, type TokenBucketOptions } from '../lib/token-bucket.ts'

/** What a listener's `clientAddress` option reads of a request: its socket's address and its headers. */
export interface ClientRequest {
  /** The address of the peer of the socket (a reverse proxy, when there is one). */
  readonly remoteAddress?: string
  /** A header, case-insensitive name; null when absent. */
  header(name: string): string | null
}

/** The options of a listener that {@link ClientPolicy} reads. */
export interface ClientPolicyOptions {
  /** True when the listener authenticates its clients: only then is the failed-authentication budget kept. */
  authenticates: boolean
  rateLimit?: TokenBucketOptions | undefined
  failedAuthLimit?: TokenBucketOptions | false | undefined
  rateLimiterStore?: RateLimiterStore | undefined
  clientAddress?: ((request: ClientRequest) => string | undefined) | undefined
  now: () => number
}

/**
 * The budget of failed authentications per client address when the listener authenticates and
 * has no `failedAuthLimit` of its own: 60 at once, then one a second. A client's normal failures
 * (the first request of an OAuth discovery, a token that just expired) are a few a minute; a flood
 * of invalid tokens is answered 429 after 60, and costs the verifier at most one verification a second.
 */
export const DEFAULT_FAILED_AUTH_LIMIT: Readonly<TokenBucketOptions> = { capacity: 60, refillPerSecond: 1 }

/** Addresses remembered as over their failed-authentication budget, at most (least recently blocked forgotten first). */
const MAX_BLOCKED_ADDRESSES = 10_000

/**
 * One listener's per-client policy. Keys: a client is its principal (`principalKey`) once
 * authenticated, else its address key (`clientAddressKey`: IPv6 by /64); undefined when neither is
 * known (a web Request without `clientAddress`), and such a client is held to the listener's
 * totals only, since one shared bucket for all of them would let one lock every other out.
 */
export class ClientPolicy {
  /** The `rateLimit` budget (one token per request), or undefined without one. */
  readonly #requests: RateLimiter | undefined
  /** The failed-authentication budget (one token per refused credential), or undefined. */
  readonly #failures: RateLimiter | undefined
  readonly #clientAddress: ((request: ClientRequest) => string | undefined) | undefined
  readonly #now: () => number
  /**
   * Addresses over their failed-authentication budget and until when (listener clock): they are
   * refused before any verification, so a flood costs the verifier nothing. Kept here even with a
   * shared store, so checking it never waits for Redis.
   */
  readonly #blocked = new Map<string, number>()

  constructor(options: ClientPolicyOptions) {
    const { rateLimit, now } = options
    const store = options.rateLimiterStore ?? createMemoryRateLimiterStore()
    this.#now = now
    this.#clientAddress = options.clientAddress
    if (rateLimit !== undefined) assertTokenBucketOptions(rateLimit)
    this.#requests = rateLimit === undefined ? undefined : store.limiter('requests', { now, ...rateLimit })
    const failed = options.failedAuthLimit ?? DEFAULT_FAILED_AUTH_LIMIT
    if (failed !== false) assertTokenBucketOptions(failed)
    this.#failures = !options.authenticates || failed === false ? undefined : store.limiter('auth-failures', { now, ...failed })
  }

  /**
   * The client's address: what the listener's `clientAddress` returns (behind a trusted proxy),
   * else the socket's. What sessions and sockets report as their `remoteAddress`, for every limit
   * per address.
   */
  resolveAddress(request: ClientRequest): string | undefined {
    return this.#clientAddress === undefined ? request.remoteAddress : this.#clientAddress(request) ?? request.remoteAddress
  }

  /** True when failed authentications are budgeted (the listener authenticates, and the budget is not off). */
  get limitsFailures(): boolean { return this.#failures !== undefined }

  /** True when requests are budgeted (`rateLimit`). */
  get limitsRequests(): boolean { return this.#requests !== undefined }

  /**
   * Ms until the address (an {@link addressKey}) may be verified again; 0 when it may now. An
   * address of unknown key (undefined) is never held back.
   */
  blockedFor(address: string | undefined): number {
    if (address === undefined) return 0
    const until = this.#blocked.get(address)
    if (until === undefined) return 0
    const wait = until - this.#now()
    if (wait > 0) return wait
    this.#blocked.delete(address)
    return 0
  }

  /**
   * Charges one refused credential to the address: 0 while it is within its budget, else the ms
   * until a token is back, and the address is then held back ({@link blockedFor}) until then.
   * Answers synchronously unless the budget lives in a shared store (Redis).
   */
  chargeFailure(address: string | undefined): number | Promise<number> {
    if (address === undefined || this.#failures === undefined) return 0
    const wait = this.#failures.take(address)
    if (typeof wait === 'number') return this.#afterCharge(address, wait)
    return wait.then(ms => this.#afterCharge(address, ms))
  }

  /**
   * Takes `count` tokens (one per request) of the client's request budget: 0 when taken (or no
   * `rateLimit`), else the ms until they would be there. Callers with neither principal nor address
   * (`client` undefined) share one bucket: the limit the operator asked for still holds.
   */
  takeRequests(client: string | undefined, count: number): number | Promise<number> {
    if (this.#requests === undefined || count === 0) return 0
    return this.#requests.take(client ?? 'address:', count)
  }

  #afterCharge(address: string, waitMs: number): number {
    if (waitMs > 0) {
      this.#blocked.delete(address)
      if (this.#blocked.size >= MAX_BLOCKED_ADDRESSES) this.#blocked.delete(this.#blocked.keys().next().value!)
      this.#blocked.set(address, this.#now() + waitMs)
    }
    return waitMs
  }
}

/**
 * The budget key of a client address (see `clientAddressKey`: IPv6 by /64, IPv4-mapped as IPv4);
 * undefined when the address is unknown, so that unknown clients are not lumped into one bucket.
 */
export function addressKey(address: string | undefined): string | undefined {
  return address === undefined || address === '' ? undefined : clientAddressKey(address)
}

/**
 * Whose budgets a request spends: its principal's (`principalKey`) once authenticated, else its
 * address's ({@link addressKey}); undefined when neither is known.
 */
export function clientKey(principal: Principal | undefined, address: string | undefined): string | undefined {
  return principalKey(principal) || addressKey(address)
}

/**
 * True when an authenticator's refusal is a failed authentication, charged to the address: a 4xx
 * (a missing, invalid, expired or replayed credential, or one lacking a scope). Not a 5xx (the
 * verifier cannot decide now: the server's fault), nor a 429 (the credential was good, its client
 * is over a quota of its own, such as its DPoP key's replay-cache share).
 */
export function isFailedAuthentication(status: number): boolean {
  return status >= 400 && status < 500 && status !== 429
}

/** Retry-After in whole seconds, at least 1 (one rule for every listener: lib/http/refusal.ts). */
export { retryAfterSeconds } from '../lib/http/refusal.ts'
