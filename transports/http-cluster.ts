/**
 * Sessions shared between instances of one HTTP listener (the Redis scale-out): any instance takes
 * any request. A request for a session another instance holds is forwarded to that instance, which
 * serves it as its own and sends the answer back (a reply, or an SSE stream event by event); when
 * that instance is gone, the session is taken over from its saved record. Knows HTTP exchanges and
 * session records, nothing of MCP; the link itself (`SessionCluster`) is Redis in redis-cluster.ts.
 */
import { asyncScheduler, type Observable, type SchedulerLike, type Subscription } from '../lib/rx.ts'
import { after, every } from './timers.ts'
import { base64url } from '../lib/base64url.ts'
import { replyError, type Exchange, type Sink } from './http-exchange.ts'
import { toHeaders } from './request-info.ts'
import { ForwardedExchange, ReadExchange, idsOf, utf8, type ForwardMessage, type Op } from './http-forwarded-exchange.ts'

/** What the cluster knows of a session: who holds it, for whom, and its state to take it over. */
export interface SessionRecord {
  /** The instance holding the session (its streams, its requests in flight). */
  owner: string
  /** `principalKey` of the principal that created it. */
  principalKey: string
  /** Streamable HTTP sessions can be taken over; a legacy SSE one ends with its stream. */
  kind: 'streamable-http' | 'sse'
  /** The negotiated protocol version. */
  protocolVersion?: string
  /** The server's saved session state (JSON text, opaque here). */
  state?: string
  /** The session's newest standalone (GET) stream. */
  standalone?: string
}

/**
 * The link between the instances of one listener: session records, and messages to one instance.
 * Implemented on Redis by `redisSessionCluster` (rxmcp/transports/redis).
 */
export interface SessionCluster {
  /** This instance's id (random per process). */
  readonly instanceId: string
  /** Messages sent to this instance. Subscribed once by the listener, from start to close. */
  readonly messages: Observable<string>
  /** Sends to one instance; resolves false when no instance listens under that id (it is gone). */
  send(instanceId: string, message: string): Promise<boolean>
  /** Whether an instance is running (listening for its messages). */
  isAlive(instanceId: string): Promise<boolean>
  /** Records a session this instance now holds; resolves once every instance can find it. */
  claim(sessionId: string, record: SessionRecord, ttlMs: number): Promise<void>
  lookup(sessionId: string): Promise<SessionRecord | undefined>
  /** Moves a session from `from` (gone) to this instance unless another did first; the record after. */
  takeOver(sessionId: string, from: string, ttlMs: number): Promise<SessionRecord | undefined>
  /** Updates the record of a session this instance holds (nothing if it holds it no more). */
  save(sessionId: string, patch: { protocolVersion?: string; state?: string; standalone?: string }): Promise<void>
  /**
   * Keeps the record of an active session from expiring: `held` when this instance still holds it,
   * `lost` when another took it over, `missing` when the record is gone.
   */
  touch(sessionId: string, ttlMs: number): Promise<'held' | 'lost' | 'missing'>
  /** Forgets a session this instance held (ended: DELETE, idle, closed). */
  release(sessionId: string): Promise<void>
  /**
   * Optional: the instances taking sessions now (running, not leaving), this one left out: where a
   * drain hands its sessions. Without it, they wait for their clients under a `~drained` owner.
   */
  peers?(): Promise<string[]>
  /** Optional: this instance takes no session from now on (a drain): `peers` lists it no more. */
  leave?(): Promise<void>
  /**
   * Optional: records that this instance drained cleanly, so what was forwarded to it and never
   * answered it never ran: a front routes such an exchange again instead of answering 503.
   */
  markLeft?(): Promise<void>
  /** Optional: whether `instanceId` drained cleanly (see markLeft); remembered for a minute. */
  hasLeft?(instanceId: string): Promise<boolean>
  /**
   * Optional: emits when the link is back after an outage. The records may be gone (a Redis
   * restarted without persistence): the listener writes those of its sessions again.
   */
  readonly recovered?: Observable<void>
}

