import { afterEach, describe, expect, it } from 'vitest'
import { Observable, Subject, filter, firstValueFrom, lastValueFrom, toArray } from 'rxjs'
import { createServer, type McpServer, type ServerOptions } from '../../actors/server.ts'
import { connectInMemory } from '../../testing.ts'
import { createMemoryPair } from '../../transports/memory.ts'
import { createConnection, type Connection, type InspectionEvent } from '../../lib/connection.ts'
import { resultOf, type RequestEvent } from '../../lib/operators/progress.ts'
import type { JsonObject, RequestId } from '../../lib/jsonrpc/message.ts'
import {
  ErrorCode, InternalError, InvalidParamsError, InvalidRequestError, McpError, MethodNotFoundError,
  MissingRequiredClientCapabilityError, UnsupportedProtocolVersionError,
} from '../../lib/jsonrpc/errors.ts'
import { MetaKey } from '../../lib/schema/modern.ts'
import { SUPPORTED_PROTOCOL_VERSIONS, type ElicitParams } from '../../lib/schema/types.ts'
import { countListeners } from '../helpers/count-listeners.ts'

const MODERN = '2026-07-28'
const CLIENT_INFO = { name: 'raw-client', version: '1.0.0' }
const SERVER_INFO = { name: 'modern-server', version: '2.0.0' }
/** What a client that can answer every input request declares. */
const ALL_CAPABILITIES = { elicitation: { form: {} }, sampling: {}, roots: {} }

/** The `_meta` every modern request carries, with `extra` fields (logLevel, progressToken...). */
function meta(extra: JsonObject = {}, capabilities: JsonObject = ALL_CAPABILITIES): JsonObject {
  return { [MetaKey.protocolVersion]: MODERN, [MetaKey.clientCapabilities]: capabilities, [MetaKey.clientInfo]: CLIENT_INFO, ...extra }
}

const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] })

function form(message: string): ElicitParams {
  return { mode: 'form', message, requestedSchema: { type: 'object', properties: { value: { type: 'string' } }, required: ['value'] } }
}

const accept = (value: string) => ({ action: 'accept', content: { value } })
const SAMPLED = { role: 'assistant', content: { type: 'text', text: 'Paris' }, model: 'test-model' }
const ROOTS = { roots: [{ uri: 'file:///project', name: 'project' }] }

/** Errors nobody observed, per test: a test that expects none checks this stays empty. */
let unhandled: unknown[] = []
/** Closed after each test, last opened first. */
let cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
  cleanups = []
  unhandled = []
})

function makeServer(options: ServerOptions = {}): McpServer {
  const server = createServer(SERVER_INFO, { reportUnhandledError: error => unhandled.push(error), ...options })
  cleanups.push(() => server.close())
  return server
}

/** A raw JSON-RPC connection to `server` over a memory pair: the client side speaks whatever the test writes. */
async function open(server: McpServer) {
  const [near, far] = createMemoryPair()
  /** Every frame the raw client sent, to read the ids it chose. */
  const sent: JsonObject[] = []
  const raw = createConnection(near, {
    inspect: (event: InspectionEvent) => { if (event.type === 'rxmcp.frame.out') sent.push(event.message as unknown as JsonObject) },
  })
  raw.start()
  await server.listen(far)
  cleanups.push(() => raw.close())
  return { raw, sent, ...callers(raw) }
}

function callers(raw: Connection) {
  /** One request's events (progress, then the result); no progress token unless `progress`. */
  const events = (method: string, params?: JsonObject, progress = false): Observable<RequestEvent<JsonObject>> =>
    raw.request(method, params, { progress, timeout: 0 })
  const call = (method: string, params?: JsonObject): Promise<JsonObject> => firstValueFrom(events(method, params).pipe(resultOf()))
  /** The error a request fails with (a test fails if it succeeds). */
  const failure = async (method: string, params?: JsonObject): Promise<McpError> => {
    const result = await call(method, params).then(value => ({ value }), (error: unknown) => ({ error }))
    if (!('error' in result)) throw new Error(`${method} succeeded with ${JSON.stringify(result.value)}`)
    expect(result.error).toBeInstanceOf(McpError)
    return result.error as McpError
  }
  const callTool = (name: string, args: JsonObject = {}, extra: JsonObject = {}) =>
    call('tools/call', { name, arguments: args, _meta: meta(), ...extra })
  return { events, call, failure, callTool }
}

/** Notifications of `methods` as they arrive, in order, with a way to wait for one. */
function recorder(raw: Connection, methods: string[]) {
  const seen: Array<{ method: string; params: JsonObject }> = []
  const arrivals = new Subject<void>()
  for (const method of methods) raw.notifications(method).subscribe(params => { seen.push({ method, params }); arrivals.next() })
  const find = (predicate: (entry: { method: string; params: JsonObject }) => boolean) => seen.find(predicate)
  return {
    seen,
    /** Resolves with the first recorded notification that matches, waiting for it if need be. */
    async until(predicate: (entry: { method: string; params: JsonObject }) => boolean) {
      const found = find(predicate)
      if (found !== undefined) return found
      await firstValueFrom(arrivals.pipe(filter(() => find(predicate) !== undefined)))
      return find(predicate)!
    },
  }
}

const subscriptionIdOf = (params: JsonObject) => (params._meta as JsonObject | undefined)?.[MetaKey.subscriptionId]

/** The id the raw client gave its request of `method` (the `n`th one). */
function idOf(sent: JsonObject[], method: string, n = 0): RequestId {
  return sent.filter(message => message.method === method && 'id' in message)[n]!.id as RequestId
}

