import { Observable } from '../lib/rx.ts'
import type { Inbound, Transport } from '../lib/transport.ts'
import type { JsonObject, JsonRpcMessage, JsonRpcRequest, RequestId } from '../lib/jsonrpc/message.ts'
import { ErrorCode } from '../lib/jsonrpc/errors.ts'
import { SUPPORTED_PROTOCOL_VERSIONS } from '../lib/schema/types.ts'
import { SharedChild, ChildTenant, type ChildOwner } from './bridge-shared-child.ts'

/** One upstream transport shared by many sessions: see {@link shareUpstream}. */
export interface SharedUpstream {
  /** A transport of its own for one session, multiplexed onto the upstream. */
  open(): Transport
  /** Closes the upstreams (and with them every session's transport). */
  close(): Promise<void>
}

/** Options of {@link shareUpstream}. */
export interface SharedUpstreamOptions {
  /**
   * Children of one lane whose sessions can be asked (see {@link shareUpstream}), each serving one
   * session at a time (default 4). Requests of further sessions wait for one to be free.
   */
  maxUpstreams?: number
  /** Requests that may wait for a child, per lane (default 1,000); past it they are answered -32000 busy. */
  maxQueuedRequests?: number
  /** Where errors nobody observes go (default: stderr). */
  report?: (error: unknown) => void
}

/** Defaults of {@link SharedUpstreamOptions}. */
export const SHARED_UPSTREAM_DEFAULTS = { maxUpstreams: 4, maxQueuedRequests: 1000 } as const

/** The `_meta` key that ties a message to a task (MCP 2025-11-25 tasks). */
const RELATED_TASK = 'io.modelcontextprotocol/related-task'

/**
 * Shares an upstream (a stdio child) between many sessions, for servers that keep no per-session
 * state. Each session gets a transport that looks like a dedicated upstream: request ids, progress
 * tokens and the child's own request ids are renamed on the way and back, so sessions never see
 * each other's; an upstream is initialized once (by the bridge, which also sends
 * notifications/initialized) and later sessions get its answer; its notifications that belong to no
 * request (list_changed, logs) go to every session of its lane.
 *
 * Sessions are grouped in lanes: by the protocol version they ask for (given a factory, one lane per
 * known revision, so every session is answered with the version it negotiated; made-up versions
 * share the first lane) and by whether they can be asked anything (they declare `elicitation`,
 * `sampling` or `roots`), since the child is told the capabilities of its lane's first session.
 *
 * A request from the child (elicitation, sampling, roots) goes to the session whose request it
 * serves. Nothing on stdio says which that is, so in a lane whose sessions can be asked a child
 * serves one session at a time: that session holds it while any of its requests is in flight, and
 * every question the child asks meanwhile is that session's. Other sessions' requests go to another
 * child (up to `maxUpstreams` per lane, started as needed) or wait for one (up to
 * `maxQueuedRequests`). So concurrency costs a process or a wait, never an answer. A child that
 * may still be working on a request its session cancelled or left is stopped, not handed on (given
 * one transport instead of a factory, it is handed on: nothing could replace it).
 * Requests that name the session's progress token or a task of the session's go by that. In a lane
 * whose sessions cannot be asked, the child serves everyone at once, and a request from it that no
 * progress token, task or single busy session ties to a session is answered with an error, never
 * sent to another user's session. Only the session asked may answer.
 *
 * A task (MCP 2025-11-25) belongs to the session whose request made it: another session naming
 * it gets -32602, and `tasks/list` answers list only the session's own.
 */
