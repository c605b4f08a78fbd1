import { describe, expect, it } from 'vitest'
import { randomUUID } from 'node:crypto'
import { createServer } from '../../actors/server.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { postTo, useScaleOut } from '../helpers/scale-instances.ts'

/**
 * Two instances of one listener on a real redis-server, behind a proxy that names the client in
 * `X-Real-IP` (each instance's `clientAddress` reads it). A request that names a session another
 * instance holds is forwarded there and served (and charged) by the owner: the owner must count it
 * by the client's address, resolved where the request arrived, not by the front's socket.
 */


const cluster = useScaleOut()

/** One instance of the listener: scale-out on the test's Redis, one request per client budget, clients by X-Real-IP. */
async function instance(prefix: string): Promise<string> {
  const { http } = await cluster.start(prefix, scale => ({
    server: createServer({ name: 'forwarded', version: '1' }, { ...scale.server }),
    http: streamableHttp({
      ...scale.http,
      rateLimit: { capacity: 1, refillPerSecond: 0.001 },
      clientAddress: request => request.header('x-real-ip') ?? undefined,
    }),
  }))
  return http.url!
}

describe('issue 20: a forwarded request is counted by the client\'s address, not the front instance\'s socket', { timeout: 30_000 }, () => {
  it('charges a request forwarded to the session\'s owner to the address the front resolved', async () => {
    const prefix = `forwarded-${randomUUID()}:`
    const front = await instance(prefix)
    const owner = await instance(prefix)
    // Client X opens a session on the owner: its one request of budget is spent there.
    const init = await postTo(owner, { 'x-real-ip': '203.0.113.10' }, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } })
    expect(init.status).toBe(200)
    const session = init.headers.get('mcp-session-id')!
    const headers = (address: string) => ({ 'x-real-ip': address, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' })
    expect((await postTo(owner, headers('203.0.113.10'), { jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202)
    // X again, through the front: forwarded, and X's budget is spent wherever it arrives.
    const again = await postTo(front, headers('203.0.113.10'), { jsonrpc: '2.0', id: 1, method: 'ping' })
    expect(again.status).toBe(429)
    expect(JSON.parse(again.body)).toMatchObject({ id: 1, error: { code: -31029 } })
    // Client Y through the same front (the same socket address): its own budget, served by the owner.
    const other = await postTo(front, headers('203.0.113.20'), { jsonrpc: '2.0', id: 2, method: 'ping' })
    expect(other.status).toBe(200)
    expect(other.body).toContain('"id":2')
    expect(other.body).toContain('"result"')
  })
})
