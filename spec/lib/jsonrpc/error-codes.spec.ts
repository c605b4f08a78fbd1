import { afterEach, describe, expect, it } from 'vitest'
import { createServer, type McpServer } from '../../../actors/server.ts'
import { rateLimit, requireScopes } from '../../../actors/server/middleware.ts'
import { connect } from '../../../actors/client.ts'
import {
  ErrorCode, ForbiddenError, McpError, RateLimitedError, RXMCP_ERROR_CODE_RANGE, ResourceNotFoundError, UrlElicitationRequiredError,
} from '../../../lib/jsonrpc/errors.ts'
import type { Authenticator, Principal } from '../../../lib/auth.ts'
import { streamableHttp } from '../../../transports/streamable-http.ts'
import { streamableHttpClient } from '../../../transports/http-client.ts'
import { taskChanges } from '../../helpers/task-changes.ts'

const closers: (() => Promise<void>)[] = []
afterEach(async () => { for (const close of closers.splice(0).reverse()) await close() })

/** JSON-RPC 2.0's own codes. */
const JSON_RPC = [-32700, -32600, -32601, -32602, -32603]
/** Codes MCP defines: -32002 and -32042 (retired by 2026-07-28, still legacy-era codes), -32020..-32022. */
const MCP = [-32002, -32042, -32020, -32021, -32022]
/** The official SDKs' codes of the legacy range, kept by MCP 2026-07-28 for existing SDK usage. */
const GRANDFATHERED = [-32000, -32001]

type Answer = { status: number; headers: Headers; body: { id?: unknown; result?: Record<string, unknown>; error?: { code: number; message: string; data?: Record<string, unknown> } } }

const PRINCIPALS: Record<string, Principal> = {
  reader: { subject: 'rita', kind: 'user', scopes: ['mcp'] },
  writer: { subject: 'will', kind: 'user', scopes: ['mcp', 'files:write'] },
}

/** An API-key authenticator: the principal named by `x-api-key`. */
const apiKeys: Authenticator = {
  async authenticate(request) {
    const principal = PRINCIPALS[request.header('x-api-key') ?? '']
    return principal !== undefined ? { type: 'allow', principal } : { type: 'refuse', answer: { status: 401, headers: { 'content-type': 'text/plain' }, body: 'no key' } }
  },
}

/** A JSON-RPC answer over HTTP: a POST as a test writes it, the answer read as JSON. */
async function post(url: string, headers: Record<string, string>, message: Record<string, unknown>): Promise<Answer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', ...message }),
  })
  const text = await response.text()
  return { status: response.status, headers: response.headers, body: text === '' ? {} : JSON.parse(text) }
}

/** A modern-era (2026-07-28) request of `key`'s principal, with the request's own `_meta`. */
function modern(url: string, key: string, id: number, method: string, params: Record<string, unknown> = {}, capabilities: Record<string, unknown> = {}): Promise<Answer> {
  const name = [params.name, params.uri, params.taskId].find(value => typeof value === 'string') as string | undefined
  return post(url, { 'x-api-key': key, 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, ...(name === undefined ? {} : { 'mcp-name': name }) }, {
    id, method, params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': capabilities } },
  })
}

