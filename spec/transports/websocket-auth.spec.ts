import { afterEach, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import { VirtualTimeScheduler } from 'rxjs'
import { createServer } from '../../actors/server.ts'
import { websocket, WS_SUBPROTOCOL } from '../../transports/websocket.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { bearerAuth } from '../../auth/server.ts'
import { jwtVerifier } from '../../auth/verifiers.ts'
import { freePort, testIssuer } from '../auth/fixtures.ts'

const ISSUER = 'https://issuer.test'
const RESOURCE = 'http://127.0.0.1/mcp'

const cleanup: (() => Promise<void> | void)[] = []
afterEach(async () => { for (const close of cleanup.splice(0).reverse()) await close() })

type Answer = { id: number; result?: { content?: { text: string }[] }; error?: { code: number; message: string; data?: Record<string, unknown> } }

/**
 * A server behind bearerAuth on a real WebSocket listener: `write_file` needs `files:write`,
 * `whoami` nothing beyond the token. `ran` counts the calls of write_file that ran.
 */
async function protectedSocketServer(scheduler?: VirtualTimeScheduler) {
  const issuer = await testIssuer(ISSUER, RESOURCE)
  const ran = { writeFile: 0 }
  const mcp = createServer({ name: 'ws-protected', version: '1' })
  mcp.tool('write_file', {}, () => { ran.writeFile++; return { content: [{ type: 'text', text: 'written' }] } })
  mcp.tool('whoami', {}, (_args, ctx) => ({ content: [{ type: 'text', text: ctx.principal?.subject ?? 'nobody' }] }))
  const auth = bearerAuth({ resource: RESOURCE, authorizationServers: [ISSUER], verify: jwtVerifier({ issuer: ISSUER, jwks: issuer.jwks }), scopes: { 'tools/call:write_file': ['files:write'] } })
  const ws = websocket({ auth, heartbeatMs: 0, sessionIdleTimeout: 0, ...(scheduler === undefined ? {} : { scheduler }) })
  await mcp.listen(ws)
  cleanup.push(() => mcp.close())
  return { url: ws.url!, issuer, ran }
}

/** Opens a socket with a bearer token; resolves once open. */
function open(url: string, token: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, [WS_SUBPROTOCOL.json], { headers: { authorization: `Bearer ${token}` } })
    cleanup.push(() => socket.terminate())
    socket.once('open', () => resolve(socket))
    socket.once('unexpected-response', (_request, response) => reject(new Error(`upgrade refused: ${response.statusCode}`)))
    socket.once('error', reject)
  })
}

/** Sends a payload and resolves with the first message answering `id`. */
function send(socket: WebSocket, id: number, payload: unknown): Promise<Answer | Answer[]> {
  return new Promise(resolve => {
    const onMessage = (data: Buffer) => {
      const message = JSON.parse(data.toString())
      if ((Array.isArray(message) ? message.some((item: Answer) => item.id === id) : message.id === id)) { socket.off('message', onMessage); resolve(message) }
    }
    socket.on('message', onMessage)
    socket.send(JSON.stringify(payload))
  })
}

const call = (socket: WebSocket, id: number, name: string) =>
  send(socket, id, { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } }) as Promise<Answer>

async function initialize(socket: WebSocket): Promise<void> {
  await send(socket, 0, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'ws-auth', version: '1' } } })
  socket.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
}

