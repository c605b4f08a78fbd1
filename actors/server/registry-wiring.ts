/**
 * The server's side of scale-out (ServerOptions.eventBus) and its health: the handle of each
 * registered entry (a Registration), whose runtime changes go to the other instances through the
 * registry sync (registry-sync.ts); the other instances' events, taken in as if raised here; and
 * `health`, the server's status with what the sync says of the registry.
 *
 * ```
 * registration.disable() ─> entry here, list_changed ─> sync.local ─> bus ─> other instances
 * bus.remote ─> registry message ─> sync.receive ─> SyncedEntry.apply (entry here, list_changed)
 *            └> any other event ─> the server's event bus
 * sync.health ─> health.registry          drain / close ─> health.status
 * ```
 */
import { BehaviorSubject, type Observable, type SchedulerLike, type Subscription } from '../../lib/rx.ts'
import type { BusEvent, EventBus, ServerEvent } from '../../lib/events.ts'
import type { Registration, ServerHealth } from './api.ts'
import { RegistryMismatchWarning, RegistrySync, type SyncedEntry } from './registry-sync.ts'
import type { ListKind, RegistriesView } from './registry.ts'

/** What the wiring reaches of its server. */
export interface WiredServer extends RegistriesView {
  changed(kind: ListKind): unknown
  report(error: unknown): void
}

/**
 * The registrations, the registry sync and the health of one server. Without a bus, a
 * registration changes only its entry here and the registry health stays `alone`. `start()` ends
 * the boot configuration (what was registered so far stays this instance's own); `close()` says
 * `closed`, completes `health` and leaves the bus.
 */
export class RegistryWiring {
  /** See McpServer.health. */
  readonly #health = new BehaviorSubject<ServerHealth>({ status: 'serving', registry: { status: 'alone', digest: undefined, differences: [] } })
  readonly health: Observable<ServerHealth> = this.#health.asObservable()
  /** The registry shared with the other instances (with a bus). */
  readonly #sync: RegistrySync | undefined
  /** The subscription to other instances' events (with a bus). */
  readonly #remote: Subscription | undefined

  /** `raise`: an event of another instance, for the server's own bus (never a registry message). */
  constructor(readonly server: WiredServer, bus: EventBus | undefined, scheduler: SchedulerLike | undefined, raise: (event: ServerEvent) => void) {
    if (bus === undefined) return
    // Other instances' events come in as if raised here; what they tell of their registries goes
    // to the sync, never on the server's `events`.
    const sync = this.#sync = new RegistrySync(bus, { entries: () => this.#registryEntries(), report: error => server.report(error), scheduler })
    this.#remote = bus.remote.subscribe((event: BusEvent) => { if (event.type === 'registry') sync.receive(event); else raise(event) })
    this.#remote.add(sync.health.subscribe(registry => this.#health.next({ ...this.#health.value, registry })))
  }

  /** The server's status now (see ServerHealth.status). */
  get status(): ServerHealth['status'] { return this.#health.value.status }

  /** Tells `health` the server's new status (the registry's part stays). */
  setStatus(status: ServerHealth['status']): void {
    this.#health.next({ ...this.#health.value, status })
  }

  /** What was registered so far is this instance's boot configuration: from now on, changes are shared. */
  start(): void {
    this.#sync?.start()
  }

  /** Says `closed` (once), completes `health`, and leaves the bus. */
  close(): void {
    if (this.#health.value.status !== 'closed') this.setStatus('closed')
    this.#health.complete()
    this.#sync?.close()
    this.#remote?.unsubscribe()
  }

  /**
   * The handle of one entry. With a bus (scale-out), what it changes at runtime goes to every
   * instance (registry-sync.ts), and what another instance changed comes in through `synced`.
   */
  registration<D>(key: string, entry: { definition: D; isEnabled: boolean }, apply: (next: D) => void, remove: () => unknown, kind: ListKind): Registration<D> {
    const sync = this.#sync
    const server = this.server
    const setEnabled = (isEnabled: boolean) => { if (entry.isEnabled !== isEnabled) { entry.isEnabled = isEnabled; server.changed(kind) } }
    const removeHere = () => { sync?.delete(key, synced); remove() }
    const synced: SyncedEntry = {
      apply: (field, value, isSet) => {
        if (field === 'enabled') return setEnabled(value === true)
        if (field === 'removed') return removeHere()
        if (!field.startsWith('def.')) return
        const next = { ...entry.definition } as Record<string, unknown>
        if (isSet) next[field.slice(4)] = value
        else delete next[field.slice(4)]
        apply(next as D)
        server.changed(kind)
      },
    }
    sync?.add(key, synced)
    return {
      update: changes => {
        apply({ ...entry.definition, ...changes })
        server.changed(kind)
        if (sync === undefined) return
        const kept: string[] = []
        for (const [name, value] of Object.entries(changes)) if (!sync.local(key, `def.${name}`, value, value !== undefined)) kept.push(name)
        if (kept.length > 0) server.report(new RegistryMismatchWarning(`${key}: the update of ${kept.join(', ')} holds on this instance only: a function or a Standard Schema cannot go to the other instances (give each the same code, or JSON Schemas)`))
      },
      enable: () => { setEnabled(true); sync?.local(key, 'enabled', true) },
      disable: () => { setEnabled(false); sync?.local(key, 'enabled', false) },
      get isEnabled() { return entry.isEnabled },
      remove: () => { removeHere(); sync?.local(key, 'removed', true) },
    }
  }

  /** Every entry as the registry digest sees it: its wire form and whether it is enabled. */
  #registryEntries(): Map<string, unknown> {
    const { tools, resources, templates, prompts } = this.server
    const entries = new Map<string, unknown>()
    for (const [name, entry] of tools) entries.set(`tool:${name}`, { wire: entry.wire, isEnabled: entry.isEnabled })
    for (const [uri, entry] of resources) entries.set(`resource:${uri}`, { wire: entry.wire, isEnabled: entry.isEnabled })
    for (const [template, entry] of templates) entries.set(`template:${template}`, { wire: entry.wire, isEnabled: entry.isEnabled })
    for (const [name, entry] of prompts) entries.set(`prompt:${name}`, { wire: entry.wire, isEnabled: entry.isEnabled })
    return entries
  }
}