/** What the listener does for the router: its sessions, taking one over, serving a forwarded exchange. */
export interface ClusterHost {
  has(sessionId: string): boolean
  /** Makes the local session for a record whose owner is gone; false when it cannot continue (legacy SSE). */
  adopt(sessionId: string, record: SessionRecord): boolean
  /**
   * Optional: takes over a session that `from` (draining) hands to this instance: true once it is
   * held here, its record naming this instance; false when this one cannot (closing, or another
   * took it first).
   */
  takeFrom?(sessionId: string, from: string): Promise<boolean>
  /** Serves an exchange another instance forwarded (its origin and credentials were checked there). */
  serve(exchange: Exchange): Promise<void>
  /** Optional: true while this instance drains (it then takes no session over). */
  isDraining?(): boolean
  /**
   * Optional: whether this instance handed the session over or, draining, does not hold it (a
   * front's stale guess): resolves true once its record names where it went; false (not a
   * promise) when it is served here.
   */
  movedAway?(sessionId: string): Promise<boolean> | false
  /**
   * The client's address of an exchange that reached this instance (the listener's `clientAddress`
   * applied): what a forwarded exchange carries, so the owner counts the client by it.
   */
  clientAddress(exchange: Exchange): string | undefined
  /** The body under the listener's limits; undefined once a refusal was answered. */
  body(exchange: Exchange): Promise<Uint8Array | undefined>
  /** Writes the records of every session held here again (after the cluster's store was away). */
  reclaim(): void
}

