import { afterEach, describe, expect, it } from 'vitest'
import { createServer as createNodeServer, request as httpRequest, type Server } from 'node:http'
import { ACCEPT, init, initialized, post, virtualClock } from '../helpers/hardening-http.ts'
import { createServer, type McpServer } from '../../actors/server.ts'
import { streamableHttp, type StreamableHttpOptions } from '../../transports/streamable-http.ts'
import { closeServer, listenOn } from '../../transports/listen.ts'

/**
 * The Streamable HTTP listener's refusals, headers and web-standard handler (split from
 * http-hardening.spec.ts, whose slow and hostile peers stay there).
 */


let mcp: McpServer | undefined
let front: Server | undefined
afterEach(async () => {
  await mcp?.close()
  if (front !== undefined) await closeServer(front)
  mcp = undefined; front = undefined
})

/** An MCP server (an echo tool) behind the listener's nodeHandler, on a node:http server of the spec's own. */
async function start(options: StreamableHttpOptions = {}) {
  mcp = createServer({ name: 'hardening', version: '1' })
  mcp.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }, ({ text }) => ({ content: [{ type: 'text', text: String(text) }] }))
  const listener = streamableHttp(options)
  await mcp.listen(listener)
  front = createNodeServer((req, res) => listener.nodeHandler(req, res))
  const port = await listenOn(front, 0, '127.0.0.1')
  return { url: `http://127.0.0.1:${port}/mcp`, port }
}

describe('streamableHttp: refusals answer the request they refuse', () => {
  it('gives an unsupported-version refusal the id of the request it carried', async () => {
    const { url } = await start()
    const response = await post(url, { jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} }, { 'mcp-protocol-version': '1999-01-01' })
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({ id: 7, error: { code: -32000, message: expect.stringContaining('1999-01-01') } })
  })

  it('gives a missing or unknown session refusal the request\'s id, and a batch one error per request', async () => {
    const { url } = await start()
    const missing = await post(url, { jsonrpc: '2.0', id: 'a', method: 'ping' })
    expect(missing.status).toBe(400)
    expect(await missing.json()).toMatchObject({ id: 'a' })
    const unknown = await post(url, { jsonrpc: '2.0', id: 8, method: 'ping' }, { 'mcp-session-id': 'nope' })
    expect(unknown.status).toBe(404)
    expect(await unknown.json()).toMatchObject({ id: 8, error: { code: -32001 } })
    const batch = await post(url, [{ jsonrpc: '2.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', method: 'notifications/initialized' }, { jsonrpc: '2.0', id: 2, method: 'ping' }], { 'mcp-session-id': 'nope' })
    expect(batch.status).toBe(404)
    expect(await batch.json()).toMatchObject([{ id: 1, error: { code: -32001 } }, { id: 2, error: { code: -32001 } }])
  })

  it.each([
    ['one request', { jsonrpc: '2.0', id: 'r1', method: 'tools/list' }, { id: 'r1' }],
    ['a batch', [{ jsonrpc: '2.0', id: 3, method: 'ping' }, { jsonrpc: '2.0', id: 'x', method: 'ping' }], [{ id: 3 }, { id: 'x' }]],
    ['notifications only', [{ jsonrpc: '2.0', method: 'notifications/initialized' }], { id: null }],
  ])('answers an unsupported version refusal of %s with each id it carried', async (_name, body, expected) => {
    const { url } = await start()
    const response = await post(url, body, { 'mcp-protocol-version': '2026-07-28' })
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject(expected)
  })
})

