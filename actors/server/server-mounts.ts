/**
 * The mount host of a server: what `server.mount` puts in place (a proxy's or another server's
 * entries in this server's registries, see mount.ts), and the watches mounted sources keep on the
 * resource URIs this server's sessions and listen streams subscribe to.
 *
 * ```
 * server.mount(prefix, source) ─> mountSource(host, ...) ─> entries in the registries
 * session subscribes uri (first) ─> owner of uri mounted? ─> source.watch(uri) ─> notifyResourceUpdated
 * mounts change ─> each subscribed uri watched again by its owner now (a new one, or none)
 * ```
 */
import { asyncScheduler, timer, type Observable, type SchedulerLike, type Subscription } from '../../lib/rx.ts'
import type { LoggingLevel } from '../../lib/schema/types.ts'
import type { McpServer } from './api.ts'
import { deferredMountable, mountSource, type MountHost } from './mount.ts'
import type { Mount, Mountable, MountOptions, WatchEvent } from './mountable.ts'
import type { ListKind } from './registry.ts'

/** What the mounts reach of the server they belong to: what a mount writes into (mount.ts), and where a watched URI's updates go. */
export interface MountingServer extends Omit<MountHost, 'mountsChanged'> {
  notifyResourceUpdated(uri: string): void
  /** Its clock (ServerOptions.scheduler): how long a caller's subscription waits for a source to watch. */
  readonly options: { readonly scheduler?: SchedulerLike }
}

/**
 * A server's mounts and the watches of subscribed URIs their sources own. `mount` answers as
 * `McpServer.mount`; `subscribed`/`unsubscribed` count the subscribers of a URI (the first starts
 * its owner's watch, the last ends it); `close` removes every mount (closing the clients they made).
 */
export class ServerMounts {
  /** The mounts in place: close() removes them. */
  readonly #mounts = new Set<Mount>()
  /** How many sessions and listen streams subscribe to each URI now. */
  readonly #subscribers = new Map<string, number>()
  /** The watch a mounted source keeps on each subscribed URI it owns, with that source. */
  readonly #watches = new Map<string, { source: Mountable } & StartedWatch>()

  constructor(readonly server: MountingServer) {}

  /** See McpServer.mount. */
  mount(prefix: string, source: McpServer | Mountable, options: MountOptions = {}): Mount {
    // The proxy (and with it the client) loads when a server is first mounted, not with the server.
    const mountable = isMountable(source) ? source : deferredMountable(() => import('../proxy.ts').then(proxy => proxy.mountableServer(source, options.mode)), options.mode)
    const mount = mountSource(this.#host, prefix, mountable, options)
    this.#mounts.add(mount)
    return { remove: () => { this.#mounts.delete(mount); mount.remove() } }
  }

  /** What a mount reaches of the server (its registries, list changes, logging, watches); made on the first mount. */
  get #host(): MountHost {
    const server = this.server
    return this.#hostMemo ??= {
      tools: server.tools, resources: server.resources, templates: server.templates, prompts: server.prompts,
      changed: (kind: ListKind) => { server.changed(kind) },
      log: (level: LoggingLevel, data: unknown, logger?: string) => server.log(level, data, logger),
      report: (error: unknown) => server.report(error),
      mountsChanged: () => this.#rewatch(),
    }
  }
  #hostMemo: MountHost | undefined

  /**
   * A session or listen stream subscribed to `uri`: the first one starts its owner's watch. Answers
   * when the owner has it in place (see {@link StartedWatch.ready}); undefined when no mounted
   * source owns `uri` (nothing to wait for).
   */
  subscribed(uri: string): Promise<void> | undefined {
    const count = (this.#subscribers.get(uri) ?? 0) + 1
    this.#subscribers.set(uri, count)
    if (count === 1) this.#watch(uri)
    return this.#watches.get(uri)?.ready
  }

  /** One of those ended: the last one ends the watch. */
  unsubscribed(uri: string): void {
    const count = this.#subscribers.get(uri)
    if (count === undefined) return
    if (count > 1) { this.#subscribers.set(uri, count - 1); return }
    this.#subscribers.delete(uri)
    this.#watches.get(uri)?.subscription.unsubscribe()
    this.#watches.delete(uri)
  }

  /** Removes every mount in place (each closes what it made). */
  close(): void {
    for (const mount of this.#mounts) mount.remove()
    this.#mounts.clear()
  }

  /** Asks the mounted source owning `uri` (if one does) to watch it; its updates go to the subscribers. */
  #watch(uri: string): void {
    const source = this.#ownerOf(uri)
    if (source === undefined) return
    const server = this.server
    this.#watches.set(uri, { source, ...startWatch(source.watch(uri), () => server.notifyResourceUpdated(uri), error => server.report(error), server.options.scheduler) })
  }

  /** The mounted source a URI belongs to: its resource's, else the first template matching it; undefined when the server's own. */
  #ownerOf(uri: string): Mountable | undefined {
    const resource = this.server.resources.get(uri)
    if (resource !== undefined) return resource.mount?.source
    for (const entry of this.server.templates.values()) if (entry.template.match(uri) !== undefined) return entry.mount?.source
    return undefined
  }

  /** Mounts changed: each subscribed URI is watched by its owner now (a new one, or none). */
  #rewatch(): void {
    for (const uri of this.#subscribers.keys()) {
      const watch = this.#watches.get(uri)
      if (watch !== undefined && watch.source === this.#ownerOf(uri)) continue
      watch?.subscription.unsubscribe()
      this.#watches.delete(uri)
      this.#watch(uri)
    }
  }
}

/** True for a {@link Mountable} (a proxy), false for a server. */
function isMountable(source: McpServer | Mountable): source is Mountable {
  return typeof (source as Mountable).forward === 'function' && 'offers' in source
}

/**
 * How long a caller's subscription waits for the source to watch before it is answered anyway
 * (the source's listen stream has no timeout of its own: a source that never acknowledges would
 * hold the caller's subscribe for as long as the source lives).
 */
export const WATCH_READY_MS = 10_000

/** A mounted source's watch of one URI, started: its subscription, and when it is in place. */
export interface StartedWatch {
  readonly subscription: Subscription
  /**
   * Settles once the source watches (`'watching'`), the watch ended (an error is reported, not
   * thrown), or {@link WATCH_READY_MS} passed.
   */
  readonly ready: Promise<void>
}

/** Subscribes `watch`: `updated` per change, `report` for its error; see {@link StartedWatch}. */
export function startWatch(watch: Observable<WatchEvent>, updated: () => void, report: (error: unknown) => void, scheduler: SchedulerLike = asyncScheduler): StartedWatch {
  let resolve!: () => void
  const ready = new Promise<void>(done => { resolve = done })
  const bound = timer(WATCH_READY_MS, scheduler).subscribe(() => resolve())
  const settle = () => { resolve(); bound.unsubscribe() }
  const subscription = watch.subscribe({
    next: event => { if (event === 'watching') settle(); else updated() },
    error: error => { settle(); report(error) },
    complete: settle,
  })
  subscription.add(bound)
  return { subscription, ready }
}
