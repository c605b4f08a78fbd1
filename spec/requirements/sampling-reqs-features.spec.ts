import { afterEach, describe, expect } from 'vitest'
import { firstValueFrom } from 'rxjs'
import { verifies } from '../helpers/verifies.ts'
import { createServer, type McpServer } from '../../actors/server.ts'
import { connect, type ClientOptions, type McpClient } from '../../actors/client.ts'
import { createConnection, type Connection } from '../../lib/connection.ts'
import { createMemoryPair } from '../../transports/memory.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { resultOf } from '../../lib/operators/progress.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { ErrorCode, InvalidParamsError, McpError } from '../../lib/jsonrpc/errors.ts'
import type { CreateMessageParams, CreateMessageResult } from '../../lib/schema/types.ts'
import { fakeServer } from '../actors/client-modern-helpers.ts'

/**
 * MCP sampling's message rules (2025-11-25 and 2026-07-28 client/sampling: roles and content, tool
 * results alone in their message, every tool use answered by the next message), on both sides: the
 * rxmcp server refuses to ask with a malformed conversation (ctx.sample rejects with a TypeError and
 * nothing reaches the client), and the rxmcp client answers a malformed one -32602 (legacy) or
 * fails the call (a modern input request), its sampling handler never called.
 */

let cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => { for (const cleanup of cleanups.reverse()) await cleanup(); cleanups = [] })

const text = (value: string) => ({ type: 'text', text: value })
const use = (id: string) => ({ type: 'tool_use', id, name: 'weather', input: { city: id } })
const result = (id: string) => ({ type: 'tool_result', toolUseId: id, content: [text(`${id}: sunny`)] })
const ANSWER: CreateMessageResult = { role: 'assistant', model: 'm', content: { type: 'text', text: 'done' } }

/** A valid tool loop: the question, two tool uses, both results, and the model goes on. */
const BALANCED = [
  { role: 'user', content: text('Weather in Paris and London?') },
  { role: 'assistant', content: [use('paris'), use('london')] },
  { role: 'user', content: [result('london'), result('paris')] },
]

const MALFORMED: Record<string, { messages: unknown[]; says: RegExp }> = {
  'a role that is neither user nor assistant': { messages: [{ role: 'system', content: text('hi') }], says: /role must be "user" or "assistant"/ },
  'a message without content': { messages: [{ role: 'user' }], says: /has no content/ },
  'tool results mixed with text': { messages: [BALANCED[0], BALANCED[1], { role: 'user', content: [text('Here:'), result('paris'), result('london')] }], says: /mixes tool results with other content/ },
  'a tool use left without its result': { messages: [BALANCED[0], BALANCED[1], { role: 'user', content: [result('paris')] }], says: /answer each tool use/ },
  'another message before the tool results': { messages: [BALANCED[0], BALANCED[1], { role: 'user', content: text('and?') }, BALANCED[2]], says: /must be a user message of tool results/ },
  'a result naming no tool use of the message before': { messages: [BALANCED[0], BALANCED[1], { role: 'user', content: [result('paris'), result('rome')] }], says: /answer each tool use/ },
  'a conversation ending on tool uses': { messages: [BALANCED[0], BALANCED[1]], says: /no user message of tool results follows/ },
}

/** What each rule's tests use of the malformed conversations. */
const SHAPE = ['a role that is neither user nor assistant', 'a message without content']
const RESULTS_ONLY = ['tool results mixed with text']
const BALANCE = ['a tool use left without its result', 'another message before the tool results', 'a result naming no tool use of the message before', 'a conversation ending on tool uses']

const params = (messages: unknown[]) => ({ messages, maxTokens: 50, tools: [{ name: 'weather', inputSchema: { type: 'object' } }] }) as unknown as CreateMessageParams

/**
 * An rxmcp server over real Streamable HTTP whose tool `ask` samples with the conversation named by
 * its `case` argument, and a connected rxmcp client of `era` that samples with tools; `sampled`
 * counts the client's sampling handler's calls.
 */
async function serverAndClient(era: 'legacy' | 'modern'): Promise<{ client: McpClient; sampled: () => number }> {
  const server: McpServer = createServer({ name: 'sampler', version: '1' })
  server.tool('ask', { inputSchema: { type: 'object', properties: { case: { type: 'string' } } } }, async ({ case: name }, ctx) => {
    const messages = name === 'balanced' ? BALANCED : MALFORMED[name as string]!.messages
    try {
      const answer = await ctx.sample(params(messages))
      return { content: [{ type: 'text', text: `answered: ${JSON.stringify(answer.content)}` }] }
    } catch (error) {
      return { content: [{ type: 'text', text: `${(error as Error).name}: ${(error as Error).message}` }] }
    }
  })
  const http = streamableHttp()
  await server.listen(http)
  cleanups.push(() => server.close())
  let sampled = 0
  const client = await connect(streamableHttpClient(http.url!), { name: 'spec', version: '1' }, {
    era, samplingTools: true, sampling: () => { sampled++; return ANSWER },
  })
  cleanups.push(() => client.close())
  return { client, sampled: () => sampled }
}

/** The text of a tool result. */
async function said(client: McpClient, name: string): Promise<string> {
  const answer = await client.callTool('ask', { case: name })
  return (answer.content[0] as { text: string }).text
}

