/**
 * What a listener holds for each client, counted against a per-client and a per-listener maximum,
 * so that one client (a principal, else an address: see client-policy.ts `clientKey`) cannot take
 * what every client shares: the sessions (HTTP sessions, legacy SSE sessions, WebSocket sockets:
 * {@link SessionAdmission}) and the HTTP listener's sessionless exchanges held open (modern-era
 * requests and their streams, `subscriptions/listen` included; stateless POSTs: {@link ConcurrencyBudget}).
 */

/** Why {@link ConcurrencyBudget.acquire} refused: the client's own share is used, or the listener's total. */
export type BudgetRefusal = 'client' | 'total'

/**
 * Things held open at once, per client key and in total. `acquire` counts one more or refuses;
 * `release` gives one back. A key is forgotten at zero, so the table is never larger than the total.
 */
export class ConcurrencyBudget {
  readonly #perClient: number
  readonly #total: number
  /** Open count per client key, only keys above zero. */
  readonly #counts = new Map<string, number>()
  /** Open count over every key. */
  #open = 0

  constructor(perClient: number, total: number) {
    this.#perClient = perClient
    this.#total = total
  }

  /**
   * Counts one more for `key`, or says which maximum it would pass (nothing counted then). A client
   * that cannot be told apart (`key` undefined) is held to the total only.
   */
  acquire(key: string | undefined): BudgetRefusal | undefined {
    const count = key === undefined ? 0 : this.#counts.get(key) ?? 0
    if (count >= this.#perClient) return 'client'
    if (this.#open >= this.#total) return 'total'
    if (key !== undefined) this.#counts.set(key, count + 1)
    this.#open++
    return undefined
  }

  /** Gives back one of `key`'s (once per successful acquire, with the same key). */
  release(key: string | undefined): void {
    if (key !== undefined) {
      const count = this.#counts.get(key)
      if (count === undefined) return
      if (count <= 1) this.#counts.delete(key)
      else this.#counts.set(key, count - 1)
    }
    this.#open--
  }

  /** Open now, over every client. */
  get size(): number { return this.#open }
}

/**
 * Items grouped by client key, so a client at its maximum can give up one of its own items rather
 * than anyone else's. Every operation is O(1).
 */
export class ClientGroups<T extends object> {
  /** Each client's items (Set keeps insertion order). */
  readonly #groups = new Map<string, Set<T>>()
  /** The client of each item. */
  readonly #keys = new WeakMap<T, string>()

  add(key: string, item: T): void {
    let group = this.#groups.get(key)
    if (group === undefined) { group = new Set(); this.#groups.set(key, group) }
    group.add(item)
    this.#keys.set(item, key)
  }

  delete(item: T): void {
    const key = this.#keys.get(item)
    if (key === undefined) return
    this.#keys.delete(item)
    const group = this.#groups.get(key)
    if (group === undefined) return
    group.delete(item)
    if (group.size === 0) this.#groups.delete(key)
  }

  /** How many items `key` holds. */
  count(key: string): number { return this.#groups.get(key)?.size ?? 0 }

  /** `key`'s items, in the order they were added. */
  of(key: string): Iterable<T> { return this.#groups.get(key) ?? [] }
}

/** What {@link SessionAdmission} needs of a session: its idle clock and whether a request of it is in flight. */
export interface AdmittedSession {
  /** When its client last sent anything, by the listener's clock. */
  readonly lastSeen: number
  hasRequestInFlight(): boolean
}

/** Why a new session was refused: its client's share is used (429) or the listener's total (503), and when to try again. */
export interface SessionRefusal {
  readonly reason: BudgetRefusal
  /** Ms until a session that blocks it could give way (what Retry-After says). */
  readonly retryAfterMs: number
}

/** Limits of {@link SessionAdmission}. */
export interface SessionAdmissionLimits {
  /** Sessions one client holds at most (`maxSessionsPerClient`). */
  readonly perClient: number
  /** Sessions of the listener at most (`maxSessions`). */
  readonly total: number
  /** Least idle time of a session that gives way to a new one (`sessionEvictionMinIdle`). */
  readonly minIdle: number
}

/**
 * The one rule by which a listener admits a new session (an HTTP session, a legacy SSE session, a
 * WebSocket): first the client's own share (`perClient`): at it, the client's least recently
 * active session with no request in flight gives way once idle `minIdle` (a client may give up its
 * own stale session, never another's), else the client is refused (429). Then the listener's total:
 * at it, the least recently active session of any client with no request in flight gives way once
 * idle `minIdle`, else refused (503). A client that cannot be told apart (key undefined) is held
 * to the total only.
 */
export class SessionAdmission<T extends AdmittedSession & object> {
  readonly #limits: SessionAdmissionLimits
  readonly #groups = new ClientGroups<T>()
  /** Ends a session that gives way (it must call {@link delete}, as every ending session does). */
  readonly #evict: (session: T, reason: BudgetRefusal) => void

  constructor(limits: SessionAdmissionLimits, evict: (session: T, reason: BudgetRefusal) => void) {
    this.#limits = limits
    this.#evict = evict
  }

  /**
   * Room for one more session of `client` among the listener's `sessions` (`size` of them, least
   * recently active first when `isOrdered`, else searched), evicting what gives way; or why not.
   */
  admit(client: string | undefined, sessions: Iterable<T>, size: number, isOrdered: boolean, now: number): SessionRefusal | undefined {
    const { perClient, total, minIdle } = this.#limits
    if (client !== undefined && this.#groups.count(client) >= perClient) {
      // A client's share is small (its own sessions only): searched whatever their order.
      const own = leastRecentIdle(this.#groups.of(client), false)
      if (own === undefined || now - own.lastSeen < minIdle) return { reason: 'client', retryAfterMs: own === undefined ? minIdle : minIdle - (now - own.lastSeen) }
      this.#evict(own, 'client')
      // One of the listener's sessions went: there is room under the total too.
      return undefined
    }
    if (size < total) return undefined
    const candidate = leastRecentIdle(sessions, isOrdered)
    if (candidate === undefined || now - candidate.lastSeen < minIdle) return { reason: 'total', retryAfterMs: candidate === undefined ? minIdle : minIdle - (now - candidate.lastSeen) }
    this.#evict(candidate, 'total')
    return undefined
  }

  /** Counts an admitted session for its client (none for a client not told apart, or a session taken over from another instance). */
  add(client: string | undefined, session: T): void {
    if (client !== undefined) this.#groups.add(client, session)
  }

  /** Stops counting a session that ended. */
  delete(session: T): void {
    this.#groups.delete(session)
  }
}

/**
 * The least recently active of `sessions` with no request in flight (the one that may give way):
 * the first such when they come least recently active first, else the one seen longest ago.
 */
function leastRecentIdle<T extends AdmittedSession>(sessions: Iterable<T>, isOrdered: boolean): T | undefined {
  let candidate: T | undefined
  for (const session of sessions) {
    if (session.hasRequestInFlight()) continue
    if (isOrdered) return session
    if (candidate === undefined || session.lastSeen < candidate.lastSeen) candidate = session
  }
  return candidate
}
