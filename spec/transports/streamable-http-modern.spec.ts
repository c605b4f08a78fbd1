import { afterEach, describe, expect, it } from 'vitest'
import { filter, firstValueFrom, interval, last, map, take, tap } from 'rxjs'
import { createServer, type McpServer } from '../../actors/server.ts'
import { streamableHttp, type StreamableHttpServer } from '../../transports/streamable-http.ts'
import { createSseParser } from '../../lib/codec/sse.ts'
import { ErrorCode } from '../../lib/jsonrpc/errors.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { MetaKey, NAMED_METHODS, mcpNameOf } from '../../lib/schema/modern.ts'
import { SUPPORTED_PROTOCOL_VERSIONS } from '../../lib/schema/types.ts'
import { events, messages } from '../helpers/sse-events.ts'
import { countListeners } from '../helpers/count-listeners.ts'

const MODERN = '2026-07-28'
const ACCEPT = 'application/json, text/event-stream'
const SERVER_INFO = { name: 'http-modern', version: '3.0.0' }
const CLIENT_INFO = { name: 'fetch-client', version: '1.0.0' }

function meta(extra: JsonObject = {}, capabilities: JsonObject = {}): JsonObject {
  return { [MetaKey.protocolVersion]: MODERN, [MetaKey.clientCapabilities]: capabilities, [MetaKey.clientInfo]: CLIENT_INFO, ...extra }
}

const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] })
const base64 = (value: string) => `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`

/** Errors nobody observed, per test. */
let unhandled: unknown[] = []
let mcp: McpServer | undefined
afterEach(async () => {
  await mcp?.close()
  mcp = undefined
  unhandled = []
})

/** A server with the tools the tests call, listening on a free port of 127.0.0.1. */
async function start(): Promise<{ server: McpServer; http: StreamableHttpServer; url: string }> {
  const server = createServer(SERVER_INFO, { reportUnhandledError: error => unhandled.push(error) })
  mcp = server
  server.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }, ({ text: value }) => text(String(value)))
  server.tool('count', { inputSchema: { type: 'object', properties: { steps: { type: 'integer' } } } }, ({ steps = 2 }, ctx) =>
    interval(1).pipe(take(Number(steps)), tap(i => ctx.progress(i + 1, Number(steps))), last(), map(() => text('counted'))))
  server.tool('regional', {
    inputSchema: {
      type: 'object',
      properties: {
        region: { type: 'string', 'x-mcp-header': 'Region' },
        count: { type: 'integer', 'x-mcp-header': 'Count' },
        note: { type: 'string' },
      },
    },
  }, args => text(JSON.stringify(args)))
  server.tool('greet', {}, async (_args, ctx) => {
    const answer = await ctx.elicit({ mode: 'form', message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } }, { key: 'name' })
    return text(`Hello, ${String(answer.content?.name)}`)
  })
  const http = streamableHttp({ port: 0 })
  await server.listen(http)
  return { server, http, url: http.url! }
}

let nextId = 1

/** A JSON-RPC request of the modern era: `_meta` unless the params say otherwise. */
function request(method: string, params: JsonObject = {}): JsonObject {
  return { jsonrpc: '2.0', id: nextId++, method, params: { _meta: meta(), ...params } }
}

/**
 * POSTs `body` with the headers a modern client sends (MCP-Protocol-Version, Mcp-Method, Mcp-Name
 * from the body); `headers` adds or replaces them, and a header set to undefined is left out.
 */
function post(url: string, body: JsonObject, headers: Record<string, string | undefined> = {}, signal?: AbortSignal): Promise<Response> {
  const method = String(body.method)
  const name = NAMED_METHODS.has(method) ? mcpNameOf(method, body.params) : undefined
  const all: Record<string, string | undefined> = {
    'content-type': 'application/json', accept: ACCEPT, 'mcp-protocol-version': MODERN, 'mcp-method': method,
    ...(name === undefined ? {} : { 'mcp-name': name }), ...headers,
  }
  const sent: Record<string, string> = {}
  for (const [key, value] of Object.entries(all)) if (value !== undefined) sent[key] = value
  return fetch(url, { method: 'POST', headers: sent, body: JSON.stringify(body), signal })
}

