import { afterEach, describe, expect, it } from 'vitest'
import { map, tap, throwError } from 'rxjs'
import { createServer, type McpServer, type Middleware } from '../../actors/server.ts'
import { audit, permissions, rateLimit, requireScopes, type AuditEntry } from '../../actors/server/middleware.ts'
import { ForbiddenError } from '../../lib/jsonrpc/errors.ts'
import type { Authenticator, Principal } from '../../lib/auth.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { rawClient } from '../helpers/raw-client.ts'
import { collected } from '../helpers/collected.ts'

const closers: (() => Promise<void>)[] = []
afterEach(async () => { for (const close of closers.splice(0).reverse()) await close() })

function demoServer(): McpServer {
  const server = createServer({ name: 'mw', version: '1' })
  server.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }, ({ text }) => ({ content: [{ type: 'text', text: String(text) }] }))
  server.tool('delete_all', {}, () => ({ content: [{ type: 'text', text: 'deleted' }] }))
  server.tool('broken', {}, () => ({ content: [{ type: 'text', text: 'no' }], isError: true }))
  server.resource('file:///public/readme', { name: 'readme' }, () => ({ contents: [{ uri: 'file:///public/readme', text: 'hi' }] }))
  server.resource('file:///secret/keys', { name: 'keys' }, () => ({ contents: [{ uri: 'file:///secret/keys', text: 'k' }] }))
  server.prompt('review', {}, () => ({ messages: [] }))
  server.method('acme/stats', () => ({ calls: 1 }))
  closers.push(() => server.close())
  return server
}

const PRINCIPALS: Record<string, Principal> = {
  admin: { subject: 'ada', scopes: ['mcp', 'admin'], claims: { roles: ['admin'] } },
  user: { subject: 'uma', scopes: ['mcp'], clientId: 'app', claims: { roles: ['user'] } },
  viewer: { subject: 'vic', scopes: [], claims: { roles: ['viewer'] } },
}

/** An API-key authenticator: the smallest Authenticator, with no OAuth in it. */
const apiKeys: Authenticator = {
  async authenticate(request) {
    const principal = PRINCIPALS[request.header('x-api-key') ?? '']
    return principal !== undefined ? { type: 'allow', principal } : { type: 'refuse', answer: { status: 401, headers: { 'content-type': 'text/plain' }, body: 'no key' } }
  },
}

/** `server` over HTTP behind the API-key authenticator; `call(key, method, params)` gives the JSON-RPC answer of a modern request. */
async function overHttp(server: McpServer, options: Parameters<typeof streamableHttp>[0] = {}) {
  const http = streamableHttp({ auth: apiKeys, jsonResponse: true, ...options })
  await server.listen(http)
  let id = 0
  const call = async (key: string, method: string, params: Record<string, unknown> = {}) => {
    const response = await fetch(http.url!, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': key, 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, ...(typeof params.name === 'string' ? { 'mcp-name': params.name } : typeof params.uri === 'string' ? { 'mcp-name': params.uri } : {}) },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } } }),
    })
    return { status: response.status, headers: response.headers, body: await response.json() as { result?: Record<string, unknown>; error?: { code: number; message: string; data?: Record<string, unknown> } } }
  }
  return { http, call }
}

/**
 * The result of an answer that must have been served: it fails on a JSON-RPC error and on an
 * `isError` tool result, so an "allowed" case cannot pass on a refusal or a failed call.
 */
function served(answer: { status: number; body: { result?: Record<string, unknown>; error?: unknown } }): Record<string, unknown> {
  expect(answer.status).toBe(200)
  expect(answer.body.error).toBeUndefined()
  expect(answer.body.result).toBeTypeOf('object')
  expect(answer.body.result!.isError).toBeUndefined()
  return answer.body.result!
}

