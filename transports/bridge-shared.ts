import { Observable, Subject } from '../lib/rx.ts'
import type { Inbound, Transport } from '../lib/transport.ts'
import type { JsonRpcMessage, JsonRpcPayload, JsonRpcRequest, RequestId } from '../lib/jsonrpc/message.ts'
import { ErrorCode } from '../lib/jsonrpc/errors.ts'
import { SUPPORTED_PROTOCOL_VERSIONS } from '../lib/schema/types.ts'

/** One upstream transport shared by many sessions: see {@link shareUpstream}. */
export interface SharedUpstream {
  /** A transport of its own for one session, multiplexed onto the upstream. */
  open(): Transport
  /** Closes the upstreams (and with them every session's transport). */
  close(): Promise<void>
}

/** The `_meta` key that ties a message to a task (MCP 2025-11-25 tasks). */
const RELATED_TASK = 'io.modelcontextprotocol/related-task'

/**
 * Shares an upstream (a stdio child) between many sessions, for servers that keep no per-session
 * state. Each session gets a transport that looks like a dedicated upstream: request ids and
 * progress tokens are renamed on the way up and back on the way down, so sessions never see each
 * other's; an upstream is initialized once and later sessions get its answer; its notifications
 * that belong to no request (list_changed, logs) go to every session on it.
 *
 * Given a factory instead of one transport, a session that asks for a protocol version the first
 * upstream did not settle on gets an upstream initialized with its version (one per known
 * revision at most), so every session is answered with the version it negotiated.
 *
 * A request from the upstream (elicitation, sampling, roots) goes to the session of the request it
 * belongs to: the one whose progress token or related task it carries, else the only session with
 * requests in flight. When that is ambiguous the upstream is answered with an error, never another
 * user's session; only that session's answer is passed back.
 */