export function shareUpstream(upstream: Transport | (() => Transport), options: SharedUpstreamOptions | ((error: unknown) => void) = {}): SharedUpstream {
  const settings = typeof options === 'function' ? { report: options } : options
  const report = settings.report ?? ((error: unknown) => console.error('[rxmcp bridge]', error))
  const limits = {
    maxUpstreams: settings.maxUpstreams ?? SHARED_UPSTREAM_DEFAULTS.maxUpstreams,
    maxQueued: settings.maxQueuedRequests ?? SHARED_UPSTREAM_DEFAULTS.maxQueuedRequests,
  }
  const make = typeof upstream === 'function' ? upstream : undefined
  const lanes: Lane[] = []
  if (make === undefined) {
    // One transport: one lane, one child, whoever comes.
    let given: Transport | undefined = upstream as Transport
    lanes.push(new Lane(() => { const once = given; given = undefined; return once }, { ...limits, maxUpstreams: 1 }, report, undefined, false))
  }
  // Picks the lane for a session's first message: by the protocol version it asks for, and whether it can be asked.
  const pick = (first: JsonRpcMessage | undefined): Lane => {
    if (make === undefined) return lanes[0]!
    const params = first !== undefined && 'method' in first && first.method === 'initialize' ? first.params : undefined
    const version = params?.protocolVersion
    const canBeAsked = canAsk(params)
    const known = typeof version === 'string' && (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(version)
    const ofKind = lanes.filter(lane => lane.canBeAsked === canBeAsked && !lane.isDead)
    const match = known ? ofKind.find(lane => lane.askedVersion === version || lane.answeredVersion === version) : undefined
    if (match !== undefined) return match
    const fresh = ofKind.find(lane => lane.askedVersion === undefined)
    if (fresh !== undefined) return fresh
    // Unknown versions share the kind's first lane: a made-up version must not start a process.
    if (ofKind.length === 0 || known) {
      const lane = new Lane(make, limits, report, canBeAsked, true)
      lanes.push(lane)
      return lane
    }
    return ofKind[0]!
  }
  return {
    open() {
      const session = new ChildTenant()
      let lane: Lane | undefined
      return {
        kind: 'shared',
        inbound: new Observable<Inbound>(subscriber => session.inbound.subscribe(subscriber)),
        send: payload => {
          const messages = Array.isArray(payload) ? payload : [payload]
          if (lane === undefined) {
            lane = pick(messages[0] as JsonRpcMessage | undefined)
            lane.join(session)
          }
          for (const message of messages) lane.fromSession(session, message)
        },
        close: async () => {
          if (lane !== undefined) lane.leave(session)
          else session.end()
        },
      }
    },
    async close() {
      await Promise.allSettled(lanes.flatMap(lane => lane.children.map(child => child.close())))
    },
  }
}

/** True when a client with these initialize params can be asked things (elicitation, sampling, roots). */
function canAsk(params: JsonObject | undefined): boolean {
  const capabilities = params?.capabilities as Record<string, unknown> | undefined
  return typeof capabilities === 'object' && capabilities !== null
    && (capabilities.elicitation !== undefined || capabilities.sampling !== undefined || capabilities.roots !== undefined)
}

/** A request of a session's waiting for a child. */
interface Waiting { readonly session: ChildTenant; readonly message: JsonRpcRequest }

/** Sessions that share children: their children, the initialize they share, the queue, tasks and the child's requests. */
class Lane implements ChildOwner {
  readonly sessions = new Set<ChildTenant>()
  readonly children: SharedChild[] = []
  /** The version the first initialize asked for, and the one the child answered with. */
  askedVersion: string | undefined
  answeredVersion: string | undefined
  /** No child can be had any more (it failed, or the one given transport ended): sessions go elsewhere. */
  isDead = false
  /** The params of the first initialize (children started later get the same), and the answer to it. */
  #initializeParams: JsonObject | undefined
  #initializeResult: JsonObject | undefined
  /** Sessions waiting for the first answer to initialize, with the ids they used. */
  #initializeWaiters: { session: ChildTenant; id: RequestId }[] | undefined
  /** A child serves one session at a time: its sessions can be asked, and nothing says which is asked. */
  #isExclusive = false
  readonly #queue: Waiting[] = []
  /** Task id -> the session whose request made it, and the child that holds it (MCP 2025-11-25 tasks). */
  readonly #tasks = new Map<string, { session: ChildTenant; child: SharedChild }>()
  /** The children's requests, by the id the session saw -> the session asked, the child and its id. */
  readonly #asked = new Map<number, { session: ChildTenant; child: SharedChild; id: RequestId }>()
  #nextAskedId = 0
  #failure: unknown

  constructor(
    readonly make: () => Transport | undefined,
    readonly limits: { readonly maxUpstreams: number; readonly maxQueued: number },
    readonly report: (error: unknown) => void,
    /** The kind of session the lane is for (undefined: any, the one-transport lane). */
    readonly canBeAsked: boolean | undefined,
    /** Children can be started anew (a factory was given), so one may be stopped rather than handed on. */
    readonly canReplace: boolean,
  ) {}

  join(session: ChildTenant): void {
    this.sessions.add(session)
    if (this.#failure !== undefined) session.inbound.error(this.#failure)
  }

  leave(session: ChildTenant): void {
    this.sessions.delete(session)
    for (let index = this.#queue.length - 1; index >= 0; index--) if (this.#queue[index]!.session === session) this.#queue.splice(index, 1)
    for (const [taskId, owner] of this.#tasks) if (owner.session === session) this.#tasks.delete(taskId)
    // The children wait for answers this session will never give.
    for (const [id, asked] of this.#asked) if (asked.session === session) this.#refuse(id, 'The session this request was sent to has closed')
    for (const child of [...this.children]) child.leave(session)
    session.end()
    this.#drain()
  }

  fromSession(session: ChildTenant, message: JsonRpcMessage): void {
    if (typeof message !== 'object' || message === null) return
    if (!('method' in message)) return this.#answerToChild(session, message)
    if (!('id' in message)) return this.#notification(session, message)
    if (message.method === 'initialize') return this.#initialize(session, message)
    this.#request(session, message)
  }

  // ---- a session's messages

  #initialize(session: ChildTenant, message: JsonRpcRequest): void {
    if (this.#initializeResult !== undefined) { session.deliver({ jsonrpc: '2.0', id: message.id, result: this.#initializeResult }); return }
    if (this.#initializeWaiters !== undefined) { this.#initializeWaiters.push({ session, id: message.id }); return }
    this.#initializeWaiters = [{ session, id: message.id }]
    this.#initializeParams = message.params
    const version = message.params?.protocolVersion
    if (typeof version === 'string') this.askedVersion = version
    this.#isExclusive = canAsk(message.params)
    const child = this.children[0] ?? this.#spawn(false)
    if (child === undefined) { this.#answerWaiters({ jsonrpc: '2.0', id: 0, error: { code: ErrorCode.ConnectionClosed, message: 'The server process is gone' } }); return }
    child.initialize(message.params)
  }

  #request(session: ChildTenant, message: JsonRpcRequest): void {
    const taskId = message.params?.taskId
    if (typeof taskId === 'string' && message.method.startsWith('tasks/')) {
      const task = this.#tasks.get(taskId)
      // A task is its session's: another session learns nothing of it, not even that it exists.
      if (task === undefined || task.session !== session) {
        session.deliver({ jsonrpc: '2.0', id: message.id, error: { code: ErrorCode.InvalidParams, message: `Invalid params: unknown task ${JSON.stringify(taskId)}` } })
        return
      }
      task.child.request(session, message, false)
      return
    }
    // A ping leads to no question, so it needs no child of its own.
    if (!this.#isExclusive || message.method === 'ping') {
      const child = session.held ?? this.children.find(candidate => !candidate.isClosing) ?? this.#spawn(false)
      if (child === undefined) { this.#busy(session, message, 'The server process is gone'); return }
      child.request(session, message, false)
      return
    }
    if (session.held !== undefined) { session.held.request(session, message, true); return }
    // Behind its own waiting requests, in order.
    const free = this.#queue.some(waiting => waiting.session === session) ? undefined : this.#freeChild()
    if (free !== undefined) { this.#hold(free, session); free.request(session, message, true); return }
    if (this.isDead && this.children.length === 0) { this.#busy(session, message, 'The server process is gone'); return }
    if (this.#queue.length >= this.limits.maxQueued) { this.#busy(session, message, `Server busy: ${this.#queue.length} requests wait for a server process; try again later`); return }
    this.#queue.push({ session, message })
  }

  #notification(session: ChildTenant, message: JsonRpcMessage & { method: string; params?: JsonObject }): void {
    // The bridge told each child itself, once its initialize was answered.
    if (message.method === 'notifications/initialized') return
    if (message.method === 'notifications/cancelled') {
      const requestId = message.params?.requestId as RequestId | undefined
      const index = this.#queue.findIndex(waiting => waiting.session === session && waiting.message.id === requestId)
      if (index >= 0) { this.#queue.splice(index, 1); return }
      for (const child of this.children) if (child.cancel(session, message, requestId)) return
      return
    }
    // Others (roots/list_changed, say) go to the child that serves the session, else to the first.
    const child = session.held ?? this.children.find(candidate => !candidate.isClosing)
    child?.send(message)
  }

  /** A session's answer to a child's request: passed on only from the session that was asked. */
  #answerToChild(session: ChildTenant, message: JsonRpcMessage & { id: RequestId | null }): void {
    if (typeof message.id !== 'number') return
    const asked = this.#asked.get(message.id)
    if (asked === undefined || asked.session !== session) return
    this.#asked.delete(message.id)
    asked.child.send({ ...message, id: asked.id } as JsonRpcMessage)
  }

  // ---- what children tell

  initialized(child: SharedChild, answer: JsonRpcMessage): void {
    if (child !== this.children[0] || this.#initializeResult !== undefined) {
      // A child started for the pool: it serves once initialized; one that refuses is stopped.
      if (!('result' in answer)) { this.report(new Error(`A shared server process refused initialize: ${JSON.stringify(answer).slice(0, 200)}`)); void this.#retire(child) }
      return
    }
    if ('result' in answer) {
      this.#initializeResult = answer.result
      const version = answer.result.protocolVersion
      if (typeof version === 'string') this.answeredVersion = version
    }
    this.#answerWaiters(answer)
  }

  answered(child: SharedChild, session: ChildTenant, answer: JsonRpcMessage, method: string): JsonRpcMessage {
    if (!('result' in answer)) return answer
    // A task made for this session: its later messages name the task, and so find the session.
    const taskId = (answer.result as { task?: { taskId?: unknown } }).task?.taskId
    if (typeof taskId === 'string') this.#tasks.set(taskId, { session, child })
    const listed = (answer.result as { tasks?: unknown }).tasks
    if (method === 'tasks/list' && Array.isArray(listed)) {
      const own = listed.filter(task => this.#tasks.get((task as { taskId?: unknown } | null)?.taskId as string)?.session === session)
      return { ...answer, result: { ...answer.result, tasks: own } }
    }
    return answer
  }

  released(child: SharedChild): void {
    const holder = child.holder
    if (holder !== undefined && holder.held === child) holder.held = undefined
    child.release()
    // It may still be working on what its session gave up, and ask about it: no one else gets it,
    // unless it is the one transport given, which nothing could replace.
    if (child.hasOrphans && this.canReplace) void this.#retire(child)
    else child.forgetOrphans()
    this.#drain()
  }

  asked(child: SharedChild, request: JsonRpcRequest): void {
    let target: ChildTenant | undefined
    let message = request
    const byToken = child.byProgressToken(request)
    const task = (request.params?._meta?.[RELATED_TASK] as { taskId?: unknown } | undefined)?.taskId
    if (byToken !== undefined) {
      ({ session: target, request: message } = byToken)
    } else if (typeof task === 'string') {
      const owner = this.#tasks.get(task)
      if (owner?.child === child) target = owner.session
    } else if (request.method === 'ping') {
      // Any session would answer alike; the bridge answers for them.
      child.send({ jsonrpc: '2.0', id: request.id, result: {} })
      return
    } else if (this.#isExclusive) {
      // The child serves its holder alone: what it asks now is about the holder's requests.
      target = child.holder
    } else {
      const busy = child.sessions
      if (busy.size === 1) target = busy.values().next().value
    }
    if (target === undefined || !target.isOpen) {
      child.send({ jsonrpc: '2.0', id: request.id, error: { code: ErrorCode.InternalError, message: 'rxmcp bridge: cannot tell which session this request belongs to; send it with the progress token or related task of the request it serves' } })
      return
    }
    const id = this.#nextAskedId++
    this.#asked.set(id, { session: target, child, id: request.id })
    target.deliver({ ...message, id } as JsonRpcMessage)
  }

  notified(_child: SharedChild, message: JsonRpcMessage): void {
    for (const session of this.sessions) session.deliver(message)
  }

  ended(child: SharedChild, error: unknown): void {
    const index = this.children.indexOf(child)
    if (index >= 0) this.children.splice(index, 1)
    for (const [id, asked] of this.#asked) if (asked.child === child) this.#asked.delete(id)
    for (const [taskId, owner] of this.#tasks) if (owner.child === child) this.#tasks.delete(taskId)
    for (const session of this.sessions) if (session.held === child) session.held = undefined
    // Retired children end as planned; a lane that lost its only or its first child before it
    // answered initialize is over, for every session on it, as a dedicated child's would be.
    if (child.isRetired) { this.#drain(); return }
    if (this.#isExclusive && this.#initializeResult !== undefined) { this.#drain(); return }
    this.isDead = true
    if (error !== undefined) this.#failure = error
    for (const session of [...this.sessions]) {
      if (error !== undefined) session.inbound.error(error)
      else session.end()
    }
  }

  // ---- children

  /** A child started for this lane: initialized by the first session's initialize, or (later ones) by the lane. */
  #spawn(isForPool: boolean): SharedChild | undefined {
    let transport: Transport | undefined
    try {
      transport = this.make()
    } catch (error) {
      this.report(error)
    }
    if (transport === undefined) { this.isDead = this.children.length === 0; return undefined }
    const child = new SharedChild(transport, this, this.report, isForPool)
    this.children.push(child)
    if (isForPool) child.initialize(this.#initializeParams)
    return child
  }

  /** An idle child, or a new one while the lane has room; undefined when every child is busy. */
  #freeChild(): SharedChild | undefined {
    const idle = this.children.find(child => child.holder === undefined && !child.isClosing)
    if (idle !== undefined) return idle
    if (this.children.filter(child => !child.isClosing).length >= this.limits.maxUpstreams) return undefined
    return this.#spawn(true)
  }

  #hold(child: SharedChild, session: ChildTenant): void {
    child.holder = session
    session.held = child
  }

  /** Hands free children to waiting sessions, first come first served, each with all its waiting requests. */
  #drain(): void {
    while (this.#queue.length > 0) {
      const session = this.#queue[0]!.session
      const child = this.#freeChild()
      if (child === undefined) {
        // Nothing will free up: the waiting get an answer rather than wait forever.
        if (this.isDead && this.children.length === 0) for (const waiting of this.#queue.splice(0)) this.#busy(waiting.session, waiting.message, 'The server process is gone')
        return
      }
      this.#hold(child, session)
      const own = this.#queue.filter(waiting => waiting.session === session)
      for (let index = this.#queue.length - 1; index >= 0; index--) if (this.#queue[index]!.session === session) this.#queue.splice(index, 1)
      for (const waiting of own) child.request(session, waiting.message, true)
    }
  }

  async #retire(child: SharedChild): Promise<void> {
    child.isRetired = true
    const index = this.children.indexOf(child)
    if (index >= 0) this.children.splice(index, 1)
    await child.close().catch(this.report)
  }

  #answerWaiters(answer: JsonRpcMessage): void {
    for (const waiter of this.#initializeWaiters ?? []) waiter.session.deliver({ ...answer, id: waiter.id } as JsonRpcMessage)
    this.#initializeWaiters = undefined
  }

  #refuse(id: number, reason: string): void {
    const asked = this.#asked.get(id)
    this.#asked.delete(id)
    asked?.child.send({ jsonrpc: '2.0', id: asked.id, error: { code: ErrorCode.InternalError, message: reason } })
  }

  #busy(session: ChildTenant, message: JsonRpcRequest, reason: string): void {
    session.deliver({ jsonrpc: '2.0', id: message.id, error: { code: ErrorCode.ConnectionClosed, message: reason } })
  }
}
