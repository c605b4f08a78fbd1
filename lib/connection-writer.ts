/**
 * The writing half of a JSON-RPC connection (connection.ts): how a frame goes to the transport
 * with its `SendOptions`, how responses and errors are written, and what a failed write becomes
 * (an encoding failure answered with -32603, a transport failure only reported). A base class,
 * not a part the connection holds: a send stays one method call on the connection itself, with
 * no object more per connection (a modern HTTP request makes one connection).
 */
import type { JsonRpcPayload, JsonRpcResponse, RequestId } from './jsonrpc/message.ts'
import { TransportError, type McpError } from './jsonrpc/errors.ts'
import { isEncodable, isEncodingFailure, unserializable } from './jsonrpc/encoding-failure.ts'
import type { SendOptions, Transport } from './transport.ts'
import type { ConnectionOptions } from './connection-contract.ts'
import type { InspectionEvent } from './inspection-event.ts'
import type { BatchCollector } from './batch-collector.ts'

/**
 * What a connection writes and how. Subclasses give `isClosed` (once true, responses and errors
 * are not written). `send` returns or throws as the transport's `send` does; the others catch
 * what a write throws or rejects with, and report it.
 */
export abstract class ConnectionWriter {
  readonly #transport: Transport
  readonly #options: ConnectionOptions
  readonly #inspect: ((event: InspectionEvent) => void) | undefined
  /** The send options of a message with only the version: one per version, reused, so a send makes none. */
  #versionOnly: SendOptions | undefined = undefined

  constructor(transport: Transport, options: ConnectionOptions) {
    this.#transport = transport
    this.#options = options
    this.#inspect = options.inspect
  }

  /** True once the connection is closed: responses and errors are no longer written. */
  abstract get isClosed(): boolean

  /**
   * Hands one message to the transport with what is known of it (`SendOptions`). The common
   * messages make no options object: none without anything to tell, a shared one per protocol
   * version (see #versionOptions); only a message that belongs to a request or carries headers gets
   * its own.
   */
  protected send(payload: JsonRpcPayload, relatedRequestId?: RequestId, headers?: Record<string, string>): void | Promise<void> {
    this.#inspect?.({ type: 'rxmcp.frame.out', message: payload })
    const protocolVersion = this.#options.protocolVersion?.()
    if (headers !== undefined) return this.#transport.send(payload, { relatedRequestId, protocolVersion, headers })
    if (relatedRequestId !== undefined) {
      return this.#transport.send(payload, protocolVersion === undefined ? { relatedRequestId } : { relatedRequestId, protocolVersion })
    }
    return protocolVersion === undefined ? this.#transport.send(payload) : this.#transport.send(payload, this.#versionOptions(protocolVersion))
  }

  /** The shared options of a message that tells only `protocolVersion` (see #versionOptions). */
  #versionOptions(protocolVersion: string): SendOptions {
    const known = this.#versionOnly
    if (known?.protocolVersion === protocolVersion) return known
    return this.#versionOnly = Object.freeze({ protocolVersion })
  }

  /** Reports a failed write: a transport failure goes to `inspect` only, anything else to `reportUnhandledError`. */
  protected report(error: unknown): void {
    // A write that fails because the transport has just gone is the closing race, not a fault:
    // the transport's end reaches the connection a moment later and fails what is pending.
    if (error instanceof TransportError) { this.#inspect?.({ type: 'rxmcp.handler.error', method: 'send', error }); return }
    this.#options.reportUnhandledError?.(error)
  }

  /**
   * Sends a response; one the transport cannot encode (a cycle, a BigInt, a throwing toJSON in the
   * handler's result or error data) is answered with -32603 instead, so the caller never waits for
   * an answer that will not come. Failures of the transport itself are only reported.
   */
  protected sendResponse(response: JsonRpcResponse, relatedRequestId: RequestId | undefined): void {
    try {
      const written = this.send(response, relatedRequestId)
      written?.catch(error => this.#responseFailed(response, relatedRequestId, error))
    } catch (error) {
      this.#responseFailed(response, relatedRequestId, error)
    }
  }

  /** A response the transport refused: one it cannot encode is answered with -32603 (the connection still open), anything else reported. */
  #responseFailed(response: JsonRpcResponse, relatedRequestId: RequestId | undefined, error: unknown): void {
    if (!isEncodingFailure(error) || this.isClosed) return this.report(error)
    this.#inspect?.({ type: 'rxmcp.handler.error', method: 'encode', error })
    this.sendSafely(unserializable(response.id), relatedRequestId)
  }

  /** Sends a batch's responses as one array; entries that cannot be encoded become -32603 answers. */
  protected sendBatch(responses: JsonRpcResponse[]): void {
    if (this.isClosed) return
    try {
      const written = this.send(responses)
      written?.catch(error => this.report(error))
    } catch (error) {
      if (!isEncodingFailure(error)) return this.report(error)
      this.#inspect?.({ type: 'rxmcp.handler.error', method: 'encode', error })
      // Only on this failure path is each entry encoded alone, to find the ones at fault.
      this.sendSafely(responses.map(response => isEncodable(response) ? response : unserializable(response.id)))
    }
  }

  /** Answers `id` with `error`, inside its batch when it came in one (and not at all when this side writes no responses). */
  protected answerError(id: RequestId | null, error: McpError, batch: BatchCollector | undefined): void {
    if (!this.canRespond(id, error, batch)) return
    const response: JsonRpcResponse = { jsonrpc: '2.0', id, error: error.toJSON() }
    if (batch !== undefined) return batch.add(response)
    if (!this.isClosed) this.sendResponse(response, id ?? undefined)
  }

  /** Sends an error about a frame that is not a request of a batch (`id` null when unread), reporting a failed write. */
  protected sendError(id: RequestId | null, error: McpError): void {
    if (!this.canRespond(id, error, undefined)) return
    if (!this.isClosed) this.sendSafely({ jsonrpc: '2.0', id, error: error.toJSON() })
  }

  /**
   * False when this side writes no responses now (see `ConnectionOptions.canRespond`): what would
   * have been answered (the request `id`, or the `error` about a frame) goes to `inspect` instead,
   * and a batch it belongs to stops waiting for it.
   */
  protected canRespond(id: RequestId | null, error: McpError | undefined, batch: BatchCollector | undefined): boolean {
    if (this.#options.canRespond === undefined || this.#options.canRespond()) return true
    this.#inspect?.(error === undefined ? { type: 'rxmcp.request.unanswered', id } : { type: 'rxmcp.request.unanswered', id, error })
    batch?.skip()
    return false
  }

  /** Sends `payload`; a failed write is reported, never thrown. */
  protected sendSafely(payload: JsonRpcPayload, relatedRequestId?: RequestId): void {
    try {
      const written = this.send(payload, relatedRequestId)
      written?.catch(error => this.report(error))
    } catch (error) {
      this.report(error)
    }
  }
}
