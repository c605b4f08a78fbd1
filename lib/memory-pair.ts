import { Observable, Subject } from './rx.ts'
import type { Inbound, Transport } from './transport.ts'
import type { JsonRpcPayload } from './jsonrpc/message.ts'
import { TransportError } from './jsonrpc/errors.ts'

/** Options of {@link createMemoryPair}. */
export interface MemoryPairOptions {
  /**
   * Round-trip every message through JSON text, as a real wire would (default false: objects are
   * handed over as they are, which is fastest for embedding but shares them between the sides).
   */
  serialize?: boolean
}

/** One end of an in-memory pair; disposable with `await using`. */
export interface MemoryTransport extends Transport, AsyncDisposable {}

/**
 * Two connected in-memory transports: what one sends, the other receives, on a later microtask
 * (never re-entrantly inside `send`), in order. Closing either end completes both inbound streams.
 *
 * @example
 * const [clientSide, serverSide] = createMemoryPair()
 * await server.listen(serverSide)
 * const client = await connect(clientSide, { name: 'test', version: '1' })
 */
export function createMemoryPair(options: MemoryPairOptions = {}): [MemoryTransport, MemoryTransport] {
  const a = new MemoryEnd(options.serialize === true)
  const b = new MemoryEnd(options.serialize === true)
  a.peer = b
  b.peer = a
  return [a, b]
}

class MemoryEnd implements MemoryTransport {
  readonly kind = 'memory'
  /** The other end; set right after both are made. */
  peer!: MemoryEnd
  readonly #incoming = new Subject<Inbound>()
  /** Messages that arrived before anyone subscribed to `inbound`, delivered on subscribe. */
  #early: Inbound[] | undefined = []
  #isClosed = false
  #isSubscribed = false
  readonly inbound: Observable<Inbound>

  constructor(readonly isSerializing: boolean) {
    this.inbound = new Observable<Inbound>(subscriber => {
      if (this.#isSubscribed) { subscriber.error(new TransportError('A memory transport can be read once')); return }
      this.#isSubscribed = true
      const subscription = this.#incoming.subscribe(subscriber)
      const early = this.#early!
      this.#early = undefined
      for (const item of early) subscriber.next(item)
      if (this.#isClosed) subscriber.complete()
      return subscription
    })
  }

  send(payload: JsonRpcPayload): void {
    if (this.#isClosed) throw new TransportError('The memory transport is closed')
    const message: unknown = this.isSerializing ? JSON.parse(JSON.stringify(payload)) : payload
    const peer = this.peer
    queueMicrotask(() => peer.#deliver({ type: 'message', message }))
  }

  #deliver(item: Inbound): void {
    if (this.#isClosed) return
    if (this.#early !== undefined) this.#early.push(item)
    else this.#incoming.next(item)
  }

  #end(): void {
    if (this.#isClosed) return
    this.#isClosed = true
    if (this.#early === undefined) this.#incoming.complete()
  }

  async close(): Promise<void> {
    // Let messages already sent arrive first, as on a real pipe.
    await Promise.resolve()
    this.#end()
    const peer = this.peer
    queueMicrotask(() => peer.#end())
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close()
  }
}
