import { afterEach, describe, expect } from 'vitest'
import { verifies } from '../helpers/verifies.ts'
import { createServer, type McpServer, type ServerOptions } from '../../actors/server.ts'
import { permissions } from '../../actors/server/middleware.ts'
import { memoryRequestStateStore } from '../../actors/server/request-state.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import type { Authenticator, Principal } from '../../lib/auth.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { CancelledError } from '../../lib/jsonrpc/errors.ts'
import type { CallToolResult } from '../../lib/schema/types.ts'

/**
 * MCP 2026-07-28 list and round invariants of the rxmcp server, over real Streamable HTTP: a
 * listing is the same for a caller whatever connection (or session) asks and whatever it asked
 * before (it may differ by the caller's authorization); every page of one list carries the same
 * cacheScope; and a request answered input_required leaves nothing waiting for a retry.
 */

let cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => { for (const cleanup of cleanups.reverse()) await cleanup(); cleanups = [] })

const PRINCIPALS: Record<string, Principal> = {
  ada: { subject: 'ada', kind: 'user', scopes: [], claims: { roles: ['user'] } },
  root: { subject: 'root', kind: 'user', scopes: [], claims: { roles: ['admin'] } },
}

/** An API-key authenticator: the principal named by `x-api-key`. */
const apiKeys: Authenticator = {
  async authenticate(request) {
    const principal = PRINCIPALS[request.header('x-api-key') ?? '']
    return principal !== undefined ? { type: 'allow', principal } : { type: 'refuse', answer: { status: 401, headers: { 'content-type': 'text/plain' }, body: 'no key' } }
  },
}

type Answer = { headers: Headers; body: { result?: JsonObject; error?: { code: number; message: string } } }

async function post(url: string, headers: Record<string, string>, message: JsonObject): Promise<Answer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', ...message }),
  })
  const text = await response.text()
  return { headers: response.headers, body: text === '' ? {} : JSON.parse(text) }
}

/** A modern-era (2026-07-28) request of `key`'s principal, with its own `_meta`. */
async function modern(url: string, key: string, id: number, method: string, params: JsonObject = {}, capabilities: JsonObject = {}): Promise<Answer['body']> {
  const name = [params.name, params.uri].find(value => typeof value === 'string') as string | undefined
  return (await post(url, { 'x-api-key': key, 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, ...(name === undefined ? {} : { 'mcp-name': name }) }, {
    id, method, params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': capabilities } },
  })).body
}

/** A legacy (2025-11-25) session of `key`'s principal: `call` sends a request in it. */
async function legacy(url: string, key: string): Promise<(id: number, method: string, params?: JsonObject) => Promise<Answer['body']>> {
  const opened = await post(url, { 'x-api-key': key }, { id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })
  const session = { 'x-api-key': key, 'mcp-session-id': opened.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-11-25' }
  await post(url, session, { method: 'notifications/initialized' })
  return async (id, method, params = {}) => (await post(url, session, { id, method, params })).body
}

async function listening(server: McpServer): Promise<string> {
  const http = streamableHttp({ auth: apiKeys, jsonResponse: true })
  await server.listen(http)
  cleanups.push(() => server.close())
  return http.url!
}

const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] })

/** Five tools, prompts, resources and templates, and a permission policy: `user` may use some of each, `admin` all. */
function catalogue(options: ServerOptions = {}): McpServer {
  const server = createServer({ name: 'catalogue', version: '1' }, options)
  for (const n of [1, 2, 3, 4, 5]) {
    server.tool(`tool${n}`, {}, () => text(`tool ${n}`))
    server.prompt(`prompt${n}`, {}, () => ({ messages: [{ role: 'user', content: { type: 'text', text: `prompt ${n}` } }] }))
    server.resource(`file:///r${n}.txt`, { name: `r${n}` }, () => `resource ${n}`)
    server.resourceTemplate(`note${n}:///{id}`, { name: `note${n}` }, uri => ({ contents: [{ uri, text: 'note' }] }))
  }
  return server
}

const POLICY = {
  roles: {
    admin: ['*'],
    user: ['tools:list', 'prompts:list', 'resources:list', 'resources:subscribe', 'tools:call:tool1', 'tools:call:tool2', 'prompts:get:prompt1', 'resources:read:file:///r1.txt'],
  },
}

/** The names (of resources, the URIs) a listing answered. */
function namesOf(body: Answer['body'], key: string): string[] {
  expect(body.error, key).toBeUndefined()
  return ((body.result?.[key] ?? []) as JsonObject[]).map(item => String(key === 'resources' ? item.uri : item.name))
}

const LISTS = { tools: 'tools/list', prompts: 'prompts/list', resources: 'resources/list' } as const

/**
 * The listing `kind` is one set for a caller: the same on two legacy sessions and on modern
 * requests, before and after the caller's other requests (calls, reads, gets, subscriptions); a
 * caller of other roles may see another set (a per-authorization view), the same on each connection too.
 */
