import { principalKey, type Authenticator } from '../lib/auth.ts'
import type { RateLimiterStore, TokenBucketOptions } from '../lib/token-bucket.ts'
import { overFailedAuthBudget, overRequestBudget } from '../lib/http/refusal.ts'
import { answerRefusal, type Exchange, type RefusedIds } from './http-exchange.ts'
import { ClientPolicy, addressKey, clientKey, isFailedAuthentication, type ClientRequest } from './client-policy.ts'

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
 * What the HTTP listener checks about who is calling, before the protocol sees a request: the
 * authenticator's documents and verdicts (401/403), the budget of failed authentications per client
 * address, and the request budget per caller (429). Each check answers the exchange itself when it
 * refuses, and returns false.
 */
export class HttpGuard {
  readonly #auth: Authenticator | undefined
  /** Who a client is, and its budgets: the rule every listener applies (client-policy.ts). */
  readonly #policy: ClientPolicy

  constructor(options: HttpGuardOptions) {
    this.#auth = options.auth
    this.#policy = new ClientPolicy({ ...options, authenticates: options.auth !== undefined })
  }

  /**
   * Serves the authenticator's own documents (false: answered), then, on a guarded path, verifies
   * the credentials: the principal goes on the exchange, or the refusal is answered. A refusal that
   * is a failed authentication (a 4xx but 429: a missing, invalid or expired credential) costs the
   * client's address a token of the failed-authentication budget; an address that has none left is
   * answered 429 with Retry-After, and is not verified at all until its bucket has a token again.
   * Without an authenticator it answers true at once (no promise on the request path).
   */
  admit(exchange: Exchange, isGuarded: boolean): true | Promise<boolean> {
    return this.#auth === undefined ? true : this.#authenticate(exchange, isGuarded, this.#auth)
  }

  async #authenticate(exchange: Exchange, isGuarded: boolean, auth: Authenticator): Promise<boolean> {
    const document = auth.serve?.(exchange)
    if (document !== undefined) {
      exchange.reply(document.status, { ...document.headers }, document.body)
      return false
    }
    if (!isGuarded) return true
    // A client whose address is unknown (a web Request carries none) is not budgeted by address:
    // one bucket for all of them would let one client lock every other out.
    const address = this.#policy.limitsFailures ? this.addressKey(exchange) : undefined
    const blocked = this.#policy.blockedFor(address)
    if (blocked > 0) return refuseFailures(exchange, blocked)
    const outcome = await auth.authenticate(exchange)
    if (outcome.type === 'refuse') {
      // Every credential refused as the client's fault is charged, a missing one included: it is
      // the same verification. A 5xx (the verifier cannot decide now) is the server's, not charged.
      const wait = isFailedAuthentication(outcome.answer.status) ? await this.#policy.chargeFailure(address) : 0
      if (wait > 0) return refuseFailures(exchange, wait)
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
  get readsPayloads(): boolean { return this.#auth?.authorize !== undefined || this.#policy.limitsRequests }

  /**
   * False once a POST over its caller's budget (one token per request) was answered 429 with
   * Retry-After. Answers synchronously unless the budget is kept in a shared store (Redis): without
   * one, the request path awaits nothing here.
   */
  withinBudget(exchange: Exchange, requests: number, answers: RefusedIds): boolean | Promise<boolean> {
    if (!this.#policy.limitsRequests) return true
    const wait = this.#policy.takeRequests(this.clientKey(exchange), requests)
    if (typeof wait === 'number') return answerBudget(exchange, wait, answers)
    return wait.then(ms => answerBudget(exchange, ms, answers))
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
    return clientKey(exchange.principal, this.clientAddress(exchange))
  }

  /**
   * The client address of a request as a budget key (`clientAddressKey`: IPv6 by /64, an
   * IPv4-mapped address as its IPv4); undefined when the address is unknown.
   */
  addressKey(exchange: Exchange): string | undefined {
    return addressKey(this.clientAddress(exchange))
  }

  /**
   * The client's address: the listener's `clientAddress` (behind a trusted proxy), else the
   * socket's. What sessions and exchanges report as their `remoteAddress`, for every limit per
   * address. An exchange another instance of the listener forwarded carries the address that
   * instance resolved (its socket was the client's, or the proxy's that named the client): taken
   * as it is, since the headers `clientAddress` reads need not travel with it.
   */
  clientAddress(exchange: Exchange): string | undefined {
    return exchange.isForwarded === true ? exchange.remoteAddress : this.#policy.resolveAddress(exchange)
  }
}

/** Answers a POST over its request budget 429 with Retry-After and an error per request; false then. */
function answerBudget(exchange: Exchange, waitMs: number, answers: RefusedIds): boolean {
  if (waitMs === 0) return true
  answerRefusal(exchange, overRequestBudget(waitMs, answers))
  return false
}

/** Answers a request of an address over its failed-authentication budget: 429, Retry-After, -31029 (id null). */
function refuseFailures(exchange: Exchange, waitMs: number): false {
  answerRefusal(exchange, overFailedAuthBudget(waitMs))
  return false
}
