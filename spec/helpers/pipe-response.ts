import type { ServerResponse } from 'node:http'

/**
 * Writes a fetch `Response` to a node:http response, as a proxy in a test does: status and
 * headers at once (an SSE stream's client sees them before the first event), then the body as it
 * arrives; the upstream read is cancelled when the downstream connection closes.
 */
export async function writeFetchResponse(answer: Response, response: ServerResponse): Promise<void> {
  const answerHeaders: Record<string, string> = {}
  answer.headers.forEach((value, name) => { answerHeaders[name] = value })
  response.writeHead(answer.status, answerHeaders)
  if (answer.body === null) return void response.end()
  response.flushHeaders()
  const reader = answer.body.getReader()
  response.on('close', () => { void reader.cancel().catch(() => undefined) })
  for (let read = await reader.read(); !read.done; read = await reader.read()) response.write(read.value)
  response.end()
}
