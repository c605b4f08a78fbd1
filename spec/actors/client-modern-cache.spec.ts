import { describe, expect, it } from 'vitest'
import { VirtualTimeScheduler } from 'rxjs'
import { connect, type ClientOptions } from '../../actors/client.ts'
import { ResultCache, cacheKey } from '../../actors/client/cache.ts'
import type { Connection } from '../../lib/connection.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { DISCOVER_RESULT, fakeServer, settle, type FakeHandler } from './client-modern-helpers.ts'

const INFO = { name: 'cache-test', version: '1.0.0' }

/** A client with the cache on, its clock a virtual scheduler at 0 (tests move it with `at`). */
async function cachedClient(handlers: Record<string, FakeHandler>, options: ClientOptions = {}) {
  const scheduler = new VirtualTimeScheduler()
  const fake = fakeServer(handlers)
  const client = await connect(fake.transport, INFO, { cache: true, scheduler, ...options })
  const at = (ms: number) => { scheduler.frame = ms }
  return { ...fake, client, at }
}

const list = (ttlMs: unknown, cacheScope: unknown = 'public') => () => ({ resultType: 'complete', tools: [], ttlMs, cacheScope })

describe('the client cache (virtual time)', () => {
  it('serves tools/list from the cache while now < receivedAt + ttlMs, and fetches again once stale', async () => {
    const { client, of, at } = await cachedClient({ 'tools/list': list(1_000) })
    at(10)
    await client.listTools()
    at(1_009)
    await client.listTools()
    expect(of('tools/list')).toHaveLength(1)
    at(1_010)
    await client.listTools()
    expect(of('tools/list')).toHaveLength(2)
    await client.close()
  })

  it.each([
    ['ttlMs 0', list(0)],
    ['a negative ttlMs', list(-5)],
    ['no ttlMs', () => ({ tools: [] })],
    ['no cacheScope', () => ({ tools: [], ttlMs: 1_000 })],
    ['an unknown cacheScope', list(1_000, 'shared')],
  ])('never serves a result with %s from the cache', async (_name, handler) => {
    const { client, of } = await cachedClient({ 'tools/list': handler })
    await client.listTools()
    await client.listTools()
    expect(of('tools/list')).toHaveLength(2)
    await client.close()
  })

  it('is off by default', async () => {
    const fake = fakeServer({ 'tools/list': list(60_000) })
    await using client = await connect(fake.transport, INFO)
    await client.listTools()
    await client.listTools()
    expect(fake.of('tools/list')).toHaveLength(2)
  })

  it('keys by method and params: each page and each URI is its own entry', async () => {
    const { client, of } = await cachedClient({
      'tools/list': params => ({ tools: [], nextCursor: params?.cursor === undefined ? 'p2' : undefined, ttlMs: 1_000, cacheScope: 'private' }),
      'resources/read': params => ({ contents: [{ uri: params!.uri, text: 'x' }], ttlMs: 1_000, cacheScope: 'private' }),
    })
    await client.listTools()
    await client.listTools('p2')
    await client.listTools('p2')
    await client.readResource('a://1')
    await client.readResource('a://2')
    await client.readResource('a://1')
    expect(of('tools/list').map(request => request.params?.cursor)).toEqual([undefined, 'p2'])
    expect(of('resources/read').map(request => request.params!.uri)).toEqual(['a://1', 'a://2'])
    await client.close()
  })

  it('drops tools/list on notifications/tools/list_changed and one URI\'s reads on notifications/resources/updated', async () => {
    /** The fake server's connection, to notify on; set once connected. */
    let server: Connection | undefined
    const fake = await cachedClient({
      'tools/list': list(60_000),
      'prompts/list': () => ({ prompts: [], ttlMs: 60_000, cacheScope: 'public' }),
      'resources/read': params => ({ contents: [], ttlMs: 60_000, cacheScope: 'public', uri: params!.uri }),
    })
    server = fake.server
    const { client, of } = fake
    await client.listTools()
    await client.listPrompts()
    await client.readResource('a://1')
    await client.readResource('a://2')
    await server.notify('notifications/tools/list_changed')
    await server.notify('notifications/resources/updated', { uri: 'a://1' })
    await settle()
    await client.listTools()
    await client.listPrompts()
    await client.readResource('a://1')
    await client.readResource('a://2')
    expect(of('tools/list')).toHaveLength(2)
    expect(of('prompts/list')).toHaveLength(1)
    expect(of('resources/read').map(request => request.params!.uri)).toEqual(['a://1', 'a://2', 'a://1'])
    await client.close()
  })

  it('never caches the result of a multi-round-trip retry, nor an input_required result', async () => {
    const { client, of } = await cachedClient({
      'resources/read': params => params!.requestState === undefined
        ? { resultType: 'input_required', requestState: 'r', ttlMs: 60_000, cacheScope: 'public' }
        : { resultType: 'complete', contents: [], ttlMs: 60_000, cacheScope: 'public' },
    })
    await client.readResource('a://1')
    await client.readResource('a://1')
    expect(of('resources/read')).toHaveLength(4)
    await client.close()
  })

  it('serves server/discover from the cache for discover(), while ping always asks the server', async () => {
    const { client, of } = await cachedClient({ 'server/discover': () => ({ ...DISCOVER_RESULT, ttlMs: 5_000 }) })
    expect((await client.discover()).serverInfo).toEqual({ name: 'fake-modern', version: '2.0.0' })
    expect(of('server/discover')).toHaveLength(1)
    await client.ping()
    expect(of('server/discover')).toHaveLength(2)
    await client.close()
  })

  it('keeps at most maxEntries entries, the oldest going first', async () => {
    const { client, of } = await cachedClient({ 'resources/read': () => ({ contents: [], ttlMs: 60_000, cacheScope: 'public' }) }, { cache: { maxEntries: 2 } })
    for (const uri of ['a://1', 'a://2', 'a://3', 'a://3', 'a://2', 'a://1']) await client.readResource(uri)
    expect(of('resources/read').map(request => request.params!.uri)).toEqual(['a://1', 'a://2', 'a://3', 'a://1'])
    await client.close()
  })
})

