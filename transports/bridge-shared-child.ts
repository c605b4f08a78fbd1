/**
 * One upstream (a stdio child) of a shared bridge, and one session's side of it: the tables that
 * rename request ids and progress tokens on the way up and back on the way down. Which session a
 * message from the child belongs to, and which child a session's request goes to, is the lane's
 * business (bridge-shared.ts); this file knows one child.
 */
import { Subject } from '../lib/rx.ts'
import type { Inbound, Transport } from '../lib/transport.ts'
import type { JsonObject, JsonRpcMessage, JsonRpcPayload, JsonRpcRequest, RequestId } from '../lib/jsonrpc/message.ts'
import { ErrorCode } from '../lib/jsonrpc/errors.ts'

/** One downstream connection's side of a shared upstream (its tenancy of the children). */
export class ChildTenant {
  readonly inbound = new Subject<Inbound>()
  isOpen = true
  /** The child this session holds (an exclusive lane): its requests go there, and that child's questions come here. */
  held: SharedChild | undefined

  deliver(message: JsonRpcMessage): void {
    if (this.isOpen) this.inbound.next({ type: 'message', message })
  }

  end(): void {
    if (!this.isOpen) return
    this.isOpen = false
    this.inbound.complete()
  }
}

/** What a child tells its lane. */
export interface ChildOwner {
  /** The child answered its initialize (a result or an error). */
  initialized(child: SharedChild, answer: JsonRpcMessage): void
  /** A session's answer came back; `method` is the request's. The lane may rewrite the answer before it is delivered. */
  answered(child: SharedChild, session: ChildTenant, answer: JsonRpcMessage, method: string): JsonRpcMessage
  /** The last request that held the child was answered or cancelled. */
  released(child: SharedChild): void
  /** A request of the child's own (elicitation, sampling, roots): the lane routes it. */
  asked(child: SharedChild, request: JsonRpcRequest): void
  /** A notification of the child's that names no request (list_changed, logs). */
  notified(child: SharedChild, message: JsonRpcMessage): void
  /** The child's stream ended (`error` when it failed). */
  ended(child: SharedChild, error: unknown): void
}

/** A session's request the child is serving. */
interface Pending {
  readonly session: ChildTenant
  readonly id: RequestId
  readonly method: string
  /** It holds the child for its session (an exclusive lane). */
  readonly holds: boolean
  /** The session cancelled it (or left); the child may still be working on it. */
  isCancelled: boolean
}

/** The id of the lane's initialize (the child's own requests are numbered). */
const INITIALIZE_ID = 'i'

/**
 * One child process shared by sessions: its requests table (upstream id -> the session and its
 * id), its progress tokens, and, in an exclusive lane, the session that holds it.
 */
export class SharedChild {
  /** The session whose requests it serves now (exclusive lanes); undefined when idle. */
  holder: ChildTenant | undefined
  /** Answered its initialize with a result. */
  isReady = false
  /** Being closed (retired or failed): no new requests go to it. */
  isClosing = false
  /** Stopped by its lane on purpose (it may still work for a session that gave up): its end fails no session. */
  isRetired = false
  /** Upstream request id -> the session's request. */
  readonly #pending = new Map<RequestId, Pending>()
  /** Upstream progress token -> the session and the token it used. */
  readonly #tokens = new Map<string, { session: ChildTenant; token: string | number }>()
  /** Holding requests of the holder in flight. */
  #holding = 0
  /** The lane's initialize is waiting for its answer. */
  #isInitializing = false
  #nextId = 0
  /** Messages for the child until it is initialized (children the lane initializes itself); undefined: sent at once. */
  #buffer: JsonRpcMessage[] | undefined

