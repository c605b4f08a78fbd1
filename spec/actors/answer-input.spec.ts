import { afterEach, describe, expect, it } from 'vitest'
import { connect, type ClientOptions, type McpClient } from '../../actors/client.ts'
import { createServer, type McpServer } from '../../actors/server.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { createMemoryPair } from '../../transports/memory.ts'
import type { InputAnswerer } from '../../lib/connection.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { InvalidParamsError } from '../../lib/jsonrpc/errors.ts'

const INFO = { name: 'answer-input', version: '1' }

/** The client's own handlers: what answers when a call's answerer does not. */
const OWN: ClientOptions = {
  elicitation: { form: () => ({ action: 'accept', content: { name: 'client handler' } }) },
  sampling: () => ({ role: 'assistant', model: 'm', content: { type: 'text', text: 'client sampled' } }),
  roots: [{ uri: 'file:///client', name: 'client' }],
}

/** A server whose `ask` tool waits until `expected` calls are running, then asks the caller (elicit, sample, roots). */
function askingServer(expected: number): McpServer {
  const server = createServer({ name: 'asking', version: '1' })
  let started = 0
  let release!: () => void
  const allStarted = new Promise<void>(resolve => { release = resolve })
  server.tool('ask', {}, async (_args, ctx) => {
    if (++started >= expected) release()
    await allStarted
    const answer = await ctx.elicit({ mode: 'form', message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } })
    const sampled = await ctx.sample({ messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 8 })
    const roots = await ctx.listRoots()
    return { content: [{ type: 'text', text: `${String(answer.content?.name)} / ${(sampled.content as { text: string }).text} / ${roots.roots.map(root => root.uri).join(',')}` }] }
  })
  return server
}

/** An answerer that answers as `who`, recording what it was asked. */
function answerer(who: string, asked: string[]): InputAnswerer {
  return async (method): Promise<JsonObject> => {
    asked.push(method)
    if (method === 'elicitation/create') return { action: 'accept', content: { name: who } }
    if (method === 'sampling/createMessage') return { role: 'assistant', model: 'm', content: { type: 'text', text: `${who} sampled` } }
    return { roots: [{ uri: `file:///${who}` }] }
  }
}

const text = (result: { content: unknown[] }) => (result.content[0] as { text: string }).text

let closers: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const close of closers.reverse()) await close()
  closers = []
})

async function overMemory(server: McpServer, era: 'legacy' | 'modern'): Promise<McpClient> {
  const [near, far] = createMemoryPair()
  await server.listen(far)
  const client = await connect(near, INFO, { ...OWN, era })
  closers.push(() => client.close(), () => server.close())
  return client
}

describe('RequestOptions.answerInput: the server asks the call that caused the ask', () => {
  it('modern era: the input_required rounds of a call are answered by its answerer, not the client handlers', async () => {
    const client = await overMemory(askingServer(1), 'modern')
    expect(client.era).toBe('modern')
    const asked: string[] = []
    expect(text(await client.callTool('ask', {}, { answerInput: answerer('alice', asked) }))).toBe('alice / alice sampled / file:///alice')
    expect(asked.sort()).toEqual(['elicitation/create', 'roots/list', 'sampling/createMessage'])
    // Without one, the client's own handlers answer as before.
    expect(text(await client.callTool('ask'))).toBe('client handler / client sampled / file:///client')
  })

  it('legacy era over a connection that tells nothing: the only call with an answerer in flight gets the live requests', async () => {
    const client = await overMemory(askingServer(2), 'legacy')
    expect(client.era).toBe('legacy')
    const asked: string[] = []
    // Two calls in flight, one of them with an answerer: the asks of both go to it (it is the only one that asked to answer).
    const [withAnswerer, without] = await Promise.all([
      client.callTool('ask', {}, { answerInput: answerer('alice', asked) }),
      client.callTool('ask'),
    ])
    expect(text(withAnswerer)).toBe('alice / alice sampled / file:///alice')
    expect(text(without)).toBe('alice / alice sampled / file:///alice')
    expect(asked).toHaveLength(6)
  })

  it('legacy era over a connection that tells nothing: two calls with answerers in flight leave the asks to the client handlers', async () => {
    const client = await overMemory(askingServer(2), 'legacy')
    const asked: string[] = []
    const results = await Promise.all([
      client.callTool('ask', {}, { answerInput: answerer('alice', asked) }),
      client.callTool('ask', {}, { answerInput: answerer('bob', asked) }),
    ])
    // Nothing ties an ask to one of them: neither answerer is guessed at.
    expect(results.map(text)).toEqual(['client handler / client sampled / file:///client', 'client handler / client sampled / file:///client'])
    expect(asked).toEqual([])
  })

  it('legacy era over Streamable HTTP: each call\'s asks arrive on its POST stream and reach its own answerer', async () => {
    const server = askingServer(2)
    const http = streamableHttp({ port: 0, host: '127.0.0.1' })
    await server.listen(http)
    const client = await connect(streamableHttpClient(http.url!), INFO, { ...OWN, era: 'legacy' })
    closers.push(() => client.close(), () => server.close())
    const alice: string[] = []
    const bob: string[] = []
    const results = await Promise.all([
      client.callTool('ask', {}, { answerInput: answerer('alice', alice) }),
      client.callTool('ask', {}, { answerInput: answerer('bob', bob) }),
    ])
    expect(results.map(text)).toEqual(['alice / alice sampled / file:///alice', 'bob / bob sampled / file:///bob'])
    expect(alice).toHaveLength(3)
    expect(bob).toHaveLength(3)
  })

  it('an answerer that fails answers the server with its error (a JSON-RPC error as is), which the tool passes on', async () => {
    const client = await overMemory(askingServer(1), 'legacy')
    const failing: InputAnswerer = async () => { throw new InvalidParamsError('the caller said no') }
    await expect(client.callTool('ask', {}, { answerInput: failing })).rejects.toMatchObject({ code: -32602, message: 'the caller said no' })
  })
})
