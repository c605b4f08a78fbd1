import { afterEach, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import { createEverythingServer } from '../../examples/everything/everything.ts'
import { websocket, WS_SERVICE_RESTART, WS_SUBPROTOCOL } from '../../transports/websocket.ts'
import type { McpServer } from '../../actors/server.ts'
import { collected } from '../helpers/collected.ts'

/**
 * Issue 27, item 5: what a drain does to WebSocket clients. A WebSocket session is its connection,
 * so nothing is handed over: new upgrades are refused (503, the balancer sends them elsewhere) and
 * each socket is closed with 1012 (Service Restart) once nothing runs on it, so its client
 * reconnects, to another instance.
 */
let server: McpServer | undefined
afterEach(async () => { await server?.close(); server = undefined })

/** A raw socket, open and initialized (legacy era): every message it gets, and how it closed. */
async function session(url: string) {
  const socket = new WebSocket(url, [WS_SUBPROTOCOL.json])
  const messages = collected<{ id?: number; method?: string; params?: { progress?: number }; result?: { content?: { text: string }[] } }>()
  socket.on('message', data => messages.push(JSON.parse(String(data))))
  const closed = new Promise<{ code: number; reason: string }>(resolve => socket.once('close', (code, reason) => resolve({ code, reason: String(reason) })))
  await new Promise<void>((resolve, reject) => { socket.once('open', () => resolve()); socket.once('error', reject) })
  socket.send(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }))
  await messages.when(items => items.some(message => message.id === 0))
  socket.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }))
  return { socket, messages, closed }
}

/** An upgrade's refusal: its status, Retry-After and JSON body. */
function refusedUpgrade(url: string): Promise<{ status: number; retryAfter: string | undefined; body: unknown }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, [WS_SUBPROTOCOL.json])
    socket.once('open', () => { socket.close(); reject(new Error('the upgrade was accepted')) })
    socket.once('error', () => {})
    socket.once('unexpected-response', (_request, response) => {
      let body = ''
      response.on('data', (chunk: Buffer) => { body += String(chunk) })
      response.on('end', () => resolve({ status: response.statusCode ?? 0, retryAfter: response.headers['retry-after'] as string | undefined, body: JSON.parse(body) }))
    })
  })
}

describe('McpWebSocketServer.drain', () => {
  it('refuses new upgrades with 503, closes an idle socket with 1012 at once and a busy one once its call has answered', async () => {
    server = createEverythingServer()
    const ws = websocket()
    await server.listen(ws)
    const idle = await session(ws.url!)
    const busy = await session(ws.url!)
    busy.socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'long_running', arguments: { steps: 20, ms: 25 }, _meta: { progressToken: 'p' } } }))
    await busy.messages.when(items => items.some(message => message.method === 'notifications/progress'))

    const statuses: string[] = []
    server.health.subscribe(health => statuses.push(health.status))
    const drained = server.drain({ timeoutMs: 10_000 })
    // The idle socket goes at once, with the code clients reconnect on.
    expect(await idle.closed).toEqual({ code: WS_SERVICE_RESTART, reason: 'server restarting' })
    // A new client is sent away: the balancer (or the client, after Retry-After) tries elsewhere.
    expect(await refusedUpgrade(ws.url!)).toEqual({
      status: 503, retryAfter: '1',
      body: { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Service Unavailable: this server instance is shutting down; connect again' } },
    })
    // The busy socket's call runs to its end, every progress step and its result sent, then it closes.
    expect(await busy.closed).toEqual({ code: WS_SERVICE_RESTART, reason: 'server restarting' })
    const progress = busy.messages.items.filter(message => message.method === 'notifications/progress').map(message => message.params!.progress)
    expect(progress).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
    expect(busy.messages.items.find(message => message.id === 1)?.result?.content?.[0]?.text).toBe('Finished 20 steps')
    await drained
    expect(statuses).toEqual(['serving', 'draining', 'closed'])
    expect(ws.sessionCount).toBe(0)
  }, 30_000)
})
