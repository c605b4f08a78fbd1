import type { Subscription } from './rx.ts'
import type { JsonObject, Meta, RequestId } from './jsonrpc/message.ts'
import { CancelledError } from './jsonrpc/errors.ts'
import { isJsonObject } from './jsonrpc/guards.ts'
import type { RequestInfo, ResponseStream } from './transport.ts'
import type { ProgressSequence } from './operators/progress.ts'
import type { ModernMeta } from './schema/modern.ts'
import type { Principal } from './auth.ts'
import type { BatchCollector } from './batch-collector.ts'
import type { ActorRef } from './actor/system.ts'
import type { RequestInput, RequestMessage } from './request-logic.ts'
import type { IncomingWatch } from './incoming-watch.ts'

/**
 * The owner's record of one incoming request while its handler runs: its id, method, params,
 * `_meta`, a lazily created AbortSignal, and the I/O that goes with it. What happens to the
 * request is decided by its actor (`actor`, running lib/request-logic.ts): the owner sends it the
 * request's life as messages and does what its events say.
 */
export class IncomingRequest implements RequestInput {
  /** Set once a response went out or the request was cancelled: nothing more may be sent for it. */
  isDone = false
  /** The request's actor, once spawned: where its progress, outcome and cancellation go. */
  actor: ActorRef<RequestMessage> | undefined = undefined
  /** Called when the actor ends with the request neither answered nor aborted (its parent stopped it). */
  onStopped: ((request: IncomingRequest) => void) | undefined = undefined
  /** The handler's Observable subscription, when the handler returned an Observable. */
  subscription: Subscription | undefined = undefined
  /** Created only when a handler reads `signal`, to keep the per-request cost low. */
  #controller: AbortController | undefined = undefined
  /** For a request inside a JSON-RPC batch: where its response goes. */
  batch: BatchCollector | undefined = undefined
  /** Set once the owner sent progress for it: its response then goes out a turn later (see #respond). */
  hasSentProgress = false
  /** The progress values sent for the request's token (made on the first report), kept increasing. */
  progress: ProgressSequence | undefined = undefined
  /**
   * A modern-era request's own `_meta` (MCP 2026-07-28: version, client capabilities and info, log
   * level), as the gate read and checked it; undefined for a request of the session's negotiated
   * version. Read once, so the handler does not parse it again.
   */
  modernMeta: ModernMeta | undefined = undefined
  /** Who sent the request, when its transport authenticated it (see `Inbound`). */
  principal: Principal | undefined = undefined
  /** The transport's request that carried it (see `Inbound`); undefined when the transport gave none. */
  requestInfo: RequestInfo | undefined = undefined
  /** The stream carrying its answers, when the transport has one it can end and resume (see `Envelope.stream`). */
  stream: ResponseStream | undefined = undefined
  /** What watches the request (telemetry), when its owner has an observer (see lib/request-observer.ts). */
  watch: IncomingWatch | undefined = undefined

  /** The protocol version the request speaks when it carries its own (`modernMeta`). */
  get protocolVersion(): string | undefined { return this.modernMeta?.protocolVersion }

  constructor(
    readonly id: RequestId,
    readonly method: string,
    readonly params: JsonObject | undefined,
  ) {}

  /** `params._meta`, when present. */
  get meta(): Meta | undefined {
    const meta = this.params?._meta
    return isJsonObject(meta) ? meta as Meta : undefined
  }

  /** The progress token the requester sent, if any. */
  get progressToken(): string | number | undefined {
    const token = this.meta?.progressToken
    return typeof token === 'string' || typeof token === 'number' ? token : undefined
  }

  /** Aborted when the requester cancels or the connection closes. */
  get signal(): AbortSignal {
    this.#controller ??= new AbortController()
    return this.#controller.signal
  }

  /**
   * Reports progress (params of `notifications/progress`, checked already): through the actor,
   * which lets it out while the request runs. Without an actor, nothing goes out.
   */
  reportProgress(params: JsonObject): void {
    this.actor?.send({ type: 'progress', params })
  }

  /** The actor ended (see RequestInput): a request still unanswered was stopped from outside. */
  unsubscribe(): void {
    if (!this.isDone) this.onStopped?.(this)
  }

  /** Marks the request done without a response and stops its handler. */
  cancel(reason?: unknown): void {
    if (this.isDone) return
    this.isDone = true
    this.subscription?.unsubscribe()
    this.#controller?.abort(reason ?? new CancelledError())
  }
}
