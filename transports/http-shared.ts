/**
 * The HTTP listener's sessions in cluster mode: each one's record in the cluster (claimed when it
 * starts, kept alive while it is used, written again after an outage, released when it ends), the
 * state the server saves, and taking over a session whose instance is gone. Routing requests
 * between instances is the ClusterRouter's (http-cluster.ts).
 */
import type { SchedulerLike } from '../lib/rx.ts'
import type { Exchange } from './http-exchange.ts'
import { ClusterRouter, DRAINED, type SessionCluster, type SessionRecord } from './http-cluster.ts'
import { HttpSession, type SessionConfig } from './http-session.ts'
import { LegacySession } from './legacy-sse.ts'

/** A session of the listener, Streamable HTTP or legacy SSE. */
export type AnySession = HttpSession | LegacySession

/** What the listener lends: its sessions, how it opens one, and how it serves an exchange. */
export interface SharedSessionsHost {
  readonly sessions: ReadonlyMap<string, AnySession>
  readonly config: SessionConfig
  now(): number
  isClosed(): boolean
  /** True while the listener drains: it takes no session over. */
  isDraining(): boolean
  /** Registers a session and hands it to the server. */
  open(session: HttpSession): void
  serve(exchange: Exchange): Promise<void>
  body(exchange: Exchange): Promise<Uint8Array | undefined>
  /** The client's address of an exchange (the listener's `clientAddress` applied). */
  clientAddress(exchange: Exchange): string | undefined
  onEnd(session: AnySession): void
}

export class SharedSessions {
  readonly #cluster: SessionCluster
  readonly #host: SharedSessionsHost
  /** How long a record lives without being touched: past the session's idle time here. */
  readonly #recordTtl: number
  readonly #router: ClusterRouter
  /** Sessions handed over by a drain, by id: settles once each record names where it went. */
  readonly #handedOver = new Map<string, Promise<void>>()
  /** The instances a drain hands sessions to: listed once per drain, a peer that failed taken out. */
  #peers: Promise<string[]> | undefined

  /** `scheduler` is the listener's option: the router's retries and peer checks run on it. */
  constructor(cluster: SessionCluster, host: SharedSessionsHost, idleTimeout: number, scheduler?: SchedulerLike) {
    this.#cluster = cluster
    this.#host = host
    // Touched at most every quarter of it, the record outlives the session's idle time here.
    this.#recordTtl = idleTimeout + Math.max(idleTimeout / 2, 10_000)
    this.#router = new ClusterRouter(cluster, {
      has: id => host.sessions.has(id),
      adopt: (id, record) => this.#adopt(id, record),
      serve: exchange => host.serve(exchange),
      body: exchange => host.body(exchange),
      clientAddress: exchange => host.clientAddress(exchange),
      reclaim: () => { for (const session of host.sessions.values()) void this.#reclaim(session) },
      isDraining: () => host.isDraining(),
      // Draining, a session not held here is elsewhere (a front guessed from an old record).
      movedAway: id => this.#handedOver.get(id)?.then(() => true) ?? (host.isDraining() && !host.sessions.has(id) ? Promise.resolve(true) : false),
      takeFrom: (id, from) => this.#takeFrom(id, from),
    }, this.#recordTtl, scheduler)
  }

  /** See ClusterRouter.route: undefined once the exchange went to (or was answered for) another instance. */
  route(exchange: Exchange, sessionId: string): Promise<Exchange | undefined> {
    return this.#router.route(exchange, sessionId)
  }

