import type { Subscription } from './rx.ts'
import type { JsonObject, Meta, RequestId } from './jsonrpc/message.ts'
import { CancelledError } from './jsonrpc/errors.ts'
import { isJsonObject } from './jsonrpc/guards.ts'
import type { RequestInfo, ResponseStream } from './transport.ts'
import type { ProgressSequence } from './operators/progress.ts'
import type { ModernMeta } from './schema/modern.ts'
import type { Principal } from './auth.ts'
import type { BatchCollector } from './batch-collector.ts'

/**
 * One incoming request while its handler runs: its id, method, params, `_meta`, a lazily created
 * AbortSignal, and whether it was cancelled. The request actor of the design, reduced to what the
 * per-message path needs.
 */
export class IncomingRequest {
  /** Set once a response went out or the request was cancelled: nothing more may be sent for it. */
  isDone = false
  /** The handler's Observable subscription, when the handler returned an Observable. */
  subscription: Subscription | undefined = undefined
  /** Created only when a handler reads `signal`, to keep the per-request cost low. */
  #controller: AbortController | undefined = undefined
  /** For a request inside a JSON-RPC batch: where its response goes. */
  batch: BatchCollector | undefined = undefined
  /** Set once the handler reported progress: its response then goes out a turn later (see #respond). */
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

  /** Marks the request done without a response and stops its handler. */
  cancel(reason?: unknown): void {
    if (this.isDone) return
    this.isDone = true
    this.subscription?.unsubscribe()
    this.#controller?.abort(reason ?? new CancelledError())
  }
}