describe('createServer (MCP 2026-07-28): server/discover', () => {
  it('answers server/discover without initialize: versions, capabilities, instructions, identity, default cache hints', async () => {
    const server = makeServer({ instructions: 'Answer briefly' })
    server.tool('echo', {}, () => text('echo'))
    const { call } = await open(server)
    const result = await call('server/discover', { _meta: meta() })
    expect(result).toEqual({
      resultType: 'complete',
      supportedVersions: [MODERN, ...SUPPORTED_PROTOCOL_VERSIONS],
      capabilities: { logging: {}, tools: { listChanged: true } },
      instructions: 'Answer briefly',
      _meta: { [MetaKey.serverInfo]: SERVER_INFO },
      ttlMs: 0,
      cacheScope: 'private',
    })
  })

  it('gives the cacheHints option per method, and a resource\'s own cache wins for its reads', async () => {
    const server = makeServer({
      cacheHints: {
        'server/discover': { ttlMs: 3_600_000, cacheScope: 'public' },
        'tools/list': { ttlMs: 60_000, cacheScope: 'public' },
        'resources/read': { ttlMs: 5_000, cacheScope: 'private' },
      },
    })
    server.tool('echo', {}, () => text('echo'))
    server.resource('res://own', { name: 'own', cache: { ttlMs: 1_000, cacheScope: 'public' } }, () => 'own')
    server.resource('res://plain', { name: 'plain' }, () => 'plain')
    server.resourceTemplate('res://items/{id}', { name: 'item', cache: { ttlMs: 2_000, cacheScope: 'public' } }, uri => uri)
    const { call } = await open(server)
    expect(await call('server/discover', { _meta: meta() })).toMatchObject({ ttlMs: 3_600_000, cacheScope: 'public' })
    expect(await call('tools/list', { _meta: meta() })).toMatchObject({ ttlMs: 60_000, cacheScope: 'public', resultType: 'complete' })
    expect(await call('prompts/list', { _meta: meta() }).catch(error => error)).toBeInstanceOf(MethodNotFoundError)
    expect(await call('resources/list', { _meta: meta() })).toMatchObject({ ttlMs: 0, cacheScope: 'private' })
    expect(await call('resources/read', { uri: 'res://own', _meta: meta() })).toEqual({
      contents: [{ uri: 'res://own', text: 'own' }], resultType: 'complete', _meta: { [MetaKey.serverInfo]: SERVER_INFO }, ttlMs: 1_000, cacheScope: 'public',
    })
    expect(await call('resources/read', { uri: 'res://plain', _meta: meta() })).toMatchObject({ ttlMs: 5_000, cacheScope: 'private' })
    expect(await call('resources/read', { uri: 'res://items/7', _meta: meta() })).toMatchObject({ ttlMs: 2_000, cacheScope: 'public' })
    // A tool result is not cacheable: no hints on it.
    const called = await call('tools/call', { name: 'echo', _meta: meta() })
    expect(called).toEqual({ ...text('echo'), resultType: 'complete', _meta: { [MetaKey.serverInfo]: SERVER_INFO } })
  })

  it('answers an unknown resource with -32602 in the modern era', async () => {
    const server = makeServer()
    server.resource('res://known', { name: 'known' }, () => 'known')
    const { failure } = await open(server)
    const error = await failure('resources/read', { uri: 'res://unknown', _meta: meta() })
    expect(error).toBeInstanceOf(InvalidParamsError)
    expect(error).toMatchObject({ code: ErrorCode.InvalidParams, message: 'Resource not found: res://unknown', data: { uri: 'res://unknown' } })
  })
})

describe('createServer (MCP 2026-07-28): the era of each request on one connection', () => {
  const INITIALIZE = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: CLIENT_INFO }

  it('serves a modern request before any initialize, refuses a legacy one, and serves both eras after initialize', async () => {
    const server = makeServer()
    server.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }, ({ text: value }, ctx) =>
      text(`${String(value)} (${ctx.era} ${ctx.protocolVersion})`))
    const { raw, call, failure } = await open(server)

    expect(await call('tools/call', { name: 'echo', arguments: { text: 'a' }, _meta: meta() })).toEqual({
      ...text(`a (modern ${MODERN})`), resultType: 'complete', _meta: { [MetaKey.serverInfo]: SERVER_INFO },
    })
    const refused = await failure('tools/call', { name: 'echo', arguments: { text: 'b' } })
    expect(refused).toBeInstanceOf(InvalidRequestError)
    expect(refused).toMatchObject({ code: ErrorCode.InvalidRequest, message: expect.stringContaining('not initialized') })

    expect(await call('initialize', INITIALIZE)).toMatchObject({ protocolVersion: '2025-11-25', serverInfo: SERVER_INFO })
    await raw.notify('notifications/initialized')
    // Legacy results carry none of the modern fields.
    expect(await call('tools/call', { name: 'echo', arguments: { text: 'c' } })).toEqual(text('c (legacy 2025-11-25)'))
    expect(await call('ping')).toEqual({})
    expect(await call('tools/call', { name: 'echo', arguments: { text: 'd' }, _meta: meta() })).toEqual({
      ...text(`d (modern ${MODERN})`), resultType: 'complete', _meta: { [MetaKey.serverInfo]: SERVER_INFO },
    })
    expect(await call('server/discover', { _meta: meta() })).toMatchObject({ resultType: 'complete', supportedVersions: expect.arrayContaining([MODERN]) })
  })

  it('refuses initialize on a server that speaks only modern revisions, naming them, and takes every request as modern', async () => {
    const server = makeServer({ protocolVersions: [MODERN] })
    server.tool('echo', {}, () => text('echo'))
    const { call, failure } = await open(server)
    const refused = await failure('initialize', INITIALIZE)
    expect(refused).toBeInstanceOf(MethodNotFoundError)
    expect(refused).toMatchObject({ code: ErrorCode.MethodNotFound, message: expect.stringContaining(`speaks only MCP ${MODERN}`), data: { supported: [MODERN] } })
    for (const method of ['tools/list', 'ping']) {
      const error = await failure(method)
      expect(error).toBeInstanceOf(InvalidParamsError)
      expect(error.message).toContain('must carry _meta')
    }
    expect(await call('server/discover', { _meta: meta() })).toMatchObject({ supportedVersions: [MODERN] })
    expect(await call('tools/call', { name: 'echo', _meta: meta() })).toMatchObject({ ...text('echo'), resultType: 'complete' })
  })

  it('answers server/discover with -32601 when the server speaks no modern revision', async () => {
    const server = makeServer({ protocolVersions: ['2025-11-25'] })
    server.tool('echo', {}, () => text('echo'))
    const { failure } = await open(server)
    const error = await failure('server/discover', { _meta: meta() })
    expect(error).toBeInstanceOf(MethodNotFoundError)
    expect(error).toMatchObject({ code: ErrorCode.MethodNotFound, message: 'Method not found: server/discover' })
    const listen = await failure('subscriptions/listen', { _meta: meta(), notifications: { toolsListChanged: true } })
    expect(listen).toBeInstanceOf(MethodNotFoundError)
  })
})