  constructor(readonly upstream: Transport, readonly owner: ChildOwner, readonly report: (error: unknown) => void, isBuffered: boolean) {
    this.#buffer = isBuffered ? [] : undefined
    upstream.inbound.subscribe({
      next: item => {
        if (item.type === 'session') return
        if (item.type === 'invalid') { this.#fromUpstreamInvalid(item.error); return }
        const payload = item.message as JsonRpcPayload
        for (const message of Array.isArray(payload) ? payload : [payload]) this.#fromUpstream(message)
      },
      error: error => this.#end(error),
      complete: () => this.#end(undefined),
    })
  }

  /** Sessions with requests on this child that are not cancelled. */
  get sessions(): Set<ChildTenant> {
    const sessions = new Set<ChildTenant>()
    for (const pending of this.#pending.values()) if (!pending.isCancelled) sessions.add(pending.session)
    return sessions
  }

  /** True while it has cancelled requests it never answered: it may still ask about them. */
  get hasOrphans(): boolean {
    for (const pending of this.#pending.values()) if (pending.isCancelled) return true
    return false
  }

  /** Sends the lane's initialize; the answer goes to the owner, and then notifications/initialized up. */
  initialize(params: JsonObject | undefined): void {
    this.#isInitializing = true
    this.#write({ jsonrpc: '2.0', id: INITIALIZE_ID, method: 'initialize', ...(params === undefined ? {} : { params }) } as JsonRpcRequest, true)
  }

  /** A session's request, renamed (id and progress token); `holds` when it holds the child for the session. */
  request(session: ChildTenant, message: JsonRpcRequest, holds: boolean): void {
    const upstreamId = this.#nextId++
    this.#pending.set(upstreamId, { session, id: message.id, method: message.method, holds, isCancelled: false })
    if (holds) this.#holding++
    const token = message.params?._meta?.progressToken
    if (token === undefined) return this.#write({ ...message, id: upstreamId })
    const upstreamToken = `t${upstreamId}`
    this.#tokens.set(upstreamToken, { session, token })
    this.#write({ ...message, id: upstreamId, params: { ...message.params, _meta: { ...message.params!._meta, progressToken: upstreamToken } } })
  }

  /** A session's notifications/cancelled: passed on renamed; the request no longer holds the child. False when it is not here. */
  cancel(session: ChildTenant, message: JsonRpcMessage & { params?: JsonObject }, requestId: RequestId | undefined): boolean {
    for (const [upstreamId, pending] of this.#pending) {
      if (pending.session !== session || pending.id !== requestId || pending.isCancelled) continue
      this.#write({ ...message, params: { ...message.params, requestId: upstreamId } } as JsonRpcMessage)
      this.#cancelled(upstreamId, pending)
      return true
    }
    return false
  }

  /** A session left: each of its requests here is cancelled up, so the child stops working for nobody. */
  leave(session: ChildTenant): void {
    for (const [upstreamId, pending] of this.#pending) {
      if (pending.session !== session || pending.isCancelled) continue
      this.#write({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: upstreamId, reason: 'The client went away' } })
      this.#cancelled(upstreamId, pending)
    }
    for (const [token, owner] of this.#tokens) if (owner.session === session) this.#tokens.delete(token)
  }

  /** A message that is not a request (an answer to the child, a notification), as it is. */
  send(message: JsonRpcMessage): void {
    this.#write(message)
  }

  /** The holder's holding requests dropped to none: the child is free again. */
  release(): void {
    this.holder = undefined
    this.#holding = 0
  }

  close(): Promise<void> {
    this.isClosing = true
    return this.upstream.close()
  }

  #cancelled(upstreamId: RequestId, pending: Pending): void {
    this.#tokens.delete(`t${String(upstreamId)}`)
    // Only a request that held the child can leave a question no one can place: it stays, an orphan,
    // until answered or the child is stopped. Any other is forgotten.
    if (!pending.holds) { this.#pending.delete(upstreamId); return }
    pending.isCancelled = true
    if (--this.#holding === 0) this.owner.released(this)
  }

  /** Forgets the orphans: the child is handed on although it may still work on them (it cannot be replaced). */
  forgetOrphans(): void {
    for (const [upstreamId, pending] of this.#pending) if (pending.isCancelled) this.#pending.delete(upstreamId)
  }

  #write(message: JsonRpcMessage, isInitialize = false): void {
    if (this.#buffer !== undefined && !isInitialize) { this.#buffer.push(message); return }
    try {
      this.upstream.send(message)?.catch(this.report)
    } catch (error) {
      this.report(error)
    }
  }

  #fromUpstreamInvalid(error: Error): void {
    // An oversized answer whose id the codec could read fails that request instead of leaving it waiting.
    const details = error as { id?: RequestId; kind?: string }
    if (details.kind === 'response' && details.id !== undefined && this.#pending.has(details.id)) {
      this.#fromUpstream({ jsonrpc: '2.0', id: details.id, error: { code: ErrorCode.InternalError, message: `The server's answer could not be passed on: ${error.message}` } })
      return
    }
    // A request of the child's too large to pass on: the child hears so, as a client would answer it.
    if (details.kind === 'request' && details.id !== undefined) {
      this.#write({ jsonrpc: '2.0', id: details.id, error: { code: ErrorCode.InvalidRequest, message: `Invalid Request: ${error.message}` } })
      return
    }
    this.report(error)
  }

  #fromUpstream(message: JsonRpcMessage): void {
    if (typeof message !== 'object' || message === null) return
    if (!('method' in message)) return this.#answer(message)
    if (message.method === 'notifications/progress') {
      const token = (message.params as { progressToken?: unknown } | undefined)?.progressToken
      const owner = this.#tokens.get(String(token))
      if (owner !== undefined) owner.session.deliver({ ...message, params: { ...message.params, progressToken: owner.token } })
      return
    }
    if ('id' in message) return this.owner.asked(this, message)
    this.owner.notified(this, message)
  }

  /** The session a request of the child's belongs to by the progress token it carries, with that token renamed back. */
  byProgressToken(request: JsonRpcRequest): { session: ChildTenant; request: JsonRpcRequest } | undefined {
    const meta = request.params?._meta
    const owner = meta?.progressToken === undefined ? undefined : this.#tokens.get(String(meta.progressToken))
    if (owner === undefined) return undefined
    return { session: owner.session, request: { ...request, params: { ...request.params, _meta: { ...meta, progressToken: owner.token } } } }
  }

  #answer(message: JsonRpcMessage & { id: RequestId | null }): void {
    if (message.id === null) return
    if (message.id === INITIALIZE_ID && this.#isInitializing) {
      this.#isInitializing = false
      if ('result' in message) {
        this.isReady = true
        this.#write({ jsonrpc: '2.0', method: 'notifications/initialized' }, true)
        const buffered = this.#buffer ?? []
        this.#buffer = undefined
        for (const queued of buffered) this.#write(queued)
      }
      this.owner.initialized(this, message)
      return
    }
    const pending = this.#pending.get(message.id)
    if (pending === undefined) return
    this.#pending.delete(message.id)
    this.#tokens.delete(`t${String(message.id)}`)
    // The session gave up on it: nobody waits for the answer, and it holds nothing any more.
    if (pending.isCancelled) return
    pending.session.deliver(this.owner.answered(this, pending.session, { ...message, id: pending.id }, pending.method))
    if (pending.holds && --this.#holding === 0) this.owner.released(this)
  }

  #end(error: unknown): void {
    this.isClosing = true
    // Requests it will never answer get an error now, rather than nothing.
    for (const [upstreamId, pending] of this.#pending) {
      this.#pending.delete(upstreamId)
      if (pending.isCancelled) continue
      pending.session.deliver({ jsonrpc: '2.0', id: pending.id, error: { code: ErrorCode.InternalError, message: 'The server process ended before it answered' } })
    }
    this.#tokens.clear()
    this.#holding = 0
    this.owner.ended(this, error)
  }
}