/** A legacy (2025-11-25) session of `key`'s principal: `call` sends a request in it. */
async function legacy(url: string, key: string): Promise<(id: number, method: string, params?: Record<string, unknown>) => Promise<Answer>> {
  const opened = await post(url, { 'x-api-key': key }, { id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })
  expect(opened.body.result?.protocolVersion).toBe('2025-11-25')
  const session = { 'x-api-key': key, 'mcp-session-id': opened.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-11-25' }
  expect((await post(url, session, { method: 'notifications/initialized' })).status).toBe(202)
  return (id, method, params = {}) => post(url, session, { id, method, params })
}

async function listening(server: McpServer, options: Parameters<typeof streamableHttp>[0] = {}): Promise<string> {
  const http = streamableHttp({ auth: apiKeys, jsonResponse: true, ...options })
  await server.listen(http)
  closers.push(() => server.close())
  return http.url!
}

describe('issue 20: rxmcp emits error codes from the JSON-RPC reserved range', () => {
  it('allocates its own codes outside -32768..-32000, in -31000..-31099, and takes from the reserved range only the codes JSON-RPC, MCP and the SDKs defined', () => {
    const allowed = new Set([...JSON_RPC, ...MCP, ...GRANDFATHERED])
    const own = Object.entries(ErrorCode).filter(([, code]) => !allowed.has(code))
    expect(own.map(([name]) => name).sort()).toEqual(['Forbidden', 'RateLimited'])
    for (const [, code] of own) {
      expect(code < -32768 || code > -32000).toBe(true)
      expect(code >= RXMCP_ERROR_CODE_RANGE.min && code <= RXMCP_ERROR_CODE_RANGE.max).toBe(true)
    }
    expect(RXMCP_ERROR_CODE_RANGE).toEqual({ min: -31099, max: -31000 })
    expect(new ForbiddenError().code).toBe(-31003)
    expect(new RateLimitedError().code).toBe(-31029)
    expect(new ForbiddenError().toJSON()).toEqual({ code: -31003, message: 'Forbidden' })
  })

  it('answers requireScopes with -31003 and rateLimit with -31029 over HTTP, in the modern era and in a legacy session', async () => {
    let now = 0
    const server = createServer({ name: 'codes', version: '1' })
    server.tool('write', {}, () => ({ content: [{ type: 'text', text: 'written' }] }))
    server.use(requireScopes({ 'tools/call:write': ['files:write'] }), rateLimit({ capacity: 2, refillPerSecond: 1, now: () => now }))
    const url = await listening(server)

    const forbidden = await modern(url, 'reader', 1, 'tools/call', { name: 'write', arguments: {} })
    expect(forbidden.body).toMatchObject({ id: 1, error: { code: -31003, data: { requiredScopes: ['files:write'] } } })
    expect((await modern(url, 'writer', 2, 'tools/call', { name: 'write', arguments: {} })).body.result?.content).toEqual([{ type: 'text', text: 'written' }])
    expect((await modern(url, 'writer', 3, 'tools/call', { name: 'write', arguments: {} })).body.result?.content).toEqual([{ type: 'text', text: 'written' }])
    expect((await modern(url, 'writer', 4, 'tools/call', { name: 'write', arguments: {} })).body).toMatchObject({ id: 4, error: { code: -31029, data: { retryAfterMs: 1000 } } })

    now += 10_000
    const call = await legacy(url, 'reader')
    expect((await call(5, 'tools/call', { name: 'write', arguments: {} })).body).toMatchObject({ id: 5, error: { code: -31003 } })
    expect((await call(6, 'tools/list')).body.result?.tools).toHaveLength(1)
    expect((await call(7, 'tools/list')).body.result?.tools).toHaveLength(1)
    expect((await call(8, 'tools/list')).body).toMatchObject({ id: 8, error: { code: -31029, data: { retryAfterMs: 1000 } } })
  })

  it('answers the HTTP listener\'s rate limit with 429 and -31029', async () => {
    let now = 0
    const server = createServer({ name: 'codes', version: '1' })
    const url = await listening(server, { rateLimit: { capacity: 1, refillPerSecond: 0.5, now: () => now } })
    expect((await modern(url, 'reader', 1, 'server/discover')).status).toBe(200)
    const refused = await modern(url, 'reader', 2, 'server/discover')
    expect(refused.status).toBe(429)
    expect(refused.body.error?.code).toBe(-31029)
  })

  it('rebuilds an older rxmcp\'s -32003 and -32029 as ForbiddenError and RateLimitedError with today\'s codes, and leaves another peer\'s codes as they came', () => {
    const scopes = McpError.from({ code: -32003, message: 'Forbidden: tools/call needs scope admin', data: { requiredScopes: ['admin'] } })
    expect(scopes).toBeInstanceOf(ForbiddenError)
    expect(scopes.toJSON()).toEqual({ code: -31003, message: 'Forbidden: tools/call needs scope admin', data: { requiredScopes: ['admin'] } })
    expect(McpError.from({ code: -32003, message: 'no', data: { error: 'invalid_token' } })).toBeInstanceOf(ForbiddenError)
    const budget = McpError.from({ code: -32029, message: 'Too many requests: try again in 1 s', data: { retryAfterMs: 1000 } })
    expect(budget).toBeInstanceOf(RateLimitedError)
    expect(budget.code).toBe(-31029)
    expect(McpError.from({ code: -32029, message: 'Too Many Requests: too many sessions of this client' })).toBeInstanceOf(RateLimitedError)
    expect(McpError.from({ code: -31003, message: 'x' })).toBeInstanceOf(ForbiddenError)
    expect(McpError.from({ code: -31029, message: 'x' })).toBeInstanceOf(RateLimitedError)
    // MCP 2026-07-28: no meaning is assumed for a legacy-range code (a draft revision's -32003 was
    // MissingRequiredClientCapability), nor for a code of the specification's range it does not define.
    const draft = McpError.from({ code: -32003, message: 'Missing required client capability', data: { requiredCapabilities: { sampling: {} } } })
    expect(draft.constructor).toBe(McpError)
    expect(draft.code).toBe(-32003)
    const future = McpError.from({ code: -32029, message: 'Something the specification defines later' })
    expect(future.constructor).toBe(McpError)
    expect(future.code).toBe(-32029)
  })
})

describe('issue 20: -32002 and -32042 are answered to modern-era requests', () => {
  /** A server whose handlers were written for MCP 2025-11-25: they throw the codes of that revision. */
  function olderHandlers(): { server: McpServer; runs: () => number; complete: () => void } {
    const server = createServer({ name: 'older', version: '1' })
    let isComplete = false
    let runs = 0
    server.resourceTemplate('note:///{id}', { name: 'note' }, (uri, { id }) => {
      if (id !== 'one') throw new ResourceNotFoundError(`Resource not found: ${uri}`, { uri })
      return { contents: [{ uri, text: 'one' }] }
    })
    server.tool('connect_account', {}, () => {
      runs++
      if (!isComplete) {
        throw new UrlElicitationRequiredError('Connect your account first', {
          elicitations: [{ mode: 'url', elicitationId: 'e1', url: 'https://accounts.example/connect', message: 'Connect your account' }],
        })
      }
      return { content: [{ type: 'text', text: 'connected' }] }
    })
    server.method('acme/refresh', () => { throw new UrlElicitationRequiredError('Connect first', { elicitations: [{ mode: 'url', elicitationId: 'e2', url: 'https://accounts.example/connect', message: 'm' }] }) })
    return { server, runs: () => runs, complete: () => { isComplete = true } }
  }

  it('answers a handler\'s ResourceNotFoundError with -32602 (data.uri) to a modern request, and with -32002 in a legacy session', async () => {
    const { server } = olderHandlers()
    const url = await listening(server)
    expect((await modern(url, 'reader', 1, 'resources/read', { uri: 'note:///one' })).body.result?.contents).toEqual([{ uri: 'note:///one', text: 'one' }])
    expect((await modern(url, 'reader', 2, 'resources/read', { uri: 'note:///two' })).body).toMatchObject({ id: 2, error: { code: -32602, message: 'Resource not found: note:///two', data: { uri: 'note:///two' } } })
    const call = await legacy(url, 'reader')
    expect((await call(3, 'resources/read', { uri: 'note:///two' })).body).toMatchObject({ id: 3, error: { code: -32002, data: { uri: 'note:///two' } } })
  })

  it('turns a handler\'s UrlElicitationRequiredError into an input_required round asking its URL elicitation, never -32042', async () => {
    const { server, runs, complete } = olderHandlers()
    const url = await listening(server)
    const capabilities = { elicitation: { url: {} } }
    const first = await modern(url, 'reader', 1, 'tools/call', { name: 'connect_account', arguments: {} }, capabilities)
    expect(first.status).toBe(200)
    expect(first.body.result).toMatchObject({
      resultType: 'input_required',
      inputRequests: { 'url-elicitation-1': { method: 'elicitation/create', params: { mode: 'url', elicitationId: 'e1', url: 'https://accounts.example/connect', message: 'Connect your account' } } },
      requestState: expect.any(String),
    })
    // The user accepted, but has not finished at the URL: the handler throws again, and is asked again.
    const state1 = first.body.result!.requestState
    const second = await modern(url, 'reader', 2, 'tools/call', { name: 'connect_account', arguments: {}, inputResponses: { 'url-elicitation-1': { action: 'accept' } }, requestState: state1 }, capabilities)
    expect(second.body.result).toMatchObject({ resultType: 'input_required', inputRequests: { 'url-elicitation-1': { method: 'elicitation/create' } } })
    complete()
    const third = await modern(url, 'reader', 3, 'tools/call', { name: 'connect_account', arguments: {}, inputResponses: { 'url-elicitation-1': { action: 'accept' } }, requestState: second.body.result!.requestState }, capabilities)
    expect(third.body.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'connected' }] })
    expect(runs()).toBe(3)
  })

  it('ends the request with -32603 when the URL elicitation is declined, -32021 when the client cannot answer one, and -32603 for a method that cannot ask', async () => {
    const { server } = olderHandlers()
    const url = await listening(server)
    const capabilities = { elicitation: { url: {} } }
    const first = await modern(url, 'reader', 1, 'tools/call', { name: 'connect_account', arguments: {} }, capabilities)
    const declined = await modern(url, 'reader', 2, 'tools/call', { name: 'connect_account', arguments: {}, inputResponses: { 'url-elicitation-1': { action: 'decline' } }, requestState: first.body.result!.requestState }, capabilities)
    expect(declined.body).toMatchObject({ id: 2, error: { code: -32603, message: expect.stringContaining('"decline"') } })
    const formOnly = await modern(url, 'reader', 3, 'tools/call', { name: 'connect_account', arguments: {} }, { elicitation: { form: {} } })
    expect(formOnly.body).toMatchObject({ id: 3, error: { code: -32021, data: { requiredCapabilities: { elicitation: { url: {} } } } } })
    const other = await modern(url, 'reader', 4, 'acme/refresh', {}, capabilities)
    expect(other.body).toMatchObject({ id: 4, error: { code: -32603 } })
    for (const answer of [first, declined, formOnly, other]) expect(answer.body.error?.code).not.toBe(-32042)
  })

  it('carries a task\'s ResourceNotFoundError as -32602 in tasks/get of the modern era', async () => {
    const server = createServer({ name: 'older', version: '1' })
    server.tool('read_note', { execution: { taskSupport: 'optional' } }, () => { throw new ResourceNotFoundError('Resource not found: note:///gone', { uri: 'note:///gone' }) })
    const url = await listening(server)
    const changes = taskChanges(server)
    const tasks = { extensions: { 'io.modelcontextprotocol/tasks': {} } }
    const created = await modern(url, 'reader', 1, 'tools/call', { name: 'read_note', arguments: {} }, tasks)
    expect(created.body.result).toMatchObject({ resultType: 'task', taskId: expect.any(String) })
    const taskId = created.body.result!.taskId as string
    // The task's change to failed is published on the server's bus: then tasks/get says so.
    await changes.reached(taskId, 'failed')
    changes.stop()
    expect((await modern(url, 'reader', 2, 'tasks/get', { taskId }, tasks)).body.result)
      .toMatchObject({ status: 'failed', error: { code: -32602, message: 'Resource not found: note:///gone', data: { uri: 'note:///gone' } } })
  })

  it('keeps -32042 for a legacy session, and an rxmcp client in the modern era completes the call through its URL elicitation handler', async () => {
    const { server, complete } = olderHandlers()
    const url = await listening(server)
    const call = await legacy(url, 'reader')
    expect((await call(1, 'tools/call', { name: 'connect_account', arguments: {} })).body).toMatchObject({ id: 1, error: { code: -32042, data: { elicitations: [{ elicitationId: 'e1' }] } } })
    const asked: string[] = []
    const client = await connect(streamableHttpClient(url, { headers: { 'x-api-key': 'reader' } }), { name: 'rx', version: '1' }, {
      era: 'modern',
      elicitation: { url: async params => { asked.push((params as { url: string }).url); complete(); return { action: 'accept' } } },
    })
    closers.push(() => client.close())
    expect(await client.callTool('connect_account', {})).toMatchObject({ content: [{ type: 'text', text: 'connected' }] })
    expect(asked).toEqual(['https://accounts.example/connect'])
  })
})
