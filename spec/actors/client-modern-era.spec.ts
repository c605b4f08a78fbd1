import { describe, expect, it } from 'vitest'
import { VirtualTimeScheduler, lastValueFrom } from 'rxjs'
import { fileURLToPath } from 'node:url'
import { connect } from '../../actors/client.ts'
import { stdioClient } from '../../transports/stdio.ts'
import { NoCommonVersionError } from '../../actors/client/errors.ts'
import { HeaderMismatchError, MethodNotFoundError, UnsupportedProtocolVersionError } from '../../lib/jsonrpc/errors.ts'
import { DISCOVER_RESULT, fakeServer, metaOf, settle } from './client-modern-helpers.ts'

const INFO = { name: 'era-test', version: '1.0.0' }

/** A legacy server's initialize answer. */
const initialize = (params: Record<string, unknown> | undefined) => ({
  protocolVersion: params!.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'legacy', version: '1' },
})

describe('connect (era selection)', () => {
  it('probes with server/discover and goes modern when the server offers a modern revision', async () => {
    const { transport, received } = fakeServer()
    await using client = await connect(transport, INFO)
    expect(received.map(request => request.method)).toEqual(['server/discover'])
    expect(metaOf(received[0])).toEqual({
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
      'io.modelcontextprotocol/clientInfo': INFO,
    })
    expect(client.era).toBe('modern')
    expect(client.state).toMatchObject({ era: 'modern', status: 'operating', protocolVersion: '2026-07-28' })
    expect(client.serverInfo).toEqual({ name: 'fake-modern', version: '2.0.0' })
    expect(client.serverCapabilities).toEqual(DISCOVER_RESULT.capabilities)
    expect(client.instructions).toBe('Be kind')
  })

  it('reads a serverInfo sent at the top level of the discover result, and an empty one when there is none', async () => {
    const top = fakeServer({ 'server/discover': () => ({ supportedVersions: ['2026-07-28'], capabilities: {}, serverInfo: { name: 'top', version: '3' } }) })
    await using first = await connect(top.transport, INFO)
    expect(first.serverInfo).toEqual({ name: 'top', version: '3' })
    const none = fakeServer({ 'server/discover': () => ({ supportedVersions: ['2026-07-28'], capabilities: {} }) })
    await using second = await connect(none.transport, INFO)
    expect(second.serverInfo).toEqual({ name: '', version: '' })
  })

  it.each([
    ['answers -32601', () => { throw new MethodNotFoundError('Method not found: server/discover') }],
    ['answers an empty result', () => ({})],
    ['answers a result without supportedVersions', () => ({ resultType: 'complete', capabilities: {} })],
    ['answers a result with an unknown resultType', () => ({ resultType: 'later', supportedVersions: ['2026-07-28'] })],
  ])('falls back to initialize when the server %s', async (_name, discover) => {
    const { transport, received } = fakeServer({ 'server/discover': discover, initialize })
    await using client = await connect(transport, INFO)
    expect(received.map(request => request.method)).toEqual(['server/discover', 'initialize'])
    expect(client.era).toBe('legacy')
    expect(client.state).toMatchObject({ era: 'legacy', status: 'operating', protocolVersion: '2025-11-25' })
    expect(client.serverInfo).toEqual({ name: 'legacy', version: '1' })
  })

  it('falls back to initialize when the probe gets no answer within probeTimeout (virtual time), cancelling it', async () => {
    const scheduler = new VirtualTimeScheduler()
    const { transport, received, cancelled } = fakeServer({ 'server/discover': () => new Promise(() => {}), initialize })
    const connecting = connect(transport, INFO, { scheduler, probeTimeout: 2_000 })
    await settle()
    expect(received.map(request => request.method)).toEqual(['server/discover'])
    scheduler.maxFrames = 1_999
    scheduler.flush()
    await settle()
    expect(received).toHaveLength(1)
    scheduler.maxFrames = 2_000
    scheduler.flush()
    await using client = await connecting
    expect(client.era).toBe('legacy')
    expect(received.map(request => request.method)).toEqual(['server/discover', 'initialize'])
    expect(cancelled).toEqual([{ requestId: received[0]!.id, reason: expect.any(String) }])
  })

  it('retries discover once with a version from -32022 data.supported', async () => {
    const { transport, received } = fakeServer({
      'server/discover': params => {
        const version = (params!._meta as Record<string, unknown>)['io.modelcontextprotocol/protocolVersion']
        if (version !== '2026-07-28') throw new UnsupportedProtocolVersionError('Unsupported protocol version', { supported: ['2026-07-28'], requested: version })
        return DISCOVER_RESULT
      },
    })
    await using client = await connect(transport, INFO, { modernVersions: ['2099-01-01', '2026-07-28'] })
    expect(received.map(request => metaOf(request)['io.modelcontextprotocol/protocolVersion'])).toEqual(['2099-01-01', '2026-07-28'])
    expect(client.protocolVersion).toBe('2026-07-28')
  })

  it('fails with NoCommonVersionError naming both lists when -32022 offers nothing in common', async () => {
    const { transport, received } = fakeServer({
      'server/discover': () => { throw new UnsupportedProtocolVersionError('Unsupported protocol version', { supported: ['2030-01-01'], requested: '2026-07-28' }) },
      initialize,
    })
    const error = await connect(transport, INFO).catch(caught => caught)
    expect(error).toBeInstanceOf(NoCommonVersionError)
    expect(error.code).toBe('RXMCP_ERR_UNSUPPORTED_VERSION')
    expect(error.serverVersions).toEqual(['2030-01-01'])
    expect(error.clientVersions).toContain('2026-07-28')
    expect(error.message).toMatch(/^No protocol version in common: the server supports 2030-01-01; this client supports 2026-07-28, 2025-11-25/)
    // A modern error: never a fallback to initialize.
    expect(received.map(request => request.method)).toEqual(['server/discover'])
  })

  it('uses initialize when -32022 lists only legacy revisions it accepts', async () => {
    const { transport, received } = fakeServer({
      'server/discover': () => { throw new UnsupportedProtocolVersionError('Unsupported protocol version', { supported: ['2025-06-18'], requested: '2026-07-28' }) },
      initialize,
    })
    await using client = await connect(transport, INFO)
    expect(received.map(request => request.method)).toEqual(['server/discover', 'initialize'])
    expect(client.era).toBe('legacy')
  })

  it('fails on -32020 to the probe instead of falling back (a modern server refused the request)', async () => {
    const { transport, received } = fakeServer({
      'server/discover': () => { throw new HeaderMismatchError('Header mismatch: MCP-Protocol-Version') },
      initialize,
    })
    const error = await connect(transport, INFO).catch(caught => caught)
    expect(error).toBeInstanceOf(HeaderMismatchError)
    expect(error.code).toBe(-32020)
    expect(received.map(request => request.method)).toEqual(['server/discover'])
  })

  it('fails with NoCommonVersionError when discover lists no modern revision it speaks (era modern)', async () => {
    const { transport } = fakeServer({ 'server/discover': () => ({ ...DISCOVER_RESULT, supportedVersions: ['2031-01-01'] }) })
    const error = await connect(transport, INFO, { era: 'modern' }).catch(caught => caught)
    expect(error).toBeInstanceOf(NoCommonVersionError)
    expect(error.serverVersions).toEqual(['2031-01-01'])
  })

  it('never falls back with era modern: a legacy server fails the connect', async () => {
    const { transport, received } = fakeServer({ 'server/discover': () => { throw new MethodNotFoundError('Method not found') }, initialize })
    const error = await connect(transport, INFO, { era: 'modern' }).catch(caught => caught)
    expect(error).toBeInstanceOf(MethodNotFoundError)
    expect(received.map(request => request.method)).toEqual(['server/discover'])
  })

  it('sends no probe with era legacy', async () => {
    const { transport, received } = fakeServer({ initialize })
    await using client = await connect(transport, INFO, { era: 'legacy' })
    expect(received.map(request => request.method)).toEqual(['initialize'])
    expect(client.era).toBe('legacy')
  })

  it('refuses legacy-only methods in the modern era and modern-only ones in the legacy era, locally', async () => {
    const modern = fakeServer()
    await using client = await connect(modern.transport, INFO)
    await expect(lastValueFrom(client.request('resources/subscribe', { uri: 'a://b' }))).rejects.toThrow('resources/subscribe does not exist in MCP 2026-07-28')
    const legacy = fakeServer({ initialize })
    await using old = await connect(legacy.transport, INFO, { era: 'legacy' })
    await expect(lastValueFrom(old.request('subscriptions/listen', { notifications: {} }))).rejects.toThrow('subscriptions/listen exists only in the modern era')
    expect(modern.of('resources/subscribe')).toEqual([])
  })
})

