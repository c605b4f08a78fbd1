/**
 * One registry across the instances of a server (scale-out, ServerOptions.eventBus): what an
 * application changes at runtime through a Registration (enable, disable, remove, update) goes over
 * the bus to every instance, which applies it to its own entry and tells its own sessions once;
 * and an instance that starts announces a digest of its registry, catches up with the runtime
 * changes the others know, and warns when it still differs from theirs.
 *
 * ```
 *   newcomer                       each other instance
 *   listen ── hello{digest} ──────▶
 *          ◀── state{digest, entries, changes} ── (every runtime change it knows)
 *   merge changes (last writer wins), digest again, compare: agrees | differs (warn)
 *
 *   registration.disable() ── change{key, field, clock} ──▶ apply to its entry, list_changed to its sessions
 * ```
 *
 * Boot is not runtime: what the application registers and changes before the server first
 * listens is this instance's configuration (each instance runs the same code), and stays here.
 * A change is one field of one entry, ordered by a Lamport clock (the origin breaks ties): the
 * latest wins on every instance, whatever order the bus delivered them in.
 */
import { BehaviorSubject, timer, type Observable, type SchedulerLike, type Subscription } from '../../lib/rx.ts'
import { randomId } from '../../lib/base64url.ts'
import { LocalError, LocalErrorCode } from '../../lib/jsonrpc/errors.ts'
import type { EventBus, RegistryChange, RegistryMessage } from '../../lib/events.ts'

/** An entry of a registry as the sync sees it. */
export interface SyncedEntry {
  /** Applies a field another instance changed (`isSet` false: the definition field is unset). Not shared again. */
  apply(field: string, value: unknown, isSet: boolean): void
}

/** How this instance's registry compares with the other instances' (see McpServer.health). */
export interface RegistryHealth {
  /** `alone` until another instance answered (or without a bus); then whether every answer agreed. */
  readonly status: 'alone' | 'agrees' | 'differs'
  /** The digest of this registry (SHA-256 over every entry's wire form and state) at the last comparison. */
  readonly digest: string | undefined
  /** The instances whose registry differed at the last comparison, with the entries that differ. */
  readonly differences: readonly RegistryDifference[]
}

/** One instance whose registry differs from this one's. */
export interface RegistryDifference {
  /** The other instance's registry id (random per server). */
  readonly instance: string
  readonly digest: string
  /** The entries that differ (`tool:echo`), each marked `(only here)`, `(only there)` or `(differs)`. */
  readonly entries: readonly string[]
}

/** Told when this registry differs from another instance's at startup (ServerOptions.reportUnhandledError; default console.warn). */
export class RegistryMismatchWarning extends LocalError {
  override name = 'RegistryMismatchWarning'
  readonly code = LocalErrorCode.RegistryMismatch
  /** `difference`: the instance whose registry differs; absent for a runtime change that could not be shared (the message says which). */
  constructor(message: string, readonly difference?: RegistryDifference) {
    super(message)
  }

  /** The warning of a registry that differs from another instance's. */
  static of(difference: RegistryDifference): RegistryMismatchWarning {
    const listed = difference.entries.slice(0, 10).join(', ')
    const more = difference.entries.length > 10 ? `, and ${difference.entries.length - 10} more` : ''
    return new RegistryMismatchWarning(`This instance's registry differs from instance ${difference.instance}'s: ${listed}${more}`, difference)
  }
}

/** What the sync needs of its server. */
export interface RegistrySyncHost {
  /** Every entry by key, as the digest sees it (its wire form and whether it is enabled). */
  entries(): Map<string, unknown>
  report(error: unknown): void
  readonly scheduler?: SchedulerLike
}

/** When a newcomer says hello again while nobody answered (a bus subscription may still be opening): ms after the first. */
const HELLO_AGAIN_MS = [1_000, 3_000]

