import { describe, expect, it } from 'vitest'
import { Observable, lastValueFrom, toArray } from 'rxjs'
import { connect, type ClientOptions } from '../../actors/client.ts'
import { InputRoundsExceededError, InvalidResultError } from '../../actors/client/errors.ts'
import { CapabilityError, UnsupportedProtocolVersionError } from '../../lib/jsonrpc/errors.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import type { Connection } from '../../lib/connection.ts'
import { DISCOVER_RESULT, fakeServer, metaOf, settle, type FakeHandler } from './client-modern-helpers.ts'

const INFO = { name: 'mrtr-test', version: '1.0.0' }

/** An elicitation input request asking for a name, with a default the client fills in. */
const ASK_NAME = {
  method: 'elicitation/create',
  params: { mode: 'form', message: 'Your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' }, units: { type: 'string', default: 'metric' } } } },
}

async function modernClient(handlers: Record<string, FakeHandler>, options: ClientOptions = {}) {
  const fake = fakeServer(handlers)
  const client = await connect(fake.transport, INFO, options)
  return { ...fake, client }
}

describe('modern requests', () => {
  it('stamps every request with protocolVersion, the declared clientCapabilities and clientInfo, keeping the caller\'s _meta', async () => {
    const { client, received } = await modernClient({ 'tools/list': () => ({ tools: [] }), 'tools/call': () => ({ content: [] }) }, {
      sampling: () => ({ role: 'assistant', model: 'm', content: { type: 'text', text: 'x' } }),
      elicitation: { form: () => ({ action: 'decline' }) },
      roots: [],
    })
    await client.listTools()
    await client.callTool('echo', {}, { onProgress: () => {}, meta: { 'com.example/trace': 'abc' } })
    const expected = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } },
      'io.modelcontextprotocol/clientInfo': INFO,
    }
    for (const request of received) expect(metaOf(request)).toMatchObject(expected)
    expect(metaOf(received.at(-1))).toEqual({ ...expected, 'com.example/trace': 'abc', progressToken: received.at(-1)!.id })
    await client.close()
  })

  it('sends the level setLoggingLevel chose as io.modelcontextprotocol/logLevel instead of logging/setLevel', async () => {
    const { client, received } = await modernClient({ 'tools/list': () => ({ tools: [] }) })
    await client.setLoggingLevel('warning')
    await client.listTools()
    expect(received.map(request => request.method)).toEqual(['server/discover', 'tools/list'])
    expect(metaOf(received[1])['io.modelcontextprotocol/logLevel']).toBe('warning')
    await client.close()
  })

  it('answers ping with server/discover, since the modern era has no ping', async () => {
    const { client, received } = await modernClient({})
    await client.ping()
    expect(received.map(request => request.method)).toEqual(['server/discover', 'server/discover'])
    await client.close()
  })

  it.each([
    ['without resultType (an earlier-revision server)', { content: [{ type: 'text', text: 'ok' }] }],
    ['with resultType complete', { resultType: 'complete', content: [{ type: 'text', text: 'ok' }] }],
  ])('takes a result %s as complete', async (_name, result) => {
    const { client } = await modernClient({ 'tools/call': () => result })
    expect(await client.callTool('echo')).toEqual({ content: [{ type: 'text', text: 'ok' }] })
    await client.close()
  })

  it('hands results out without the modern envelope (resultType, the serverInfo _meta key), keeping everything else', async () => {
    const { client } = await modernClient({
      'tools/call': () => ({ resultType: 'complete', content: [], _meta: { 'io.modelcontextprotocol/serverInfo': { name: 's', version: '1' }, 'com.example/k': 1 } }),
      'tools/list': () => ({ resultType: 'complete', tools: [], ttlMs: 5, cacheScope: 'private', _meta: { 'io.modelcontextprotocol/serverInfo': { name: 's', version: '1' } } }),
    })
    expect(await client.callTool('x')).toEqual({ content: [], _meta: { 'com.example/k': 1 } })
    expect(await client.listTools()).toEqual({ tools: [], ttlMs: 5, cacheScope: 'private' })
    await client.close()
  })

  it.each([
    ['an unknown resultType', 'tools/call', { resultType: 'deferred', content: [] }, 'Invalid result for tools/call: unknown resultType "deferred"'],
    ['a task for a method tasks do not cover', 'prompts/get', { resultType: 'task', taskId: 't-1', status: 'working' }, 'Invalid result for prompts/get: unknown resultType "task"'],
    ['input_required on a method that never takes it', 'tools/list', { resultType: 'input_required', requestState: 's' }, 'Invalid result for tools/list: input_required is only allowed on tools/call, prompts/get and resources/read'],
    ['input_required with neither inputRequests nor requestState', 'tools/call', { resultType: 'input_required' }, 'Invalid result for tools/call: input_required carries neither inputRequests nor requestState'],
    ['an input request of an unknown method', 'tools/call', { resultType: 'input_required', inputRequests: { x: { method: 'tools/call', params: {} } } }, 'Invalid result for tools/call: input request "x" asks for "tools/call", which is not elicitation/create, sampling/createMessage or roots/list'],
    ['inputRequests that is not an object', 'tools/call', { resultType: 'input_required', inputRequests: [1] }, 'Invalid result for tools/call: inputRequests is not an object'],
    ['a requestState that is not a string', 'tools/call', { resultType: 'input_required', requestState: 7 }, 'Invalid result for tools/call: requestState is not a string'],
  ])('rejects %s with InvalidResultError, and the client lives on', async (_name, method, result, message) => {
    const { client } = await modernClient({ [method]: () => result, 'prompts/list': () => ({ prompts: [] }) })
    const error = await lastValueFrom(client.request(method, method === 'tools/call' ? { name: 'x' } : undefined)).catch(caught => caught)
    expect(error).toBeInstanceOf(InvalidResultError)
    expect(error.code).toBe('RXMCP_ERR_PROTOCOL')
    expect(error.message).toBe(message)
    expect(await client.listPrompts()).toEqual({ prompts: [] })
    await client.close()
  })

  it('switches to a version from -32022 data.supported and retries the request once', async () => {
    const versions: unknown[] = []
    const { client } = await modernClient({
      'server/discover': () => ({ ...DISCOVER_RESULT, supportedVersions: ['2099-01-01', '2026-07-28'] }),
      'tools/list': params => {
        const version = (params!._meta as JsonObject)['io.modelcontextprotocol/protocolVersion']
        versions.push(version)
        if (version === '2099-01-01') throw new UnsupportedProtocolVersionError('Unsupported protocol version', { supported: ['2026-07-28'], requested: version })
        return { tools: [] }
      },
    }, { modernVersions: ['2099-01-01', '2026-07-28'] })
    expect(client.protocolVersion).toBe('2099-01-01')
    expect(await client.listTools()).toEqual({ tools: [] })
    expect(versions).toEqual(['2099-01-01', '2026-07-28'])
    expect(client.protocolVersion).toBe('2026-07-28')
    await client.close()
  })
})

