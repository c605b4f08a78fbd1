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

  send(payload: JsonRpcPayload): void {
    if (this.isClosed) throw new Error('closed')
    this.sent.push(payload)
  }

  receive(message: unknown): void {
    this.#inbound.next({ type: 'message', message })
  }

  receiveInvalid(error: Inbound & { type: 'invalid' }): void {
    this.#inbound.next(error)
  }

  async close(): Promise<void> {
    this.isClosed = true
    this.#inbound.complete()
  }

  /** Messages sent so far, waiting a few turns of the event loop for asynchronous handlers. */
  async settle(turns = 3): Promise<JsonRpcPayload[]> {
    for (let i = 0; i < turns; i++) await new Promise(resolve => setImmediate(resolve))
    return this.sent
  }
}