describe('connect (era selection over real stdio children)', () => {
  const child = (fixture: string) => stdioClient({
    command: process.execPath, args: ['--import', 'tsx', fileURLToPath(new URL(fixture, import.meta.url))], stderr: 'ignore',
  })

  it('falls back to initialize with a legacy server (official SDK v1) that answers the probe with an error', async () => {
    await using client = await connect(child('../interop/fixtures/official-server.ts'), INFO)
    expect(client.era).toBe('legacy')
    expect(client.protocolVersion).toBe('2025-11-25')
    expect((await client.callTool('echo', { text: 'v1' })).content).toEqual([{ type: 'text', text: 'v1' }])
  }, 30_000)

  it('goes modern with an rxmcp server child', async () => {
    await using client = await connect(child('../fixtures/tiny-server.ts'), INFO)
    expect(client.era).toBe('modern')
    expect((await client.callTool('echo', { text: 'tiny' })).content).toEqual([{ type: 'text', text: 'tiny' }])
  }, 30_000)
})

describe('connect (era selection on reconnect)', () => {
  it('chooses the era again for each new session: modern first, legacy after the server was replaced', async () => {
    const scheduler = new VirtualTimeScheduler()
    const servers = [fakeServer({ 'tools/call': () => ({ content: [{ type: 'text', text: 'modern' }] }) }), fakeServer({
      'server/discover': () => { throw new MethodNotFoundError('Method not found') },
      initialize,
      'tools/call': () => ({ content: [{ type: 'text', text: 'legacy' }] }),
    })]
    let next = 0
    await using client = await connect(() => servers[next++]!.transport, INFO, { reconnect: { initial: 100 }, scheduler })
    expect(client.era).toBe('modern')
    expect((await client.callTool('x')).content).toEqual([{ type: 'text', text: 'modern' }])
    await servers[0]!.server.close()
    await settle()
    expect(client.state).toMatchObject({ status: 'awaiting-initialize', era: undefined })
    scheduler.maxFrames = 100
    scheduler.flush()
    const result = await client.callTool('x')
    expect(result.content).toEqual([{ type: 'text', text: 'legacy' }])
    expect(client.era).toBe('legacy')
    expect(servers[1]!.received.map(request => request.method)).toEqual(['server/discover', 'initialize', 'tools/call'])
  })
})
