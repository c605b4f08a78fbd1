import { describe, expect, it } from 'vitest'
import { BehaviorSubject, lastValueFrom, toArray, type Observable } from '../../lib/rx.ts'
import { converse, type ConversationEvent } from '../../host/conversation.ts'
import { anthropicModel, lastMessage, ModelHttpError, ModelErrorCode, openaiModel, samplingViaModel, type ModelAdapter } from '../../host/model.ts'
import type { HostCallOptions, HostTool, HostView } from '../../host/view.ts'
import { createServer } from '../../actors/server.ts'
import { connectInMemory } from '../../testing.ts'
import { startMockModel, type MockModelServer, type RecordedRequest } from './mock-model.ts'

const KEY = 'sk-test-0123456789secret'

/** A host with two tools: `files__count` reports progress, `slow__wait` never answers until aborted. */
function fakeHost() {
  const tools: HostTool[] = [
    { name: 'files__count', server: 'files', tool: { name: 'count', description: 'Counts to n', inputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] } } },
    { name: 'slow__wait', server: 'slow', tool: { name: 'wait', description: 'Waits forever', inputSchema: { type: 'object' } } },
  ]
  const calls: Array<{ name: string; args?: Record<string, unknown>; signal?: AbortSignal }> = []
  let markWaiting!: (signal: AbortSignal) => void
  const waiting = new Promise<AbortSignal>(resolve => { markWaiting = resolve })
  const host: HostView = {
    tools: new BehaviorSubject<readonly HostTool[]>(tools),
    currentTools: () => tools,
    async callTool(name: string, args?: Record<string, unknown>, options: HostCallOptions = {}) {
      calls.push({ name, args, signal: options.signal })
      if (name === 'files__count') {
        const n = Number(args?.n)
        for (let i = 1; i <= n; i++) options.onProgress?.({ progress: i, total: n, message: `at ${i}` })
        return { content: [{ type: 'text', text: `counted to ${n}` }], structuredContent: { count: n } }
      }
      if (name === 'slow__wait') {
        return new Promise((_, reject) => {
          options.signal?.addEventListener('abort', () => reject(options.signal!.reason))
          markWaiting(options.signal!)
        })
      }
      throw new Error(`no tool ${name}`)
    },
  }
  return { host, calls, waiting }
}

/** Both APIs, with how each carries tools and tool results in a request body. */
const providers = [
  {
    api: 'anthropic' as const,
    model: (server: MockModelServer): ModelAdapter => anthropicModel({ apiKey: KEY, model: 'claude-test', baseUrl: server.url, maxTokens: 100 }),
    toolNames: (request: RecordedRequest) => request.body.tools.map((tool: { name: string }) => tool.name),
    /** The tool results of the request's last user message: id, text, error flag. */
    toolResults: (request: RecordedRequest) => request.body.messages.at(-1).content
      .filter((block: { type: string }) => block.type === 'tool_result')
      .map((block: any) => ({ id: block.tool_use_id, text: block.content.map((c: { text: string }) => c.text).join(''), isError: block.is_error === true })),
    firstCallId: 'toolu_1',
  },
  {
    api: 'openai' as const,
    model: (server: MockModelServer): ModelAdapter => openaiModel({ apiKey: KEY, model: 'gpt-test', baseUrl: server.openaiUrl }),
    toolNames: (request: RecordedRequest) => request.body.tools.map((tool: { function: { name: string } }) => tool.function.name),
    toolResults: (request: RecordedRequest) => request.body.messages
      .filter((message: { role: string }) => message.role === 'tool')
      .map((message: any) => ({ id: message.tool_call_id, text: message.content.replace(/^Error: /, ''), isError: message.content.startsWith('Error: ') })),
    firstCallId: 'call_1',
  },
]

const all = (events: Observable<ConversationEvent>) => lastValueFrom(events.pipe(toArray()))
const text = (events: ConversationEvent[]) => events.flatMap(event => event.type === 'text' ? [event.delta] : []).join('')
const done = (events: ConversationEvent[]) => events.at(-1) as Extract<ConversationEvent, { type: 'done' }>

