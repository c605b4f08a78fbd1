/**
 * A scripted model server for the tests: node:http on 127.0.0.1, port 0, speaking both the
 * Anthropic Messages streaming API (`POST /v1/messages`) and the OpenAI Chat Completions streaming
 * API (`POST /v1/chat/completions`). Each request takes the next turn of the script (text, tool
 * calls, an HTTP error, or a stream that never ends) and is recorded, so tests can assert the tools
 * and the tool results that were sent.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** A tool call the mock model makes; `arguments` as a string is sent as is (to send bad JSON). */
export interface MockToolCall {
  name: string
  arguments: Record<string, unknown> | string
  id?: string
}

/** One scripted answer. */
export type MockTurn =
  | { text: string; stopReason?: 'maxTokens' | 'stopSequence' }
  | { toolCalls: MockToolCall[]; text?: string }
  | { status: number; body: string; headers?: Record<string, string> }
  /** Sends `text` as the start of an answer, then never ends the stream. */
  | { hang: true; text?: string }

/** A request the server got. */
export interface RecordedRequest {
  api: 'anthropic' | 'openai'
  path: string
  headers: IncomingMessage['headers']
  body: any
  /** Resolves when the connection closed before the answer ended (the client aborted). */
  closedEarly: Promise<void>
}

/** The running mock server. */
export interface MockModelServer extends AsyncDisposable {
  /** `http://127.0.0.1:<port>`: the Anthropic adapter's `baseUrl`. */
  readonly url: string
  /** `${url}/v1`: the OpenAI adapter's `baseUrl`. */
  readonly openaiUrl: string
  readonly requests: RecordedRequest[]
  /** Resolves with the request number `index` (0-based) once it arrived. */
  request(index: number): Promise<RecordedRequest>
  close(): Promise<void>
}

/** Starts a mock model server playing `turns` in order (a request past the end gets HTTP 500). */
export async function startMockModel(turns: MockTurn[]): Promise<MockModelServer> {
  // Every request, in arrival order.
  const requests: RecordedRequest[] = []
  // Callers of request(index) waiting for a request not yet arrived.
  const waiters = new Map<number, (request: RecordedRequest) => void>()
  // Responses not yet closed (hanging streams), destroyed by close().
  const open = new Set<ServerResponse>()
  // The index of the next turn to play.
  let next = 0

  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const api = req.url === '/v1/messages' ? 'anthropic' : req.url === '/v1/chat/completions' ? 'openai' : undefined
    if (req.method !== 'POST' || api === undefined) { res.writeHead(404).end(); return }
    let markClosedEarly!: () => void
    const closedEarly = new Promise<void>(resolve => { markClosedEarly = resolve })
    res.on('close', () => { open.delete(res); if (!res.writableEnded) markClosedEarly() })
    open.add(res)
    const recorded: RecordedRequest = { api, path: req.url!, headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')), closedEarly }
    requests.push(recorded)
    waiters.get(requests.length - 1)?.(recorded)
    const turn = turns[next++]
    if (turn === undefined) { res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"script exhausted"}'); return }
    if ('status' in turn) { res.writeHead(turn.status, { 'content-type': 'application/json', ...turn.headers }).end(turn.body); return }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
    const events = api === 'anthropic' ? anthropicEvents(turn, recorded.body.model) : openaiEvents(turn, recorded.body.model)
    for (const event of events) res.write(event)
    if (!('hang' in turn)) res.end()
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  const close = async () => {
    for (const res of open) res.destroy()
    server.closeAllConnections()
    await new Promise<void>(resolve => server.close(() => resolve()))
  }
  return {
    url,
    openaiUrl: `${url}/v1`,
    requests,
    request: index => index < requests.length ? Promise.resolve(requests[index]) : new Promise(resolve => waiters.set(index, resolve)),
    close,
    [Symbol.asyncDispose]: close,
  }
}

/** Text in two halves, to exercise delta assembly. */
function halves(text: string): string[] {
  const middle = Math.ceil(text.length / 2)
  return [text.slice(0, middle), text.slice(middle)].filter(part => part !== '')
}

function argumentsJson(call: MockToolCall): string {
  return typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments)
}

function anthropicEvents(turn: Exclude<MockTurn, { status: number }>, model: string): string[] {
  const sse = (data: Record<string, unknown>) => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`
  const out = [sse({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model, content: [], stop_reason: null, usage: { input_tokens: 10, output_tokens: 1 } } })]
  out.push(sse({ type: 'ping' }))
  let index = 0
  const text = turn.text
  if (text !== undefined && text !== '') {
    out.push(sse({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }))
    for (const part of halves(text)) out.push(sse({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: part } }))
    if ('hang' in turn) return out
    out.push(sse({ type: 'content_block_stop', index }))
    index++
  }
  if ('hang' in turn) return out
  const calls = 'toolCalls' in turn ? turn.toolCalls : []
  calls.forEach((call, i) => {
    out.push(sse({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: call.id ?? `toolu_${i + 1}`, name: call.name, input: {} } }))
    for (const part of halves(argumentsJson(call))) out.push(sse({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: part } }))
    out.push(sse({ type: 'content_block_stop', index }))
    index++
  })
  const stop = calls.length > 0 ? 'tool_use' : 'stopReason' in turn && turn.stopReason === 'maxTokens' ? 'max_tokens' : 'stopReason' in turn && turn.stopReason === 'stopSequence' ? 'stop_sequence' : 'end_turn'
  out.push(sse({ type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } }))
  out.push(sse({ type: 'message_stop' }))
  return out
}

function openaiEvents(turn: Exclude<MockTurn, { status: number }>, model: string): string[] {
  const chunk = (choice: Record<string, unknown> | undefined, extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', model, choices: choice ? [{ index: 0, ...choice }] : [], ...extra })}\n\n`
  const out = [chunk({ delta: { role: 'assistant', content: '' }, finish_reason: null })]
  for (const part of halves(turn.text ?? '')) out.push(chunk({ delta: { content: part }, finish_reason: null }))
  if ('hang' in turn) return out
  const calls = 'toolCalls' in turn ? turn.toolCalls : []
  calls.forEach((call, i) => {
    out.push(chunk({ delta: { tool_calls: [{ index: i, id: call.id ?? `call_${i + 1}`, type: 'function', function: { name: call.name, arguments: '' } }] }, finish_reason: null }))
    for (const part of halves(argumentsJson(call))) out.push(chunk({ delta: { tool_calls: [{ index: i, function: { arguments: part } }] }, finish_reason: null }))
  })
  const finish = calls.length > 0 ? 'tool_calls' : 'stopReason' in turn && turn.stopReason === 'maxTokens' ? 'length' : 'stop'
  out.push(chunk({ delta: {}, finish_reason: finish }))
  out.push(chunk(undefined, { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }))
  out.push('data: [DONE]\n\n')
  return out
}
