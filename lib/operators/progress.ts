import { filter, map, type OperatorFunction } from '../rx.ts'
import { LocalError, LocalErrorCode } from '../jsonrpc/errors.ts'
import type { RequestInfo } from '../transport.ts'

/** A progress report for an outgoing request, from `notifications/progress`. */
export interface ProgressEvent {
  type: 'progress'
  progress: number
  total?: number
  message?: string
}

/** The final result of an outgoing request. */
export interface ResultEvent<R> {
  type: 'result'
  result: R
  /**
   * What the transport told of the frame that carried the response (its inbound item's
   * `requestInfo`: for the HTTP client, `transport: 'streamable-http'`); absent when it told
   * nothing, and on a result that did not come off the wire (a cached one).
   */
  requestInfo?: RequestInfo
}

/** What a request Observable emits: progress reports, then exactly one result. */
export type RequestEvent<R> = ProgressEvent | ResultEvent<R>

/**
 * Keeps only the result of a request event stream.
 * @example
 * const result = await lastValueFrom(client.request('tools/call', params).pipe(resultOf()))
 * @see progressOf
 */
export function resultOf<R>(): OperatorFunction<RequestEvent<R>, R> {
  return source => source.pipe(filter(isResultEvent), map(event => event.result))
}

/** Keeps only the progress reports of a request event stream. */
export function progressOf<R>(): OperatorFunction<RequestEvent<R>, ProgressEvent> {
  return source => source.pipe(filter(isProgressEvent))
}

/** True for a result event. */
export function isResultEvent<R>(event: RequestEvent<R>): event is ResultEvent<R> {
  return event.type === 'result'
}

/** True for a progress event. */
export function isProgressEvent<R>(event: RequestEvent<R>): event is ProgressEvent {
  return event.type === 'progress'
}

/**
 * A progress value a handler reported that is not above the last one sent for its progress token
 * (or is no finite number): a warning, not a failure. MCP requires `progress` to increase with each
 * notification, even when the total is unknown, so the report was dropped, not sent. Reported once
 * per token through `reportUnhandledError` (the server's default writes the message with console.warn).
 */
export class ProgressWarning extends LocalError {
  override name = 'ProgressWarning'
  readonly code = LocalErrorCode.Progress
  constructor(readonly progress: number, readonly last: number | undefined) {
    super(last === undefined
      ? `Progress ${progress} is not a finite number; the notification was dropped (MCP progress values must increase)`
      : `Progress ${progress} does not increase on the last value sent, ${last}; the notification was dropped (MCP progress values must increase)`)
  }
}

/**
 * The progress values sent for one progress token, which MCP requires to increase with each
 * notification. A request's context holds one, and a task made from the request goes on with it
 * (the task keeps the request's token).
 */
export class ProgressSequence {
  /** The last value sent; undefined before the first. */
  #last: number | undefined
  /** Set once a value was refused: the warning is given once per token, not once per call. */
  #hasWarned = false

  /** `report` receives the first refusal's {@link ProgressWarning}. */
  constructor(readonly report?: (warning: ProgressWarning) => void) {}

  /**
   * Whether `progress` may go out next: a finite number above the last one sent. It becomes the
   * last one when it may; otherwise it is refused (and the first refusal is reported).
   */
  take(progress: number): boolean {
    if (Number.isFinite(progress) && (this.#last === undefined || progress > this.#last)) {
      this.#last = progress
      return true
    }
    if (!this.#hasWarned) {
      this.#hasWarned = true
      this.report?.(new ProgressWarning(progress, Number.isFinite(progress) ? this.#last : undefined))
    }
    return false
  }
}