describe('modern requests: the input_required loop', () => {
  it('answers an elicitation input request with the handler (defaults filled in) and retries with a new id, inputResponses and the requestState echoed', async () => {
    const { client, of } = await modernClient({
      'tools/call': params => params!.inputResponses === undefined
        ? { resultType: 'input_required', inputRequests: { who: ASK_NAME }, requestState: 'opaque:1' }
        : { resultType: 'complete', content: [{ type: 'text', text: JSON.stringify(params!.inputResponses) }] },
    }, { elicitation: { form: params => ({ action: 'accept', content: { name: `Ada (${params.message})` } }) } })
    const result = await client.callTool('greet', { loud: true })
    expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual({ who: { action: 'accept', content: { name: 'Ada (Your name?)', units: 'metric' } } })
    const calls = of('tools/call')
    expect(calls).toHaveLength(2)
    expect(calls[1]!.id).not.toBe(calls[0]!.id)
    expect(calls[1]!.params).toMatchObject({ name: 'greet', arguments: { loud: true }, requestState: 'opaque:1' })
    expect(calls[0]!.params).not.toHaveProperty('inputResponses')
    await client.close()
  })

  it('leaves requestState out of the retry when the server sent none, and never carries answers into another request', async () => {
    const { client, of } = await modernClient({
      'tools/call': params => params!.name === 'ask' && params!.inputResponses === undefined
        ? { resultType: 'input_required', inputRequests: { r: { method: 'roots/list' } } }
        : { content: [] },
    }, { roots: [{ uri: 'file:///work', name: 'work' }] })
    await client.callTool('ask')
    await client.callTool('other')
    const [first, retry, other] = of('tools/call')
    expect(first!.params).not.toHaveProperty('requestState')
    expect(retry!.params).not.toHaveProperty('requestState')
    expect(retry!.params!.inputResponses).toEqual({ r: { roots: [{ uri: 'file:///work', name: 'work' }] } })
    expect(other!.params).not.toHaveProperty('inputResponses')
    expect(other!.params).not.toHaveProperty('requestState')
    await client.close()
  })

  it('runs several rounds, each with the state of the last one', async () => {
    const { client, of } = await modernClient({
      'prompts/get': params => {
        const round = params!.requestState === undefined ? 0 : Number(params!.requestState)
        return round < 3
          ? { resultType: 'input_required', inputRequests: { [`q${round}`]: ASK_NAME }, requestState: String(round + 1) }
          : { resultType: 'complete', messages: [{ role: 'user', content: { type: 'text', text: `done after ${round}` } }] }
      },
    }, { elicitation: { form: () => ({ action: 'accept', content: { name: 'x' } }) } })
    const result = await client.getPrompt('quiz')
    expect(result.messages[0]!.content).toEqual({ type: 'text', text: 'done after 3' })
    expect(of('prompts/get').map(request => request.params!.requestState)).toEqual([undefined, '1', '2', '3'])
    expect(of('prompts/get').map(request => Object.keys((request.params!.inputResponses ?? {}) as JsonObject))).toEqual([[], ['q0'], ['q1'], ['q2']])
    await client.close()
  })

  it('runs every input request of a round at once, and retries once all are answered', async () => {
    const started: string[] = []
    const release: Array<() => void> = []
    const { client, of } = await modernClient({
      'resources/read': params => params!.inputResponses === undefined
        ? { resultType: 'input_required', inputRequests: { a: ASK_NAME, b: { method: 'sampling/createMessage', params: { messages: [], maxTokens: 5 } } } }
        : { contents: [{ uri: 'x://y', text: JSON.stringify(params!.inputResponses) }] },
    }, {
      elicitation: { form: () => new Promise(resolve => { started.push('a'); release.push(() => resolve({ action: 'accept', content: { name: 'A' } })) }) },
      sampling: params => new Promise(resolve => { started.push('b'); release.push(() => resolve({ role: 'assistant', model: 'm', content: { type: 'text', text: `max ${params.maxTokens}` } })) }),
    })
    const reading = client.readResource('x://y')
    await settle()
    expect(started.sort()).toEqual(['a', 'b'])
    release[0]!()
    await settle()
    expect(of('resources/read')).toHaveLength(1)
    release[1]!()
    const result = await reading
    expect(JSON.parse((result.contents[0] as { text: string }).text)).toEqual({
      a: { action: 'accept', content: { name: 'A', units: 'metric' } },
      b: { role: 'assistant', model: 'm', content: { type: 'text', text: 'max 5' } },
    })
    expect(of('resources/read')).toHaveLength(2)
    await client.close()
  })

  it('gives up with InputRoundsExceededError after maxInputRounds rounds', async () => {
    const { client, of } = await modernClient({
      'tools/call': () => ({ resultType: 'input_required', requestState: 'again' }),
      'tools/list': () => ({ tools: [] }),
    }, { maxInputRounds: 3 })
    const error = await client.callTool('forever').catch(caught => caught)
    expect(error).toBeInstanceOf(InputRoundsExceededError)
    expect(error.code).toBe('RXMCP_ERR_PROTOCOL')
    expect(error.message).toBe('tools/call still required input after 3 rounds (maxInputRounds); giving up')
    expect(of('tools/call')).toHaveLength(4)
    expect(await client.listTools()).toEqual({ tools: [] })
    await client.close()
  })

  it.each([
    ['sampling it did not declare', { method: 'sampling/createMessage', params: { messages: [], maxTokens: 1 } }, {}, 'The server asked for sampling/createMessage (input request "k"), which this client did not declare'],
    ['url elicitation when only form is declared', { method: 'elicitation/create', params: { mode: 'url', url: 'https://x', message: 'go' } }, { elicitation: { form: () => ({ action: 'accept' as const }) } }, 'The server asked for url elicitation (input request "k"), which this client did not declare'],
    ['roots it did not declare', { method: 'roots/list' }, {}, 'The server asked for roots/list (input request "k"), which this client did not declare'],
    ['sampling with tools when sampling.tools is not declared', { method: 'sampling/createMessage', params: { messages: [], maxTokens: 1, tools: [] } }, { sampling: () => ({ role: 'assistant' as const, model: 'm', content: { type: 'text' as const, text: '' } }) }, 'The server asked for sampling with tools (input request "k"), which this client did not declare'],
  ])('fails with CapabilityError and does not retry when the server asks for %s', async (_name, input, options, message) => {
    const { client, of } = await modernClient({ 'tools/call': () => ({ resultType: 'input_required', inputRequests: { k: input } }) }, options as ClientOptions)
    const error = await client.callTool('needy').catch(caught => caught)
    expect(error).toBeInstanceOf(CapabilityError)
    expect(error.message).toBe(message)
    expect(of('tools/call')).toHaveLength(1)
    await client.close()
  })

  it('fails the request with the error of a failing answer, cancelling the other answers of the round', async () => {
    let aborted = false
    const { client, of } = await modernClient({
      'tools/call': () => ({ resultType: 'input_required', inputRequests: { a: ASK_NAME, b: { method: 'sampling/createMessage', params: { messages: [], maxTokens: 1 } } } }),
    }, {
      elicitation: { form: (_params, ctx) => new Promise(() => { ctx.signal.addEventListener('abort', () => { aborted = true }) }) },
      sampling: () => Promise.reject(new Error('no model today')),
    })
    await expect(client.callTool('x')).rejects.toThrow('no model today')
    expect(aborted).toBe(true)
    expect(of('tools/call')).toHaveLength(1)
    await client.close()
  })

  it('stops the loop when the caller unsubscribes while a handler runs: its signal aborts, no retry goes out', async () => {
    let signal: AbortSignal | undefined
    const { client, of, cancelled } = await modernClient({
      'tools/call': () => ({ resultType: 'input_required', inputRequests: { a: ASK_NAME } }),
    }, { elicitation: { form: (_params, ctx) => { signal = ctx.signal; return new Promise(() => {}) } } })
    const subscription = client.callTool$('slow').subscribe()
    await settle()
    expect(signal?.aborted).toBe(false)
    subscription.unsubscribe()
    expect(signal?.aborted).toBe(true)
    await settle()
    expect(of('tools/call')).toHaveLength(1)
    // The first round was answered already: nothing to cancel on the wire.
    expect(cancelled).toEqual([])
    await client.close()
  })

  it('cancels the retry on the wire when the caller unsubscribes while it is in flight', async () => {
    const { client, of, cancelled } = await modernClient({
      'tools/call': params => params!.inputResponses === undefined
        ? { resultType: 'input_required', inputRequests: { a: ASK_NAME } }
        : new Promise(() => {}),
    }, { elicitation: { form: () => ({ action: 'decline' }) } })
    const subscription = client.callTool$('slow').subscribe()
    await settle()
    expect(of('tools/call')).toHaveLength(2)
    subscription.unsubscribe()
    await settle()
    expect(cancelled).toEqual([{ requestId: of('tools/call')[1]!.id, reason: 'Request cancelled by the caller' }])
    await client.close()
  })

  it('reports the progress of every round to onProgress', async () => {
    /** The fake server's connection, to send progress on; set once connected. */
    let server: Connection | undefined
    const fake = await modernClient({
      'tools/call': params => new Observable(subscriber => {
        const round = params!.inputResponses === undefined ? 1 : 2
        void server!.notify('notifications/progress', { progressToken: (params!._meta as JsonObject).progressToken as number, progress: round, total: 2, message: `round ${round}` })
        subscriber.next(round === 1 ? { resultType: 'input_required', inputRequests: { a: ASK_NAME } } : { content: [] })
        subscriber.complete()
      }),
    }, { elicitation: { form: () => ({ action: 'accept', content: {} }) } })
    server = fake.server
    const progress: unknown[] = []
    await fake.client.callTool('p', {}, { onProgress: event => progress.push(event) })
    expect(progress).toEqual([{ type: 'progress', progress: 1, total: 2, message: 'round 1' }, { type: 'progress', progress: 2, total: 2, message: 'round 2' }])
    await fake.client.close()
  })

  it('runs the loop on request() too: one result event, the complete one', async () => {
    const { client } = await modernClient({
      'tools/call': params => params!.requestState === undefined ? { resultType: 'input_required', requestState: 'go' } : { resultType: 'complete', content: [] },
    })
    const events = await lastValueFrom(client.request('tools/call', { name: 'x' }, { progress: false }).pipe(toArray()))
    expect(events).toEqual([{ type: 'result', result: { content: [] } }])
    await client.close()
  })
})
