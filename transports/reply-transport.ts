import { Observable } from '../lib/rx.ts'
import type { Inbound, ReplyEnvelope, Transport } from '../lib/transport.ts'
import type { JsonRpcMessage, JsonRpcPayload } from '../lib/jsonrpc/message.ts'

/**
 * A request with its own reply (see `TransportServer.requests`) as a one-exchange transport, for
 * a consumer that forwards transports rather than serving requests (the bridge hands it to a
 * child process): `inbound` gives the request and completes when the reply is over; `send` writes
 * on the reply.
 */
export function replyTransport(envelope: ReplyEnvelope, kind: string): Transport {
  const { reply } = envelope
  return {
    kind,
    inbound: new Observable<Inbound>(subscriber => {
      if (reply.isClosed) return subscriber.complete()
      subscriber.next({ type: 'message', message: envelope.message, principal: envelope.principal, requestInfo: envelope.requestInfo })
      void reply.closed.then(() => subscriber.complete())
    }),
    send: (payload: JsonRpcPayload) => reply.send(payload as JsonRpcMessage),
    // The consumer is done with it (the bridge's child went away): an unanswered client hears so.
    close: async () => reply.close(),
  }
}
