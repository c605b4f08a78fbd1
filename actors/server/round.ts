import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { CancelledError, InvalidParamsError, MissingRequiredClientCapabilityError } from '../../lib/jsonrpc/errors.ts'
import { isJsonObject } from '../../lib/jsonrpc/guards.ts'
import { hasCapability, requiredCapability } from '../../lib/schema/capabilities.ts'
import { inputRequestProblem } from '../../lib/schema/input-requests.ts'
import type { ElicitParams } from '../../lib/schema/types.ts'
import { checkElicitResult } from './elicitation.ts'
import type { JsonSchemaSource } from '../../lib/validator.ts'
import { ANSWER_CHECKS, capabilityObject } from './input-checks.ts'

/*
 * One MRTR round (MCP 2026-07-28 input_required): what the client answered so far and what the
 * handler asks now. A leaf of the modern era's serving (modern.ts) and of the context (context.ts).
 */

/** The reason a run's signal aborts with when its round ended input_required. One object, made once. */
const ROUND_ENDED = new CancelledError('The request was answered input_required: this run of its handler is over (a retry runs it anew)')

/** True when a run's signal aborted because its round ended `input_required` (not because the request was cancelled). */
export function isRoundEnd(reason: unknown): boolean {
  return reason === ROUND_ENDED
}

/**
 * What one MRTR round knows: the answers the client gave so far (verified), the input requests the
 * handler makes now, and what the handler carries to the next round.
 */
export class Round {
  /** Input requests made in this run of the handler, by key (made on the first: most runs ask none). */
  asked: Map<string, { method: string; params: JsonObject }> | undefined
  /** Told of the first input request that has no answer (the request's serving, modern.ts). */
  asker: { asked(round: Round): void } | undefined
  /** Default keys: one counter per method, from the start of each run, so keys repeat across runs. */
  #counters: Map<string, number> | undefined
  /** What the handler carries to the next round. */
  #data: unknown
  /** The signal of this run's handler, made when it first reads `ctx.signal` (most handlers never do). */
  #controller: AbortController | undefined
  /**
   * Whether `answers` came without a requestState (the client answered before any round was sent),
   * and the handler has not carried anything yet: such answers are taken only while this holds.
   */
  #isUnbound: boolean

  /**
   * @param answers the answers this run may take, by key; one found invalid is dropped (see `ask`).
   * @param isUnbound the answers came without a requestState (see {@link resumeRound}).
   */
  constructor(readonly answers: Record<string, unknown>, data: unknown, isUnbound = false) {
    this.#data = data
    this.#isUnbound = isUnbound
  }

  /** What the handler carries to the next round (`ctx.setRequestState`). */
  get data(): unknown { return this.#data }
  set data(value: unknown) {
    this.#data = value
    // From here on the run holds data of the server's own: answers no round asked for stop counting.
    if (this.#isUnbound) {
      this.#isUnbound = false
      for (const key of Object.keys(this.answers)) delete this.answers[key]
    }
  }

  /**
   * The answer for `key` (default: `elicitation-1`, `sampling-2`... by method and call order), or
   * an input request for it: the returned promise then never settles and the round ends.
   * `jsonSchema` (the server's validator) checks an elicitation's answer against its requestedSchema.
   */
  ask(method: string, params: JsonObject, capabilities: object, key?: string, jsonSchema?: JsonSchemaSource): Promise<unknown> {
    // MCP sampling and elicitation: a malformed request is the handler's mistake, never asked (nor answered).
    const problem = inputRequestProblem(method, params)
    if (problem !== undefined) return Promise.reject(new TypeError(`Cannot ask ${method}: ${problem}`))
    const prefix = method === 'elicitation/create' ? 'elicitation' : method === 'sampling/createMessage' ? 'sampling' : 'roots'
    const counters = this.#counters ??= new Map()
    const count = (counters.get(prefix) ?? 0) + 1
    counters.set(prefix, count)
    const id = key ?? `${prefix}-${count}`
    if (Object.hasOwn(this.answers, id)) {
      const answer = this.answers[id]
      // An answer refused here is dropped: a handler that catches the error and asks again under
      // the same key gets a new round for it (MRTR: ask again for what is missing), never a loop.
      const refuse = (error: unknown) => {
        delete this.answers[id]
        return Promise.reject(error)
      }
      // The client's answer is input like any other: of the shape the method answers with, or -32602.
      if (!isJsonObject(answer) || !(ANSWER_CHECKS[method]?.(answer) ?? true)) {
        return refuse(new InvalidParamsError(`Invalid params: inputResponses.${id} is not a valid answer to ${method}`, { key: id }))
      }
      // An accepted form's content must match the requestedSchema asked now (ElicitationContentError).
      if (method === 'elicitation/create') return checkElicitResult(params as unknown as ElicitParams, answer, jsonSchema, id).catch(refuse)
      return Promise.resolve(answer)
    }
    // MCP 2026-07-28 (MRTR): never ask for what the client did not declare it can answer.
    const needed = requiredCapability(method, params)
    if (needed !== undefined && !hasCapability(capabilities, needed)) {
      return Promise.reject(new MissingRequiredClientCapabilityError(
        `Missing required client capability: ${needed.join('.')} (the request's _meta did not declare it)`,
        { requiredCapabilities: capabilityObject(needed) },
      ))
    }
    if (this.asked === undefined) {
      this.asked = new Map()
      this.asker?.asked(this)
    }
    this.asked.set(id, { method, params })
    return new Promise(() => {})
  }

  /**
   * The signal of this run's handler (`ctx.signal`): aborted when `request`'s is (cancelled, the
   * connection closed), and when the run ends `input_required` ({@link end}).
   */
  signalOf(request: AbortSignal): AbortSignal {
    if (this.#controller === undefined) {
      const controller = this.#controller = new AbortController()
      if (request.aborted) controller.abort(request.reason)
      else request.addEventListener('abort', () => controller.abort(request.reason), { once: true })
    }
    return this.#controller.signal
  }

  /**
   * The run ended `input_required`: its handler waits, on a promise that never settles, for answers
   * that only a retry brings, and a retry runs the handler anew. MCP 2026-07-28 MRTR: servers MUST
   * NOT assume that clients will fulfil the inputRequests or retry, so nothing of this run is kept
   * for one: its signal aborts, and whatever the handler tied to it (timers, connections,
   * listeners) is let go now, not never.
   */
  end(): void {
    this.#controller?.abort(ROUND_ENDED)
  }
}