describe('createServer (MCP 2026-07-28): bad input', () => {
  async function openEcho() {
    const server = makeServer()
    server.tool('echo', {}, () => text('echo'))
    server.resource('res://a', { name: 'a' }, () => 'a')
    return open(server)
  }

  it.each<[string, JsonObject | undefined]>([
    ['no params', undefined],
    ['no _meta', {}],
    ['_meta that is not an object', { _meta: 'modern' as unknown as JsonObject }],
    ['_meta without protocolVersion', { _meta: { [MetaKey.clientCapabilities]: {}, [MetaKey.clientInfo]: CLIENT_INFO } }],
    ['_meta without clientCapabilities', { _meta: { [MetaKey.protocolVersion]: MODERN } }],
    ['clientCapabilities that is not an object', { _meta: { [MetaKey.protocolVersion]: MODERN, [MetaKey.clientCapabilities]: 'all' } }],
    ['clientCapabilities that is an array', { _meta: { [MetaKey.protocolVersion]: MODERN, [MetaKey.clientCapabilities]: [] } }],
    ['an empty protocolVersion', { _meta: { [MetaKey.protocolVersion]: '', [MetaKey.clientCapabilities]: {} } }],
  ])('answers server/discover with %s with -32602, and keeps the connection', async (_, params) => {
    const { call, failure } = await openEcho()
    const error = await failure('server/discover', params)
    expect(error).toBeInstanceOf(InvalidParamsError)
    expect(error).toMatchObject({ code: ErrorCode.InvalidParams, message: expect.stringContaining('Invalid params') })
    expect(await call('tools/call', { name: 'echo', _meta: meta() })).toMatchObject({ resultType: 'complete' })
  })

  it('answers a tools/call whose _meta has a version but no clientCapabilities with -32602', async () => {
    const { failure, callTool } = await openEcho()
    const error = await failure('tools/call', { name: 'echo', _meta: { [MetaKey.protocolVersion]: MODERN, [MetaKey.clientInfo]: CLIENT_INFO } })
    expect(error).toBeInstanceOf(InvalidParamsError)
    expect(error).toMatchObject({ code: ErrorCode.InvalidParams, message: `Invalid params: _meta is missing ${MetaKey.clientCapabilities}` })
    expect(await callTool('echo')).toMatchObject({ resultType: 'complete' })
  })

  it('answers an unsupported version with -32022, listing every version served and the one requested', async () => {
    const { failure, callTool } = await openEcho()
    for (const method of ['server/discover', 'tools/call']) {
      const error = await failure(method, { name: 'echo', _meta: { ...meta(), [MetaKey.protocolVersion]: '2099-01-01' } })
      expect(error).toBeInstanceOf(UnsupportedProtocolVersionError)
      expect(error.code).toBe(ErrorCode.UnsupportedProtocolVersion)
      expect(error.data).toEqual({ supported: [MODERN, ...SUPPORTED_PROTOCOL_VERSIONS], requested: '2099-01-01' })
    }
    expect(await callTool('echo')).toMatchObject({ resultType: 'complete' })
  })

  it.each<[string, JsonObject]>([
    ['initialize', { protocolVersion: MODERN, capabilities: {}, clientInfo: CLIENT_INFO }],
    ['ping', {}],
    ['logging/setLevel', { level: 'debug' }],
    ['resources/subscribe', { uri: 'res://a' }],
    ['resources/unsubscribe', { uri: 'res://a' }],
  ])('answers the legacy-only %s with modern _meta with -32601, and keeps the connection', async (method, params) => {
    const { failure, callTool, call } = await openEcho()
    const error = await failure(method, { ...params, _meta: meta() })
    expect(error).toBeInstanceOf(MethodNotFoundError)
    expect(error).toMatchObject({ code: ErrorCode.MethodNotFound, message: `Method not found: ${method} (not part of MCP ${MODERN})` })
    expect(await callTool('echo')).toMatchObject({ resultType: 'complete' })
    // The refused initialize did not open a legacy session either.
    expect(await call('tools/call', { name: 'echo' }).catch(e => e)).toBeInstanceOf(InvalidRequestError)
  })

  it('answers a list method whose capability the server lacks with -32601', async () => {
    const { failure, callTool } = await openEcho()
    for (const method of ['prompts/list', 'prompts/get', 'completion/complete']) {
      const error = await failure(method, { name: 'p', _meta: meta() })
      expect(error).toBeInstanceOf(MethodNotFoundError)
      expect(error.message).toContain('not offered')
    }
    expect(await callTool('echo')).toMatchObject({ resultType: 'complete' })
  })

  it('answers an unknown method with -32601', async () => {
    const { failure, callTool } = await openEcho()
    const error = await failure('tools/frobnicate', { _meta: meta() })
    expect(error).toBeInstanceOf(MethodNotFoundError)
    expect(error.code).toBe(ErrorCode.MethodNotFound)
    expect(await callTool('echo')).toMatchObject({ resultType: 'complete' })
  })
})