async function sameForEveryConnection(kind: keyof typeof LISTS): Promise<void> {
  const server = catalogue()
  server.use(permissions(POLICY))
  const url = await listening(server)
  const method = LISTS[kind]
  const sessionA = await legacy(url, 'ada')
  const sessionB = await legacy(url, 'ada')
  const seen = [
    namesOf(await sessionA(1, method), kind),
    namesOf(await sessionB(1, method), kind),
    namesOf(await modern(url, 'ada', 1, method), kind),
  ]
  // Other requests, in both eras: none of them changes what the caller is listed.
  await sessionA(2, 'tools/call', { name: 'tool1', arguments: {} })
  await sessionA(3, 'prompts/get', { name: 'prompt1' })
  await sessionA(4, 'resources/read', { uri: 'file:///r1.txt' })
  await sessionA(5, 'resources/subscribe', { uri: 'file:///r1.txt' })
  await sessionA(6, 'tools/call', { name: 'tool5', arguments: {} })
  await modern(url, 'ada', 2, 'tools/call', { name: 'tool2', arguments: {} })
  await modern(url, 'ada', 3, 'resources/read', { uri: 'file:///r5.txt' })
  seen.push(
    namesOf(await sessionA(7, method), kind),
    namesOf(await sessionB(7, method), kind),
    namesOf(await modern(url, 'ada', 4, method), kind),
    namesOf(await (await legacy(url, 'ada'))(1, method), kind),
  )
  const expected = { tools: ['tool1', 'tool2'], prompts: ['prompt1'], resources: ['file:///r1.txt'] }[kind]
  for (const names of seen) expect(names).toEqual(expected)
  // Another authorization, another view: the same on each of its connections.
  const all = namesOf(await modern(url, 'root', 5, method), kind)
  expect(all).toHaveLength(5)
  expect(namesOf(await (await legacy(url, 'root'))(1, method), kind)).toEqual(all)
}

describe('MCP 2026-07-28 listings do not vary per connection or by other requests', () => {
  verifies('tools:list@2026-07-28', 'tools/list answers a caller one set on every connection and session, before and after its other requests', () => sameForEveryConnection('tools'))
  verifies('prompts:list@2026-07-28', 'prompts/list answers a caller one set on every connection and session, before and after its other requests', () => sameForEveryConnection('prompts'))
  verifies('resources:list@2026-07-28', 'resources/list answers a caller one set on every connection and session, before and after its other requests', () => sameForEveryConnection('resources'))
})

describe('MCP 2026-07-28 caching and pagination', () => {
  verifies('caching:page-scope@2026-07-28', 'every page of a list carries the cacheScope of its first page (configured public, configured private, and the private default)', async () => {
    const server = catalogue({
      pageSize: 2,
      cacheHints: { 'tools/list': { ttlMs: 60_000, cacheScope: 'public' }, 'prompts/list': { ttlMs: 5_000, cacheScope: 'private' }, 'resources/templates/list': { ttlMs: 1_000, cacheScope: 'public' } },
    })
    server.use(permissions(POLICY))
    const url = await listening(server)
    const cases = [
      ['root', 'tools/list', 'tools', 'public', 60_000],
      ['root', 'prompts/list', 'prompts', 'private', 5_000],
      ['root', 'resources/list', 'resources', 'private', 0],
      ['root', 'resources/templates/list', 'resourceTemplates', 'public', 1_000],
      // A filtered view pages too (its pages may be short): the scope stays that of the list.
      ['ada', 'tools/list', 'tools', 'public', 60_000],
    ] as const
    for (const [key, method, items, scope, ttlMs] of cases) {
      const pages: Array<{ cacheScope: unknown; ttlMs: unknown; count: number }> = []
      let cursor: string | undefined
      let id = 0
      do {
        const body = await modern(url, key, ++id, method, cursor === undefined ? {} : { cursor })
        expect(body.error, method).toBeUndefined()
        pages.push({ cacheScope: body.result!.cacheScope, ttlMs: body.result!.ttlMs, count: (body.result![items] as unknown[]).length })
        cursor = body.result!.nextCursor as string | undefined
      } while (cursor !== undefined)
      expect(pages, `${key} ${method}`).toHaveLength(3)
      for (const page of pages) expect(page, `${key} ${method}`).toMatchObject({ cacheScope: scope, ttlMs })
    }
  })
})

describe('MCP 2026-07-28 MRTR: a server assumes no retry', () => {
  verifies('mrtr:no-assumed-retry@2026-07-28', 'a run answered input_required lets go of what it holds (its ctx.signal aborts) and leaves nothing in the used-state store; a retry, if one comes, runs the handler anew', async () => {
    const claims: string[] = []
    const used = memoryRequestStateStore()
    const server = createServer({ name: 'confirm', version: '1' }, { requestStateStore: { claim: (id, expiresAt) => { claims.push(id); return used.claim(id, expiresAt) } } })
    let runs = 0
    const released: unknown[] = []
    server.tool('confirm', {}, async (_args, ctx) => {
      runs++
      // What a handler holds while it waits for its answer: a timer, let go when its signal aborts.
      const held = setInterval(() => {}, 60_000)
      ctx.signal.addEventListener('abort', () => { clearInterval(held); released.push(ctx.signal.reason) })
      const answer = await ctx.elicit({ message: 'Go on?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } })
      clearInterval(held)
      return text(`answered ${answer.action}`)
    })
    const url = await listening(server)
    const capabilities = { elicitation: { form: {} } }
    const first = await modern(url, 'ada', 1, 'tools/call', { name: 'confirm', arguments: {} }, capabilities)
    expect(first.result).toMatchObject({ resultType: 'input_required', inputRequests: { 'elicitation-1': { method: 'elicitation/create' } }, requestState: expect.any(String) })
    // The answer went out: the run is over, and what it held is released, not kept for a retry.
    expect(released).toHaveLength(1)
    expect(released[0]).toBeInstanceOf(CancelledError)
    expect(claims).toEqual([])
    // A retry may still come: it runs the handler from the start, and spends its state once.
    const retry = await modern(url, 'ada', 2, 'tools/call', { name: 'confirm', arguments: {}, requestState: first.result!.requestState, inputResponses: { 'elicitation-1': { action: 'accept', content: { ok: true } } } }, capabilities)
    expect(retry.result).toMatchObject({ resultType: 'complete', ...text('answered accept') })
    expect(runs).toBe(2)
    expect(claims).toHaveLength(1)
    // The run that completed was not aborted.
    expect(released).toHaveLength(1)
  })
})