describe('ResultCache', () => {
  it.each([
    ['tools/list', undefined, 'tools/list {}'],
    ['tools/list', { cursor: 'x', _meta: { progressToken: 1 } }, 'tools/list {"cursor":"x"}'],
    ['resources/read', { uri: 'a://1', b: { z: 1, a: 2 } }, 'resources/read {"b":{"a":2,"z":1},"uri":"a://1"}'],
    ['tools/call', { name: 'x' }, undefined],
    ['resources/read', { uri: 'a://1', requestState: 's' }, undefined],
    ['prompts/list', { inputResponses: {} }, undefined],
  ] as [string, JsonObject | undefined, string | undefined][])('keys %s %j as %s', (method, params, key) => {
    expect(cacheKey(method, params)).toBe(key)
  })

  it('is stale exactly at receivedAt + ttlMs on its clock', () => {
    let now = 100
    const cache = new ResultCache(() => now)
    cache.set('prompts/list', undefined, { prompts: [], ttlMs: 50, cacheScope: 'private' })
    now = 149
    expect(cache.get('prompts/list', undefined)).toEqual({ prompts: [], ttlMs: 50, cacheScope: 'private' })
    now = 150
    expect(cache.get('prompts/list', undefined)).toBeUndefined()
    expect(cache.size).toBe(0)
  })

  it('drops resources/list and resources/templates/list on notifications/resources/list_changed, and nothing on other notifications', () => {
    const cache = new ResultCache(() => 0)
    for (const method of ['resources/list', 'resources/templates/list', 'tools/list']) cache.set(method, undefined, { ttlMs: 10, cacheScope: 'public' })
    cache.invalidate('notifications/message', { level: 'info' })
    expect(cache.size).toBe(3)
    cache.invalidate('notifications/resources/list_changed')
    expect(cache.get('tools/list', undefined)).toBeDefined()
    expect(cache.get('resources/list', undefined)).toBeUndefined()
    expect(cache.get('resources/templates/list', undefined)).toBeUndefined()
  })
})
