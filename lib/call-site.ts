import { ConnectionClosedError, TimeoutError } from './jsonrpc/errors.ts'

/**
 * Where an outgoing request was made, so its timeout or closure error points at the caller
 * (`RequestOptions.captureStack`). Nothing is captured until `capture` is called.
 */
export class CallSite {
  /** Holds the captured frames; V8 formats them only if `.stack` is read, which happens on failure. */
  readonly #holder: { stack?: string } = {}
  constructor(readonly method: string) {}
  /** Captures the stack as seen by the caller of `boundary` (the connection's `request`): frames from `boundary` up are left out. */
  capture(boundary: Function): void {
    Error.captureStackTrace?.(this.#holder, boundary)
  }
  #withStack<E extends Error>(error: E): E {
    const stack = this.#holder.stack
    if (stack !== undefined) error.stack = `${error.name}: ${error.message}${stack.slice(stack.indexOf('\n'))}`
    return error
  }
  /** The TimeoutError of the request, when the `each` or `max` limit of `ms` ran out. */
  timeout(limit: 'each' | 'max', ms: number): Error {
    return this.#withStack(new TimeoutError(limit === 'max'
      ? `${this.method} exceeded its maximum total time of ${ms} ms`
      : `${this.method} timed out after ${ms} ms`, ms))
  }
  /** The error of a request made on a connection that has closed. */
  closed(): Error {
    return this.#withStack(new ConnectionClosedError(`Cannot send ${this.method}: the connection is closed`))
  }
}
