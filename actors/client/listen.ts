import { Observable, Subscription } from '../../lib/rx.ts'
import type { Connection } from '../../lib/connection.ts'
import type { JsonObject, RequestId } from '../../lib/jsonrpc/message.ts'
import { ConnectionClosedError } from '../../lib/jsonrpc/errors.ts'
import { isJsonObject } from '../../lib/jsonrpc/guards.ts'
import type { RequestEvent } from '../../lib/operators/progress.ts'
import { MetaKey } from '../../lib/schema/modern.ts'
import type { ServerCapabilities } from '../../lib/schema/types.ts'
import type { ListenEvent, SubscriptionFilter } from './api.ts'

/** The notification each filter field asks for (MCP 2026-07-28 subscriptions). */
export const LISTEN_NOTIFICATIONS = {
  toolsListChanged: 'notifications/tools/list_changed',
  promptsListChanged: 'notifications/prompts/list_changed',
  resourcesListChanged: 'notifications/resources/list_changed',
  resourceSubscriptions: 'notifications/resources/updated',
} as const

const ACKNOWLEDGED = 'notifications/subscriptions/acknowledged'

/** What {@link listenModern} needs from the client. */
export interface ModernListenSource {
  readonly connection: Connection
  /** Sends `subscriptions/listen` with these params through the client's modern request path, without timeout. */
  send(params: JsonObject): Observable<RequestEvent<JsonObject>>
  /** The id of the request the last `send` subscription put on the wire (read right after subscribing). */
  lastRequestId(): RequestId | undefined
  /** True once the client is closing: a request that fails then ends the stream quietly. */
  isClosing(): boolean
}

/**
 * One `subscriptions/listen` request as a stream of {@link ListenEvent}s (MCP 2026-07-28
 * subscriptions). The connection's notification bus is read before the request goes out, and
 * only notifications whose `_meta['io.modelcontextprotocol/subscriptionId']` is the request's id
 * pass (on stdio every subscription shares the channel). Completes on the server's graceful
 * result, on its `notifications/cancelled` for the request, and when the client closes; errors
 * when the request fails otherwise. Unsubscribing cancels the request, unless the server ended it
 * already: after its `notifications/cancelled` the request is not in progress any more, and a
 * client MUST only cancel requests it believes are (MCP 2026-07-28 cancellation), so it is left to
 * finish (the server's result follows, and is dropped).
 */
export function listenModern(source: ModernListenSource, filter: SubscriptionFilter): Observable<ListenEvent> {
  return new Observable<ListenEvent>(subscriber => {
    const connection = source.connection
    const subscriptions = new Subscription()
    /** The listen request's id, known once it went out; notifications are matched against it. */
    let id: RequestId | undefined
    /** Set once the acknowledgement passed: a repeated one is not the first message any more. */
    let isAcknowledged = false
    const isMine = (params: JsonObject) => id !== undefined && isJsonObject(params._meta) && params._meta[MetaKey.subscriptionId] === id
    subscriptions.add(connection.notifications(ACKNOWLEDGED).subscribe(params => {
      if (!isMine(params) || isAcknowledged) return
      isAcknowledged = true
      subscriber.next({ type: 'acknowledged', notifications: isJsonObject(params.notifications) ? params.notifications as SubscriptionFilter : {} })
    }))
    for (const method of new Set(Object.values(LISTEN_NOTIFICATIONS))) {
      subscriptions.add(connection.notifications(method).subscribe(params => {
        if (isMine(params)) subscriber.next({ type: 'notification', method, params })
      }))
    }
    /** Set once the server cancelled the subscription: the request is over, and is not cancelled again. */
    let isEndedByServer = false
    // MCP cancellation: a server ends a subscription with notifications/cancelled naming its request.
    subscriptions.add(connection.notifications('notifications/cancelled').subscribe(params => {
      if (id === undefined || params.requestId !== id) return
      isEndedByServer = true
      subscriber.complete()
    }))
    const request = source.send({ notifications: filter as unknown as JsonObject }).subscribe({
      error: error => source.isClosing() && error instanceof ConnectionClosedError ? subscriber.complete() : subscriber.error(error),
      // The server's result to the listen request is its graceful end of the subscription.
      complete: () => subscriber.complete(),
    })
    id = source.lastRequestId()
    return () => {
      subscriptions.unsubscribe()
      // Unsubscribing a request still pending cancels it on the wire: not one the server ended.
      if (!isEndedByServer) request.unsubscribe()
    }
  })
}

/** What {@link listenLegacy} needs from the client. */
export interface LegacyListenSource {
  readonly connection: Connection
  readonly capabilities: ServerCapabilities
  /** Sends one request of the session (resources/subscribe, resources/unsubscribe). */
  call(method: string, params: JsonObject): Promise<unknown>
  isClosing(): boolean
  reportError(error: unknown): void
}

