import { Observable, type Subscriber } from '../lib/rx.ts'
import type { Inbound } from '../lib/transport.ts'

/**
 * Messages kept for a session nobody reads yet. Each POST body is size-limited and the window is
 * the time until the connection subscribes, so this bound is only a backstop against a reader that
 * never comes.
 */
export const MAX_EARLY_MESSAGES = 1024

/**
 * The inbound side of a session whose messages arrive by HTTP request: one reader at a time (the
 * Transport contract), and what arrives before the first reader is kept (up to
 * MAX_EARLY_MESSAGES) and handed over, in order, when it subscribes. After a reader leaves,
 * nothing is kept for a next one. No Subject, to keep idle sessions small.
 */
export class InboundQueue {
  /** The connection reading the session. */
  #reader: Subscriber<Inbound> | undefined
  /** What came before anyone read (created on the first such message). */
  #early: Inbound[] | undefined
  #wasRead = false
  #isEnded = false

  /** An Observable of the session's messages; completes when the session ends. */
  observe(): Observable<Inbound> {
    return new Observable<Inbound>(subscriber => {
      if (this.#isEnded) return subscriber.complete()
      this.#reader = subscriber
      this.#wasRead = true
      const early = this.#early
      this.#early = undefined
      if (early !== undefined) for (const item of early) subscriber.next(item)
      return () => { if (this.#reader === subscriber) this.#reader = undefined }
    })
  }

  /** Hands one message to the reader, or keeps it until the first reader comes. */
  push(item: Inbound): void {
    if (this.#reader !== undefined) this.#reader.next(item)
    else if (!this.#wasRead && !this.#isEnded && (this.#early ??= []).length < MAX_EARLY_MESSAGES) this.#early.push(item)
  }

  /** Ends the stream: the reader completes and what was kept is dropped. */
  end(): void {
    this.#isEnded = true
    this.#early = undefined
    const reader = this.#reader
    this.#reader = undefined
    reader?.complete()
  }
}