describe('createServer (MCP 2026-07-28): multi round-trip requests', () => {
  /** A server whose tools ask the client for input in the ways the tests need. */
  function mrtrServer(options: ServerOptions = {}) {
    const server = makeServer(options)
    /** The `requestState` each run of `remember` saw. */
    const remembered: unknown[] = []
    server.tool('greet', { inputSchema: { type: 'object', properties: { greeting: { type: 'string' } } } }, async ({ greeting }, ctx) => {
      const answer = await ctx.elicit(form('Your name?'), { key: 'user_name' })
      return text(`${String(greeting)}, ${String(answer.content?.value)} (${answer.action})`)
    })
    server.tool('other', { inputSchema: { type: 'object', properties: { greeting: { type: 'string' } } } }, async (_args, ctx) => {
      const answer = await ctx.elicit(form('Your name?'), { key: 'user_name' })
      return text(`other ${String(answer.content?.value)}`)
    })
    server.tool('wizard', {}, async (_args, ctx) => {
      const first = await ctx.elicit(form('Step 1'), { key: 'step1' })
      const second = await ctx.elicit(form('Step 2'), { key: 'step2' })
      return text(`${String(first.content?.value)}+${String(second.content?.value)}`)
    })
    server.tool('all-three', {}, async (_args, ctx) => {
      const [elicited, sampled, roots] = await Promise.all([
        ctx.elicit(form('Anything?')),
        ctx.sample({ messages: [{ role: 'user', content: { type: 'text', text: 'Capital of France?' } }], maxTokens: 10 }),
        ctx.listRoots(),
      ])
      const said = sampled.content as { text?: string }
      return text(`${String(elicited.content?.value)} ${String(said.text)} ${roots.roots.map(root => root.uri).join(',')}`)
    })
    server.tool('ask-model', {}, async (_args, ctx) => {
      const sampled = await ctx.sample({ messages: [{ role: 'user', content: { type: 'text', text: 'Hi' } }], maxTokens: 5 })
      return text(String((sampled.content as { text?: string }).text))
    })
    server.tool('remember', {}, async (_args, ctx) => {
      remembered.push(ctx.requestState)
      if (ctx.requestState === undefined) ctx.setRequestState({ token: 'abc', step: 1 })
      const answer = await ctx.elicit(form('Confirm?'), { key: 'confirm' })
      return text(`${JSON.stringify(ctx.requestState)} ${answer.action}`)
    })
    server.prompt('greet', {}, async (_args, ctx) => {
      const answer = await ctx.elicit(form('Your name?'), { key: 'user_name' })
      return { messages: [{ role: 'user', content: { type: 'text', text: `Hello ${String(answer.content?.value)}` } }] }
    })
    server.prompt('completed', {
      arguments: [{ name: 'city' }],
      complete: {
        city: async (_value, { ctx }) => {
          await ctx.elicit(form('Which country?'))
          return ['Paris']
        },
      },
    }, () => ({ messages: [] }))
    return { server, remembered }
  }

  /** Round one of `greet`: the input_required result. */
  async function greetRoundOne(callTool: (name: string, args?: JsonObject, extra?: JsonObject) => Promise<JsonObject>, greeting = 'Hello') {
    const result = await callTool('greet', { greeting })
    expect(result.resultType).toBe('input_required')
    return result.requestState as string
  }

  it('answers a tool that elicits with input_required, and its retry with the answer completes', async () => {
    const { server } = mrtrServer()
    const { callTool } = await open(server)
    const first = await callTool('greet', { greeting: 'Hello' })
    expect(first).toEqual({
      resultType: 'input_required',
      inputRequests: { user_name: { method: 'elicitation/create', params: form('Your name?') } },
      requestState: expect.stringMatching(/^v1\./),
      _meta: { [MetaKey.serverInfo]: SERVER_INFO },
    })
    const second = await callTool('greet', { greeting: 'Hello' }, {
      inputResponses: { user_name: accept('Ada') }, requestState: first.requestState,
    })
    expect(second).toEqual({ ...text('Hello, Ada (accept)'), resultType: 'complete', _meta: { [MetaKey.serverInfo]: SERVER_INFO } })
  })

  it('takes an answer sent without requestState (the retry may answer before being asked)', async () => {
    const { server } = mrtrServer()
    const { callTool } = await open(server)
    expect(await callTool('greet', { greeting: 'Hi' }, { inputResponses: { user_name: accept('Bo') } })).toMatchObject(text('Hi, Bo (accept)'))
  })

  it('goes round after round, carrying earlier answers in the state', async () => {
    const { server } = mrtrServer()
    const { callTool } = await open(server)
    const round1 = await callTool('wizard')
    expect(round1).toMatchObject({ resultType: 'input_required', inputRequests: { step1: { method: 'elicitation/create', params: form('Step 1') } } })
    expect(Object.keys(round1.inputRequests as JsonObject)).toEqual(['step1'])

    const round2 = await callTool('wizard', {}, { inputResponses: { step1: accept('a') }, requestState: round1.requestState })
    expect(round2).toMatchObject({ resultType: 'input_required', inputRequests: { step2: { method: 'elicitation/create', params: form('Step 2') } } })
    expect(Object.keys(round2.inputRequests as JsonObject)).toEqual(['step2'])
    expect(round2.requestState).toEqual(expect.any(String))
    expect(round2.requestState).not.toBe(round1.requestState)

    // Round 3 answers only step 2: step 1's answer comes from the state, and stays as it was given
    // (a retry cannot change it: the state's round asked for step 2 only).
    const round3 = await callTool('wizard', {}, { inputResponses: { step1: accept('changed'), step2: accept('b') }, requestState: round2.requestState })
    expect(round3).toEqual({ ...text('a+b'), resultType: 'complete', _meta: { [MetaKey.serverInfo]: SERVER_INFO } })
  })

  it('asks for every input of a Promise.all in one round, with default keys', async () => {
    const { server } = mrtrServer()
    const { callTool } = await open(server)
    const round1 = await callTool('all-three')
    expect(round1).toMatchObject({ resultType: 'input_required' })
    expect(round1.inputRequests).toEqual({
      'elicitation-1': { method: 'elicitation/create', params: form('Anything?') },
      'sampling-1': { method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: 'Capital of France?' } }], maxTokens: 10 } },
      'roots-1': { method: 'roots/list', params: {} },
    })
    const round2 = await callTool('all-three', {}, {
      inputResponses: { 'elicitation-1': accept('yes'), 'sampling-1': SAMPLED, 'roots-1': ROOTS },
      requestState: round1.requestState,
    })
    expect(round2).toMatchObject({ ...text('yes Paris file:///project'), resultType: 'complete' })
  })

  it('asks again for the inputs a retry left out, keeping the ones it gave', async () => {
    const { server } = mrtrServer()
    const { callTool } = await open(server)
    const round1 = await callTool('all-three')
    const round2 = await callTool('all-three', {}, { inputResponses: { 'sampling-1': SAMPLED }, requestState: round1.requestState })
    expect(round2.resultType).toBe('input_required')
    expect(Object.keys(round2.inputRequests as JsonObject).sort()).toEqual(['elicitation-1', 'roots-1'])
    const round3 = await callTool('all-three', {}, {
      inputResponses: { 'elicitation-1': accept('ok'), 'roots-1': ROOTS }, requestState: round2.requestState,
    })
    expect(round3).toMatchObject(text('ok Paris file:///project'))
  })

  it('carries what the handler set with setRequestState into the next round', async () => {
    const { server, remembered } = mrtrServer()
    const { callTool } = await open(server)
    const round1 = await callTool('remember')
    const round2 = await callTool('remember', {}, { inputResponses: { confirm: { action: 'decline' } }, requestState: round1.requestState })
    expect(round2).toMatchObject(text('{"token":"abc","step":1} decline'))
    expect(remembered).toEqual([undefined, { token: 'abc', step: 1 }])
  })

  it('refuses to ask for what the request\'s _meta did not declare with -32021', async () => {
    const { server } = mrtrServer()
    const { failure, call } = await open(server)
    const noSampling = await failure('tools/call', { name: 'ask-model', _meta: meta({}, { elicitation: { form: {} } }) })
    expect(noSampling).toBeInstanceOf(MissingRequiredClientCapabilityError)
    expect(noSampling).toMatchObject({ code: ErrorCode.MissingRequiredClientCapability, data: { requiredCapabilities: { sampling: {} } } })
    expect(noSampling.message).toContain('sampling')
    const noElicitation = await failure('tools/call', { name: 'greet', arguments: { greeting: 'Hi' }, _meta: meta({}, { sampling: {} }) })
    expect(noElicitation).toBeInstanceOf(MissingRequiredClientCapabilityError)
    expect(noElicitation.data).toEqual({ requiredCapabilities: { elicitation: {} } })
    // The same request with the capability declared asks.
    expect(await call('tools/call', { name: 'ask-model', _meta: meta({}, { sampling: {} }) })).toMatchObject({ resultType: 'input_required' })
  })

  it.each([
    ['a changed character', (state: string) => state.slice(0, 12) + (state[12] === 'A' ? 'B' : 'A') + state.slice(13), 'forged'],
    ['a truncated mac', (state: string) => state.slice(0, -4), 'forged'],
    ['text that is no state', () => 'please-continue', 'malformed'],
    ['a number', () => 42, 'malformed'],
  ])('refuses a requestState with %s with -32602', async (_, tamper, reason) => {
    const { server } = mrtrServer()
    const { failure, callTool } = await open(server)
    const state = await greetRoundOne(callTool)
    const error = await failure('tools/call', {
      name: 'greet', arguments: { greeting: 'Hello' }, inputResponses: { user_name: accept('Eve') }, requestState: tamper(state), _meta: meta(),
    })
    expect(error).toBeInstanceOf(InvalidParamsError)
    expect(error).toMatchObject({ code: ErrorCode.InvalidParams, message: 'Invalid params: requestState failed its integrity check', data: { reason } })
  })

  it('refuses a requestState sealed for other arguments, another tool or another method with -32602', async () => {
    const { server } = mrtrServer()
    const { failure, callTool, call } = await open(server)
    const state = await greetRoundOne(callTool, 'Hello')
    const answers = { user_name: accept('Eve') }
    const attempts: Array<[string, JsonObject]> = [
      ['tools/call', { name: 'greet', arguments: { greeting: 'Goodbye' } }],
      ['tools/call', { name: 'other', arguments: { greeting: 'Hello' } }],
      ['prompts/get', { name: 'greet', arguments: { greeting: 'Hello' } }],
    ]
    for (const [method, params] of attempts) {
      const error = await failure(method, { ...params, inputResponses: answers, requestState: state, _meta: meta() })
      expect(error).toBeInstanceOf(InvalidParamsError)
      expect(error).toMatchObject({ code: ErrorCode.InvalidParams, message: 'Invalid params: requestState belongs to another request', data: { reason: 'mismatch' } })
    }
    // The state still continues the request it was sealed for.
    expect(await call('tools/call', { name: 'greet', arguments: { greeting: 'Hello' }, inputResponses: answers, requestState: state, _meta: meta() }))
      .toMatchObject(text('Hello, Eve (accept)'))
  })

  it('serves a prompt that elicits in rounds too', async () => {
    const { server } = mrtrServer()
    const { call } = await open(server)
    const round1 = await call('prompts/get', { name: 'greet', _meta: meta() })
    expect(round1).toMatchObject({ resultType: 'input_required', inputRequests: { user_name: { method: 'elicitation/create' } } })
    const round2 = await call('prompts/get', { name: 'greet', inputResponses: { user_name: accept('Pat') }, requestState: round1.requestState, _meta: meta() })
    expect(round2).toMatchObject({ resultType: 'complete', messages: [{ role: 'user', content: { type: 'text', text: 'Hello Pat' } }] })
  })

  it('refuses a requestState another server sealed, and continues one sealed under a shared requestStateKey', async () => {
    const sharedKey = 'shared by every instance, 32 B!!'
    const a = await open(mrtrServer({ requestStateKey: sharedKey }).server)
    const b = await open(mrtrServer({ requestStateKey: sharedKey }).server)
    const stranger = await open(mrtrServer().server)
    const state = await greetRoundOne(a.callTool)
    const retry = { inputResponses: { user_name: accept('Lin') }, requestState: state }
    expect(await b.callTool('greet', { greeting: 'Hello' }, retry)).toMatchObject({ ...text('Hello, Lin (accept)'), resultType: 'complete' })
    const error = await stranger.failure('tools/call', { name: 'greet', arguments: { greeting: 'Hello' }, ...retry, _meta: meta() })
    expect(error).toBeInstanceOf(InvalidParamsError)
    expect(error).toMatchObject({ code: ErrorCode.InvalidParams, data: { reason: 'forged' } })
  })

  it.each([
    ['a string', 'Ada'],
    ['an array', [{ action: 'accept' }]],
    ['null', null],
  ])('refuses inputResponses that is %s with -32602', async (_, inputResponses) => {
    const { server } = mrtrServer()
    const { failure, callTool } = await open(server)
    const state = await greetRoundOne(callTool)
    for (const requestState of [state, undefined]) {
      const error = await failure('tools/call', { name: 'greet', arguments: { greeting: 'Hello' }, inputResponses: inputResponses as unknown as JsonObject, requestState, _meta: meta() })
      expect(error).toBeInstanceOf(InvalidParamsError)
      expect(error).toMatchObject({ code: ErrorCode.InvalidParams, message: 'Invalid params: inputResponses must be an object of answers by key' })
    }
  })

  it.each([
    ['an elicitation answer without a valid action', 'greet', 'user_name', { action: 'maybe', content: { value: 'x' } }],
    ['an elicitation answer that is not an object', 'greet', 'user_name', 'Ada'],
    ['a sampling answer without content', 'all-three', 'sampling-1', { role: 'assistant' }],
    ['a roots answer without roots', 'all-three', 'roots-1', { uris: [] }],
  ])('refuses %s with -32602 naming its key', async (_, tool, key, answer) => {
    const { server } = mrtrServer()
    const { failure, callTool } = await open(server)
    const round1 = await callTool(tool, { greeting: 'Hello' })
    const valid: JsonObject = { user_name: accept('x'), 'elicitation-1': accept('x'), 'sampling-1': SAMPLED, 'roots-1': ROOTS }
    const error = await failure('tools/call', {
      name: tool, arguments: { greeting: 'Hello' }, inputResponses: { ...valid, [key]: answer as JsonObject }, requestState: round1.requestState, _meta: meta(),
    })
    expect(error).toBeInstanceOf(InvalidParamsError)
    expect(error).toMatchObject({ code: ErrorCode.InvalidParams, message: expect.stringContaining(`inputResponses.${key}`), data: { key } })
  })

  it('ignores answers to keys nobody asked for', async () => {
    const { server } = mrtrServer()
    const { callTool } = await open(server)
    const state = await greetRoundOne(callTool)
    const result = await callTool('greet', { greeting: 'Hello' }, {
      inputResponses: { user_name: accept('Ada'), unrelated: { anything: [1, 2, 3] }, 'sampling-9': 'junk' }, requestState: state,
    })
    expect(result).toEqual({ ...text('Hello, Ada (accept)'), resultType: 'complete', _meta: { [MetaKey.serverInfo]: SERVER_INFO } })
  })

  it('answers -32603 when a handler of a request that cannot take input_required asks for input', async () => {
    const { server } = mrtrServer()
    const { failure, callTool } = await open(server)
    const error = await failure('completion/complete', {
      ref: { type: 'ref/prompt', name: 'completed' }, argument: { name: 'city', value: 'P' }, _meta: meta(),
    })
    expect(error).toBeInstanceOf(InternalError)
    expect(error).toMatchObject({ code: ErrorCode.InternalError, message: expect.stringContaining('completion/complete asked the client for input') })
    expect(await callTool('greet', { greeting: 'still' })).toMatchObject({ resultType: 'input_required' })
  })

  it('runs the same handler over a legacy session with a live elicitation', async () => {
    const { server } = mrtrServer()
    /** The elicitations the legacy client was asked. */
    const asked: ElicitParams[] = []
    await using pair = await connectInMemory(server, {
      era: 'legacy',
      elicitation: { form: params => { asked.push(params); return { action: 'accept', content: { value: 'Grace' } } } },
    })
    expect(pair.client.era).toBe('legacy')
    expect(await pair.client.callTool('greet', { greeting: 'Hello' })).toEqual(text('Hello, Grace (accept)'))
    expect(asked).toEqual([form('Your name?')])
    // And over a modern request on another connection, the same handler asks in a round.
    const { callTool } = await open(server)
    expect(await callTool('greet', { greeting: 'Hello' })).toMatchObject({ resultType: 'input_required' })
  })
})