/** Subscribes and resolves `when(predicate)` once an emitted event matches. */
function watch(events: Observable<ConversationEvent>) {
  const seen: ConversationEvent[] = []
  const waiters: Array<{ predicate: (event: ConversationEvent) => boolean; resolve: () => void }> = []
  const subscription = events.subscribe(event => {
    seen.push(event)
    for (const waiter of waiters) if (waiter.predicate(event)) waiter.resolve()
  })
  return {
    seen,
    subscription,
    when: (predicate: (event: ConversationEvent) => boolean) => new Promise<void>(resolve => {
      if (seen.some(predicate)) resolve()
      else waiters.push({ predicate, resolve })
    }),
  }
}

describe.each(providers)('converse over the $api API', ({ api, model, toolNames, toolResults, firstCallId }) => {
  it('calls the tools the model asks for, sends the results back, and ends with the final text', async () => {
    await using server = await startMockModel([
      { text: 'Counting. ', toolCalls: [{ name: 'files__count', arguments: { n: 3 } }] },
      { text: 'Counted to 3.' },
    ])
    const { host, calls } = fakeHost()
    const events = await all(converse(host, model(server), { prompt: 'Count to 3', system: 'Be brief' }))

    expect(calls.map(({ name, args }) => ({ name, args }))).toEqual([{ name: 'files__count', args: { n: 3 } }])
    expect(text(events)).toBe('Counting. Counted to 3.')
    expect(events.filter(event => event.type !== 'text')).toEqual([
      { type: 'tool-call', id: firstCallId, name: 'files__count', arguments: { n: 3 } },
      { type: 'tool-progress', id: firstCallId, progress: 1, total: 3, message: 'at 1' },
      { type: 'tool-progress', id: firstCallId, progress: 2, total: 3, message: 'at 2' },
      { type: 'tool-progress', id: firstCallId, progress: 3, total: 3, message: 'at 3' },
      { type: 'tool-result', id: firstCallId, name: 'files__count', result: { content: [{ type: 'text', text: 'counted to 3' }], structuredContent: { count: 3 } }, isError: false },
      { type: 'message', message: { role: 'assistant', content: [{ type: 'text', text: 'Counted to 3.' }] } },
      expect.objectContaining({ type: 'done', stopReason: 'endTurn', rounds: 2, usage: { inputTokens: 20, outputTokens: 10 } }),
    ])
    expect(done(events).history.map(message => message.role)).toEqual(['user', 'assistant', 'user', 'assistant'])

    expect(server.requests.map(request => request.api)).toEqual([api, api])
    expect(toolNames(server.requests[0])).toEqual(['files__count', 'slow__wait'])
    expect(toolResults(server.requests[1])).toEqual([{ id: firstCallId, text: 'counted to 3', isError: false }])
    if (api === 'anthropic') {
      expect(server.requests[0].headers).toMatchObject({ 'x-api-key': KEY, 'anthropic-version': '2023-06-01' })
      expect(server.requests[0].body).toMatchObject({ model: 'claude-test', system: 'Be brief', max_tokens: 100, stream: true })
      expect(server.requests[1].body.messages[1]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Counting. ' }, { type: 'tool_use', id: 'toolu_1', name: 'files__count', input: { n: 3 } }] })
    } else {
      expect(server.requests[0].headers).toMatchObject({ authorization: `Bearer ${KEY}` })
      expect(server.requests[0].body).toMatchObject({ model: 'gpt-test', stream: true, messages: [{ role: 'system', content: 'Be brief' }, { role: 'user', content: 'Count to 3' }] })
      expect(server.requests[1].body.messages[2]).toEqual({ role: 'assistant', content: 'Counting. ', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'files__count', arguments: '{"n":3}' } }] })
    }
  })

  it('does not offer the model a tool only MCP App views may call (visibility [\'app\'])', async () => {
    await using server = await startMockModel([{ text: 'Nothing to do.' }])
    const { host } = fakeHost()
    const appOnly: HostTool = { name: 'files__poke', server: 'files', tool: { name: 'poke', inputSchema: { type: 'object' }, _meta: { ui: { resourceUri: 'ui://files/view.html', visibility: ['app'] } } } }
    const withApp: HostView = { ...host, currentTools: () => [...host.currentTools(), appOnly] }
    await all(converse(withApp, model(server), { prompt: 'Hi' }))
    expect(toolNames(server.requests[0])).toEqual(['files__count', 'slow__wait'])
  })

  it('continues a conversation from the history of the previous turn', async () => {
    await using server = await startMockModel([{ text: 'Hello.' }, { text: 'Still here.' }])
    const { host } = fakeHost()
    const first = done(await all(converse(host, model(server), { prompt: 'Hi' })))
    const second = done(await all(converse(host, model(server), { prompt: 'Again', history: first.history })))
    expect(second.history).toHaveLength(4)
    const sent = server.requests[1].body.messages.filter((message: { role: string }) => message.role !== 'system')
    expect(sent.map((message: { role: string }) => message.role)).toEqual(['user', 'assistant', 'user'])
  })

  it('answers arguments that are not JSON with an error result and does not call the tool', async () => {
    await using server = await startMockModel([{ toolCalls: [{ name: 'files__count', arguments: '{"n":' }] }, { text: 'Sorry.' }])
    const { host, calls } = fakeHost()
    const events = await all(converse(host, model(server), { prompt: 'Count' }))
    expect(calls).toEqual([])
    expect(events.find(event => event.type === 'tool-result')).toMatchObject({ isError: true, result: { content: [{ text: expect.stringContaining('not valid JSON') }] } })
    expect(toolResults(server.requests[1])).toEqual([{ id: firstCallId, text: expect.stringContaining('was not called'), isError: true }])
    expect(done(events).stopReason).toBe('endTurn')
  })

  it('stops after maxRounds model requests with a max-rounds event', async () => {
    const call = { name: 'files__count', arguments: { n: 1 } }
    await using server = await startMockModel([{ toolCalls: [call] }, { toolCalls: [call] }, { text: 'never asked' }])
    const { host, calls } = fakeHost()
    const events = await all(converse(host, model(server), { prompt: 'Loop', maxRounds: 2 }))
    expect(server.requests).toHaveLength(2)
    expect(calls).toHaveLength(1)
    expect(events.filter(event => event.type === 'tool-result').map(event => (event as { isError: boolean }).isError)).toEqual([false, true])
    expect(events.slice(-3).map(event => event.type)).toEqual(['max-rounds', 'message', 'done'])
    expect(events.at(-3)).toEqual({ type: 'max-rounds', rounds: 2 })
    // Every tool call has its result, so the history can be continued.
    expect(done(events)).toMatchObject({ stopReason: 'maxRounds', rounds: 2 })
    expect(done(events).history.at(-1)).toMatchObject({ role: 'user', content: [{ type: 'tool-result', result: { isError: true } }] })
  })

  it('aborts the tool call in flight when unsubscribed', async () => {
    await using server = await startMockModel([{ toolCalls: [{ name: 'slow__wait', arguments: {} }] }])
    const { host, waiting } = fakeHost()
    const run = watch(converse(host, model(server), { prompt: 'Wait' }))
    const signal = await waiting
    expect(signal.aborted).toBe(false)
    run.subscription.unsubscribe()
    expect(signal.aborted).toBe(true)
    expect(run.seen.map(event => event.type)).toEqual(['tool-call'])
  })

  it('aborts the model request when unsubscribed', async () => {
    await using server = await startMockModel([{ hang: true, text: 'Thinking about it' }])
    const { host } = fakeHost()
    const run = watch(converse(host, model(server), { prompt: 'Think' }))
    await run.when(event => event.type === 'text')
    run.subscription.unsubscribe()
    await server.requests[0].closedEarly
    expect(run.seen.every(event => event.type === 'text')).toBe(true)
  })

  it('does not make a call the user denies, and tells the model', async () => {
    await using server = await startMockModel([{ toolCalls: [{ name: 'files__count', arguments: { n: 2 } }] }, { text: 'OK, I will not.' }])
    const { host, calls } = fakeHost()
    const asked: unknown[] = []
    const events = await all(converse(host, model(server), {
      prompt: 'Count',
      approveToolCall: async call => { asked.push(call); return 'deny' },
    }))
    expect(calls).toEqual([])
    expect(asked).toEqual([{ id: firstCallId, name: 'files__count', arguments: { n: 2 }, tool: expect.objectContaining({ server: 'files' }) }])
    expect(events.find(event => event.type === 'tool-result')).toMatchObject({ isError: true, result: { content: [{ text: expect.stringContaining('denied by the user') }] } })
    expect(toolResults(server.requests[1])).toEqual([{ id: firstCallId, text: expect.stringContaining('denied by the user'), isError: true }])
    expect(text(events)).toBe('OK, I will not.')
  })

  it('answers a tool that was not offered, or that failed, with an error result', async () => {
    await using server = await startMockModel([
      { toolCalls: [{ name: 'slow__wait', arguments: {} }, { name: 'files__count', arguments: { n: 'x' } }, { name: 'made__up', arguments: {} }] },
      { text: 'Done.' },
    ])
    const { host, calls } = fakeHost()
    const failing: HostView = {
      ...host,
      callTool: async (name, args, options) => {
        if (args?.n === 'x') throw new Error('server files is not ready')
        return host.callTool(name, args, options)
      },
    }
    const events = await all(converse(failing, model(server), { prompt: 'Go', tools: tools => tools.filter(tool => tool.server === 'files') }))
    expect(toolNames(server.requests[0])).toEqual(['files__count'])
    expect(calls).toEqual([])
    expect(toolResults(server.requests[1])).toEqual([
      { id: expect.any(String), text: 'Tool slow__wait was not called: there is no such tool.', isError: true },
      { id: expect.any(String), text: 'Tool files__count failed: server files is not ready', isError: true },
      { id: expect.any(String), text: 'Tool made__up was not called: there is no such tool.', isError: true },
    ])
    expect(done(events).stopReason).toBe('endTurn')
  })

  it('fails with a ModelHttpError that does not carry the API key', async () => {
    await using server = await startMockModel([{ status: 401, body: JSON.stringify({ error: { message: `invalid key ${KEY}` } }) }])
    const { host } = fakeHost()
    const error = await all(converse(host, model(server), { prompt: 'Hi' })).catch(e => e)
    expect(error).toBeInstanceOf(ModelHttpError)
    expect(error).toMatchObject({ code: ModelErrorCode.Http, status: 401, provider: api })
    expect(error.message).toContain('HTTP 401')
    expect(`${error.message} ${error.body}`).not.toContain(KEY)
    expect(error.body).toContain('[redacted]')
    expect(error.isRetryable).toBe(false)
  })

  it('reports a rate limit as retryable, with the time the server asked to wait', async () => {
    await using server = await startMockModel([{ status: 429, body: '{"error":"slow down"}', headers: { 'retry-after': '7' } }])
    const { host } = fakeHost()
    const error = await all(converse(host, model(server), { prompt: 'Hi' })).catch(e => e)
    expect(error).toMatchObject({ name: 'ModelHttpError', status: 429, isRetryable: true, retryAfterMs: 7000 })
  })
})

