import { afterEach, describe, expect, it } from 'vitest'
import { firstValueFrom } from 'rxjs'
import { connect, type McpClient } from '../../actors/client.ts'
import { createConnection, type Connection } from '../../lib/connection.ts'
import { createMemoryPair } from '../../transports/memory.ts'
import { resultOf } from '../../lib/operators/progress.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { ErrorCode, McpError } from '../../lib/jsonrpc/errors.ts'

/**
 * Client requirements no other spec asserted (see spec/requirements/): the rxmcp client against a
 * raw JSON-RPC peer that plays a 2025-11-25 server and sends what the test writes, the requests a
 * well-behaved rxmcp server would never send included.
 */

let cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => { for (const cleanup of cleanups.reverse()) await cleanup(); cleanups = [] })

/** The client connected (legacy era) to a raw server; `server` is that server's connection, `seen` the client's requests. */
async function clientOfRawServer(options: Parameters<typeof connect>[2] = {}) {
  const [near, far] = createMemoryPair()
  const server: Connection = createConnection(far)
  const seen: Array<{ method: string; params: JsonObject | undefined }> = []
  // The tools/call handlers held until the burst of three the progress test sends is all here.
  const held: Array<() => void> = []
  server.setRequestHandler('initialize', params => {
    seen.push({ method: 'initialize', params })
    return { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'raw-server', version: '1' } }
  })
  server.setRequestHandler('tools/call', async (params, request) => {
    seen.push({ method: 'tools/call', params })
    // Holds every call until all three of the burst have arrived: their tokens are those of
    // requests in flight together, whatever the machine's pace.
    await new Promise<void>(resolve => { held.push(resolve); if (held.length === 3) for (const release of held) release() })
    return { content: [{ type: 'text', text: String(request.progressToken) }] }
  })
  server.start()
  const client: McpClient = await connect(near, { name: 'spec', version: '1' }, { era: 'legacy', ...options })
  cleanups.push(() => server.close(), () => client.close())
  const ask = (method: string, params: JsonObject) => firstValueFrom(server.request(method, params, { progress: false, timeout: 0 }).pipe(resultOf()))
  const refusal = async (method: string, params: JsonObject): Promise<McpError> => {
    const outcome = await ask(method, params).then(value => ({ value }), (error: unknown) => ({ error }))
    if (!('error' in outcome)) throw new Error(`${method} was answered ${JSON.stringify(outcome.value)}`)
    expect(outcome.error).toBeInstanceOf(McpError)
    return outcome.error as McpError
  }
  return { client, server, seen, ask, refusal }
}

const FORM = { message: 'Your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } }

describe('MCP 2025-11-25 elicitation (client)', () => {
  it('takes an elicitation request without a mode as form mode', async () => {
    const asked: JsonObject[] = []
    const { ask } = await clientOfRawServer({ elicitation: { form: params => { asked.push(params as unknown as JsonObject); return { action: 'accept', content: { name: 'Ada' } } } } })
    expect(await ask('elicitation/create', FORM)).toEqual({ action: 'accept', content: { name: 'Ada' } })
    expect(asked).toHaveLength(1)
    expect(asked[0]).toMatchObject({ message: 'Your name?' })
  })

  it('answers an elicitation in a mode it did not declare with -32602', async () => {
    const { refusal } = await clientOfRawServer({ elicitation: { form: () => ({ action: 'accept', content: {} }) } })
    const error = await refusal('elicitation/create', { mode: 'url', message: 'Sign in', url: 'https://example.com/login', elicitationId: 'e-1' })
    expect(error.code).toBe(ErrorCode.InvalidParams)
  })
})

describe('issue 20: the client samples with tools it never declared (sampling.tools)', () => {
  it('answers a sampling request with tools it did not declare sampling.tools for with -32602, and runs no sampling', async () => {
    let sampled = 0
    const { refusal } = await clientOfRawServer({ sampling: () => { sampled++; return { role: 'assistant', model: 'm', content: { type: 'text', text: 'hi' } } } })
    const error = await refusal('sampling/createMessage', { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5, tools: [{ name: 't', inputSchema: { type: 'object' } }] })
    expect(error.code).toBe(ErrorCode.InvalidParams)
    expect(sampled).toBe(0)
  })
})

describe('MCP 2025-11-25 progress (client)', () => {
  it('gives each request in flight its own string or integer progress token', async () => {
    const { client, seen } = await clientOfRawServer()
    const calls = await Promise.all([1, 2, 3].map(n => client.callTool('t', { n }, { onProgress: () => {} })))
    const tokens = seen.filter(entry => entry.method === 'tools/call').map(entry => (entry.params!._meta as JsonObject).progressToken)
    expect(tokens).toHaveLength(3)
    for (const token of tokens) expect(typeof token === 'string' || Number.isInteger(token)).toBe(true)
    expect(new Set(tokens).size).toBe(3)
    // Each answer came back to the call that asked (the server echoed the token it got).
    expect(calls.map(call => (call.content[0] as { text: string }).text).sort()).toEqual(tokens.map(String).sort())
  })
})


describe('MCP 2026-07-28 elicitation (client)', () => {
  it('takes an elicitation input request without a mode as form mode', async () => {
    const [near, far] = createMemoryPair()
    const server = createConnection(far)
    server.setRequestHandler('server/discover', () => ({ resultType: 'complete', supportedVersions: ['2026-07-28'], capabilities: { tools: {} }, ttlMs: 0, cacheScope: 'private' }))
    const retries: JsonObject[] = []
    server.setRequestHandler('tools/call', params => {
      if (params?.inputResponses === undefined) return { resultType: 'input_required', inputRequests: { who: { method: 'elicitation/create', params: FORM } }, requestState: 'opaque' }
      retries.push(params)
      return { resultType: 'complete', content: [{ type: 'text', text: 'thanks' }] }
    })
    server.start()
    const asked: JsonObject[] = []
    const client = await connect(near, { name: 'spec', version: '1' }, { era: 'modern', elicitation: { form: params => { asked.push(params as unknown as JsonObject); return { action: 'accept', content: { name: 'Ada' } } } } })
    cleanups.push(() => server.close(), () => client.close())
    expect(await client.callTool('greet')).toEqual({ content: [{ type: 'text', text: 'thanks' }] })
    expect(asked).toEqual([expect.objectContaining({ message: 'Your name?' })])
    expect(retries).toEqual([expect.objectContaining({ requestState: 'opaque', inputResponses: { who: { action: 'accept', content: { name: 'Ada' } } } })])
  })
})