/** The status and JSON body of a response answered in JSON. */
async function json(response: Response): Promise<{ status: number; body: JsonObject }> {
  expect(response.headers.get('content-type')).toBe('application/json')
  return { status: response.status, body: await response.json() as JsonObject }
}

/** Reads an SSE response one JSON-RPC message at a time, as they arrive. */
function sseReader(response: Response) {
  const queue: JsonObject[] = []
  let wake: (() => void) | undefined
  const parser = createSseParser(event => {
    if (event.data === '') return
    queue.push(JSON.parse(event.data) as JsonObject)
    wake?.()
  })
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let isDone = false
  void (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        parser.write(decoder.decode(value, { stream: true }))
      }
    } catch {
      // Aborted by the test.
    } finally {
      isDone = true
      wake?.()
    }
  })()
  return {
    /** The next message; rejects if the stream ends first. */
    async next(): Promise<JsonObject> {
      while (queue.length === 0) {
        if (isDone) throw new Error('The SSE stream ended')
        await new Promise<void>(resolve => { wake = resolve })
      }
      return queue.shift()!
    },
  }
}

describe('streamableHttp (MCP 2026-07-28)', () => {
  it('answers a POST without a session id in JSON, with resultType and no session', async () => {
    const { url, http } = await start()
    const body = request('tools/call', { name: 'echo', arguments: { text: 'hi' } })
    const response = await post(url, body)
    expect(response.headers.get('mcp-session-id')).toBeNull()
    expect(await json(response)).toEqual({
      status: 200,
      body: { jsonrpc: '2.0', id: body.id, result: { ...text('hi'), resultType: 'complete', _meta: { [MetaKey.serverInfo]: SERVER_INFO } } },
    })
    const discovered = await json(await post(url, request('server/discover')))
    expect(discovered.body.result).toMatchObject({ resultType: 'complete', supportedVersions: [MODERN, ...SUPPORTED_PROTOCOL_VERSIONS], ttlMs: 0, cacheScope: 'private' })
    expect(http.sessionCount).toBe(0)
  })

  it('streams the progress of a request that asked for it, ending with the result', async () => {
    const { url } = await start()
    const body = request('tools/call', { name: 'count', arguments: { steps: 2 }, _meta: meta({ progressToken: 'p-1' }) })
    const response = await post(url, body)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/event-stream')
    expect(response.headers.get('mcp-session-id')).toBeNull()
    expect(messages(await events(response))).toEqual([
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'p-1', progress: 1, total: 2 } },
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'p-1', progress: 2, total: 2 } },
      { jsonrpc: '2.0', id: body.id, result: { ...text('counted'), resultType: 'complete', _meta: { [MetaKey.serverInfo]: SERVER_INFO } } },
    ])
  })

  it.each<[string, Record<string, string | undefined>]>([
    ['Mcp-Method missing', { 'mcp-method': undefined }],
    ['Mcp-Method naming another method', { 'mcp-method': 'tools/list' }],
    ['Mcp-Name missing', { 'mcp-name': undefined }],
    ['Mcp-Name naming another tool', { 'mcp-name': 'count' }],
    ['Mcp-Name base64-encoding another tool', { 'mcp-name': base64('count') }],
    ['Mcp-Name with broken base64', { 'mcp-name': '=?base64?ZWNobw=?=' }],
    ['MCP-Protocol-Version missing', { 'mcp-protocol-version': undefined }],
    ['MCP-Protocol-Version differing from _meta', { 'mcp-protocol-version': '2025-11-25' }],
  ])('refuses a tools/call with %s with 400 and -32020 carrying its id', async (_, headers) => {
    const { url } = await start()
    const body = request('tools/call', { name: 'echo', arguments: { text: 'hi' } })
    const { status, body: answer } = await json(await post(url, body, headers))
    expect(status).toBe(400)
    expect(answer).toEqual({ jsonrpc: '2.0', id: body.id, error: { code: ErrorCode.HeaderMismatch, message: expect.stringMatching(/^Header mismatch: /) } })
  })

  it('accepts an Mcp-Name in the base64 sentinel form', async () => {
    const { url } = await start()
    const body = request('tools/call', { name: 'echo', arguments: { text: 'encoded' } })
    const { status, body: answer } = await json(await post(url, body, { 'mcp-name': base64('echo') }))
    expect(status).toBe(200)
    expect(answer.result).toMatchObject(text('encoded'))
  })

  it('accepts a notification with 202 and no body', async () => {
    const { url } = await start()
    const response = await post(url, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, _meta: meta() } })
    expect(response.status).toBe(202)
    expect(await response.text()).toBe('')
  })

  it('refuses a modern POST without _meta with 400 and -32602', async () => {
    const { url } = await start()
    const body = { jsonrpc: '2.0', id: 41, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } }
    const { status, body: answer } = await json(await post(url, body))
    expect(status).toBe(400)
    expect(answer).toMatchObject({ jsonrpc: '2.0', id: 41, error: { code: ErrorCode.InvalidParams } })
  })

  it('refuses an unsupported version with 400 and -32022 listing the versions served', async () => {
    const { url } = await start()
    const body = request('tools/call', { name: 'echo', arguments: {}, _meta: meta({ [MetaKey.protocolVersion]: '2099-01-01' }) })
    const { status, body: answer } = await json(await post(url, body, { 'mcp-protocol-version': '2099-01-01' }))
    expect(status).toBe(400)
    expect(answer).toMatchObject({
      id: body.id,
      error: { code: ErrorCode.UnsupportedProtocolVersion, data: { supported: [MODERN, ...SUPPORTED_PROTOCOL_VERSIONS], requested: '2099-01-01' } },
    })
  })

  it('answers an unknown method with 404 and -32601', async () => {
    const { url } = await start()
    const body = request('tools/frobnicate')
    const { status, body: answer } = await json(await post(url, body))
    expect(status).toBe(404)
    expect(answer).toMatchObject({ id: body.id, error: { code: ErrorCode.MethodNotFound } })
  })

  it('answers a legacy-only method asked in the modern era with 404 and -32601', async () => {
    const { url } = await start()
    for (const method of ['ping', 'initialize']) {
      const body = request(method)
      const { status, body: answer } = await json(await post(url, body))
      expect(status).toBe(404)
      expect(answer).toMatchObject({ id: body.id, error: { code: ErrorCode.MethodNotFound, message: expect.stringContaining(`not part of MCP ${MODERN}`) } })
    }
  })

  it('runs input_required rounds over independent POSTs', async () => {
    const { url, http } = await start()
    const elicitation = { elicitation: { form: {} } }
    const round1 = await json(await post(url, request('tools/call', { name: 'greet', _meta: meta({}, elicitation) })))
    expect(round1.status).toBe(200)
    expect(round1.body.result).toMatchObject({
      resultType: 'input_required', inputRequests: { name: { method: 'elicitation/create', params: { mode: 'form', message: 'Name?' } } },
      requestState: expect.any(String),
    })
    const { requestState } = round1.body.result as JsonObject
    const retry = request('tools/call', { name: 'greet', inputResponses: { name: { action: 'accept', content: { name: 'Ada' } } }, requestState, _meta: meta({}, elicitation) })
    const round2 = await json(await post(url, retry))
    expect(round2).toEqual({
      status: 200,
      body: { jsonrpc: '2.0', id: retry.id, result: { ...text('Hello, Ada'), resultType: 'complete', _meta: { [MetaKey.serverInfo]: SERVER_INFO } } },
    })
    expect(http.sessionCount).toBe(0)
  })

  it('answers an input the request\'s capabilities cannot take with 400 and -32021', async () => {
    const { url } = await start()
    const body = request('tools/call', { name: 'greet' })
    const { status, body: answer } = await json(await post(url, body))
    expect(status).toBe(400)
    expect(answer).toMatchObject({ id: body.id, error: { code: ErrorCode.MissingRequiredClientCapability, data: { requiredCapabilities: { elicitation: {} } } } })
  })

  it('answers a tampered requestState with -32602', async () => {
    const { url } = await start()
    const body = request('tools/call', { name: 'greet', inputResponses: { name: { action: 'decline' } }, requestState: 'v1.e30.AAAA', _meta: meta({}, { elicitation: {} }) })
    const { body: answer } = await json(await post(url, body))
    expect(answer).toMatchObject({ id: body.id, error: { code: ErrorCode.InvalidParams, data: { reason: 'forged' } } })
  })

  describe('Mcp-Param headers of x-mcp-header arguments', () => {
    it.each<[string, JsonObject, Record<string, string>]>([
      ['a plain string', { region: 'us-west1' }, { 'mcp-param-region': 'us-west1' }],
      ['a base64-encoded string', { region: 'Hello, 世界' }, { 'mcp-param-region': base64('Hello, 世界') }],
      ['an integer', { count: 42 }, { 'mcp-param-count': '42' }],
      ['an integer written another way', { count: 42 }, { 'mcp-param-count': '42.0' }],
      ['an integer in base64', { count: 7 }, { 'mcp-param-count': base64('7') }],
      ['both, beside an argument without header', { region: 'eu', count: 1, note: 'n' }, { 'mcp-param-region': 'eu', 'mcp-param-count': '1' }],
      ['no mirrored argument and no header', { note: 'n' }, {}],
    ])('serves %s that matches its argument', async (_, args, headers) => {
      const { url } = await start()
      const body = request('tools/call', { name: 'regional', arguments: args })
      const { status, body: answer } = await json(await post(url, body, headers))
      expect(status).toBe(200)
      expect(answer.result).toMatchObject(text(JSON.stringify(args)))
    })

    it.each<[string, JsonObject, Record<string, string>, string]>([
      ['a header missing while its argument is given', { region: 'us-west1' }, {}, 'is required'],
      ['a header that differs', { region: 'us-west1' }, { 'mcp-param-region': 'us-east1' }, 'does not match'],
      ['an integer that differs', { count: 42 }, { 'mcp-param-count': '43' }, 'does not match'],
      ['an empty integer header', { count: 0 }, { 'mcp-param-count': ' ' }, 'does not match'],
      ['invalid base64', { region: 'us-west1' }, { 'mcp-param-region': '=?base64?!!!?=' }, 'not a valid header value'],
      ['base64 that is not UTF-8', { region: 'us-west1' }, { 'mcp-param-region': '=?base64?/w==?=' }, 'not a valid header value'],
      ['a raw non-ASCII value', { region: 'café' }, { 'mcp-param-region': 'café' }, 'not a valid header value'],
      ['a header whose argument is absent', { note: 'n' }, { 'mcp-param-region': 'us-west1' }, 'is sent but the argument'],
    ])('refuses %s with 400 and -32020', async (_, args, headers, reason) => {
      const { url } = await start()
      const body = request('tools/call', { name: 'regional', arguments: args })
      const { status, body: answer } = await json(await post(url, body, headers))
      expect(status).toBe(400)
      expect(answer).toEqual({ jsonrpc: '2.0', id: body.id, error: { code: ErrorCode.HeaderMismatch, message: expect.stringContaining(reason) } })
    })
  })

  it('aborts the handler\'s signal when the client closes the response stream', async () => {
    const { server, url } = await start()
    let started!: () => void
    const isStarted = new Promise<void>(resolve => { started = resolve })
    const aborted = new Promise<unknown>(resolve => {
      server.tool('slow', {}, (_args, ctx) => new Promise(done => {
        ctx.signal.addEventListener('abort', () => { resolve(ctx.signal.reason); done(text('too late')) })
        started()
      }))
    })
    const controller = new AbortController()
    const response = post(url, request('tools/call', { name: 'slow' }), {}, controller.signal)
    response.catch(() => {})
    await isStarted
    controller.abort()
    await expect(response).rejects.toThrow()
    expect(await aborted).toBeInstanceOf(Error)
    // The server is still serving.
    const { status } = await json(await post(url, request('tools/call', { name: 'echo', arguments: { text: 'after' } })))
    expect(status).toBe(200)
  })

  it('serves subscriptions/listen as an SSE stream: the acknowledgement, then list changes; aborting ends the subscription', async () => {
    const { server, http, url } = await start()
    const listeners = countListeners(server)
    const controller = new AbortController()
    const body = request('subscriptions/listen', { notifications: { toolsListChanged: true, promptsListChanged: true } })
    const response = await post(url, body, {}, controller.signal)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/event-stream')
    expect(response.headers.get('mcp-session-id')).toBeNull()
    const stream = sseReader(response)
    expect(await stream.next()).toEqual({
      jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged',
      params: { _meta: { [MetaKey.subscriptionId]: body.id }, notifications: { toolsListChanged: true } },
    })
    expect(listeners.value).toBe(1)
    server.tool('later', {}, () => text('later'))
    expect(await stream.next()).toEqual({
      jsonrpc: '2.0', method: 'notifications/tools/list_changed', params: { _meta: { [MetaKey.subscriptionId]: body.id } },
    })
    controller.abort()
    // The stream's end reaches the server: its subscription to the event bus goes.
    await firstValueFrom(listeners.pipe(filter(count => count === 0)))
    server.tool('later-still', {}, () => text('later still'))
    expect(http.sessionCount).toBe(0)
    expect((await json(await post(url, request('tools/call', { name: 'later-still' })))).status).toBe(200)
    expect(unhandled).toEqual([])
  })

  it('answers an open listen stream with a complete result when the server closes', async () => {
    const { server, url } = await start()
    const body = request('subscriptions/listen', { notifications: { toolsListChanged: true } })
    const response = await post(url, body)
    const stream = sseReader(response)
    expect(await stream.next()).toMatchObject({ method: 'notifications/subscriptions/acknowledged' })
    await server.close()
    // MCP 2026-07-28 cancellation: the server that tears the stream down says so first.
    expect(await stream.next()).toMatchObject({ method: 'notifications/cancelled', params: { requestId: body.id } })
    expect(await stream.next()).toEqual({
      jsonrpc: '2.0', id: body.id,
      result: { resultType: 'complete', _meta: { [MetaKey.subscriptionId]: body.id, [MetaKey.serverInfo]: SERVER_INFO } },
    })
  })

  it('serves legacy sessions on the same endpoint beside modern requests', async () => {
    const { url, http } = await start()
    const initialize = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: CLIENT_INFO } }
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT }, body: JSON.stringify(initialize) })
    expect(response.status).toBe(200)
    const session = response.headers.get('mcp-session-id')
    expect(session).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(messages(await events(response))).toMatchObject([{ id: 0, result: { protocolVersion: '2025-11-25', serverInfo: SERVER_INFO } }])
    expect(http.sessionCount).toBe(1)
    const legacyHeaders = { 'content-type': 'application/json', accept: ACCEPT, 'mcp-session-id': session!, 'mcp-protocol-version': '2025-11-25' }
    await fetch(url, { method: 'POST', headers: legacyHeaders, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })
    const legacyCall = await fetch(url, { method: 'POST', headers: legacyHeaders, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'legacy' } } }) })
    expect(messages(await events(legacyCall))).toEqual([{ jsonrpc: '2.0', id: 1, result: text('legacy') }])
    const modern = await json(await post(url, request('tools/call', { name: 'echo', arguments: { text: 'modern' } })))
    expect(modern.body.result).toMatchObject({ ...text('modern'), resultType: 'complete' })
    expect(http.sessionCount).toBe(1)
  })
})