  close(): void { this.#router.close() }

  /** See ClusterRouter.waitingRelays and flush. */
  get waitingRelays(): number { return this.#router.waitingRelays }
  flush(): Promise<void> { return this.#router.flush() }

  /** A drain starts: no session is handed to this instance from now on. */
  leave(): Promise<void> { return this.#cluster.leave?.().catch(() => {}) ?? Promise.resolve() }
  /** A drain ended cleanly: fronts route again what this instance never answered (see SessionCluster.markLeft). */
  markLeft(): Promise<void> { return this.#cluster.markLeft?.().catch(() => {}) ?? Promise.resolve() }

  /**
   * Hands a session over to another instance at once (a drain), instead of leaving it to the
   * heartbeat. Its record gets its last state, then a running instance is asked to take it over
   * (SessionCluster.peers, one after the other until one does): the session is held by one
   * instance or the other at every moment, so its subscriptions lose no update; its streams end
   * here and the client resumes them there from the event store. With no instance to take it,
   * the record names an owner that is gone (`<this id>~drained`), so the first instance its client
   * reaches takes it over. Exchanges for it arriving meanwhile are routed once it has gone.
   */
  handOver(session: HttpSession): Promise<void> {
    const done = this.#handOver(session)
    this.#handedOver.set(session.id, done)
    return done
  }

  async #handOver(session: HttpSession): Promise<void> {
    const cluster = this.#cluster
    const me = cluster.instanceId
    const record: SessionRecord = { owner: me, principalKey: session.principalKey, kind: 'streamable-http' }
    if (session.protocolVersion !== undefined) record.protocolVersion = session.protocolVersion
    if (session.sharedState !== undefined) record.state = session.sharedState
    // Only while this instance holds it: one taken over meanwhile is the new owner's.
    const isHeld = async () => { const current = await cluster.lookup(session.id).catch(() => undefined); return current === undefined || current.owner === me }
    if (await isHeld()) {
      await cluster.claim(session.id, record, this.#recordTtl).catch(() => {})
      const peers = await (this.#peers ??= cluster.peers?.().catch(() => []) ?? Promise.resolve([]))
      // Spread over the peers: each session starts with the next one.
      const first = this.#handedOver.size
      let isTaken = false
      for (const peer of peers.map((_, i) => peers[(first + i) % peers.length]!)) {
        isTaken = await this.#router.handOverTo(peer, session.id)
        if (isTaken) break
        // Gone or refusing: the next sessions skip it.
        if (peers.includes(peer)) peers.splice(peers.indexOf(peer), 1)
      }
      if (!isTaken && await isHeld()) await cluster.claim(session.id, { ...record, owner: `${me}${DRAINED}` }, this.#recordTtl).catch(() => {})
    }
    session.end(true)
  }

  /** A draining instance hands a session here (see handOver): taken over from its record. */
  async #takeFrom(id: string, from: string): Promise<boolean> {
    if (this.#host.isClosed() || this.#host.sessions.has(id)) return false
    const record = await this.#cluster.takeOver(id, from, this.#recordTtl)
    if (record === undefined || record.owner !== this.#cluster.instanceId) return false
    return this.#adopt(id, record)
  }

  /**
   * Keeps an active session's record alive (a write at most every quarter of its life). A record
   * that went (Redis lost it) is written again; a session another instance took over meanwhile (this
   * one could not be heard for a while) is left to it: the copy here ends, keeping what is shared.
   */
  touch(session: AnySession, now: number): void {
    if (now - session.sharedAt < this.#recordTtl / 4) return
    session.sharedAt = now
    this.#cluster.touch(session.id, this.#recordTtl).then(outcome => {
      if (outcome === 'missing') return this.#reclaim(session)
      if (outcome === 'lost') session.end(true)
    }).catch(() => {})
  }

  /**
   * Records a new session in the cluster before its first answer goes out (so the client's next
   * request finds it on any instance). Without Redis the session still works through this instance.
   */
  async claim(session: AnySession, kind: SessionRecord['kind']): Promise<void> {
    session.sharedAt = this.#host.now()
    session.shared = session instanceof HttpSession ? { id: session.id, save: state => this.#save(session, state) } : { id: session.id, save: () => {} }
    await this.#cluster.claim(session.id, { owner: this.#cluster.instanceId, principalKey: session.principalKey, kind }, this.#recordTtl).catch(() => {})
  }

  /** A legacy SSE session ended (its stream is gone): forgotten everywhere. A Streamable HTTP one releases itself. */
  ended(session: AnySession): void {
    if (session instanceof LegacySession && session.shared !== undefined) this.#cluster.release(session.id).catch(() => {})
  }

  /** Writes a session's record again, with what it last saved (after Redis came back empty). */
  async #reclaim(session: AnySession): Promise<void> {
    // Only a session still held here (one that ended meanwhile stays forgotten).
    if (session.shared === undefined || this.#host.sessions.get(session.id) !== session) return
    const cluster = this.#cluster
    // Taken over by another instance while this one could not be reached: that one holds it now.
    const current = await cluster.lookup(session.id).catch(() => undefined)
    if (current !== undefined && current.owner !== cluster.instanceId) return session.end(true)
    const record: SessionRecord = { owner: cluster.instanceId, principalKey: session.principalKey, kind: session instanceof HttpSession ? 'streamable-http' : 'sse' }
    if (session instanceof HttpSession) {
      if (session.protocolVersion !== undefined) record.protocolVersion = session.protocolVersion
      if (session.sharedState !== undefined) record.state = session.sharedState
      if (session.standaloneId !== undefined) record.standalone = session.standaloneId
    }
    session.sharedAt = this.#host.now()
    await cluster.claim(session.id, record, this.#recordTtl).catch(() => {})
  }

  /** Stores a session's state (kept here too, to write the record again after an outage). */
  #save(session: HttpSession, state: string): void {
    session.sharedState = state
    this.#cluster.save(session.id, { state }).catch(() => {})
  }

  /** Continues here a Streamable HTTP session whose instance is gone, from its record. */
  #adopt(id: string, record: SessionRecord): boolean {
    const host = this.#host
    // One taken over while this instance drains is held here all the same (the record names it):
    // the drain hands it on in its next round.
    if (record.kind !== 'streamable-http' || host.sessions.has(id) || host.isClosed()) {
      // A legacy SSE session ended with its stream: it is forgotten everywhere.
      if (record.kind === 'sse') this.#cluster.release(id).catch(() => {})
      return false
    }
    const session = new HttpSession(id, host.config, host.now(), host.onEnd)
    session.principalKey = record.principalKey
    session.protocolVersion = record.protocolVersion
    session.sharedAt = host.now()
    session.sharedState = record.state
    const save = (state: string) => this.#save(session, state)
    session.shared = record.state === undefined ? { id, save } : { id, restored: record.state, save }
    if (record.standalone !== undefined) session.keepStandalone(record.standalone)
    host.open(session)
    session.announceShared()
    return true
  }
}
