/**
 * Forwarded calls of modern-era callers, held across the caller's `input_required` rounds (MCP
 * 2026-07-28 MRTR), so a source's call runs once however many rounds its asks take. Without it a
 * modern caller's retry would forward the call again from the start, and a legacy source would
 * repeat what it did before asking.
 *
 * ```
 * round 1  caller ─ tools/call ──────────────> proxy ─ request ─> source ... asks (a live request, or a round of its own)
 *          caller <─ input_required ────────── proxy asks the caller under key elicitation-1; its round ends:
 *                    requestState { held: id }       the call is parked (bounded in count and time), the ask pending
 * round 2  caller ─ tools/call + inputResponses + requestState ─> proxy finds id (same principal), asks again
 *                    under the same key: answered ─> the source's ask answered, its call goes on
 *          caller <─ result (or the next ask: round 3, keys never reused within the request)
 * ```
 *
 * A retry naming a call that is not held (expired, dropped at the bound, another process) starts
 * the call anew, as without holding; the answers it carries are taken by key as the call asks again.
 */
import { Observable, timer, type SchedulerLike, type Subscriber, type Subscription } from '../lib/rx.ts'
import { principalKey, type Principal } from '../lib/auth.ts'
import { base64url } from '../lib/base64url.ts'
import type { InputAnswerer } from '../lib/connection-contract.ts'
import { MethodNotFoundError } from '../lib/jsonrpc/errors.ts'
import { isJsonObject } from '../lib/jsonrpc/guards.ts'
import type { JsonObject } from '../lib/jsonrpc/message.ts'
import type { RequestEvent } from '../lib/operators/progress.ts'
import type { CreateMessageParams, ElicitParams } from '../lib/schema/types.ts'
import type { MountCaller } from './server/mountable.ts'
import { isRoundEnd } from './server/round.ts'

/** Options of {@link HeldCalls}. */
export interface HeldCallsOptions {
  /** Most calls parked at once; a call past it is not held (the retry starts it anew). */
  maxCalls: number
  /** How long a parked call waits for the caller's retry before it is cancelled downstream. */
  ttlMs: number
  scheduler?: SchedulerLike
  /** Where the source's log messages about a call go, with the caller of the round attached (none while parked: dropped). */
  log(params: JsonObject, caller: MountCaller): void
}

/** What one forwarded call gives the request it makes downstream. */
export interface HeldCallHooks {
  /** Answers the source's asks through whichever round of the caller is attached. */
  readonly answerInput: InputAnswerer
  /** The source's log messages about the call, to the attached round's caller. */
  readonly onLog: (params: JsonObject) => void
}

/** The key of a held call's id in the caller's `requestState` data. */
const HELD_KEY = 'rxmcp/heldCall'

/** One of the source's asks, waiting for the caller's answer. */
interface PendingAsk {
  readonly key: string
  readonly method: string
  readonly params: JsonObject | undefined
  resolve(result: JsonObject): void
  reject(error: unknown): void
}

/** The forwarded calls one source holds for modern callers between their rounds. */
export class HeldCalls {
  /** Calls waiting for their caller's retry, by id. */
  readonly #parked = new Map<string, HeldCall>()

  constructor(readonly options: HeldCallsOptions) {}

  /** True when `caller`'s requestState names a call parked here for the same principal. */
  holds(caller: MountCaller): boolean {
    const id = heldIdOf(caller.requestState)
    const call = id === undefined ? undefined : this.#parked.get(id)
    return call !== undefined && call.principal === principalKey(caller.principal)
  }

