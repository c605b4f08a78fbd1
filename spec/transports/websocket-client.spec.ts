import { afterEach, describe, expect, it } from 'vitest'
import { WebSocket as WsWebSocket, WebSocketServer } from 'ws'
import { createEverythingServer } from '../../examples/everything/everything.ts'
import { websocket, type McpWebSocketServer } from '../../transports/websocket.ts'
import { websocketClient, WS_SUBPROTOCOL, type WebSocketConstructor, type WebSocketLike } from '../../transports/websocket-client.ts'
import { connect } from '../../actors/client.ts'
import type { McpServer } from '../../actors/server.ts'
import type { Inbound } from '../../lib/transport.ts'
import { ConnectionClosedError, TransportError } from '../../lib/jsonrpc/errors.ts'

let server: McpServer | undefined
let raw: WebSocketServer | undefined
afterEach(async () => {
  await server?.close()
  await new Promise<void>(resolve => raw === undefined ? resolve() : raw.close(() => resolve()))
  for (const client of raw?.clients ?? []) client.terminate()
  server = undefined
  raw = undefined
})

async function startEverything(options: Parameters<typeof websocket>[0] = {}): Promise<string> {
  server = createEverythingServer()
  const ws: McpWebSocketServer = websocket(options)
  await server.listen(ws)
  return ws.url!
}

/** A bare `ws` server on 127.0.0.1 that hands each socket to `onSocket`. */
async function startRaw(onSocket: (socket: WsWebSocket) => void): Promise<string> {
  raw = new WebSocketServer({ host: '127.0.0.1', port: 0, handleProtocols: protocols => [...protocols][0] ?? false })
  raw.on('connection', onSocket)
  await new Promise<void>(resolve => raw!.once('listening', () => resolve()))
  return `ws://127.0.0.1:${(raw.address() as { port: number }).port}/mcp`
}

/** Collects a transport's inbound until it ends: the items, then 'complete' or the error. */
function drain(inbound: { subscribe: (observer: { next: (item: Inbound) => void; error: (error: unknown) => void; complete: () => void }) => unknown }) {
  const items: Inbound[] = []
  // Who waits for the item count to reach a number (see `got`).
  const waiting = new Map<number, () => void>()
  const ended = new Promise<unknown>(resolve => inbound.subscribe({ next: item => waiting.get(items.push(item))?.(), error: resolve, complete: () => resolve('complete') }))
  /** Resolves once `count` items have come. */
  const got = (count: number) => items.length >= count ? Promise.resolve() : new Promise<void>(resolve => waiting.set(count, resolve))
  return { items, ended, got }
}