describe.each(providers)('samplingViaModel over the $api API', ({ api, model }) => {
  it('answers a server\'s sampling/createMessage with one model request', async () => {
    await using mock = await startMockModel([{ text: 'Paris', stopReason: 'maxTokens' }])
    const adapter = model(mock)
    const server = createServer({ name: 'asker', version: '1' })
    server.tool('ask', {}, async (_args, ctx) => {
      const answer = await ctx.sample({
        messages: [{ role: 'user', content: { type: 'text', text: 'Capital of France?' } }],
        systemPrompt: 'One word.',
        maxTokens: 50,
        temperature: 0,
        stopSequences: ['\n'],
      })
      return { content: [{ type: 'text', text: JSON.stringify(answer) }] }
    })
    await using pair = await connectInMemory(server, { sampling: samplingViaModel(adapter, { maxTokensLimit: 20 }) })
    const result = await pair.client.callTool('ask')
    expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual({
      role: 'assistant', content: { type: 'text', text: 'Paris' }, model: adapter.model, stopReason: 'maxTokens',
    })
    const body = mock.requests[0].body
    if (api === 'anthropic') {
      expect(body).toMatchObject({ system: 'One word.', max_tokens: 20, temperature: 0, stop_sequences: ['\n'], messages: [{ role: 'user', content: [{ type: 'text', text: 'Capital of France?' }] }] })
    } else {
      expect(body).toMatchObject({ max_completion_tokens: 20, temperature: 0, stop: ['\n'], messages: [{ role: 'system', content: 'One word.' }, { role: 'user', content: 'Capital of France?' }] })
    }
    expect(body).not.toHaveProperty('tools')
  })
})

describe('lastMessage', () => {
  it('gives the final message event of a model answer', async () => {
    await using server = await startMockModel([{ text: 'Hi' }])
    const event = await lastValueFrom(lastMessage(providers[0].model(server).request({ messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }] })))
    expect(event).toMatchObject({ type: 'message', stopReason: 'endTurn', model: 'claude-test', usage: { inputTokens: 10, outputTokens: 5 } })
  })
})