describe('issue 20: WebSocket skips per-operation scopes', { timeout: 20_000 }, () => {
  it('answers a scoped tools/call the token lacks with -31003 naming the missing scope, runs nothing, and serves on', async () => {
    const { url, issuer, ran } = await protectedSocketServer()
    const socket = await open(url, await issuer.token({ scope: 'mcp' }))
    await initialize(socket)
    const refused = await call(socket, 7, 'write_file')
    expect(refused).toEqual({
      jsonrpc: '2.0', id: 7,
      error: { code: -31003, message: expect.stringContaining('files:write'), data: { error: 'insufficient_scope', requiredScopes: ['files:write'], missingScopes: ['files:write'] } },
    })
    expect(ran.writeFile).toBe(0)
    // A refused batch is answered request by request, each with its id, as HTTP refuses the whole POST.
    const batch = await send(socket, 9, [
      { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'whoami', arguments: {} } },
      { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'write_file', arguments: {} } },
    ])
    expect(batch).toMatchObject([{ id: 8, error: { code: -31003 } }, { id: 9, error: { code: -31003 } }])
    expect(ran.writeFile).toBe(0)
    // The session lives on: what the token allows is served.
    expect(await call(socket, 10, 'whoami')).toMatchObject({ id: 10, result: { content: [{ text: 'alice' }] } })
    expect(socket.readyState).toBe(WebSocket.OPEN)
  })

  it('serves the scoped call to a token that has the scope', async () => {
    const { url, issuer, ran } = await protectedSocketServer()
    const socket = await open(url, await issuer.token({ scope: 'mcp files:write' }))
    await initialize(socket)
    expect(await call(socket, 1, 'write_file')).toMatchObject({ id: 1, result: { content: [{ text: 'written' }] } })
    expect(ran.writeFile).toBe(1)
  })

  it('refuses every request once the token has expired, and closes the socket with 1008 at the expiry', async () => {
    // The listener's clock is virtual, started at the wall clock's now (the token's exp is on it).
    const scheduler = new VirtualTimeScheduler()
    scheduler.frame = Date.now()
    const flush = (until: number) => { scheduler.schedule(() => {}, until - scheduler.now()); scheduler.maxFrames = until; scheduler.flush() }
    const { url, issuer, ran } = await protectedSocketServer(scheduler)
    const token = await issuer.token({ scope: 'mcp files:write' }, { expiresInSec: 600 })
    const expiresAtMs = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).exp * 1000
    const socket = await open(url, token)
    const closed = new Promise<{ code: number; reason: string }>(resolve => socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })))
    await initialize(socket)
    expect(await call(socket, 1, 'whoami')).toMatchObject({ result: { content: [{ text: 'alice' }] } })
    // One millisecond before the expiry: still served, still open.
    flush(expiresAtMs - 1)
    expect(await call(socket, 2, 'write_file')).toMatchObject({ result: { content: [{ text: 'written' }] } })
    // At the expiry, before the close has run (the clock moved, the timer not yet): refused, not served.
    scheduler.frame = expiresAtMs
    expect(await call(socket, 3, 'write_file')).toEqual({ jsonrpc: '2.0', id: 3, error: { code: -31003, message: expect.any(String), data: { error: 'invalid_token' } } })
    expect(ran.writeFile).toBe(1)
    // The timer runs: the socket is closed as a policy violation.
    flush(expiresAtMs)
    expect(await closed).toEqual({ code: 1008, reason: 'token expired' })
  })
})

describe('authorization on every transport', () => {
  it('refuses the same scoped call on a legacy HTTP+SSE POST with 403 insufficient_scope', async () => {
    const port = await freePort()
    const resource = `http://127.0.0.1:${port}/mcp`
    const issuer = await testIssuer(ISSUER, resource)
    const mcp = createServer({ name: 'sse-protected', version: '1' })
    mcp.tool('write_file', {}, () => ({ content: [{ type: 'text', text: 'written' }] }))
    const auth = bearerAuth({ resource, authorizationServers: [ISSUER], verify: jwtVerifier({ issuer: ISSUER, jwks: issuer.jwks }), scopes: { 'tools/call:write_file': ['files:write'] } })
    await mcp.listen(streamableHttp({ port, auth }))
    cleanup.push(() => mcp.close())
    const controller = new AbortController()
    cleanup.push(() => controller.abort())
    const authorization = `Bearer ${await issuer.token({ scope: 'mcp' })}`
    const stream = await fetch(`http://127.0.0.1:${port}/sse`, { headers: { accept: 'text/event-stream', authorization }, signal: controller.signal })
    const first = new TextDecoder().decode((await stream.body!.getReader().read()).value)
    const endpoint = /data: (\S+)/.exec(first)![1]!
    const refused = await fetch(`http://127.0.0.1:${port}${endpoint}`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'write_file', arguments: {} } }),
    })
    expect(refused.status).toBe(403)
    expect(refused.headers.get('www-authenticate')).toContain('scope="files:write"')
  })
})