describe('createServer (MCP 2026-07-28): logging per request', () => {
  function chattyServer() {
    const server = makeServer()
    server.tool('chatty', {}, (_args, ctx) => {
      for (const level of ['debug', 'info', 'notice', 'warning', 'error'] as const) ctx.log(level, `at ${level}`, 'chatty')
      ctx.progress(1, 2)
      ctx.progress(2, 2)
      return text('done')
    })
    return server
  }

  it('sends no log messages to a request without a logLevel', async () => {
    const { raw, call } = await open(chattyServer())
    const messages = recorder(raw, ['notifications/message'])
    expect(await call('tools/call', { name: 'chatty', _meta: meta() })).toMatchObject(text('done'))
    expect(messages.seen).toEqual([])
  })

  it('sends the messages at and above the request\'s logLevel, tied to nothing else', async () => {
    const { raw, call } = await open(chattyServer())
    const messages = recorder(raw, ['notifications/message'])
    expect(await call('tools/call', { name: 'chatty', _meta: meta({ [MetaKey.logLevel]: 'warning' }) })).toMatchObject(text('done'))
    expect(messages.seen.map(entry => entry.params)).toEqual([
      { level: 'warning', logger: 'chatty', data: 'at warning' },
      { level: 'error', logger: 'chatty', data: 'at error' },
    ])
    // The level was this request's only.
    expect(await call('tools/call', { name: 'chatty', _meta: meta() })).toMatchObject(text('done'))
    expect(messages.seen).toHaveLength(2)
  })

  it('sends progress to a request that gave a progressToken, whatever its logLevel', async () => {
    const { events } = await open(chattyServer())
    const all = await lastValueFrom(events('tools/call', { name: 'chatty', _meta: meta() }, true).pipe(toArray()))
    expect(all).toEqual([
      { type: 'progress', progress: 1, total: 2 },
      { type: 'progress', progress: 2, total: 2 },
      { type: 'result', result: { ...text('done'), resultType: 'complete', _meta: expect.objectContaining({ [MetaKey.serverInfo]: SERVER_INFO }) } },
    ])
  })
})

