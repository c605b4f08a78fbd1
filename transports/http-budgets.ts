/**
 * What the HTTP listener holds for each client, counted against a per-client and a per-listener
 * maximum, so that one client (a principal, else an address: see HttpGuard.clientKey) cannot take
 * what every client shares: the sessionless exchanges held open (modern-era requests and their
 * streams, `subscriptions/listen` included; stateless POSTs), and the sessions.
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
 * Items grouped by client key, each group least recently touched first, so a client at its
 * maximum can give up its own stalest item rather than anyone else's. Every operation is O(1).
 */
export class ClientGroups<T extends object> {
  /** Each client's items, least recently touched first (Set keeps insertion order). */
  readonly #groups = new Map<string, Set<T>>()
  /** The client of each item. */
  readonly #keys = new WeakMap<T, string>()

  add(key: string, item: T): void {
    let group = this.#groups.get(key)
    if (group === undefined) { group = new Set(); this.#groups.set(key, group) }
    group.add(item)
    this.#keys.set(item, key)
  }

  /** Moves `item` to the end of its client's order (it was just used). */
  touch(item: T): void {
    const group = this.#group(item)
    if (group === undefined) return
    group.delete(item)
    group.add(item)
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

  /** `key`'s items, least recently touched first. */
  of(key: string): Iterable<T> { return this.#groups.get(key) ?? [] }

  #group(item: T): Set<T> | undefined {
    const key = this.#keys.get(item)
    return key === undefined ? undefined : this.#groups.get(key)
  }
}
