import { FrameTooLargeError, TransportError } from '../lib/jsonrpc/errors.ts'
import { createSseParser, type SseEvent } from '../lib/codec/sse.ts'
import { discardBody } from '../lib/http/discard-body.ts'

/**
 * Reading the bodies an MCP server answers the HTTP client with, within the message size limit:
 * an SSE stream event by event, a JSON body whole.
 */

/**
 * Feeds an SSE body to `onEvent`. An event over `maxMessageSize` bytes cancels the body and
 * throws FrameTooLargeError; a dropped connection throws what fetch threw.
 */
export async function readSseEvents(response: Response, onEvent: (event: SseEvent) => void, maxMessageSize: number): Promise<void> {
  if (response.body === null) return
  const parser = createSseParser(onEvent, maxMessageSize)
  const decoder = new TextDecoder()
  const reader = response.body.getReader()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      try {
        parser.write(decoder.decode(value, { stream: true }))
      } catch (error) {
        if (!(error instanceof RangeError)) throw error
        // Stop the server's bytes at the socket, not only here.
        await reader.cancel().catch(() => {})
        throw new FrameTooLargeError(maxMessageSize, `An SSE event exceeds the limit of ${maxMessageSize} bytes (maxMessageSize)`, { cause: error })
      }
    }
  } finally {
    reader.releaseLock()
  }
}

/** Reads a whole body, cancelling it and throwing FrameTooLargeError once it passes `limit` bytes. */
export async function readBody(response: Response, limit: number): Promise<Uint8Array> {
  if (response.body === null) return new Uint8Array(0)
  const declared = Number(response.headers.get('content-length'))
  if (declared > limit) {
    discardBody(response)
    throw new FrameTooLargeError(limit, `A body of ${declared} bytes exceeds the limit of ${limit} bytes`)
  }
  const chunks: Uint8Array[] = []
  let size = 0
  const reader = response.body.getReader()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      size += value.byteLength
      if (size > limit) {
        await reader.cancel().catch(() => {})
        throw new FrameTooLargeError(limit, `A body exceeds the limit of ${limit} bytes`)
      }
      chunks.push(value)
    }
  } finally {
    reader.releaseLock()
  }
  if (chunks.length === 1) return chunks[0]!
  const body = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) { body.set(chunk, offset); offset += chunk.byteLength }
  return body
}

/** The error a request sees when its answer was too big: a TransportError naming where, caused by the FrameTooLargeError. */
export function tooLarge(error: unknown, where: string): unknown {
  if (!(error instanceof FrameTooLargeError)) return error
  return new TransportError(`${where}: ${error.message}`, { cause: error })
}