/** The server side: each malformed case is refused before it reaches the client, the balanced one goes. */
async function serverRefuses(era: 'legacy' | 'modern', cases: readonly string[]): Promise<void> {
  const { client, sampled } = await serverAndClient(era)
  for (const name of cases) {
    const answer = await said(client, name)
    expect(answer, name).toMatch(/^TypeError: Cannot (send|ask) sampling\/createMessage: /)
    expect(answer, name).toMatch(MALFORMED[name]!.says)
  }
  expect(sampled()).toBe(0)
  expect(await said(client, 'balanced')).toBe('answered: {"type":"text","text":"done"}')
  expect(sampled()).toBe(1)
}

/** The rxmcp client (legacy era) of a raw JSON-RPC server over a memory pair, which sends what the test writes. */
async function clientOfRawServer(options: ClientOptions): Promise<{ ask: (method: string, params: JsonObject) => Promise<JsonObject> }> {
  const [near, far] = createMemoryPair()
  const server: Connection = createConnection(far)
  server.setRequestHandler('initialize', () => ({ protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'raw', version: '1' } }))
  server.start()
  const client = await connect(near, { name: 'spec', version: '1' }, { era: 'legacy', ...options })
  cleanups.push(() => server.close(), () => client.close())
  return { ask: (method, params) => firstValueFrom(server.request(method, params, { progress: false, timeout: 0 }).pipe(resultOf())) }
}

/** The client side, legacy era: each malformed case is answered -32602, the balanced one sampled. */
async function legacyClientRefuses(cases: readonly string[]): Promise<void> {
  let sampled = 0
  const { ask } = await clientOfRawServer({ samplingTools: true, sampling: () => { sampled++; return ANSWER } })
  for (const name of cases) {
    const refusal = await ask('sampling/createMessage', params(MALFORMED[name]!.messages) as unknown as JsonObject).catch((error: unknown) => error)
    expect(refusal, name).toBeInstanceOf(McpError)
    expect((refusal as McpError).code, name).toBe(ErrorCode.InvalidParams)
    expect((refusal as McpError).message, name).toMatch(MALFORMED[name]!.says)
  }
  expect(sampled).toBe(0)
  expect(await ask('sampling/createMessage', params(BALANCED) as unknown as JsonObject)).toMatchObject({ role: 'assistant', model: 'm' })
  expect(sampled).toBe(1)
}

/** The client side, modern era: a tools/call answered input_required with a malformed sampling request fails; the balanced one is answered. */
async function modernClientRefuses(cases: readonly string[]): Promise<void> {
  let sampled = 0
  const fake = fakeServer({
    'tools/call': request => {
      const name = request?.name as string
      const responses = request?.inputResponses as JsonObject | undefined
      if (responses !== undefined) return { resultType: 'complete', content: [{ type: 'text', text: `got ${JSON.stringify(responses.s)}` }] }
      const messages = name === 'balanced' ? BALANCED : MALFORMED[name]!.messages
      return { resultType: 'input_required', inputRequests: { s: { method: 'sampling/createMessage', params: params(messages) } } }
    },
  })
  const client = await connect(fake.transport, { name: 'spec', version: '1' }, { era: 'modern', samplingTools: true, sampling: () => { sampled++; return ANSWER } })
  cleanups.push(() => client.close(), () => fake.server.close())
  for (const name of cases) {
    const refusal = await client.callTool(name, {}).catch((error: unknown) => error)
    expect(refusal, name).toBeInstanceOf(InvalidParamsError)
    expect((refusal as McpError).message, name).toMatch(MALFORMED[name]!.says)
  }
  expect(sampled).toBe(0)
  // Nothing answered a malformed round: only the balanced call came back with inputResponses.
  expect(fake.of('tools/call').filter(request => request.params?.inputResponses !== undefined)).toHaveLength(0)
  expect(await client.callTool('balanced', {})).toMatchObject({ content: [{ type: 'text', text: expect.stringContaining('"role":"assistant"') }] })
  expect(sampled).toBe(1)
}

describe('MCP sampling message rules (server: ctx.sample refuses; client: answers -32602)', () => {
  verifies('sampling:message-shape@2026-07-28', 'a message without a user/assistant role or without content is never asked by the server nor answered by the client', async () => {
    await serverRefuses('modern', SHAPE)
    await serverRefuses('legacy', SHAPE)
    await modernClientRefuses(SHAPE)
    await legacyClientRefuses(SHAPE)
  })

  verifies('sampling:tool-results-only', 'a user message mixing tool results with text is refused by the server (legacy, over HTTP) and answered -32602 by the client', async () => {
    await serverRefuses('legacy', RESULTS_ONLY)
    await legacyClientRefuses(RESULTS_ONLY)
  })

  verifies('sampling:tool-results-only@2026-07-28', 'a user message mixing tool results with text is never an input request of the server (over HTTP), and fails the client\'s call', async () => {
    await serverRefuses('modern', RESULTS_ONLY)
    await modernClientRefuses(RESULTS_ONLY)
  })

  verifies('sampling:tool-use-balanced', 'tool uses not answered by the next message, one result each by id, are refused by the server (legacy, over HTTP) and answered -32602 by the client', async () => {
    await serverRefuses('legacy', BALANCE)
    await legacyClientRefuses(BALANCE)
  })

  verifies('sampling:tool-use-balanced@2026-07-28', 'tool uses not answered by the next message, one result each by id, are never an input request of the server (over HTTP), and fail the client\'s call', async () => {
    await serverRefuses('modern', BALANCE)
    await modernClientRefuses(BALANCE)
  })
})
