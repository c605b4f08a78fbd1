import { filter, map, type OperatorFunction } from '../rx.ts'

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
