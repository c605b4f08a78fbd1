/**
 * One run of a configured server, as a child actor of its supervisor: where the host's I/O for that
 * server happens. It starts the client (spawn or connect, then the handshake, within the start
 * timeout on the host's scheduler), lists its offer (again on each list_changed, the newest listing
 * winning), forwards its log messages, and fails when the client's connection closes: that failure
 * is the crash the supervisor's `restart` strategy answers. Ending the run (a restart, the
 * supervisor stopped) closes its client.
 *
 * ```
 *   starting --start (timeout)--> connected --every kind listed once--> ready --connection closed--> fail
 *       '--could not start--> fail                  offer (each listing of each kind, as it comes)
 * ```
 */
import { NONE, type ActorLogic } from '../actors/actor.ts'
import type { McpClient } from '../actors/client.ts'
import { Observable, Subscription, catchError, map, of, switchMap, take, throwError, toArray, type SchedulerLike } from '../lib/rx.ts'
import { withTimeout } from '../lib/operators/with-timeout.ts'
import type { LoggingLevel } from '../lib/schema/types.ts'
import { boundList, maxItems, newestListing, type HostLimits, type OfferKind } from './bounds.ts'
import type { RunEvent, StartedClient } from './supervisor.ts'

/** What a run needs from the host. */
export interface ServerRunOptions {
  /** Starts the client; the child's stderr (stdio servers) goes to `stderr` as it comes, from the spawn on. */
  start(stderr: (chunk: string) => void): Promise<StartedClient>
  /** Ms the start may take (the restart policy's `startTimeoutMs`). */
  startTimeoutMs: number
  /** Where the start timeout and the list_changed interval run. */
  scheduler: SchedulerLike
  limits: HostLimits
  /** Told when a listing was cut to fit `limits` (once per warning, not again on every listing that finds the same). */
  trimmed(warning: string): void
  /** The level asked of a server that logs, and where its log messages go. */
  logLevel: LoggingLevel
  log(level: LoggingLevel, logger: string | undefined, data: unknown): void
  /** Given each client's closing, which the host waits for when it closes or reloads. */
  closing(closed: Promise<unknown>): void
}

/** The logic of one run of a server (restarted, by its supervisor's strategy, from the start). */
export function serverRun(options: ServerRunOptions): ActorLogic<undefined, never> {
  return {
    name: 'client',
    initial: () => undefined,
    transition: state => [state, NONE],
    start: (_input, self) => {
      self.sendParent({ type: 'starting' } satisfies RunEvent)
      // Straight to the supervisor, not through the run: a child's last words may come after its run ended.
      const stderr = (chunk: string) => self.sendParent({ type: 'stderr', chunk } satisfies RunEvent)
      return runEvents(options, stderr).subscribe({ next: event => self.sendParent(event), error: (error: unknown) => self.fail(error) })
    },
  }
}

/** The events of one run; errors with the reason it crashed; unsubscribing closes its client. */
function runEvents(options: ServerRunOptions, stderr: (chunk: string) => void): Observable<RunEvent> {
  return started(options, stderr).pipe(
    withTimeout({ each: options.startTimeoutMs, scheduler: options.scheduler, error: (_limit, ms) => new Error(`no answer within ${ms} ms`) }),
    catchError((error: unknown) => throwError(() => new Error(`could not start: ${messageOf(error)}`))),
    switchMap(({ client, pid }) => connected(options, client, pid)),
  )
}

/** The started client, once; a start that finishes after it was unsubscribed (timed out, stopped) gets its client closed. */
function started(options: ServerRunOptions, stderr: (chunk: string) => void): Observable<StartedClient> {
  return new Observable<StartedClient>(subscriber => {
    // A start that throws at once (a root outside the allowed ones) fails like one that rejects.
    new Promise<StartedClient>(resolve => resolve(options.start(stderr))).then(result => {
      if (subscriber.closed) return options.closing(result.client.close().catch(() => {}))
      subscriber.next(result)
      subscriber.complete()
    }, (error: unknown) => subscriber.error(error))
  })
}

/** A connected client: its offer listed (ready once every kind was listed once), its logs forwarded, a crash when it closes. */
function connected(options: ServerRunOptions, client: McpClient, pid: number | undefined): Observable<RunEvent> {
  return new Observable<RunEvent>(subscriber => {
    subscriber.next(pid === undefined ? { type: 'connected', client } : { type: 'connected', client, pid })
    const subscriptions = new Subscription()
    const capabilities = client.serverCapabilities
    if (capabilities.logging !== undefined) {
      subscriptions.add(client.notifications('notifications/message').subscribe(params => {
        const { level, logger, data } = params as { level: LoggingLevel; logger?: string; data: unknown }
        options.log(level, logger, data)
      }))
      client.setLoggingLevel(options.logLevel).catch(() => {})
    }
    const kinds = (['tools', 'resources', 'prompts'] as const).filter(kind => capabilities[kind] !== undefined)
    /** Kinds not listed once yet: the server is ready when none is left. */
    const unlisted = new Set<OfferKind>(kinds)
    /** The last warning of each kind, so a listing that finds the same says nothing. */
    const warnings: Partial<Record<OfferKind, string>> = {}
    /** Set once `ready` went out. */
    let isReady = false
    const ready = () => {
      if (isReady || unlisted.size > 0) return
      isReady = true
      subscriber.next({ type: 'ready', serverInfo: client.serverInfo })
    }
    for (const kind of kinds) {
      const changes = client.notifications(`notifications/${kind}/list_changed` as 'notifications/tools/list_changed')
      subscriptions.add(newestListing(changes, () => listing(options, client, kind, warnings), options.limits.listChangedIntervalMs, options.scheduler).subscribe(items => {
        if (items !== undefined) subscriber.next({ type: 'offer', kind, items })
        unlisted.delete(kind)
        ready()
      }))
    }
    ready()
    void client.closed.then(() => subscriber.error(new Error('the connection closed')))
    return () => {
      subscriptions.unsubscribe()
      options.closing(client.close().catch(() => {}))
    }
  })
}

/**
 * One listing of `kind`, cut to the limits (one past the count bound is listed, to know there were
 * more; pagination stops there); undefined when it failed (the server went away: its crash follows).
 */
function listing(options: ServerRunOptions, client: McpClient, kind: OfferKind, warnings: Partial<Record<OfferKind, string>>): Observable<readonly unknown[] | undefined> {
  const limits = options.limits
  const items: Observable<{ readonly description?: string }> = kind === 'tools' ? client.tools() : kind === 'resources' ? client.resources() : client.prompts()
  return items.pipe(
    take(maxItems(kind, limits) + 1),
    toArray(),
    map(listed => {
      const { items: kept, warning } = boundList(kind, listed, limits)
      if (warning !== undefined && warning !== warnings[kind]) options.trimmed(warning)
      warnings[kind] = warning
      return kept
    }),
    catchError(() => of(undefined)),
  )
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