export class RegistrySync {
  /** This registry's id on the bus. */
  readonly origin = randomId(9)
  readonly #bus: EventBus
  readonly #host: RegistrySyncHost
  /** The Lamport clock: past every change seen or made here. */
  #clock = 0
  /** The latest change of each field of each entry, by `key\nfield`: what a newcomer is sent. */
  readonly #table = new Map<string, RegistryChange>()
  /** The entries registered here, by key. */
  readonly #entries = new Map<string, SyncedEntry>()
  /** Set by start (the server's first listen): from then on, changes are runtime and shared. */
  #isLive = false
  /** Set when some instance answered the hello: no more hellos. */
  #isAnswered = false
  /** Per instance: its answer's digest and what differed (kept to warn once per instance and digest). */
  readonly #peers = new Map<string, { digest: string; difference: RegistryDifference | undefined }>()
  readonly #health = new BehaviorSubject<RegistryHealth>({ status: 'alone', digest: undefined, differences: [] })
  readonly health: Observable<RegistryHealth> = this.#health.asObservable()
  /** The hellos said again, while unanswered. */
  #hellos: Subscription | undefined

  constructor(bus: EventBus, host: RegistrySyncHost) {
    this.#bus = bus
    this.#host = host
  }

  get isLive(): boolean { return this.#isLive }
  get current(): RegistryHealth { return this.#health.value }

  /**
   * An entry registered here. Runtime changes arriving from now on apply to it; one registered at
   * runtime (after the first listen) is this instance's own, and what was changed before is not replayed on it.
   */
  add(key: string, entry: SyncedEntry): void {
    this.#entries.set(key, entry)
  }

  /** An entry removed here (by this instance or another). */
  delete(key: string, entry: SyncedEntry): void {
    if (this.#entries.get(key) === entry) this.#entries.delete(key)
  }

  /**
   * A change made here through the public API: shared when at runtime (a value that is not JSON,
   * a function or a Standard Schema, cannot travel: it stays here, and the caller is told).
   * Returns false when it could not be shared.
   */
  local(key: string, field: string, value: unknown, isSet = true): boolean {
    if (!this.#isLive) return true
    if (isSet && !isPlainJson(value)) return false
    const change: RegistryChange = { key, field, clock: ++this.#clock, origin: this.origin, ...(isSet ? { value } : {}) }
    this.#table.set(`${key}\n${field}`, change)
    this.#bus.publish({ type: 'registry', op: 'change', from: this.origin, change })
    return true
  }

  /** The server's first listen: say hello with this registry's digest (again after 1 s and 3 s while nobody answers). */
  start(): void {
    if (this.#isLive) return
    this.#isLive = true
    const hello = () => void this.#digest().then(({ digest }) => this.#bus.publish({ type: 'registry', op: 'hello', from: this.origin, digest }))
    hello()
    this.#hellos = timer(HELLO_AGAIN_MS[0]!, HELLO_AGAIN_MS[1]! - HELLO_AGAIN_MS[0]!, this.#host.scheduler).subscribe(count => {
      if (this.#isAnswered || count >= HELLO_AGAIN_MS.length - 1) this.#hellos?.unsubscribe()
      if (!this.#isAnswered) hello()
    })
  }

  close(): void {
    this.#hellos?.unsubscribe()
    this.#health.complete()
  }

  /** A message of another instance. */
  receive(message: RegistryMessage): void {
    if (message.from === this.origin) return
    switch (message.op) {
      case 'change': return this.#merge(message.change)
      case 'hello': return this.#answer(message.from)
      case 'state':
        if (message.to !== this.origin) return
        this.#isAnswered = true
        for (const change of message.changes) this.#merge(change)
        // Comparable only when both know the same runtime changes: one made here since (or one
        // the answer crossed) would make them differ for a moment, not for good.
        if (!this.#knowsOnly(message.changes)) return
        return void this.#compare(message.from, message.digest, message.entries).catch(error => this.#host.report(error))
    }
  }

  /** A change from elsewhere: kept and applied when it is newer than what this instance has for that field. */
  #merge(change: RegistryChange): void {
    if (typeof change?.key !== 'string' || typeof change.field !== 'string' || typeof change.clock !== 'number') return
    this.#clock = Math.max(this.#clock, change.clock)
    const id = `${change.key}\n${change.field}`
    const known = this.#table.get(id)
    if (known !== undefined && !isNewer(change, known)) return
    this.#table.set(id, change)
    const entry = this.#entries.get(change.key)
    if (entry === undefined) return
    try {
      entry.apply(change.field, change.value, 'value' in change)
    } catch (error) {
      // A definition this instance cannot take (a schema its validator refuses): its digest will say so.
      this.#host.report(error)
    }
  }

  /** Whether every runtime change known here is one of `changes` (after merging them: the same knowledge). */
  #knowsOnly(changes: readonly RegistryChange[]): boolean {
    if (changes.length !== this.#table.size) return false
    for (const change of changes) {
      const known = this.#table.get(`${change.key}\n${change.field}`)
      if (known === undefined || known.clock !== change.clock || known.origin !== change.origin) return false
    }
    return true
  }

  /** Another instance said hello: it gets this registry's digest, its entries' digests and every runtime change known here. */
  #answer(to: string): void {
    if (!this.#isLive) return
    // Taken with the digest's snapshot (both now), so the answer is of one moment.
    const changes = [...this.#table.values()]
    void this.#digest().then(({ digest, entries }) => {
      this.#bus.publish({ type: 'registry', op: 'state', from: this.origin, to, digest, entries, changes })
    }).catch(error => this.#host.report(error))
  }

  /** After catching up with an answer: does this registry agree with that instance's? */
  async #compare(instance: string, digest: string, theirs: Record<string, string>): Promise<void> {
    const mine = await this.#digest()
    const known = this.#peers.get(instance)
    let difference: RegistryDifference | undefined
    if (mine.digest !== digest) {
      const entries: string[] = []
      for (const [key, hash] of Object.entries(mine.entries)) {
        if (!(key in theirs)) entries.push(`${key} (only here)`)
        else if (theirs[key] !== hash) entries.push(`${key} (differs)`)
      }
      for (const key of Object.keys(theirs)) if (!(key in mine.entries)) entries.push(`${key} (only there)`)
      difference = { instance, digest, entries }
      // Once per instance and digest: an instance answering every hello warns once.
      if (known?.digest !== digest || known.difference === undefined) this.#host.report(RegistryMismatchWarning.of(difference))
    }
    this.#peers.set(instance, { digest, difference })
    const differences = [...this.#peers.values()].flatMap(peer => peer.difference === undefined ? [] : [peer.difference])
    if (!this.#health.closed) this.#health.next({ status: differences.length > 0 ? 'differs' : 'agrees', digest: mine.digest, differences })
  }

  /** The registry's digest, and each entry's (SHA-256 of its canonical JSON, hex). */
  async #digest(): Promise<{ digest: string; entries: Record<string, string> }> {
    const entries: Record<string, string> = {}
    const all = [...this.#host.entries()].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)
    for (const [key, value] of all) entries[key] = (await sha256(canonical(value))).slice(0, 16)
    const digest = await sha256(Object.entries(entries).map(([key, hash]) => `${key}=${hash}`).join('\n'))
    return { digest, entries }
  }
}

function isNewer(change: RegistryChange, than: RegistryChange): boolean {
  return change.clock > than.clock || (change.clock === than.clock && change.origin > than.origin)
}

/** True for a value that JSON carries as it is: no functions, no Standard Schemas, no class instances. */
function isPlainJson(value: unknown): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true
  if (typeof value === 'number') return Number.isFinite(value)
  if (Array.isArray(value)) return value.every(isPlainJson)
  if (typeof value !== 'object') return false
  const prototype = Object.getPrototypeOf(value)
  if (prototype !== Object.prototype && prototype !== null) return false
  if ('~standard' in value) return false
  return Object.values(value).every(item => item === undefined || isPlainJson(item))
}

/** JSON with the keys of every object sorted: equal values give equal text. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).filter(key => (value as Record<string, unknown>)[key] !== undefined).sort()
    return `{${keys.map(key => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

async function sha256(text: string): Promise<string> {
  const hash = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)))
  let hex = ''
  for (const byte of hash) hex += byte.toString(16).padStart(2, '0')
  return hex
}