describe('server.use', () => {
  it('runs middleware in order around the handler, for router, custom and session methods (not initialize or ping), and takes it out on remove()', async () => {
    const server = demoServer()
    const trail: string[] = []
    const step = (name: string): Middleware => next => (request, ctx) => {
      trail.push(`${name}>${request.method}`)
      return next(request, ctx).pipe(tap({ complete: () => trail.push(`${name}<`) }))
    }
    const added = server.use(step('a'), step('b'))
    const { call } = await rawClient(server, close => closers.push(close))
    await call('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } })
    expect(trail).toEqual([])
    await call('tools/call', { name: 'echo', arguments: { text: 'x' } })
    expect(trail).toEqual(['a>tools/call', 'b>tools/call', 'b<', 'a<'])
    trail.length = 0
    await call('acme/stats')
    // ping is the connection's own (it answers before any session logic); initialize is the handshake.
    await call('ping')
    await call('logging/setLevel', { level: 'info' })
    expect(trail.filter(entry => entry.includes('>'))).toEqual(['a>acme/stats', 'b>acme/stats', 'a>logging/setLevel', 'b>logging/setLevel'])
    added.remove()
    trail.length = 0
    await call('tools/call', { name: 'echo', arguments: { text: 'x' } })
    expect(trail).toEqual([])
  })

  it('lets middleware refuse (its McpError reaches the client as is), rewrite params and map results, and the session lives on', async () => {
    const server = demoServer()
    server.use(next => (request, ctx) => request.method === 'tools/call' && request.params?.name === 'delete_all'
      ? throwError(() => new ForbiddenError('Forbidden: not today', { why: 'policy' }))
      : next(request, ctx))
    server.use(next => (request, ctx) => request.method !== 'tools/call' ? next(request, ctx)
      : next({ ...request, params: { ...request.params, arguments: { text: 'rewritten' } } }, ctx).pipe(map(result => ({ ...result, _meta: { seen: true } }))))
    const { call, failure } = await rawClient(server, close => closers.push(close))
    await call('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } })
    const refused = await failure('tools/call', { name: 'delete_all', arguments: {} })
    expect(refused.code).toBe(-31003)
    expect(refused.data).toEqual({ why: 'policy' })
    expect(await call('tools/call', { name: 'echo', arguments: { text: 'original' } })).toEqual({ content: [{ type: 'text', text: 'rewritten' }], _meta: { seen: true } })
  })

  it('wraps modern-era requests too, with the context of their era', async () => {
    const server = demoServer()
    const seen: string[] = []
    server.use(next => (request, ctx) => { seen.push(`${ctx.era}:${request.method}:${ctx.principal?.subject}`); return next(request, ctx) })
    const { call } = await overHttp(server)
    expect((await call('user', 'server/discover')).status).toBe(200)
    expect((await call('user', 'tools/call', { name: 'echo', arguments: { text: 'x' } })).body.result?.content).toEqual([{ type: 'text', text: 'x' }])
    expect(seen).toEqual(['modern:server/discover:uma', 'modern:tools/call:uma'])
  })
})

describe('requireScopes', () => {
  it('refuses an operation whose principal lacks its scopes with -31003 naming them, on any transport', async () => {
    const server = demoServer()
    server.use(requireScopes({ 'tools/call:delete_all': ['admin'], 'resources/read': ['mcp'] }))
    const { call } = await overHttp(server)
    const refused = await call('user', 'tools/call', { name: 'delete_all', arguments: {} })
    expect(refused.body.error).toMatchObject({ code: -31003, data: { requiredScopes: ['admin'] } })
    expect((await call('admin', 'tools/call', { name: 'delete_all', arguments: {} })).body.result?.content).toEqual([{ type: 'text', text: 'deleted' }])
    expect((await call('viewer', 'resources/read', { uri: 'file:///public/readme' })).body.error?.code).toBe(-31003)
    expect(served(await call('user', 'tools/call', { name: 'echo', arguments: { text: 'ok' } })).content).toEqual([{ type: 'text', text: 'ok' }])
  })
})

describe('permissions', () => {
  const policy = {
    roles: {
      admin: ['*'],
      user: ['tools:call:echo', 'tools:list', 'resources:list', 'resources:read:file:///public/*', 'prompts:*'],
      viewer: ['resources:list'],
    },
  }

  it('lists only what a principal may use, and answers a hidden target as a missing one', async () => {
    const server = demoServer()
    server.use(permissions(policy))
    const { call } = await overHttp(server)
    const names = (result: Record<string, unknown> | undefined, key: string, field: string) => (result?.[key] as Record<string, string>[]).map(item => item[field])
    expect(names((await call('admin', 'tools/list')).body.result, 'tools', 'name')).toEqual(['echo', 'delete_all', 'broken'])
    expect(names((await call('user', 'tools/list')).body.result, 'tools', 'name')).toEqual(['echo'])
    expect(names((await call('user', 'resources/list')).body.result, 'resources', 'uri')).toEqual(['file:///public/readme'])
    expect(names((await call('viewer', 'resources/list')).body.result, 'resources', 'uri')).toEqual([])
    // Hidden targets look like missing ones.
    expect((await call('user', 'tools/call', { name: 'delete_all', arguments: {} })).body.error).toMatchObject({ code: -32602, message: 'Invalid params: unknown tool "delete_all"' })
    // A modern request (MCP 2026-07-28: an unknown resource is -32602, and -32002 is never sent).
    expect((await call('user', 'resources/read', { uri: 'file:///secret/keys' })).body.error).toMatchObject({ code: -32602, data: { uri: 'file:///secret/keys' } })
    expect(served(await call('user', 'resources/read', { uri: 'file:///public/readme' })).contents).toEqual([{ uri: 'file:///public/readme', text: 'hi' }])
    // A method a role has nothing of: -31003.
    expect((await call('viewer', 'tools/list')).body.error?.code).toBe(-31003)
    expect((await call('viewer', 'prompts/get', { name: 'review' })).body.error?.code).toBe(-32602)
    expect(served(await call('user', 'prompts/get', { name: 'review' })).messages).toEqual([])
    expect((await call('user', 'acme/stats')).body.error?.code).toBe(-31003)
    expect((await call('admin', 'acme/stats')).body.result).toMatchObject({ calls: 1 })
    // Open methods pass whatever the roles.
    expect(served(await call('viewer', 'server/discover'))).toMatchObject({ supportedVersions: expect.arrayContaining(['2026-07-28']), _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'mw' } } })
  })
})