/**
 * The legacy mapping of `listen`: the acknowledgement holds what the server's capabilities offer of
 * `filter` (the list changes it declared `listChanged` for; the resource subscriptions when it
 * declared `resources.subscribe`, after `resources/subscribe` succeeded for each URI); then the
 * session's matching notifications (resource updates only for the URIs asked for). Unsubscribing
 * sends `resources/unsubscribe` for each URI. Completes when the client closes, errors with
 * `ConnectionClosedError` when the session drops.
 */
export function listenLegacy(source: LegacyListenSource, filter: SubscriptionFilter): Observable<ListenEvent> {
  return new Observable<ListenEvent>(subscriber => {
    const { connection, capabilities } = source
    const granted = grantedByCapabilities(filter, capabilities)
    const uris = new Set(granted.resourceSubscriptions ?? [])
    const subscriptions = new Subscription()
    /** Set once the subscribes went out: only then is there something to unsubscribe. */
    let hasSubscribed = false
    let isDone = false
    subscriptions.add(() => {
      isDone = true
      if (!hasSubscribed || connection.isClosed) return
      for (const uri of uris) source.call('resources/unsubscribe', { uri }).catch(error => source.reportError(error))
    })
    hasSubscribed = uris.size > 0
    Promise.all([...uris].map(uri => source.call('resources/subscribe', { uri }))).then(() => {
      if (isDone) return
      subscriber.next({ type: 'acknowledged', notifications: granted })
      for (const [field, method] of Object.entries(LISTEN_NOTIFICATIONS) as [keyof SubscriptionFilter, string][]) {
        const wanted = field === 'resourceSubscriptions' ? uris.size > 0 : granted[field] === true
        if (!wanted) continue
        subscriptions.add(connection.notifications(method).subscribe(params => {
          if (field !== 'resourceSubscriptions' || uris.has(params.uri as string)) subscriber.next({ type: 'notification', method, params })
        }))
      }
      void connection.closed.then(() => source.isClosing() ? subscriber.complete()
        : subscriber.error(new ConnectionClosedError('The connection closed while listening')))
    }, error => subscriber.error(error))
    return subscriptions
  })
}

/** The part of a filter a legacy server's capabilities can honour. */
export function grantedByCapabilities(filter: SubscriptionFilter, capabilities: ServerCapabilities): SubscriptionFilter {
  const granted: SubscriptionFilter = {}
  const listChanged = (capability: unknown) => isJsonObject(capability) && capability.listChanged === true
  if (filter.toolsListChanged === true && listChanged(capabilities.tools)) granted.toolsListChanged = true
  if (filter.promptsListChanged === true && listChanged(capabilities.prompts)) granted.promptsListChanged = true
  if (filter.resourcesListChanged === true && listChanged(capabilities.resources)) granted.resourcesListChanged = true
  const subscribe = isJsonObject(capabilities.resources) && capabilities.resources.subscribe === true
  if (subscribe && Array.isArray(filter.resourceSubscriptions) && filter.resourceSubscriptions.length > 0) {
    granted.resourceSubscriptions = filter.resourceSubscriptions.filter(uri => typeof uri === 'string')
  }
  return granted
}

/**
 * The modern era's resource subscriptions (MCP 2026-07-28 replaced resources/subscribe by
 * subscriptions/listen): one listen stream carries the updates of every subscribed URI, replaced
 * whenever the set changes. Its notifications travel the connection's notification bus, so
 * `notifications('notifications/resources/updated')` sees them as a legacy session's.
 */
export class ResourceSubscriptions {
  /** The URIs subscribed to. */
  readonly #uris = new Set<string>()
  /** The listen stream of the current set, if any. */
  #stream: Subscription | undefined

  constructor(private readonly listen: (filter: SubscriptionFilter) => Observable<ListenEvent>, private readonly reportError: (error: unknown) => void) {}

  /** Adds a URI; resolves once the new stream is acknowledged (at once when it was there already). */
  add(uri: string): Promise<void> {
    if (this.#uris.has(uri)) return Promise.resolve()
    this.#uris.add(uri)
    return this.#restart()
  }

  /** Removes a URI; resolves once the stream without it is acknowledged (at once when none is left). */
  remove(uri: string): Promise<void> {
    if (!this.#uris.delete(uri)) return Promise.resolve()
    return this.#restart()
  }

  /** Ends the stream (the client closes). */
  stop(): void {
    this.#stream?.unsubscribe()
    this.#stream = undefined
  }

  #restart(): Promise<void> {
    this.stop()
    if (this.#uris.size === 0) return Promise.resolve()
    return new Promise((resolve, reject) => {
      /** Set once acknowledged: a later failure is reported, since nobody awaits it any more. */
      let isAcknowledged = false
      this.#stream = this.listen({ resourceSubscriptions: [...this.#uris] }).subscribe({
        next: event => { if (event.type === 'acknowledged') { isAcknowledged = true; resolve() } },
        error: error => isAcknowledged ? this.reportError(error) : reject(error),
        complete: () => resolve(),
      })
    })
  }
}