describe('createServer (MCP 2026-07-28): shaping beside a legacy session', () => {
  it('shapes a modern request\'s progress for 2026-07-28 even when the connection holds a 2024-11-05 session', async () => {
    const server = makeServer()
    server.tool('steps', {}, (_args, ctx) => {
      ctx.progress(1, 2, 'half way')
      return text('done')
    })
    const { raw, events, call } = await open(server)
    await call('initialize', { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: CLIENT_INFO })
    raw.notify('notifications/initialized')
    // The legacy session's own request: 2024-11-05 has no progress message.
    const legacy = await lastValueFrom(events('tools/call', { name: 'steps' }, true).pipe(toArray()))
    expect(legacy[0]).toEqual({ type: 'progress', progress: 1, total: 2 })
    // A modern request on the same connection gets its progress as its own revision defines it.
    const modern = await lastValueFrom(events('tools/call', { name: 'steps', _meta: meta() }, true).pipe(toArray()))
    expect(modern[0]).toEqual({ type: 'progress', progress: 1, total: 2, message: 'half way' })
  })
})

describe('createServer (MCP 2026-07-28): subscriptions/listen', () => {
  const NOTIFICATIONS = [
    'notifications/subscriptions/acknowledged', 'notifications/tools/list_changed', 'notifications/prompts/list_changed',
    'notifications/resources/list_changed', 'notifications/resources/updated',
  ]

  function listenServer() {
    const server = makeServer()
    server.tool('echo', {}, () => text('echo'))
    server.resource('res://a', { name: 'a' }, () => 'a')
    server.resource('res://b', { name: 'b' }, () => 'b')
    return server
  }

  async function openListening(server: McpServer) {
    const connection = await open(server)
    const notes = recorder(connection.raw, NOTIFICATIONS)
    /** Opens a listen stream; resolves once acknowledged, with its id and the stream's result (if it ends). */
    const listen = async (filterParams: JsonObject) => {
      const n = connection.sent.filter(message => message.method === 'subscriptions/listen').length
      let settle!: { resolve: (result: JsonObject) => void; reject: (error: unknown) => void }
      const result = new Promise<JsonObject>((resolve, reject) => { settle = { resolve, reject } })
      // A stream still open when the test ends fails with the closed connection: nobody waits for that.
      result.catch(() => {})
      const subscription = connection.events('subscriptions/listen', { _meta: meta(), notifications: filterParams })
        .pipe(resultOf()).subscribe({ next: value => settle.resolve(value), error: error => settle.reject(error) })
      const id = idOf(connection.sent, 'subscriptions/listen', n)
      const ack = await notes.until(entry => entry.method === 'notifications/subscriptions/acknowledged' && subscriptionIdOf(entry.params) === id)
      return { id, ack: ack.params, result, stop: () => subscription.unsubscribe() }
    }
    return { ...connection, notes, listen }
  }

  it('acknowledges first, with the subscription id and only the honoured part of the filter', async () => {
    const server = listenServer()
    const { listen, notes } = await openListening(server)
    const { id, ack } = await listen({
      toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true, futureListChanged: true,
      resourceSubscriptions: ['res://a', 7, 'res://b'],
    })
    expect(ack).toEqual({
      _meta: { [MetaKey.subscriptionId]: id },
      notifications: { toolsListChanged: true, resourcesListChanged: true, resourceSubscriptions: ['res://a', 'res://b'] },
    })
    expect(notes.seen[0]).toEqual({ method: 'notifications/subscriptions/acknowledged', params: ack })
  })

  it('leaves out the resource subscriptions of a server without resources', async () => {
    const server = makeServer()
    server.tool('echo', {}, () => text('echo'))
    const { listen } = await openListening(server)
    const { ack } = await listen({ toolsListChanged: true, resourcesListChanged: true, resourceSubscriptions: ['res://a'] })
    expect(ack.notifications).toEqual({ toolsListChanged: true })
  })

  it('tags list changes with the subscription id, and sends only the kinds asked for', async () => {
    const server = listenServer()
    const { listen, notes } = await openListening(server)
    const { id } = await listen({ toolsListChanged: true })
    // The server gains prompts now (so the capability exists), but this stream did not ask for them.
    server.prompt('later', {}, () => ({ messages: [] }))
    server.resource('res://c', { name: 'c' }, () => 'c')
    server.tool('later', {}, () => text('later'))
    const changed = await notes.until(entry => entry.method === 'notifications/tools/list_changed')
    expect(changed.params).toEqual({ _meta: { [MetaKey.subscriptionId]: id } })
    expect(notes.seen.map(entry => entry.method)).toEqual(['notifications/subscriptions/acknowledged', 'notifications/tools/list_changed'])
  })

  it('sends resources/updated only for the URIs subscribed', async () => {
    const server = listenServer()
    const { listen, notes } = await openListening(server)
    const { id } = await listen({ resourceSubscriptions: ['res://a'] })
    server.notifyResourceUpdated('res://b')
    server.notifyResourceUpdated('res://a')
    const updated = await notes.until(entry => entry.method === 'notifications/resources/updated')
    expect(updated.params).toEqual({ _meta: { [MetaKey.subscriptionId]: id }, uri: 'res://a' })
    expect(notes.seen.filter(entry => entry.method === 'notifications/resources/updated')).toHaveLength(1)
  })

  it('stops delivering once the listen request is cancelled', async () => {
    const server = listenServer()
    const { listen, notes, call, sent } = await openListening(server)
    const listeners = countListeners(server)
    const first = await listen({ toolsListChanged: true })
    const second = await listen({ toolsListChanged: true })
    expect(listeners.value).toBe(2)
    first.stop()
    expect(sent.at(-1)).toMatchObject({ method: 'notifications/cancelled', params: { requestId: first.id } })
    // The memory pair is ordered: once this is answered, the server has seen the cancellation.
    await call('server/discover', { _meta: meta() })
    expect(listeners.value).toBe(1)
    server.tool('later', {}, () => text('later'))
    await notes.until(entry => entry.method === 'notifications/tools/list_changed' && subscriptionIdOf(entry.params) === second.id)
    const changes = notes.seen.filter(entry => entry.method === 'notifications/tools/list_changed')
    expect(changes.map(entry => subscriptionIdOf(entry.params))).toEqual([second.id])
  })

  it('ends the subscription when the transport closes', async () => {
    const server = listenServer()
    const listeners = countListeners(server)
    const { listen, raw } = await openListening(server)
    const { result } = await listen({ toolsListChanged: true })
    expect(listeners.value).toBe(1)
    await raw.close()
    await expect(result).rejects.toThrow('Connection closed')
    await firstValueFrom(listeners.pipe(filter(count => count === 0)))
    server.tool('later', {}, () => text('later'))
    expect(unhandled).toEqual([])
  })

  it('answers an open listen with a complete result carrying its subscription id when the server closes', async () => {
    const server = listenServer()
    const { listen } = await openListening(server)
    const listeners = countListeners(server)
    const { id, result } = await listen({ toolsListChanged: true })
    await server.close()
    expect(await result).toEqual({ resultType: 'complete', _meta: { [MetaKey.subscriptionId]: id, [MetaKey.serverInfo]: SERVER_INFO } })
    expect(listeners.value).toBe(0)
  })

  it.each<[string, unknown]>([
    ['a filter that is a string', 'all'],
    ['a filter that is an array', ['toolsListChanged']],
    ['no filter', undefined],
  ])('answers a listen with %s with -32602', async (_, notifications) => {
    const server = listenServer()
    const { failure, notes, callTool } = await openListening(server)
    const error = await failure('subscriptions/listen', { _meta: meta(), notifications: notifications as JsonObject })
    expect(error).toBeInstanceOf(InvalidParamsError)
    expect(error).toMatchObject({ code: ErrorCode.InvalidParams, message: 'Invalid params: subscriptions/listen needs a notifications filter object' })
    expect(notes.seen).toEqual([])
    expect(await callTool('echo')).toMatchObject({ resultType: 'complete' })
  })

  it('reports no error while streams open, deliver and end', async () => {
    const server = listenServer()
    const { listen, notes } = await openListening(server)
    const { stop } = await listen({ toolsListChanged: true, resourceSubscriptions: ['res://a'] })
    server.notifyResourceUpdated('res://a')
    await notes.until(entry => entry.method === 'notifications/resources/updated')
    stop()
    server.tool('later', {}, () => text('later'))
    server.notifyResourceUpdated('res://a')
    await server.close()
    expect(unhandled).toEqual([])
  })
})