describe('rateLimit', () => {
  it('spends a token per request per principal, refills over time, and answers -31029 with retryAfterMs when spent', async () => {
    let now = 0
    const server = demoServer()
    server.use(rateLimit({ capacity: 2, refillPerSecond: 1, now: () => now }))
    const { call } = await overHttp(server)
    const echo = (key: string) => call(key, 'tools/call', { name: 'echo', arguments: { text: 'x' } })
    const echoed = [{ type: 'text', text: 'x' }]
    expect(served(await echo('user')).content).toEqual(echoed)
    expect(served(await echo('user')).content).toEqual(echoed)
    expect((await echo('user')).body.error).toMatchObject({ code: -31029, data: { retryAfterMs: 1000 } })
    // Another principal has its own bucket.
    expect(served(await echo('admin')).content).toEqual(echoed)
    now += 500
    expect((await echo('user')).body.error).toMatchObject({ code: -31029, data: { retryAfterMs: 500 } })
    now += 500
    expect(served(await echo('user')).content).toEqual(echoed)
  })

  it('on the HTTP listener: answers 429 with Retry-After and a -31029 error per request', async () => {
    let now = 0
    const server = demoServer()
    const { call } = await overHttp(server, { rateLimit: { capacity: 1, refillPerSecond: 0.5, now: () => now } })
    const toolNames = (answer: Parameters<typeof served>[0]) => (served(answer).tools as { name: string }[]).map(tool => tool.name)
    expect(toolNames(await call('user', 'tools/list'))).toEqual(['echo', 'delete_all', 'broken'])
    const refused = await call('user', 'tools/list')
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toBe('2')
    expect(refused.body.error).toMatchObject({ code: -31029 })
    expect(toolNames(await call('admin', 'tools/list'))).toEqual(['echo', 'delete_all', 'broken'])
    now += 2000
    expect(toolNames(await call('user', 'tools/list'))).toEqual(['echo', 'delete_all', 'broken'])
  })
})

describe('audit', () => {
  it('writes who called what, how it ended and how long it took, refusals of later middleware included', async () => {
    let now = 1000
    const entries: AuditEntry[] = []
    const server = demoServer()
    server.tool('slow', {}, async () => { now += 25; return { content: [] } })
    server.use(audit(entry => entries.push(entry), { now: () => now }), permissions({ roles: { user: ['tools:*'] } }))
    const { call } = await overHttp(server)
    await call('user', 'tools/call', { name: 'slow', arguments: {} })
    await call('user', 'tools/call', { name: 'broken', arguments: {} })
    await call('user', 'prompts/list')
    expect(entries).toEqual([
      { at: 1000, method: 'tools/call', target: 'slow', era: 'modern', requestId: 1, principal: { subject: 'uma', clientId: 'app' }, outcome: 'result', durationMs: 25 },
      { at: 1025, method: 'tools/call', target: 'broken', era: 'modern', requestId: 2, principal: { subject: 'uma', clientId: 'app' }, outcome: 'tool-error', durationMs: 0 },
      { at: 1025, method: 'prompts/list', era: 'modern', requestId: 3, principal: { subject: 'uma', clientId: 'app' }, outcome: 'error', errorCode: -31003, durationMs: 0 },
    ])
  })

  it('records a cancelled request, and a sink that throws does not fail the request', async () => {
    const entries = collected<AuditEntry>()
    const errors: unknown[] = []
    const server = demoServer()
    // Its handler running says the request has reached the server: the cancel then finds it in flight.
    let isRunning!: () => void
    const running = new Promise<void>(resolve => { isRunning = resolve })
    server.tool('forever', {}, () => { isRunning(); return new Promise(() => {}) })
    server.use(audit(entry => { entries.push(entry); throw new Error('sink down') }, { onError: error => errors.push(error) }))
    const { call, connection } = await rawClient(server, close => closers.push(close))
    await call('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } })
    expect(await call('tools/call', { name: 'echo', arguments: { text: 'y' } })).toMatchObject({ content: [{ text: 'y' }] })
    const pending = connection.request('tools/call', { name: 'forever', arguments: {} }, { progress: false, timeout: 0 }).subscribe({ error: () => {} })
    await running
    pending.unsubscribe()
    await entries.when(items => items.length === 2)
    expect(entries.items.map(entry => entry.outcome)).toEqual(['result', 'cancelled'])
    expect(errors).toHaveLength(2)
  })
})
