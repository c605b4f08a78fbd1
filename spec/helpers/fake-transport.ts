import { Subject } from 'rxjs'
import type { Inbound, Transport } from '../../lib/transport.ts'
import type { JsonRpcPayload } from '../../lib/jsonrpc/message.ts'

/**
 * A transport driven by hand: `receive` plays a frame from the peer, `sent` records what went out.
 */
export class FakeTransport implements Transport {
  readonly kind = 'fake'
  readonly sent: JsonRpcPayload[] = []
  readonly #inbound = new Subject<Inbound>()
  readonly inbound = this.#inbound.asObservable()
  isClosed = false
  /** See Transport.answersAfterEndMs; set by a test of an input that ends before the output. */
  answersAfterEndMs: number | undefined = undefined
  // Who waits for `sent` to reach a count (see `frames`), looked at again on each send.
  readonly #waiting = new Set<{ count: number; done: () => void }>()
  #barriers = 0

  send(payload: JsonRpcPayload): void {
    if (this.isClosed) throw new Error('closed')
    this.sent.push(payload)
    for (const waiter of this.#waiting) if (this.sent.length >= waiter.count) { this.#waiting.delete(waiter); waiter.done() }
  }

  receive(message: unknown): void {
    this.#inbound.next({ type: 'message', message })
  }

  receiveInvalid(error: Inbound & { type: 'invalid' }): void {
    this.#inbound.next(error)
  }

  /** The peer's input ends (stdin reaching its end) while this side can still send. */
  end(): void {
    this.#inbound.complete()
  }

  async close(): Promise<void> {
    this.isClosed = true
    this.#inbound.complete()
  }

  /**
   * Resolves with the messages sent once there are `count` of them: at once if there are, else on
   * the send that makes them. An event, not turns of the event loop: the test's timeout bounds it.
   */
  frames(count: number): Promise<JsonRpcPayload[]> {
    if (this.sent.length >= count) return Promise.resolve(this.sent)
    return new Promise(resolve => { this.#waiting.add({ count, done: () => resolve(this.sent) }) })
  }

  /**
   * Plays a ping from the peer and resolves once it is answered, with the messages sent before that
   * answer (the answer itself is taken out of `sent`). A connection takes frames in order, so what
   * came before the ping has been handled by then: what it did not answer synchronously, it did not
   * answer at all. For a test that expects nothing (more) sent.
   */
  async afterPing(): Promise<JsonRpcPayload[]> {
    const id = `after-ping-${++this.#barriers}`
    const isAnswer = (payload: JsonRpcPayload) => (payload as { id?: unknown }).id === id
    const answered = new Promise<void>(resolve => {
      const waiter = { count: 0, done: () => resolve() }
      // Re-armed on each send until the ping's answer is among them.
      const check = () => this.sent.some(isAnswer) ? resolve() : (waiter.count = this.sent.length + 1, this.#waiting.add(waiter))
      waiter.done = check
      check()
    })
    this.receive({ jsonrpc: '2.0', id, method: 'ping' })
    await answered
    this.sent.splice(this.sent.findIndex(isAnswer), 1)
    return this.sent
  }
}