/** The request headers the listener and its guard read: a forwarded exchange carries them as the front read them. */
const FORWARDED_HEADERS = ['accept', 'content-type', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id', 'host', 'origin', 'authorization', 'dpop'] as const

/** Owners remembered per session id, to skip the lookup on the next request. */
const MAX_CACHED_OWNERS = 1_000

/** A running owner that did not hear a message is tried again this often, at most so many times. */
const SEND_RETRY_MS = 100
const MAX_SEND_RETRIES = 50
/** An answer to a front is tried again this long whatever its heartbeat says. */
const SEND_GRACE_MS = 3_000

/** How often instances with open forwarded exchanges are checked to be still running (ms). */
const PEER_CHECK_MS = 1_000

/** How long a draining instance waits for a peer to say it took a session over, before its record decides. */
const HAND_OVER_MS = 5_000
/** An exchange sent back by owners this many times (each saying the session moved) is answered 503. */
const MAX_REROUTES = 5

/** Marks the owner a drained instance hands its sessions to (`<its id>~drained`): no instance runs under that id. */
export const DRAINED = '~drained'

/** An exchange this instance forwarded, waiting for its owner's answer. */
interface Relay {
  exchange: Exchange
  owner: string
  sessionId: string
  /** Where the owner's answer stream is written, once it started. */
  sink?: Sink
  /** The body forwarded (a POST's): the ids of a 503's answer are read from it. */
  body?: Uint8Array
  /** Set once the owner heard it: until then the sending side routes it, not the peers' check. */
  isDelivered?: boolean
}

/**
 * Routes the requests of sessions held elsewhere, and serves the ones forwarded here. One per
 * listener in cluster mode; the listener asks `route` before serving a request that names a session.
 */
export class ClusterRouter {
  readonly #cluster: SessionCluster
  readonly #host: ClusterHost
  readonly #ttlMs: number
  readonly #owners = new Map<string, string>()
  /** Exchanges this instance forwarded, by key: the client waits here for the owner's answer. */
  readonly #relayed = new Map<string, Relay>()
  /** Answers on their way back to fronts (see flush). */
  readonly #sending = new Set<Promise<boolean>>()
  /** Exchanges forwarded to this instance, by key. */
  readonly #served = new Map<string, ForwardedExchange>()
  readonly #subscription: Subscription
  #count = 0
  /** The peers' check, while exchanges are forwarded (see #watchPeers). */
  #peerCheck: Subscription | undefined
  /** The listener's `scheduler` option: the send retries' waits and the peers' check run on it. */
  readonly #scheduler: SchedulerLike | undefined
  /** Sessions this instance hands over, by message key: resolved with the peer's answer. */
  readonly #handing = new Map<string, (isTaken: boolean) => void>()
  /** How often each exchange was sent back by an owner it was forwarded to (bounded by MAX_REROUTES). */
  readonly #reroutes = new WeakMap<Exchange, number>()

  /** `scheduler` is the listener's option (undefined: real time, the peers' check on an unref'd timer). */
  constructor(cluster: SessionCluster, host: ClusterHost, ttlMs: number, scheduler?: SchedulerLike) {
    this.#cluster = cluster
    this.#host = host
    this.#ttlMs = ttlMs
    this.#scheduler = scheduler
    this.#subscription = cluster.messages.subscribe(text => this.#receive(text))
    if (cluster.recovered !== undefined) this.#subscription.add(cluster.recovered.subscribe(() => { this.#owners.clear(); host.reclaim() }))
  }

  /** Exchanges this instance relays as a front whose answer has not started (a POST waiting): a drain lets them finish. */
  get waitingRelays(): number {
    let count = 0
    for (const relay of this.#relayed.values()) if (relay.sink === undefined || relay.exchange.method === 'POST') count++
    return count
  }

  /** Resolves once the answers on their way back to fronts are sent (before a drained instance lets go of Redis). */
  async flush(): Promise<void> {
    while (this.#sending.size > 0) await Promise.all([...this.#sending])
  }

  close(): void {
    this.#subscription.unsubscribe()
    this.#peerCheck?.unsubscribe()
    for (const relay of this.#relayed.values()) relay.sink?.end()
    this.#relayed.clear()
    for (const served of [...this.#served.values()]) served.close()
    for (const answer of [...this.#handing.values()]) answer(false)
  }

  /**
   * The exchange to serve here (the same, or one whose body was read already), or undefined once
   * it went to the instance holding its session (or was answered 503: the cluster cannot be asked).
   */
  async route(exchange: Exchange, sessionId: string): Promise<Exchange | undefined> {
    if (this.#host.has(sessionId)) return exchange
    try {
      // Being handed over from here (a drain): routed once its record names where it went.
      const moving = this.#host.movedAway?.(sessionId)
      if (moving !== undefined && moving !== false) await moving
      return await this.#route(exchange, sessionId)
    } catch {
      // Redis is away: whether another instance holds the session cannot be told. The client may
      // try again; the sessions this instance holds are served meanwhile.
      replyError(exchange, 503, -32000, 'Service Unavailable: the session store cannot be reached; try again', { 'retry-after': '1' })
      return undefined
    }
  }

  async #route(exchange: Exchange, sessionId: string): Promise<Exchange | undefined> {
    const me = this.#cluster.instanceId
    let owner = this.#owners.get(sessionId)
    if (owner === undefined) {
      const record = await this.#cluster.lookup(sessionId)
      if (record === undefined) return exchange
      owner = record.owner
      this.#remember(sessionId, owner)
    }
    if (owner === me) return exchange
    // Leaving (a drain): this instance takes no session over; the client tries again, elsewhere.
    if (this.#host.isDraining?.() === true && !(await this.#cluster.isAlive(owner))) {
      replyError(exchange, 503, -32000, 'Service Unavailable: this server instance is shutting down; send the request again', { 'retry-after': '1' })
      return undefined
    }
    let body: Uint8Array | undefined
    if (exchange.method === 'POST') {
      body = await this.#host.body(exchange)
      if (body === undefined) return undefined
      exchange = new ReadExchange(exchange, body)
    }
    // A few rounds at most: the owner may have changed, or be gone and taken over meanwhile.
    for (let round = 0; round < 3; round++) {
      if (await this.#forward(exchange, owner, body, sessionId)) return undefined
      // Running, yet not hearing it however often it was sent: answered 503 (see route).
      if (await this.#cluster.isAlive(owner)) throw new Error(`instance ${owner} does not answer`)
      this.#owners.delete(sessionId)
      const record = await this.#cluster.lookup(sessionId)
      if (record === undefined) return exchange
      if (record.owner !== owner) { owner = record.owner; if (owner === me) return exchange; continue }
      const taken = await this.#cluster.takeOver(sessionId, owner, this.#ttlMs)
      if (taken === undefined) return exchange
      if (taken.owner === me) { this.#host.adopt(sessionId, taken); return exchange }
      owner = taken.owner
    }
    return exchange
  }

  #remember(sessionId: string, owner: string): void {
    if (this.#owners.size >= MAX_CACHED_OWNERS) this.#owners.delete(this.#owners.keys().next().value!)
    this.#owners.set(sessionId, owner)
  }

  /** Hands the exchange to `owner`; false when it did not hear it (gone, or not listening for too long). */
  async #forward(exchange: Exchange, owner: string, body: Uint8Array | undefined, sessionId: string): Promise<boolean> {
    const me = this.#cluster.instanceId
    const key = this.#key()
    // Every header goes, for the owner's `ctx.requestInfo`; the ones the listener reads go as the
    // front's `header()` reads them (node:http's way with duplicates), so the owner decides alike.
    const headers: Record<string, string> = {}
    toHeaders(exchange.headerList()).forEach((value, name) => { headers[name] = value })
    for (const name of FORWARDED_HEADERS) {
      const value = exchange.header(name)
      if (value !== null) headers[name] = value
    }
    const message: ForwardMessage = { t: 'x', k: key, f: me, m: exchange.method, p: exchange.pathname, q: exchange.search, h: headers }
    if (body !== undefined) {
      const text = utf8(body)
      if (text === undefined) message.b64 = base64url(body)
      else message.b = text
    }
    if (exchange.principal !== undefined) message.a = exchange.principal
    // The client's address as resolved here (behind a proxy, from the header `clientAddress` reads,
    // which need not travel): the owner counts the client by it, not by this instance's socket.
    const address = this.#host.clientAddress(exchange)
    if (address !== undefined) message.r = address
    const relay: Relay = body === undefined ? { exchange, owner, sessionId } : { exchange, owner, sessionId, body }
    this.#relayed.set(key, relay)
    exchange.onClose(() => {
      if (this.#relayed.get(key) !== relay) return
      this.#relayed.delete(key)
      void this.#cluster.send(owner, JSON.stringify({ t: 'c', k: key })).catch(() => {})
    })
    // An owner whose heartbeat holds but that did not hear it is coming back (Redis restarted): again, shortly.
    const delivered = await this.#sendTo(owner, JSON.stringify(message), 0)
    if (!delivered) { this.#relayed.delete(key); return false }
    relay.isDelivered = true
    this.#watchPeers()
    return true
  }

  /**
   * Sends to an instance; false when it is gone. One that runs but did not hear it (its
   * subscription is coming back after Redis restarted) is tried again, shortly: whatever its
   * heartbeat says for `graceMs` (it may lapse while Redis restarts), then while it still runs.
   */
  async #sendTo(to: string, message: string, graceMs: number): Promise<boolean> {
    for (let retries = 0; ; retries++) {
      if (await this.#cluster.send(to, message).catch(() => false)) return true
      if (retries >= MAX_SEND_RETRIES) return false
      if (retries * SEND_RETRY_MS >= graceMs && !(await this.#cluster.isAlive(to).catch(() => false))) return false
      await new Promise<void>(resolve => (this.#scheduler ?? asyncScheduler).schedule(() => resolve(), SEND_RETRY_MS))
    }
  }

  #key(): string {
    return `${this.#cluster.instanceId}.${(++this.#count).toString(36)}`
  }

  /**
   * Asks `peer` to take over a session this instance leaves (a drain), so that it is held
   * somewhere at every moment: its subscriptions go on receiving and its streams keep what is
   * sent until the client resumes them there. Resolves true once the peer holds it; false when
   * the peer did not hear, refused, or stayed silent for HAND_OVER_MS and its record does not name it.
   */
  async handOverTo(peer: string, sessionId: string): Promise<boolean> {
    const key = this.#key()
    const answer = new Promise<boolean>(resolve => this.#handing.set(key, resolve))
    const timeout = after(HAND_OVER_MS, this.#scheduler, () => this.#handing.get(key)?.(false))
    try {
      const message = JSON.stringify({ t: 'h', k: key, s: sessionId, f: this.#cluster.instanceId })
      const isTaken = await this.#cluster.send(peer, message).catch(() => false) && (await answer || (await this.#cluster.lookup(sessionId).catch(() => undefined))?.owner === peer)
      if (isTaken) this.#remember(sessionId, peer)
      return isTaken
    } finally {
      timeout.unsubscribe()
      this.#handing.delete(key)
    }
  }

  /** A draining instance hands a session here: taken over (or not), and the answer sent back. */
  async #takeFrom(key: string, sessionId: string, from: string): Promise<void> {
    const isTaken = await (this.#host.takeFrom?.(sessionId, from) ?? Promise.resolve(false)).catch(() => false)
    await this.#sendTo(from, JSON.stringify({ t: 'a', k: key, ok: isTaken }), SEND_GRACE_MS)
  }

  #receive(text: string): void {
    let message: { t?: unknown; k?: unknown; ops?: unknown; s?: unknown; f?: unknown; ok?: unknown }
    try { message = JSON.parse(text) as typeof message } catch { return }
    if (typeof message.k !== 'string') return
    if (message.t === 'o' && Array.isArray(message.ops)) return this.#apply(message.k, message.ops as Op[])
    if (message.t === 'c') return this.#served.get(message.k)?.close()
    if (message.t === 'x') return this.#serve(message as ForwardMessage)
    if (message.t === 'h' && typeof message.s === 'string' && typeof message.f === 'string') return void this.#takeFrom(message.k, message.s, message.f)
    if (message.t === 'a') return this.#handing.get(message.k)?.(message.ok === true)
  }

  /** What the owner answered to an exchange forwarded from here, written to the client. */
  #apply(key: string, ops: Op[]): void {
    const relay = this.#relayed.get(key)
    if (relay === undefined) return
    for (const op of ops) {
      switch (op[0]) {
        // A body the owner left out came through JSON as null: no body, as the Exchange contract says.
        case 'r': relay.exchange.reply(op[1], op[2], op[3] ?? undefined); this.#relayed.delete(key); return
        case 'f': relay.exchange.refuse(op[1], op[2], op[3] ?? undefined); this.#relayed.delete(key); return
        case 's': relay.sink = relay.exchange.stream(op[1], op[2], op[3]); break
        case 'w': relay.sink?.write(op[1]); break
        case 'e': relay.sink?.end(); this.#relayed.delete(key); return
        case 'm': this.#relayed.delete(key); return void this.#reroute(relay)
      }
    }
  }

  /**
   * The owner handed the session over (it is draining) after this instance forwarded the exchange:
   * routed again from the record, which now names an owner that is gone, so the session is taken
   * over (here or by whoever was first) and the exchange served there.
   */
  async #reroute(relay: Relay): Promise<void> {
    if (this.#owners.get(relay.sessionId) === relay.owner) this.#owners.delete(relay.sessionId)
    // Sent back over and over (records that disagree with their owners): no longer routed.
    const reroutes = (this.#reroutes.get(relay.exchange) ?? 0) + 1
    this.#reroutes.set(relay.exchange, reroutes)
    if (reroutes > MAX_REROUTES) return replyError(relay.exchange, 503, -32000, 'Service Unavailable: the session is moving between server instances; send the request again', { 'retry-after': '1' }, idsOf(relay.body))
    const routed = await this.route(relay.exchange, relay.sessionId)
    if (routed !== undefined) await this.#host.serve(routed).catch(() => routed.reply(500, {}))
  }

  #serve(message: ForwardMessage): void {
    const key = message.k
    const from = message.f
    const post = (ops: Op[]) => {
      const sent = this.#sendTo(from, JSON.stringify({ t: 'o', k: key, ops }), SEND_GRACE_MS)
      this.#sending.add(sent)
      void sent.finally(() => this.#sending.delete(sent))
      return sent
    }
    // A session this instance handed over (draining): the front routes the exchange again.
    const sessionId = message.h['mcp-session-id']
    const moved = sessionId === undefined ? false : this.#host.movedAway?.(sessionId) ?? false
    if (moved !== false) {
      // Counted with the answers on their way back (flush), so a drain waits for it too.
      const answered = moved.then(isMoved => { if (isMoved) return post([['m']]); this.#serveHere(message, key, post); return true })
      this.#sending.add(answered)
      void answered.finally(() => this.#sending.delete(answered))
      return
    }
    this.#serveHere(message, key, post)
  }

  #serveHere(message: ForwardMessage, key: string, post: (ops: Op[]) => Promise<boolean>): void {
    const exchange = new ForwardedExchange(message, post, () => this.#served.delete(key))
    this.#served.set(key, exchange)
    this.#watchPeers()
    this.#host.serve(exchange).catch(() => exchange.reply(500, {}))
  }

  /**
   * While exchanges are forwarded between instances, each peer is checked to be still running: a
   * client waiting on an instance that is gone gets its stream ended (it resumes elsewhere) or its
   * POST answered 503, and an owner stops writing for a front that is gone.
   */
  #watchPeers(): void {
    if (this.#peerCheck !== undefined) return
    this.#peerCheck = every(PEER_CHECK_MS, this.#scheduler, () => void this.#checkPeers())
  }

  async #checkPeers(): Promise<void> {
    if (this.#relayed.size === 0 && this.#served.size === 0) {
      this.#peerCheck?.unsubscribe()
      this.#peerCheck = undefined
      return
    }
    const peers = new Set<string>()
    for (const relay of this.#relayed.values()) peers.add(relay.owner)
    for (const served of this.#served.values()) peers.add(served.from)
    for (const peer of peers) {
      if (await this.#cluster.isAlive(peer).catch(() => true)) continue
      // A peer that drained cleanly answered everything it ran before it let go: what it did not
      // answer it never ran (it reached it as it let go), so it is routed again, to wherever the
      // session is now. One that crashed may have run it: the client is told to send it again.
      let hasLeft: boolean | undefined
      let drained: Map<string, boolean> | undefined
      for (const [key, relay] of [...this.#relayed]) {
        // One still being sent is the sender's to route again (it learns the owner is gone).
        if (relay.owner !== peer || relay.isDelivered !== true) continue
        this.#relayed.delete(key)
        if (relay.sink !== undefined) { relay.sink.end(); continue }
        hasLeft ??= await this.#cluster.hasLeft?.(peer).catch(() => false) ?? false
        if (hasLeft) { void this.#reroute(relay); continue }
        drained ??= new Map()
        if (!drained.has(relay.sessionId)) drained.set(relay.sessionId, (await this.#cluster.lookup(relay.sessionId).catch(() => undefined))?.owner === `${peer}${DRAINED}`)
        if (drained.get(relay.sessionId) === true) { void this.#reroute(relay); continue }
        replyError(relay.exchange, 503, -32000, 'Service Unavailable: the instance serving this session stopped; send the request again', { 'retry-after': '1' }, idsOf(relay.body))
      }
      for (const served of [...this.#served.values()]) if (served.from === peer) served.close()
    }
  }
}
