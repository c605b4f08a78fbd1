import { Observable, from, map, mergeMap, of, take, throwIfEmpty, toArray, type MonoTypeOperatorFunction, type Subscription } from '../../lib/rx.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import type { RequestEvent } from '../../lib/operators/progress.ts'
import { InputRoundsExceededError } from './errors.ts'
import { readResult, retryParams, type InputRequest } from './modern.ts'

/** DEFAULTS of {@link inputRounds}. */
export const INPUT_ROUNDS_DEFAULTS = { maxRounds: 10 } as const

/** What {@link inputRounds} needs to run the rounds of one request. */
export interface InputRoundsOptions {
  /** The request's method (only tools/call, prompts/get and resources/read may require input). */
  method: string
  /** The params the first round was sent with. */
  params: JsonObject | undefined
  /** Sends the request again with these params (a new JSON-RPC id): a cold Observable of its events. */
  resend(params: JsonObject): Observable<RequestEvent<JsonObject>>
  /** Answers one input request; emits its result once, or errors. Unsubscribing cancels it. */
  answer(key: string, request: InputRequest): Observable<JsonObject>
  /** Most input_required results answered before giving up (default 10). */
  maxRounds?: number
}

/**
 * The multi-round-trip loop of MCP 2026-07-28 (MRTR) as an operator on a request's events.
 * Progress passes through from every round. A `complete` result (or one without `resultType`)
 * ends the stream; an `input_required` result is answered: every input request of the round runs
 * at once through `answer`, then the request is sent again through `resend` with
 * `inputResponses` and the `requestState` echoed exactly (left out when there was none), and
 * that round's events go through the same operator.
 *
 * ```
 *   round n: events --progress--> out
 *                   --result: complete--> out, complete
 *                   --result: input_required--> answer all (parallel) --> resend(params + responses) = round n+1
 *                   --result: anything else--> error InvalidResultError
 * ```
 *
 * Errors with `InvalidResultError` for an unusable result, `InputRoundsExceededError` when the
 * server still requires input after `maxRounds` rounds, or whatever an answer or a round failed
 * with (one failing answer cancels the others). Unsubscribing cancels the round in flight: its
 * request on the wire, or its answers (their Observables are unsubscribed).
 */
export function inputRounds(options: InputRoundsOptions): MonoTypeOperatorFunction<RequestEvent<JsonObject>> {
  const maxRounds = options.maxRounds ?? INPUT_ROUNDS_DEFAULTS.maxRounds
  // Written out rather than with mergeMap: every request of the modern era passes here, and most
  // never need a second round, so an event goes straight through with no inner Observable.
  const round = (events: Observable<RequestEvent<JsonObject>>, params: JsonObject | undefined, answered: number): Observable<RequestEvent<JsonObject>> =>
    new Observable<RequestEvent<JsonObject>>(subscriber => {
      let next: Subscription | undefined
      let isSourceDone = false
      let isNextDone = false
      const source = events.subscribe({
        next: event => {
          if (event.type !== 'result') return subscriber.next(event)
          const outcome = readResult(options.method, event.result)
          if (outcome.kind === 'complete') return subscriber.next(event)
          if (outcome.kind === 'invalid') return subscriber.error(outcome.error)
          if (answered >= maxRounds) return subscriber.error(new InputRoundsExceededError(options.method, answered))
          next = answerAll(outcome.inputRequests, options).pipe(mergeMap(responses => {
            const retry = retryParams(params, responses, outcome.requestState)
            return round(options.resend(retry), retry, answered + 1)
          })).subscribe({
            next: value => subscriber.next(value),
            error: error => subscriber.error(error),
            complete: () => { isNextDone = true; if (isSourceDone) subscriber.complete() },
          })
        },
        error: error => subscriber.error(error),
        complete: () => { isSourceDone = true; if (next === undefined || isNextDone) subscriber.complete() },
      })
      return () => { source.unsubscribe(); next?.unsubscribe() }
    })
  return source => round(source, options.params, 0)
}

/** Every input request of a round answered at once; emits the `inputResponses` map once (undefined without requests). */
function answerAll(requests: Map<string, InputRequest> | undefined, options: InputRoundsOptions): Observable<JsonObject | undefined> {
  if (requests === undefined) return of(undefined)
  if (requests.size === 0) return of({})
  return from([...requests]).pipe(
    mergeMap(([key, request]) => options.answer(key, request).pipe(
      take(1),
      throwIfEmpty(() => new Error(`The answer to input request ${JSON.stringify(key)} of ${options.method} completed without a result`)),
      map(response => [key, response] as const),
    )),
    toArray(),
    map(entries => Object.fromEntries(entries) as JsonObject),
  )
}