describe('websocketClient', () => {
  it('speaks through a given WHATWG WebSocket constructor, in JSON and in msgpack', async () => {
    const url = await startEverything()
    // A browser-shaped constructor: the two-argument WHATWG form, nothing ws-specific used.
    const made: string[][] = []
    const Whatwg = class extends WsWebSocket {
      constructor(address: string, protocols: string[]) { super(address, protocols); made.push(protocols) }
    } as unknown as WebSocketConstructor
    for (const encoding of ['json', 'msgpack'] as const) {
      const client = await connect(websocketClient(url, { encoding, WebSocket: Whatwg }), { name: 'whatwg', version: '1' })
      expect(await client.callTool('echo', { text: encoding })).toEqual({ content: [{ type: 'text', text: encoding }] })
      await client.close()
    }
    expect(made).toEqual([[WS_SUBPROTOCOL.json], [WS_SUBPROTOCOL.msgpack]])
  })

  it('fails with a TransportError naming the refusal when the upgrade is refused', async () => {
    const url = await startEverything({ authenticate: request => request.headers.authorization === 'Bearer good' })
    const refused = drain(websocketClient(url, { headers: { authorization: 'Bearer bad' } }).inbound)
    const error = await refused.ended
    expect(error).toBeInstanceOf(TransportError)
    expect((error as Error).message).toBe(`WebSocket connection to ${url} failed: Unexpected server response: 401`)
    const client = await connect(websocketClient(url, { headers: { authorization: 'Bearer good' } }), { name: 'ok', version: '1' })
    expect(await client.callTool('echo', { text: 'in' })).toEqual({ content: [{ type: 'text', text: 'in' }] })
    await client.close()
  })

  it('refuses headers it cannot send through a WHATWG WebSocket', async () => {
    const transport = websocketClient('ws://127.0.0.1:9/mcp', { headers: { authorization: 'Bearer x' }, WebSocket: WsWebSocket as unknown as WebSocketConstructor })
    const { ended } = drain(transport.inbound)
    expect(await ended).toBeInstanceOf(TransportError)
    expect((await ended as Error).message).toMatch(/^A WHATWG WebSocket cannot send headers/)
    await expect(Promise.resolve().then(() => transport.send({ jsonrpc: '2.0', method: 'ping', id: 1 }))).rejects.toBeInstanceOf(TransportError)
    await transport.close()
  })

  it('sends what was sent before the socket opened, in order, and keeps frames that arrive before inbound is read', async () => {
    const url = await startRaw(socket => socket.on('message', data => socket.send(String(data))))
    // The frames the client's socket has read: its listener, added first, runs just before the transport's.
    let arrived = 0
    let heardBoth!: () => void
    const both = new Promise<void>(resolve => { heardBoth = resolve })
    const Counting = class extends WsWebSocket {
      constructor(address: string, protocols: string[]) { super(address, protocols); this.on('message', () => { if (++arrived === 2) heardBoth() }) }
    } as unknown as WebSocketConstructor
    const transport = websocketClient(url, { WebSocket: Counting })
    const first = transport.send({ jsonrpc: '2.0', method: 'a' })
    const second = transport.send({ jsonrpc: '2.0', method: 'b' })
    await Promise.all([first, second])
    // Both echoes have reached the transport while nobody reads inbound yet; they wait for the subscriber.
    await both
    const { items, got } = drain(transport.inbound)
    await got(2)
    expect(items).toEqual([{ type: 'message', message: { jsonrpc: '2.0', method: 'a' } }, { type: 'message', message: { jsonrpc: '2.0', method: 'b' } }])
    await transport.close()
  })

  it('errors inbound with ConnectionClosedError when the server drops an open socket, and completes it after close()', async () => {
    const dropped: WsWebSocket[] = []
    let heardFirst!: () => void
    const accepted = new Promise<void>(resolve => { heardFirst = resolve })
    const url = await startRaw(socket => { dropped.push(socket); heardFirst() })
    const first = websocketClient(url)
    const one = drain(first.inbound)
    await first.send({ jsonrpc: '2.0', method: 'hello' })
    await accepted
    expect(dropped).toHaveLength(1)
    dropped[0]!.terminate()
    const error = await one.ended
    expect(error).toBeInstanceOf(ConnectionClosedError)
    expect((error as Error).message).toBe('The WebSocket closed (1006)')

    const second = websocketClient(url)
    const two = drain(second.inbound)
    await second.send({ jsonrpc: '2.0', method: 'hello' })
    await second.close()
    expect(await two.ended).toBe('complete')
  })

  it('completes at once when closed before the socket opened', async () => {
    const url = await startRaw(() => {})
    const transport = websocketClient(url)
    const { ended } = drain(transport.inbound)
    await transport.close()
    expect(await ended).toBe('complete')
  })

  it('ends the connection when a frame passes maxFrameBytes, refused by ws while reading it', async () => {
    const url = await startRaw(socket => socket.on('message', () => socket.send(JSON.stringify({ jsonrpc: '2.0', method: 'big', params: { text: 'x'.repeat(4096) } }))))
    const transport = websocketClient(url, { maxFrameBytes: 1024 })
    const { items, ended } = drain(transport.inbound)
    await transport.send({ jsonrpc: '2.0', method: 'go' })
    const error = await ended
    expect(error).toBeInstanceOf(ConnectionClosedError)
    expect((error as Error).message).toBe('The WebSocket closed (1006: Max payload size exceeded)')
    expect(items).toEqual([])
  })

  it('ends the connection when a WHATWG WebSocket delivers a frame over maxFrameBytes', async () => {
    const url = await startRaw(socket => socket.on('message', () => socket.send(JSON.stringify({ jsonrpc: '2.0', method: 'big', params: { text: 'x'.repeat(4096) } }))))
    // A WHATWG WebSocket has no maxPayload: the client itself refuses the frame once read.
    const transport = websocketClient(url, { maxFrameBytes: 1024, WebSocket: WsWebSocket as unknown as WebSocketConstructor })
    const { items, ended } = drain(transport.inbound)
    await transport.send({ jsonrpc: '2.0', method: 'go' })
    const error = await ended
    expect(error).toBeInstanceOf(ConnectionClosedError)
    expect((error as Error).message).toBe('The WebSocket peer sent a frame over 1024 bytes')
    expect(items).toEqual([])
    await transport.close()
  })

  it('makes a sender wait while more than highWaterMark bytes are queued', async () => {
    const url = await startRaw(() => {})
    let socket: WebSocketLike | undefined
    const Tracking = class extends WsWebSocket {
      constructor(address: string, protocols: string[]) { super(address, protocols); socket = this as unknown as WebSocketLike }
    } as unknown as WebSocketConstructor
    const transport = websocketClient(url, { highWaterMark: 16 * 1024, WebSocket: Tracking })
    await transport.send({ jsonrpc: '2.0', method: 'open' })
    // One 64 KiB message leaves more than 16 KiB queued or not, depending on the kernel; a burst surely does.
    let waited: Promise<void> | undefined
    for (let i = 0; i < 200 && waited === undefined; i++) {
      const written = transport.send({ jsonrpc: '2.0', method: 'bulk', params: { text: 'x'.repeat(64 * 1024) } })
      if (written instanceof Promise) waited = written
    }
    expect(waited).toBeInstanceOf(Promise)
    await waited
    expect(socket!.bufferedAmount).toBeLessThan(8 * 1024)
    await transport.close()
  })
})
