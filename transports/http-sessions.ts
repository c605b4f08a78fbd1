import { exchangesFull, sessionIdRepeated, sessionsFull, type HttpRefusal, type RefusedIds } from '../lib/http/refusal.ts'
import { ConcurrencyBudget, SessionAdmission } from './client-budgets.ts'
import type { SharedSessions, AnySession } from './http-shared.ts'
import { randomId } from './http-ids.ts'

/** The limits of a {@link SessionTable} (the listener's options, resolved). */
export interface SessionTableLimits {
  /** `maxSessionsPerClient`, `maxSessions` and `sessionEvictionMinIdle`. */
  readonly perClient: number
  readonly total: number
  readonly minIdle: number
  /** `maxExchangesPerClient` and `maxExchanges`: sessionless requests held open. */
  readonly exchangesPerClient: number
  readonly exchanges: number
  /** `sessionIdleTimeout`. */
  readonly idleTimeout: number
  /** Makes session ids (`sessionIdGenerator`; default 256 random bits). */
  readonly newId: (() => string) | undefined
}

/** What gets keep-alive comments besides the sessions (the modern-era exchanges streaming). */
interface KeptAlive { keepAlive(): void }

/**
 * The HTTP listener's sessions (Streamable HTTP and legacy SSE in one table, least recently active
 * first), what admits a new one (`maxSessionsPerClient`, `maxSessions`, eviction), the sessionless
 * requests held open (`maxExchanges*`), and the sweep that ends idle sessions and sends keep-alives.
 * Refusals are returned (see lib/http/refusal.ts), for the listener to answer.
 */
export class SessionTable {
  /** Every session, least recently active first (touching moves one to the end). */
  readonly sessions = new Map<string, AnySession>()
  /** Sessionless requests held open (modern-era, stateless), per client and in total. */
  readonly held: ConcurrencyBudget
  /**
   * The rule admitting a new session (`maxSessionsPerClient`, then `maxSessions`), counting the
   * sessions each client made (not those taken over from another instance: their client is not known here).
   */
  readonly #admission: SessionAdmission<AnySession>
  readonly #limits: SessionTableLimits
  readonly #now: () => number
  /** Set in cluster mode (after the table is made: it lends the table its sessions). */
  shared: SharedSessions | undefined
  /** When keep-alives last went out (listener clock). */
  #lastKeepAlive: number

  constructor(limits: SessionTableLimits, now: () => number) {
    this.#limits = limits
    this.#now = now
    this.held = new ConcurrencyBudget(limits.exchangesPerClient, limits.exchanges)
    this.#admission = new SessionAdmission<AnySession>({ perClient: limits.perClient, total: limits.total, minIdle: limits.minIdle }, session => session.end())
    this.#lastKeepAlive = now()
  }

  get size(): number { return this.sessions.size }

  /** Marks a session active now: it moves to the end of the recency order. */
  touch(session: AnySession): void {
    session.lastSeen = this.#now()
    this.sessions.delete(session.id)
    this.sessions.set(session.id, session)
    this.shared?.touch(session, session.lastSeen)
  }

  /** Adds a session to the table, and to its client's (`client`; none for a session taken over from another instance, or of a client not told apart). */
  register<S extends AnySession>(session: S, client?: string): S {
    this.sessions.set(session.id, session)
    this.#admission.add(client, session)
    return session
  }

  /**
   * Forgets a session that ended. One function for every session: a closure made in a request's
   * handler would keep that request's objects alive as long as the session.
   */
  readonly onEnd = (session: AnySession): void => {
    if (this.sessions.get(session.id) === session) this.sessions.delete(session.id)
    this.#admission.delete(session)
    this.shared?.ended(session)
  }

  /**
   * Room for one more session of `client` (undefined when the client cannot be told apart: then
   * only the listener's cap applies), or the refusal answering `answers`. First the client's own
   * share (`maxSessionsPerClient`): at it, the client's least recently active session with no
   * request in flight is evicted once idle `sessionEvictionMinIdle` (a client may give up its own
   * stale session, never another's), else 429. Then the listener's (`maxSessions`): at it, the
   * least recently active session with no request in flight is evicted once idle
   * `sessionEvictionMinIdle`, else 503. A refusal carries Retry-After (when that session becomes evictable).
   */
  admit(client: string | undefined, answers: RefusedIds = null): HttpRefusal | undefined {
    // The table is least recently active first (see touch): the first idle session is the stalest.
    const refusal = this.#admission.admit(client, this.sessions.values(), this.sessions.size, true, this.#now())
    return refusal === undefined ? undefined : sessionsFull(refusal.reason, refusal.retryAfterMs, answers)
  }

  /**
   * Holds one sessionless request of `client` open (modern-era, stateless): undefined, or the
   * refusal answering `answers`, 429 past the client's `maxExchangesPerClient`, 503 past the
   * listener's `maxExchanges`. Give it back with `held.release(client)`.
   */
  hold(client: string | undefined, answers: RefusedIds): HttpRefusal | undefined {
    const refusal = this.held.acquire(client)
    return refusal === undefined ? undefined : exchangesFull(refusal, answers)
  }

  /** A fresh session id, or the refusal (500) when the generator repeats one in use. */
  newSessionId(answers: RefusedIds = null): string | HttpRefusal {
    const id = (this.#limits.newId ?? defaultSessionId)()
    return this.sessions.has(id) ? sessionIdRepeated(answers) : id
  }

  /**
   * Ends the sessions idle past `sessionIdleTimeout`, and every `keepAlive` ms sends a keep-alive
   * comment on every open stream (the sessions' and `others`').
   */
  sweep(keepAlive: number, others: Iterable<KeptAlive>): void {
    const now = this.#now()
    // Least recently active first: the first session still within its idle time ends the sweep.
    // An open stream does not count as activity, so a client that only listens cannot pin a slot.
    for (const session of this.sessions.values()) {
      if (now - session.lastSeen <= this.#limits.idleTimeout) break
      // A request still running (a long tool call) is the client waiting, not gone: as on WebSocket.
      if (!session.hasRequestInFlight()) session.end()
      else this.shared?.touch(session, now)
    }
    if (keepAlive > 0 && now - this.#lastKeepAlive >= keepAlive) {
      this.#lastKeepAlive = now
      for (const session of this.sessions.values()) session.keepAlive()
      for (const other of others) other.keepAlive()
    }
  }

  /** Ends every session (`handOver`: a shared session goes on at another instance). */
  endAll(handOver: boolean): void {
    for (const session of [...this.sessions.values()]) session.end(handOver)
    this.sessions.clear()
  }
}

function defaultSessionId(): string {
  // 256 bits from the platform's CSPRNG: unguessable, and URL- and header-safe.
  return randomId(32)
}