describe('streamableHttp: headers', () => {
  it('serves another supported MCP-Protocol-Version on a session by default, as the conformance suite expects', async () => {
    const { url } = await start()
    const session = await initialized(url, '2025-11-25')
    const response = await post(url, { jsonrpc: '2.0', id: 1, method: 'ping' }, { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' })
    expect(response.status).toBe(200)
    const unsupported = await post(url, { jsonrpc: '2.0', id: 2, method: 'ping' }, { 'mcp-session-id': session, 'mcp-protocol-version': '1999-01-01' })
    expect(unsupported.status).toBe(400)
  })

  it('refuses an MCP-Protocol-Version that differs from the session\'s negotiated one when strict', async () => {
    const { url } = await start({ strictProtocolVersion: true })
    const session = await initialized(url, '2025-11-25')
    const response = await post(url, { jsonrpc: '2.0', id: 1, method: 'ping' }, { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' })
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({ id: 1, error: { code: -32000 } })
    const get = await fetch(url, { headers: { accept: 'text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': '2025-03-26' } })
    expect(get.status).toBe(400)
  })

  it('compares Host without case', async () => {
    const { port } = await start()
    const status = (host: string) => new Promise<number>((resolve, reject) => {
      const request = httpRequest({ host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers: { host, 'content-type': 'application/json', accept: ACCEPT } }, response => { response.resume(); resolve(response.statusCode!) })
      request.on('error', reject)
      request.end(JSON.stringify(init()))
    })
    expect(await status(`LOCALHOST:${port}`)).toBe(200)
    expect(await status(`LocalHost`)).toBe(200)
    expect(await status(`evil.example.com:${port}`)).toBe(403)
  })
})

describe('streamableHttp.handle (a web Request)', () => {
  const headers = { 'content-type': 'application/json', accept: ACCEPT }

  it('answers 413 as soon as a streamed body passes maxBodyBytes, and 408 when it stalls past bodyTimeoutMs', async () => {
    const { clock, advance } = virtualClock()
    const listener = streamableHttp({ maxBodyBytes: 1000, bodyTimeoutMs: 5000, scheduler: clock, keepAliveMs: 0 })
    try {
      let pulled = 0
      const endless = new ReadableStream<Uint8Array>({ pull: controller => { pulled++; controller.enqueue(new Uint8Array(600)) } })
      const tooLarge = await listener.handle(new Request('http://127.0.0.1/mcp', { method: 'POST', headers, body: endless, duplex: 'half' } as RequestInit))
      expect(tooLarge.status).toBe(413)
      expect(pulled).toBeLessThan(10)
      const stalled = new ReadableStream<Uint8Array>({ start: controller => { controller.enqueue(new TextEncoder().encode('{"jsonrpc":')) } })
      const handled = listener.handle(new Request('http://127.0.0.1/mcp', { method: 'POST', headers, body: stalled, duplex: 'half' } as RequestInit))
      // The listener starts its body clock once it reads the body: then 5 s pass.
      await clock.nextWait(5000)
      advance(5000)
      expect((await handled).status).toBe(408)
    } finally {
      await listener.close()
    }
  })

  it('errors a web SSE stream whose reader stops, once past the high-water mark', async () => {
    mcp = createServer({ name: 'web', version: '1' })
    const listener = streamableHttp({ streamHighWaterMark: 64 * 1024, keepAliveMs: 0 })
    await mcp.listen(listener)
    const first = await listener.handle(new Request('http://127.0.0.1/mcp', { method: 'POST', headers, body: JSON.stringify(init()) }))
    const session = first.headers.get('mcp-session-id')!
    await first.text()
    await listener.handle(new Request('http://127.0.0.1/mcp', { method: 'POST', headers: { ...headers, 'mcp-session-id': session }, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) }))
    const stream = await listener.handle(new Request('http://127.0.0.1/mcp', { headers: { accept: 'text/event-stream', 'mcp-session-id': session } }))
    expect(stream.status).toBe(200)
    for (let i = 0; i < 40; i++) mcp.log('warning', 'x'.repeat(32 * 1024))
    const reader = stream.body!.getReader()
    let received = 0
    const outcome = await (async () => {
      try {
        for (;;) { const { done, value } = await reader.read(); if (done) return 'ended'; received += value.length }
      } catch {
        return 'errored'
      }
    })()
    console.log(`web SSE stream never read: ${(received / 1024).toFixed(0)} KiB queued before it was cut (mark 64 KiB, 40 x 32 KiB sent)`)
    expect(outcome).toBe('errored')
    expect(received).toBeLessThan(64 * 1024 + 2 * 33 * 1024)
  })
})