  /**
   * Runs one round of `caller`'s request: resumes the call its requestState names, or starts one
   * with `start` (the request downstream, made with the hooks). Emits the call's result and
   * completes; progress and log messages go to `caller`. Unsubscribing parks the call when the
   * source waits for an answer the caller's next round brings, else cancels it downstream.
   */
  run(caller: MountCaller, start: (hooks: HeldCallHooks) => Observable<RequestEvent<JsonObject>>): Observable<JsonObject> {
    return new Observable<JsonObject>(subscriber => {
      let call = this.#resume(caller)
      if (call === undefined) {
        call = new HeldCall(caller.principal, this.options.log)
        call.attach(caller, subscriber)
        call.start(start)
      } else {
        call.attach(caller, subscriber)
      }
      const held = call
      return () => this.#detach(held, caller)
    })
  }

  /** Cancels every parked call downstream (the source is going). */
  close(): void {
    for (const call of this.#parked.values()) this.#drop(call)
  }

  /** The parked call `caller`'s requestState names, taken out of the table; undefined when none is (or another principal's). */
  #resume(caller: MountCaller): HeldCall | undefined {
    const id = heldIdOf(caller.requestState)
    if (id === undefined) return undefined
    const call = this.#parked.get(id)
    if (call === undefined || call.principal !== principalKey(caller.principal)) return undefined
    this.#parked.delete(id)
    call.expiry?.unsubscribe()
    call.expiry = undefined
    return call
  }

