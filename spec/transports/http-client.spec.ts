import { createServer as createNodeServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createEverythingServer } from '../../examples/everything/everything.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { sseClient, streamableHttpClient } from '../../transports/http-client.ts'
import { connect } from '../../actors/client.ts'
import { ConnectionClosedError, FrameTooLargeError, TransportError } from '../../lib/jsonrpc/errors.ts'
import { closeServer } from '../../transports/listen.ts'

describe('streamableHttpClient', () => {
  // Sessions are a legacy-era thing: these run with era 'legacy' (a modern-era client has none to lose).
  it('starts a new session transparently when the server forgets the old one', async () => {
    const server = createEverythingServer()
    const http = streamableHttp()
    await server.listen(http)
    try {
      const transport = streamableHttpClient(http.url!)
      const client = await connect(transport, { name: 'rx', version: '1' }, { era: 'legacy' })
      const first = transport.sessionId
      // The server loses every session, as after a restart.
      for (const session of [...server.sessions]) await session.close()
      expect(await client.callTool('echo', { text: 'again' })).toEqual({ content: [{ type: 'text', text: 'again' }] })
      expect(transport.sessionId).not.toBe(first)
      expect(transport.sessionId).toBeDefined()
      await client.close()
    } finally {
      await server.close()
    }
  })

  it('closes with ConnectionClosedError on 404 when told not to reinitialize', async () => {
    const server = createEverythingServer()
    const http = streamableHttp()
    await server.listen(http)
    try {
      const client = await connect(streamableHttpClient(http.url!, { reinitializeOnExpiry: false }), { name: 'rx', version: '1' }, { era: 'legacy' })
      for (const session of [...server.sessions]) await session.close()
      await expect(client.callTool('echo', { text: 'x' })).rejects.toBeInstanceOf(ConnectionClosedError)
    } finally {
      await server.close()
    }
  })

  it('sends MCP-Protocol-Version and the session id in the legacy era, and DELETEs the session on close', async () => {
    const server = createEverythingServer()
    const http = streamableHttp()
    await server.listen(http)
    const seen: { method: string; version: string | null; session: string | null }[] = []
    // Heard when the standalone GET goes out, and when the DELETE is answered (the listener ends the session before it answers).
    let heardGet!: () => void
    const gotGet = new Promise<void>(resolve => { heardGet = resolve })
    let heardDelete!: () => void
    const deleted = new Promise<void>(resolve => { heardDelete = resolve })
    const spy: typeof fetch = async (input, init) => {
      const headers = new Headers(init?.headers)
      const method = init?.method ?? 'GET'
      seen.push({ method, version: headers.get('mcp-protocol-version'), session: headers.get('mcp-session-id') })
      if (method === 'GET') heardGet()
      const response = await fetch(input, init)
      if (method === 'DELETE') heardDelete()
      return response
    }
    try {
      const client = await connect(streamableHttpClient(http.url!, { fetch: spy }), { name: 'rx', version: '1' }, { era: 'legacy' })
      await client.callTool('echo', { text: 'x' })
      // The standalone GET stream opens on its own after the handshake: wait for it, not for a time.
      await gotGet
      await client.close()
      expect(seen[0]).toEqual({ method: 'POST', version: null, session: null })
      // Every request after the initialize answer carries the negotiated version: notifications/initialized, the call, the GET, the DELETE.
      expect(seen.slice(1).map(request => [request.method, request.version])).toEqual(seen.slice(1).map(request => [request.method, '2025-11-25']))
      expect(seen.filter(request => request.method === 'POST').at(-1)).toMatchObject({ method: 'POST', version: '2025-11-25', session: expect.any(String) })
      expect(seen.at(-1)).toMatchObject({ method: 'DELETE', session: expect.any(String) })
      // The listener ends the session once it has read the DELETE, before it answers.
      await deleted
      expect(http.sessionCount).toBe(0)
    } finally {
      await server.close()
    }
  })

  it('sends a message\'s own headers and protocol version (SendOptions) on its POST, and keeps the version for later ones', async () => {
    const seen: Record<string, string | null>[] = []
    const node = createNodeServer(async (req, res) => {
      for await (const _chunk of req) { /* read the body */ }
      seen.push({ version: req.headers['mcp-protocol-version'] as string ?? null, param: req.headers['mcp-param-region'] as string ?? null, type: req.headers['content-type'] ?? null })
      res.statusCode = 202
      res.end()
    })
    await new Promise<void>(resolve => node.listen(0, '127.0.0.1', resolve))
    const transport = streamableHttpClient(`http://127.0.0.1:${(node.address() as AddressInfo).port}/mcp`, { openStandaloneStream: false })
    try {
      await transport.send({ jsonrpc: '2.0', method: 'notifications/one' })
      await transport.send({ jsonrpc: '2.0', method: 'notifications/two' }, { protocolVersion: '2025-06-18', headers: { 'Mcp-Param-Region': 'eu', 'content-type': 'text/plain' } })
      await transport.send({ jsonrpc: '2.0', method: 'notifications/three' })
      expect(seen).toEqual([
        { version: null, param: null, type: 'application/json' },
        // The transport's own headers stay over a message's.
        { version: '2025-06-18', param: 'eu', type: 'application/json' },
        { version: '2025-06-18', param: null, type: 'application/json' },
      ])
    } finally {
      await transport.close()
      await new Promise<void>(resolve => node.close(() => resolve()))
    }
  })

  describe('bounds what a server sends', () => {
    /** A hand-made Streamable HTTP server on 127.0.0.1: initialize and echo answered in JSON, `flood` by `onFlood`. */
    let fake: { url: string; close: () => Promise<void> } | undefined
    afterEach(async () => { await fake?.close(); fake = undefined })

    async function startFake(onFlood: (res: ServerResponse) => void, onGet?: (res: ServerResponse) => void): Promise<string> {
      const node = createNodeServer(async (req: IncomingMessage, res: ServerResponse) => {
        if (req.method === 'GET') { if (onGet === undefined) { res.statusCode = 405; res.end() } else onGet(res); return }
        if (req.method === 'DELETE') { res.end(); return }
        let body = ''
        for await (const chunk of req) body += chunk
        const message = JSON.parse(body)
        if (!('id' in message)) { res.statusCode = 202; res.end(); return }
        if (message.method === 'tools/call' && message.params.name === 'flood') return onFlood(res)
        const result = message.method === 'initialize'
          ? { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'fake', version: '1' } }
          : { content: [{ type: 'text', text: message.params?.arguments?.text ?? '' }] }
        res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'fake-session' })
        res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }))
      })
      await new Promise<void>(resolve => node.listen(0, '127.0.0.1', resolve))
      fake = { url: `http://127.0.0.1:${(node.address() as { port: number }).port}/mcp`, close: () => closeServer(node) }
      return fake.url
    }

    /**
     * Writes data lines that never end the event, as fast as the client reads, up to `bytes`, then
     * holds the stream open. Resolves with the bytes written when the client hangs up.
     */
    function endlessEvent(res: ServerResponse, bytes: number): Promise<number> {
      return new Promise(resolve => {
        let written = 0
        res.on('close', () => resolve(written))
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        const line = `data: ${'x'.repeat(1018)}\n`
        const pump = () => {
          while (written < bytes && !res.destroyed) {
            written += line.length
            if (!res.write(line)) { res.once('drain', pump); return }
          }
        }
        pump()
      })
    }

    it('fails the request whose SSE event passes maxMessageSize, cancels its stream, and the session lives on', async () => {
      let hungUp!: Promise<number>
      const url = await startFake(res => { hungUp = endlessEvent(res, 64 * 1024 * 1024) })
      const client = await connect(streamableHttpClient(url, { maxMessageSize: 64 * 1024 }), { name: 'rx', version: '1' })
      const error = await client.callTool('flood', {}).catch((failure: unknown) => failure)
      expect(error).toBeInstanceOf(TransportError)
      expect((error as TransportError).code).toBe('RXMCP_ERR_TRANSPORT')
      expect((error as Error).message).toMatch(/^The response stream of POST http:\/\/127\.0\.0\.1:\d+\/mcp: An SSE event exceeds the limit of 65536 bytes \(maxMessageSize\)$/)
      expect((error as Error).cause).toBeInstanceOf(FrameTooLargeError)
      // The client hung up long before the server had written its 64 MiB (socket buffers hold a few).
      expect(await hungUp).toBeLessThan(32 * 1024 * 1024)
      expect(await client.callTool('echo', { text: 'still here' })).toEqual({ content: [{ type: 'text', text: 'still here' }] })
      await client.close()
    })

    it('bounds an SSE event by the default maxMessageSize of 4 MiB', async () => {
      let hungUp!: Promise<number>
      const url = await startFake(res => { hungUp = endlessEvent(res, 64 * 1024 * 1024) })
      const client = await connect(streamableHttpClient(url), { name: 'rx', version: '1' })
      const error = await client.callTool('flood', {}).catch((failure: unknown) => failure)
      expect(error).toBeInstanceOf(TransportError)
      expect((error as Error).message).toMatch(/An SSE event exceeds the limit of 4194304 bytes/)
      expect(await hungUp).toBeGreaterThan(4 * 1024 * 1024)
      expect(await hungUp).toBeLessThan(32 * 1024 * 1024)
      await client.close()
    })

    it('fails the request whose JSON answer passes maxMessageSize', async () => {
      const url = await startFake(res => {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'x'.repeat(200 * 1024) }] } }))
      })
      const client = await connect(streamableHttpClient(url, { maxMessageSize: 64 * 1024 }), { name: 'rx', version: '1' })
      const error = await client.callTool('flood', {}).catch((failure: unknown) => failure)
      expect(error).toBeInstanceOf(TransportError)
      expect((error as Error).message).toMatch(/^POST http:\/\/127\.0\.0\.1:\d+\/mcp: A body exceeds the limit of 65536 bytes$/)
      expect((error as Error).cause).toBeInstanceOf(FrameTooLargeError)
      await client.close()
    })

    it('ends the transport when the GET stream sends an event over the limit', async () => {
      let hungUp!: Promise<number>
      const url = await startFake(() => {}, res => { hungUp = endlessEvent(res, 64 * 1024 * 1024) })
      const transport = streamableHttpClient(url, { maxMessageSize: 16 * 1024 })
      const ended = new Promise<unknown>(resolve => transport.inbound.subscribe({ next: () => {}, error: resolve, complete: () => resolve('complete') }))
      await transport.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'rx', version: '1' } } })
      await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
      const error = await ended
      expect(error).toBeInstanceOf(TransportError)
      expect((error as Error).message).toMatch(/^The GET stream of http:\/\/127\.0\.0\.1:\d+\/mcp: An SSE event exceeds the limit of 16384 bytes/)
      expect(await hungUp).toBeLessThan(32 * 1024 * 1024)
      await transport.close()
    })

    it('ends a legacy SSE transport whose stream sends an event over the limit', async () => {
      let hungUp!: Promise<number>
      const url = await startFake(() => {}, res => {
        hungUp = endlessEvent(res, 64 * 1024 * 1024)
        res.write('event: endpoint\ndata: /messages\n\n')
      })
      const transport = sseClient(url, { maxMessageSize: 16 * 1024 })
      const error = await new Promise<unknown>(resolve => transport.inbound.subscribe({ next: () => {}, error: resolve, complete: () => resolve('complete') }))
      expect(error).toBeInstanceOf(TransportError)
      expect((error as Error).message).toMatch(/^The SSE stream of http:\/\/127\.0\.0\.1:\d+\/mcp: An SSE event exceeds the limit of 16384 bytes/)
      expect(await hungUp).toBeLessThan(32 * 1024 * 1024)
      await transport.close()
    })
  })
})
