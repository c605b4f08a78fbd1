/**
 * What a server can mount (`McpServer.mount`): a source of tools, resources, templates and prompts
 * whose requests are forwarded to it. A leaf: the server's mount reads it, `proxy` makes one from a
 * connected client, and nothing here knows either.
 */
import type { Observable } from '../../lib/rx.ts'
import type { Connection } from '../../lib/connection-contract.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import type { Principal } from '../../lib/auth.ts'
import type {
  ClientCapabilities, CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult, ListRootsResult, LoggingLevel, Prompt, Resource, ResourceTemplate, Tool,
} from '../../lib/schema/types.ts'

/** What a source offers now: its lists (every page), and what it answers besides. */
export interface MountOffer {
  readonly tools: readonly Tool[]
  readonly resources: readonly Resource[]
  readonly templates: readonly ResourceTemplate[]
  readonly prompts: readonly Prompt[]
  /** The source answers `completion/complete`. */
  readonly completions: boolean
  /** The source lets resources be subscribed (its updates are then forwarded). */
  readonly subscribe: boolean
}

/**
 * The caller a forwarded request is made for: the mounting server's context of the request (a
 * `ServerContext` is one). What the source asks while serving it (sampling, elicitation, roots)
 * is asked of this caller, in its era.
 */
export interface MountCaller {
  /** Aborted when the caller cancels (the forwarded request is then cancelled downstream). */
  readonly signal: AbortSignal
  /** The caller's era: a modern caller's asks are `input_required` rounds (see `requestState`). */
  readonly era: 'legacy' | 'modern'
  /** Who the caller is, when its transport authenticated it (a held call is resumed only by the same). */
  readonly principal: Principal | undefined
  /** The caller's legacy session; undefined for a modern-era request. */
  readonly session: MountCallerSession | undefined
  /** What the caller declared it answers (roots, sampling, elicitation). */
  readonly clientCapabilities: ClientCapabilities
  /** Set while the request runs as a task of the mounting server. */
  readonly task: { readonly taskId: string } | undefined
  /** The caller asked for progress (the forwarded request then asks its source for progress too). */
  readonly progressToken: string | number | undefined
  /** Modern era: what an earlier round of this request carried (sealed in its `requestState`); undefined in the first. */
  readonly requestState: unknown
  /** Modern era: what this round carries to the caller's retry (sealed into the round's `requestState`); ignored in the legacy era. */
  setRequestState(value: unknown): void
  progress(progress: number, total?: number, message?: string): void
  /** A log message about this request, to the caller at its level (its session's, or the modern request's own). */
  log(level: LoggingLevel, data: unknown, logger?: string): void
  /** `options.key`: the input request's key in a modern round (unique within the request). */
  sample(params: CreateMessageParams, options?: { key?: string }): Promise<CreateMessageResult>
  elicit(params: ElicitParams, options?: { key?: string }): Promise<ElicitResult>
  listRoots(options?: { key?: string }): Promise<ListRootsResult>
}

/** A caller's legacy session, as a mount sees it (a `ServerSession` is one). */
export interface MountCallerSession {
  readonly id: string
  /** What the session's client declared at initialize. */
  readonly state: { readonly clientCapabilities: ClientCapabilities }
  readonly closed: Promise<void>
  readonly connection: Connection
  sample(params: CreateMessageParams): Promise<CreateMessageResult>
  elicit(params: ElicitParams): Promise<ElicitResult>
  listRoots(): Promise<ListRootsResult>
}

/**
 * A log message the source sent (`notifications/message`). `caller`: the caller of the forwarded
 * request it was about, who gets it as its own; without one it goes to every legacy session.
 */
export interface MountLog { readonly level: LoggingLevel; readonly logger?: string; readonly data: unknown; readonly caller?: MountCaller }

/** What a {@link Mountable}'s watch of a URI emits: `'watching'` once, when in place, then `'updated'` per change. */
export type WatchEvent = 'watching' | 'updated'

/**
 * A source a server mounts (see `proxy`, and `McpServer.mount`, which makes one of a server).
 * Mounted entries are written into the mounting server's registries and forwarded as they are:
 * the source validates, the mounting server does not.
 */
export interface Mountable {
  /**
   * What the source offers, first when known and again after each change (its list_changed,
   * followed by a relisting). When it completes, the source is gone: its entries are removed.
   */
  readonly offers: Observable<MountOffer>
  /**
   * Forwards one request (params with the source's own names) for `caller`: emits the result and
   * completes; progress goes to `caller.progress`; what the source asks goes to the caller.
   * Unsubscribing cancels it downstream.
   */
  forward(method: string, params: JsonObject | undefined, caller: MountCaller): Observable<JsonObject>
  /**
   * Emits `'watching'` once the source has the subscription in place (its `resources/subscribe`
   * answered, or its listen stream acknowledged), then `'updated'` each time `uri` changes; the
   * source is asked to watch it while this is subscribed, and to stop when it is unsubscribed.
   * The server answers its caller's subscription after `'watching'` (or the watch's end), so an
   * update the caller causes right after cannot fall before the source watches.
   */
  watch(uri: string): Observable<WatchEvent>
  /**
   * A source that keeps a client per caller session (mode 'session'): watches `uri` for `session`
   * through that session's own client, for as long as this is subscribed; emits each time it
   * changes there. A legacy session's subscription to a URI the source owns goes here (its updates
   * reach that session alone) instead of through the counted, shared {@link watch}. Emits as
   * {@link watch} does.
   */
  watchFor?(uri: string, session: MountCallerSession): Observable<WatchEvent>
  /** The source's log messages (hot). */
  readonly logs: Observable<MountLog>
  /**
   * True when `caller` continues a forwarded call the source holds across the caller's input
   * rounds (a modern retry naming it in its `requestState`): what a policy in front checked on its
   * first round (consent) need not be asked again.
   */
  holds?(caller: MountCaller): boolean
  /** Ends what the source holds for the mount (its clients); called once, by `remove()`. */
  close?(): Promise<void>
}

/** Options of `McpServer.mount`. */
export interface MountOptions {
  /**
   * Mounting another server (not a `Mountable`): `'shared'` (default, one in-process client for
   * every caller) or `'session'` (one per caller's legacy session, so roots are that session's).
   */
  mode?: 'shared' | 'session'
  /** Told of an entry left out (a name or URI the mounting server already has); default: the server's report. */
  onSkipped?: (kind: 'tool' | 'resource' | 'template' | 'prompt', name: string, reason: string) => void
}

/** What `McpServer.mount` returns. */
export interface Mount {
  /** Takes the mounted entries out (clients hear list_changed) and ends the source's clients the mount made. */
  remove(): void
}