  /** The round of `caller` ended: park the call for the next round, or cancel it. */
  #detach(call: HeldCall, caller: MountCaller): void {
    if (!call.detach(caller)) return
    if (call.pending === 0 || this.#parked.size >= this.options.maxCalls) return call.cancel()
    // Sealed into the requestState of the round that just ended (the server seals after its run is
    // over, so nothing the run read changes): the retry names this call. Set only now, as answers a
    // client sent ahead of any round count only while the run carries nothing of its own.
    caller.setRequestState({ [HELD_KEY]: call.id })
    this.#parked.set(call.id, call)
    call.expiry = timer(this.options.ttlMs, this.options.scheduler).subscribe(() => this.#drop(call))
    // The round's signal says why it ended once its run is over: a cancelled request is not retried.
    const signal = caller.signal
    queueMicrotask(() => { if (signal.aborted && !isRoundEnd(signal.reason)) this.#drop(call) })
  }

  #drop(call: HeldCall): void {
    if (this.#parked.get(call.id) !== call) return
    this.#parked.delete(call.id)
    call.expiry?.unsubscribe()
    call.cancel()
  }
}

/** The held call's id in a requestState's data, if it names one. */
function heldIdOf(state: unknown): string | undefined {
  const id = isJsonObject(state) ? state[HELD_KEY] : undefined
  return typeof id === 'string' ? id : undefined
}

/** One forwarded call and the round of its caller attached now (none while parked). */
class HeldCall implements HeldCallHooks {
  /** 128 random bits, made when first needed (most calls ask nothing): what the caller's requestState names it by. */
  #id: string | undefined
  /** Who made the call (principalKey), read when first needed: only that principal's retry resumes it. */
  #principal: string | undefined
  /** The source's asks not answered yet, by key (made on the first: most calls ask nothing). */
  #asks: Map<string, PendingAsk> | undefined
  get asks(): Map<string, PendingAsk> { return this.#asks ??= new Map() }
  /** How many asks wait for an answer. */
  get pending(): number { return this.#asks?.size ?? 0 }
  /** The parked call's time limit. */
  expiry: Subscription | undefined
  /** The attached round: its caller, and where the call's answer goes. */
  #caller: MountCaller | undefined
  #sink: Subscriber<JsonObject> | undefined
  /** How many asks of each kind so far: keys `elicitation-1`, `sampling-1`, ... never reused in the request (made on the first ask). */
  #counts: Map<string, number> | undefined
  /** The call's outcome, when it came while parked (the next round gets it). */
  #outcome: { result: JsonObject } | { error: unknown } | undefined
  #downstream: Subscription | undefined
  #isOver = false

  constructor(readonly by: Principal | undefined, readonly log: HeldCallsOptions['log']) {}

  get id(): string { return this.#id ??= base64url(crypto.getRandomValues(new Uint8Array(16))) }
  get principal(): string { return this.#principal ??= principalKey(this.by) }

  readonly answerInput: InputAnswerer = (method, params, signal) => new Promise<JsonObject>((resolve, reject) => {
    const prefix = method === 'elicitation/create' ? 'elicitation' : method === 'sampling/createMessage' ? 'sampling' : 'roots'
    const counts = this.#counts ??= new Map()
    const count = (counts.get(prefix) ?? 0) + 1
    counts.set(prefix, count)
    const ask: PendingAsk = { key: `${prefix}-${count}`, method, params, resolve, reject }
    this.asks.set(ask.key, ask)
    // The source withdrew its ask (its call was cancelled, or it gave up waiting).
    signal.addEventListener('abort', () => { if (this.asks.delete(ask.key)) reject(signal.reason) }, { once: true })
    if (this.#caller !== undefined) this.#put(ask)
  })

  readonly onLog = (params: JsonObject): void => {
    if (this.#caller !== undefined) this.log(params, this.#caller)
  }

  /** Starts the call downstream; its events go to the attached round. */
  start(start: (hooks: HeldCallHooks) => Observable<RequestEvent<JsonObject>>): void {
    this.#downstream = start(this).subscribe({
      next: event => {
        if (event.type === 'progress') this.#caller?.progress(event.progress, event.total, event.message)
        else this.#settle({ result: event.result })
      },
      error: error => this.#settle({ error }),
    })
  }

  /** Attaches a round of the caller: what the source still waits for is asked of it again (under the same keys). */
  attach(caller: MountCaller, sink: Subscriber<JsonObject>): void {
    this.#caller = caller
    this.#sink = sink
    if (this.#outcome !== undefined) return this.#deliver()
    if (this.#asks !== undefined) for (const ask of this.#asks.values()) this.#put(ask)
  }

  /** The round of `caller` is over; true when the call goes on without it (to park or cancel). */
  detach(caller: MountCaller): boolean {
    if (this.#caller !== caller) return false
    this.#caller = undefined
    this.#sink = undefined
    return !this.#isOver
  }

  /**
   * Cancels the call downstream. Its pending asks are left to the source, which withdraws them as
   * its call ends (an answer sent now would cross that withdrawal and reach nobody).
   */
  cancel(): void {
    this.#isOver = true
    this.#downstream?.unsubscribe()
    this.#asks?.clear()
  }

  /** Asks the attached round's caller, under the ask's key; its answer (a later round's, maybe) goes to the source. */
  #put(ask: PendingAsk): void {
    const caller = this.#caller!
    const options = { key: ask.key }
    const answer: Promise<unknown> =
      ask.method === 'sampling/createMessage' ? caller.sample(ask.params as unknown as CreateMessageParams, options)
      : ask.method === 'elicitation/create' ? caller.elicit(ask.params as unknown as ElicitParams, options)
      : ask.method === 'roots/list' ? caller.listRoots(options)
      : Promise.reject(new MethodNotFoundError(`Method not found: ${ask.method}`))
    // An unanswered ask never settles (its round ended); an answer settles the ask once.
    answer.then(
      result => { if (this.asks.get(ask.key) === ask) { this.asks.delete(ask.key); ask.resolve(result as JsonObject) } },
      error => { if (this.asks.get(ask.key) === ask) { this.asks.delete(ask.key); ask.reject(error) } },
    )
  }

  #settle(outcome: { result: JsonObject } | { error: unknown }): void {
    if (this.#outcome !== undefined) return
    this.#outcome = outcome
    if (this.#sink !== undefined) this.#deliver()
  }

  #deliver(): void {
    const sink = this.#sink!
    const outcome = this.#outcome!
    this.#isOver = true
    if ('result' in outcome) { sink.next(outcome.result); sink.complete() } else sink.error(outcome.error)
  }
}
