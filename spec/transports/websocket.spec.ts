import { afterEach, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import { lastValueFrom, toArray } from 'rxjs'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js'
import { createEverythingServer } from '../../examples/everything/everything.ts'
import { websocket, websocketClient, WS_SUBPROTOCOL, type McpWebSocketServer } from '../../transports/websocket.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { connect } from '../../actors/client.ts'
import type { McpServer } from '../../actors/server.ts'
import { CancelledError, ConnectionClosedError } from '../../lib/jsonrpc/errors.ts'

let server: McpServer | undefined
let ws: McpWebSocketServer | undefined
afterEach(async () => { await server?.close(); server = undefined; ws = undefined })

async function start(options: Parameters<typeof websocket>[0] = {}): Promise<string> {
  server = createEverythingServer()
  ws = websocket(options)
  await server.listen(ws)
  return ws.url!
}

const handlers = {
  sampling: () => ({ role: 'assistant' as const, model: 'ws-model', content: { type: 'text' as const, text: 'over a socket' } }),
  elicitation: { form: () => ({ action: 'accept' as const, content: { name: 'Socket' } }) },
  roots: [{ uri: 'file:///ws', name: 'ws' }],
}

describe('websocket', () => {
  it('serves the official SDK WebSocketClientTransport unchanged (subprotocol mcp)', async () => {
    const url = await start()
    const globals = globalThis as { WebSocket?: unknown }
    const previous = globals.WebSocket
    globals.WebSocket = WebSocket
    try {
      const client = new Client({ name: 'official-ws', version: '1' })
      await client.connect(new WebSocketClientTransport(new URL(url)))
      expect((await client.listTools()).tools).toHaveLength(5)
      expect(await client.callTool({ name: 'echo', arguments: { text: 'ws' } })).toEqual({ content: [{ type: 'text', text: 'ws' }] })
      const progress: number[] = []
      await client.callTool({ name: 'long_running', arguments: { steps: 3, ms: 5 } }, undefined, { onprogress: p => { progress.push(p.progress) } })
      expect(progress).toEqual([1, 2, 3])
      const controller = new AbortController()
      const call = client.callTool({ name: 'long_running', arguments: { steps: 500, ms: 10 } }, undefined, { signal: controller.signal })
      setTimeout(() => controller.abort(), 40)
      await expect(call).rejects.toThrow()
      await new Promise(resolve => setTimeout(resolve, 30))
      for (const session of server!.sessions) expect(session.connection.incoming.size).toBe(0)
      await client.close()
    } finally {
      globals.WebSocket = previous
    }
  })

  it.each(['json', 'msgpack'] as const)('runs the feature matrix with the rxmcp client over %s', async encoding => {
    const url = await start()
    const client = await connect(websocketClient(url, { encoding }), { name: 'rx-ws', version: '1' }, handlers)
    expect(await lastValueFrom(client.tools().pipe(toArray()))).toHaveLength(10)
    expect(await lastValueFrom(client.resources().pipe(toArray()))).toHaveLength(8)
    expect(await client.callTool('echo', { text: encoding })).toEqual({ content: [{ type: 'text', text: encoding }] })
    expect((await client.callTool('add', { a: 2, b: 3 })).structuredContent).toEqual({ sum: 5 })
    const progress: number[] = []
    await client.callTool('long_running', { steps: 3, ms: 5 }, { onProgress: p => progress.push(p.progress) })
    expect(progress).toEqual([1, 2, 3])
    expect((await client.callTool('sample', { prompt: 'x' })).content).toEqual([{ type: 'text', text: 'ws-model: over a socket' }])
    expect((await client.callTool('elicit')).structuredContent).toMatchObject({ action: 'accept', content: { name: 'Socket', age: 30 } })
    expect((await client.callTool('roots')).content).toEqual([{ type: 'text', text: '[{"uri":"file:///ws","name":"ws"}]' }])
    expect((await client.readResource('everything://logo')).contents[0]).toMatchObject({ blob: expect.any(String) })
    const controller = new AbortController()
    const call = client.callTool('long_running', { steps: 500, ms: 10 }, { signal: controller.signal })
    setTimeout(() => controller.abort(), 40)
    await expect(call).rejects.toBeInstanceOf(CancelledError)
    await client.close()
  })

  it('picks msgpack only when the client offers it', async () => {
    const url = await start()
    const both = new WebSocket(url, [WS_SUBPROTOCOL.json, WS_SUBPROTOCOL.msgpack])
    await new Promise(resolve => both.once('open', resolve))
    expect(both.protocol).toBe(WS_SUBPROTOCOL.msgpack)
    both.close()
    const json = new WebSocket(url, [WS_SUBPROTOCOL.json])
    await new Promise(resolve => json.once('open', resolve))
    expect(json.protocol).toBe(WS_SUBPROTOCOL.json)
    json.close()
  })

  it('refuses a foreign Origin and a failed authentication', async () => {
    const url = await start({ authenticate: request => request.headers.authorization === 'Bearer good' })
    const status = (headers: Record<string, string>) => new Promise<number>(resolve => {
      const socket = new WebSocket(url, [WS_SUBPROTOCOL.json], { headers })
      socket.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0))
      socket.once('open', () => { socket.close(); resolve(101) })
      socket.once('error', () => {})
    })
    expect(await status({ origin: 'https://evil.example.com', authorization: 'Bearer good' })).toBe(403)
    expect(await status({ authorization: 'Bearer bad' })).toBe(401)
    expect(await status({ authorization: 'Bearer good' })).toBe(101)
  })

  it('closes a socket that sends a frame over the limit with 1009, and the session ends', async () => {
    const url = await start({ maxFrameBytes: 1024 })
    const socket = new WebSocket(url, [WS_SUBPROTOCOL.json])
    await new Promise(resolve => socket.once('open', resolve))
    const closed = new Promise<number>(resolve => socket.once('close', code => resolve(code)))
    socket.send('x'.repeat(4096))
    expect(await closed).toBe(1009)
    await new Promise(resolve => setTimeout(resolve, 20))
    expect(server!.sessions.size).toBe(0)
  })

  it('closes a peer that stops answering pings within the heartbeat interval', async () => {
    const url = await start({ heartbeatMs: 100 })
    const socket = new WebSocket(url, [WS_SUBPROTOCOL.json], { autoPong: false })
    await new Promise(resolve => socket.once('open', resolve))
    const started = Date.now()
    const code = await new Promise<number>(resolve => socket.once('close', resolve))
    expect(code).toBe(1006)
    expect(Date.now() - started).toBeLessThan(2_000)
  })

  it('stops reading from a peer that does not read its answers, so memory stays bounded', async () => {
    const url = await start({ highWaterMark: 64 * 1024 })
    const socket = new WebSocket(url, [WS_SUBPROTOCOL.json], { perMessageDeflate: false })
    await new Promise(resolve => socket.once('open', resolve))
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'slow', version: '1' } } }))
    await new Promise(resolve => socket.once('message', resolve))
    socket.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
    // This reader stops reading; it goes on writing requests whose answers are 20 KiB each.
    ;(socket as unknown as { _socket: { pause(): void } })._socket.pause()
    const text = 'x'.repeat(20 * 1024)
    for (let id = 1; id <= 2000; id++) socket.send(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text } } }))
    let peak = 0
    for (let i = 0; i < 40; i++) {
      await new Promise(resolve => setTimeout(resolve, 25))
      for (const session of server!.sessions) peak = Math.max(peak, (session.connection.transport as unknown as { bufferedAmount: number }).bufferedAmount)
    }
    // 2000 answers would be 40 MiB; the server holds back at the high-water mark plus what was in flight.
    expect(peak).toBeGreaterThan(0)
    expect(peak).toBeLessThan(8 * 1024 * 1024)
    socket.terminate()
  })

  it('fails requests in flight at once when the server goes away', async () => {
    const url = await start()
    const client = await connect(websocketClient(url), { name: 'rx-ws', version: '1' })
    const call = client.callTool('long_running', { steps: 100, ms: 50 }).catch(error => error)
    await new Promise(resolve => setTimeout(resolve, 50))
    for (const session of server!.sessions) (session.connection.transport as unknown as { ws: WebSocket }).ws.terminate()
    expect(await call).toBeInstanceOf(ConnectionClosedError)
  })

  it('reconnects with a fresh session after the server drops the socket', async () => {
    const url = await start()
    const client = await connect(() => websocketClient(url), { name: 'resilient', version: '1' }, { reconnect: { initialDelayMs: 20, maxRetries: 5 } })
    const updates: unknown[] = []
    client.notifications('notifications/message').subscribe(params => updates.push(params))
    const pending = client.callTool('long_running', { steps: 100, ms: 50 }).catch(error => error)
    await new Promise(resolve => setTimeout(resolve, 50))
    for (const session of server!.sessions) (session.connection.transport as unknown as { ws: WebSocket }).ws.terminate()
    expect(await pending).toBeInstanceOf(ConnectionClosedError)
    for (let wait = 0; wait < 50 && client.state.status !== 'operating'; wait++) await new Promise(resolve => setTimeout(resolve, 20))
    expect(client.state.status).toBe('operating')
    expect(await client.callTool('echo', { text: 'again' })).toEqual({ content: [{ type: 'text', text: 'again' }] })
    // The notification bus survives the reconnect.
    await client.setLoggingLevel('debug')
    await client.callTool('log', { level: 'info', message: 'after reconnect' })
    await new Promise(resolve => setTimeout(resolve, 20))
    expect(updates).toContainEqual({ level: 'info', logger: 'everything', data: 'after reconnect' })
    await client.close()
    expect(client.state.status).toBe('closed')
  })

  it('shares the port of the Streamable HTTP server', async () => {
    server = createEverythingServer()
    const http = streamableHttp()
    await server.listen(http)
    // A listener given without start() is served without binding a port of its own; attach() hands it the upgrades.
    const shared = websocket()
    await server.listen({ connections: shared.connections, close: () => shared.close() })
    const { createServer: createNodeServer } = await import('node:http')
    const node = createNodeServer(http.nodeHandler)
    shared.attach(node)
    await new Promise<void>(resolve => node.listen(0, '127.0.0.1', resolve))
    const port = (node.address() as { port: number }).port
    const viaWs = await connect(websocketClient(`ws://127.0.0.1:${port}/mcp`), { name: 'a', version: '1' })
    const { streamableHttpClient } = await import('../../transports/http-client.ts')
    const viaHttp = await connect(streamableHttpClient(`http://127.0.0.1:${port}/mcp`), { name: 'b', version: '1' })
    expect(await viaWs.callTool('echo', { text: 'ws' })).toEqual({ content: [{ type: 'text', text: 'ws' }] })
    expect(await viaHttp.callTool('echo', { text: 'http' })).toEqual({ content: [{ type: 'text', text: 'http' }] })
    await viaWs.close()
    await viaHttp.close()
    node.closeAllConnections()
    await new Promise(resolve => node.close(resolve))
  })
})
