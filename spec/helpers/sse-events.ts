import { createSseParser, type SseEvent } from '../../lib/codec/sse.ts'

/** Reads a response's SSE events until `until` holds (then cancels the body) or the stream ends. */
export async function events(response: Response, until?: (event: SseEvent) => boolean): Promise<SseEvent[]> {
  const out: SseEvent[] = []
  const parser = createSseParser(event => out.push(event))
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    parser.write(decoder.decode(value, { stream: true }))
    if (until !== undefined && out.some(until)) { await reader.cancel(); break }
  }
  return out
}

/** The JSON-RPC messages among SSE events (priming events, with empty data, left out). */
export const messages = (list: SseEvent[]) => list.filter(event => event.data !== '').map(event => JSON.parse(event.data))
