import { afterEach, describe, expect, it } from 'vitest'
import { firstValueFrom, of, delay } from 'rxjs'
import { createServer, type McpServer } from '../../actors/server.ts'
import { connectInMemory } from '../../testing.ts'
import { resultOf } from '../../lib/operators/progress.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { ErrorCode, InvalidParamsError, McpError } from '../../lib/jsonrpc/errors.ts'
import { MetaKey } from '../../lib/schema/modern.ts'
import { rawClient } from '../helpers/raw-client.ts'

let cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
  cleanups = []
})

function makeServer(): McpServer {
  const server = createServer({ name: 'methods', version: '1.0.0' })
  cleanups.push(() => server.close())
  return server
}

const raw = (server: McpServer) => rawClient(server, close => cleanups.push(close))

const modernMeta = { [MetaKey.protocolVersion]: '2026-07-28', [MetaKey.clientCapabilities]: {}, [MetaKey.clientInfo]: { name: 'raw', version: '1' } }

describe('server.method: methods beyond the built-in ones', () => {
  it('answers a legacy session, with the params as sent and the session context', async () => {
    const server = makeServer()
    server.method('acme/echo', (params, ctx) => ({ echoed: params ?? null, era: ctx.era }))
    await using pair = await connectInMemory(server)
    const result = await firstValueFrom(pair.client.request('acme/echo', { a: 1 }, { progress: false }).pipe(resultOf()))
    expect(result).toEqual({ echoed: { a: 1 }, era: 'legacy' })
  })

  it('answers a modern request, finished like a built-in result', async () => {
    const server = makeServer()
    server.method('acme/echo', params => of({ a: params?.a as number }).pipe(delay(1)))
    const { call } = await raw(server)
    const result = await call('acme/echo', { a: 2, _meta: modernMeta })
    expect(result.a).toBe(2)
    expect(result.resultType).toBe('complete')
  })

  it('reaches sessions opened before it was registered, and -32601 once removed', async () => {
    const server = makeServer()
    const { call, failure } = await raw(server)
    await call('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } })
    expect((await failure('acme/late')).code).toBe(ErrorCode.MethodNotFound)
    const registration = server.method('acme/late', () => ({ ok: true }))
    expect(await call('acme/late')).toEqual({ ok: true })
    registration.remove()
    expect((await failure('acme/late')).code).toBe(ErrorCode.MethodNotFound)
  })

  it('gives modern results the cache hints it was registered with, and none without', async () => {
    const server = makeServer()
    server.method('acme/cached', () => ({ value: 1 }), { cache: { ttlMs: 5000, cacheScope: 'public' } })
    server.method('acme/plain', () => ({ value: 2 }))
    const { call } = await raw(server)
    expect(await call('acme/cached', { _meta: modernMeta })).toMatchObject({ value: 1, ttlMs: 5000, cacheScope: 'public' })
    expect(await call('acme/plain', { _meta: modernMeta })).not.toHaveProperty('ttlMs')
  })

  it("answers with the handler's McpError", async () => {
    const server = makeServer()
    server.method('acme/strict', () => { throw new InvalidParamsError('Invalid params: no') })
    await using pair = await connectInMemory(server)
    const error = await firstValueFrom(pair.client.request('acme/strict').pipe(resultOf())).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(McpError)
    expect((error as McpError).code).toBe(ErrorCode.InvalidParams)
  })

  it('refuses a method the server already answers, built-in or registered', () => {
    const server = makeServer()
    for (const method of ['tools/call', 'initialize', 'server/discover', 'ping']) expect(() => server.method(method, () => ({}))).toThrow(TypeError)
    server.method('acme/one', () => ({}))
    expect(() => server.method('acme/one', () => ({}))).toThrow(/already answered/)
  })
})

describe('server.extension: capabilities.extensions', () => {
  it('declares an extension with its settings in initialize and server/discover, and withdraws it', async () => {
    const server = makeServer()
    const registration = server.extension('acme/widgets', { level: 2 })
    server.extension('acme/empty')
    await using pair = await connectInMemory(server)
    expect(pair.client.serverCapabilities?.extensions).toEqual({ 'acme/widgets': { level: 2 }, 'acme/empty': {} })
    const { call } = await raw(server)
    const discovered = await call('server/discover', { _meta: modernMeta })
    expect((discovered.capabilities as JsonObject).extensions).toEqual({ 'acme/widgets': { level: 2 }, 'acme/empty': {} })
    registration.remove()
    const after = await call('server/discover', { _meta: modernMeta })
    expect((after.capabilities as JsonObject).extensions).toEqual({ 'acme/empty': {} })
  })

  it('refuses an identifier without a prefix', () => {
    expect(() => makeServer().extension('widgets')).toThrow(TypeError)
  })
})