export function shareUpstream(upstream: Transport | (() => Transport), report: (error: unknown) => void = error => console.error('[rxmcp bridge]', error)): SharedUpstream {
  const make = typeof upstream === 'function' ? upstream : undefined
  const children: SharedChild[] = []
  if (make === undefined) children.push(new SharedChild(upstream as Transport, report))
  // Picks the child for a session's first message: by the protocol version it asks for.
  const pick = (version: unknown): SharedChild => {
    const known = typeof version === 'string' && (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(version)
    const match = known ? children.find(child => child.askedVersion === version || child.answeredVersion === version) : undefined
    if (match !== undefined) return match
    const fresh = children.find(child => child.askedVersion === undefined)
    if (fresh !== undefined) return fresh
    // Unknown versions share the first child: a made-up version must not start a process.
    if (children.length === 0 || (known && make !== undefined)) {
      const child = new SharedChild(make!(), report)
      children.push(child)
      return child
    }
    return children[0]!
  }
  return {
    open() {
      const session = new SharedSession()
      return {
        kind: 'shared',
        inbound: new Observable<Inbound>(subscriber => session.inbound.subscribe(subscriber)),
        send: payload => {
          const messages = Array.isArray(payload) ? payload : [payload]
          if (session.child === undefined) {
            const first = messages[0] as JsonRpcMessage | undefined
            const version = first !== undefined && 'method' in first && first.method === 'initialize' ? first.params?.protocolVersion : undefined
            session.child = pick(version)
            session.child.join(session)
          }
          return session.child.send(session, messages, Array.isArray(payload))
        },
        close: async () => {
          if (session.child !== undefined) session.child.leave(session)
          else session.end()
        },
      }
    },
    async close() {
      await Promise.allSettled(children.map(child => child.upstream.close()))
    },
  }
}

/** One session's side of a shared upstream. */
class SharedSession {
  readonly inbound = new Subject<Inbound>()
  child: SharedChild | undefined
  isOpen = true

  deliver(message: JsonRpcMessage): void {
    if (this.isOpen) this.inbound.next({ type: 'message', message })
  }

  end(): void {
    if (!this.isOpen) return
    this.isOpen = false
    this.inbound.complete()
  }
}

/** One upstream and the sessions on it, with the tables that rename and route between them. */
class SharedChild {
  readonly sessions = new Set<SharedSession>()
  /** Upstream request id -> the session and the id it used. */
  readonly #requests = new Map<RequestId, { session: SharedSession; id: RequestId }>()
  /** Upstream progress token -> the session and the token it used. */
  readonly #tokens = new Map<string, { session: SharedSession; token: string | number }>()
  /** Upstream request id -> the progress token renamed for it, dropped with the answer. */
  readonly #tokenOf = new Map<RequestId, string>()
  /** Task id -> the session whose request created it (MCP 2025-11-25 tasks). */
  readonly #tasks = new Map<string, SharedSession>()
  /** Requests from the upstream -> the session they were sent to, the only one whose answer counts. */
  readonly #serverRequests = new Map<RequestId, SharedSession>()
  #nextId = 0
  /** The version the first initialize asked for, and the one the upstream answered with. */
  askedVersion: string | undefined
  answeredVersion: string | undefined
  // The upstream's answer to initialize, once it came, and who waits for it meanwhile.
  #initializeResult: unknown
  #initializeWaiters: { session: SharedSession; id: RequestId }[] | undefined
  #isInitializedSent = false
  #isStarted = false
  #failure: unknown

  constructor(readonly upstream: Transport, readonly report: (error: unknown) => void) {}

  join(session: SharedSession): void {
    this.sessions.add(session)
    if (this.#failure !== undefined) { session.inbound.error(this.#failure); return }
    this.#start()
  }

  leave(session: SharedSession): void {
    this.sessions.delete(session)
    for (const [id, owner] of this.#requests) if (owner.session === session && owner.id !== INITIALIZE_MARK) this.#requests.delete(id)
    for (const [token, owner] of this.#tokens) if (owner.session === session) this.#tokens.delete(token)
    for (const [taskId, owner] of this.#tasks) if (owner === session) this.#tasks.delete(taskId)
    // The upstream waits for answers this session will never give.
    for (const [id, owner] of this.#serverRequests) if (owner === session) this.#refuseServerRequest(id, 'The session this request was sent to has closed')
    session.end()
  }

  #start(): void {
    if (this.#isStarted) return
    this.#isStarted = true
    this.upstream.inbound.subscribe({
      next: item => {
        if (item.type === 'invalid') { this.#fromUpstreamInvalid(item.error); return }
        const payload = item.message as JsonRpcPayload
        for (const message of Array.isArray(payload) ? payload : [payload]) this.#fromUpstream(message)
      },
      error: error => { this.#failure = error; for (const session of this.sessions) session.inbound.error(error) },
      complete: () => { for (const session of this.sessions) session.end() },
    })
  }

  #fromUpstreamInvalid(error: Error): void {
    // An oversized answer whose id the codec could read fails that request instead of leaving it waiting.
    const details = error as { id?: RequestId; kind?: string }
    const owner = details.kind === 'response' && details.id !== undefined ? this.#requests.get(details.id) : undefined
    if (owner === undefined || owner.id === INITIALIZE_MARK) { this.report(error); return }
    this.#fromUpstream({ jsonrpc: '2.0', id: details.id!, error: { code: ErrorCode.InternalError, message: `The server's answer could not be passed on: ${error.message}` } })
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
    if ('id' in message) return this.#serverRequest(message)
    for (const session of this.sessions) session.deliver(message)
  }

  #answer(message: JsonRpcMessage & { id: RequestId | null }): void {
    if (message.id === null) return
    const owner = this.#requests.get(message.id)
    if (owner === undefined) return
    this.#requests.delete(message.id)
    const token = this.#tokenOf.get(message.id)
    if (token !== undefined) { this.#tokenOf.delete(message.id); this.#tokens.delete(token) }
    if (owner.id === INITIALIZE_MARK) {
      const result = 'result' in message ? message.result as { protocolVersion?: unknown } : undefined
      if (result !== undefined) {
        this.#initializeResult = result
        if (typeof result.protocolVersion === 'string') this.answeredVersion = result.protocolVersion
      }
      for (const waiter of this.#initializeWaiters ?? []) waiter.session.deliver({ ...message, id: waiter.id })
      this.#initializeWaiters = undefined
      return
    }
    // A task made for this session: its later messages name the task, and so find the session.
    const taskId = 'result' in message ? (message.result as { task?: { taskId?: unknown } }).task?.taskId : undefined
    if (typeof taskId === 'string') this.#tasks.set(taskId, owner.session)
    owner.session.deliver({ ...message, id: owner.id })
  }

  /** A request from the upstream: to the session it belongs to, or refused when that is unclear. */
  #serverRequest(message: JsonRpcRequest): void {
    const meta = (message.params as { _meta?: Record<string, unknown> } | undefined)?._meta
    const token = meta?.progressToken
    const task = (meta?.[RELATED_TASK] as { taskId?: unknown } | undefined)?.taskId
    let target: SharedSession | undefined
    let params = message.params
    const byToken = token === undefined ? undefined : this.#tokens.get(String(token))
    if (byToken !== undefined) {
      target = byToken.session
      params = { ...params, _meta: { ...meta, progressToken: byToken.token } }
    } else if (typeof task === 'string') {
      target = this.#tasks.get(task)
    } else if (message.method === 'ping') {
      // Any session would answer alike; the bridge answers for them.
      return this.#send({ jsonrpc: '2.0', id: message.id, result: {} })
    } else {
      const owners = new Set<SharedSession>()
      for (const owner of this.#requests.values()) if (owner.id !== INITIALIZE_MARK) owners.add(owner.session)
      if (owners.size === 1) target = owners.values().next().value
    }
    if (target === undefined || !target.isOpen) return this.#refuseServerRequest(message.id, 'rxmcp bridge: cannot tell which session this request belongs to; send it with the progress token or related task of the request it serves')
    this.#serverRequests.set(message.id, target)
    target.deliver({ ...message, params } as JsonRpcMessage)
  }

  #refuseServerRequest(id: RequestId, reason: string): void {
    this.#serverRequests.delete(id)
    this.#send({ jsonrpc: '2.0', id, error: { code: ErrorCode.InternalError, message: reason } })
  }

  #send(payload: JsonRpcPayload): void {
    try {
      this.upstream.send(payload)?.catch(this.report)
    } catch (error) {
      this.report(error)
    }
  }

  send(session: SharedSession, messages: JsonRpcMessage[], isBatch: boolean): void | Promise<void> {
    const out: JsonRpcMessage[] = []
    for (const message of messages) {
      const mapped = this.#toUpstream(session, message)
      if (mapped !== undefined) out.push(mapped)
    }
    if (out.length === 0) return
    return this.upstream.send(isBatch ? out : out[0]!)
  }

  #toUpstream(session: SharedSession, message: JsonRpcMessage): JsonRpcMessage | undefined {
    if (typeof message !== 'object' || message === null) return undefined
    if (!('method' in message)) {
      // An answer to one of the upstream's requests: only from the session it was sent to.
      if (message.id === null || this.#serverRequests.get(message.id) !== session) return undefined
      this.#serverRequests.delete(message.id)
      return message
    }
    if (!('id' in message)) {
      if (message.method === 'notifications/initialized') {
        if (this.#isInitializedSent) return undefined
        this.#isInitializedSent = true
        return message
      }
      if (message.method === 'notifications/cancelled') {
        const requestId = (message.params as { requestId?: RequestId } | undefined)?.requestId
        for (const [upstreamId, owner] of this.#requests) {
          if (owner.session === session && owner.id === requestId) return { ...message, params: { ...message.params, requestId: upstreamId } }
        }
        return undefined
      }
      return message
    }
    if (message.method === 'initialize') {
      if (this.#initializeResult !== undefined) { session.deliver({ jsonrpc: '2.0', id: message.id, result: this.#initializeResult as never }); return undefined }
      if (this.#initializeWaiters !== undefined) { this.#initializeWaiters.push({ session, id: message.id }); return undefined }
      this.#initializeWaiters = [{ session, id: message.id }]
      const version = message.params?.protocolVersion
      if (typeof version === 'string') this.askedVersion = version
      const upstreamId = `i${this.#nextId++}`
      this.#requests.set(upstreamId, { session, id: INITIALIZE_MARK })
      return { ...message, id: upstreamId }
    }
    const upstreamId = this.#nextId++
    this.#requests.set(upstreamId, { session, id: message.id })
    const token = message.params?._meta?.progressToken
    if (token === undefined) return { ...message, id: upstreamId }
    const upstreamToken = `t${upstreamId}`
    this.#tokens.set(upstreamToken, { session, token })
    this.#tokenOf.set(upstreamId, upstreamToken)
    return { ...message, id: upstreamId, params: { ...message.params, _meta: { ...message.params!._meta, progressToken: upstreamToken } } }
  }
}

/** Stands for "the shared initialize" in the request table. */
const INITIALIZE_MARK = '\0initialize'
