import { describe, expect, it } from 'vitest'
import { randomUUID } from 'node:crypto'
import { createServer } from '../../actors/server.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { postTo, useScaleOut } from '../helpers/scale-instances.ts'

/**
 * Two instances of one listener on a real redis-server, behind a proxy that names the client in
 * `X-Real-IP`. A request for a session the other instance holds is forwarded there: its handler
 * must still see the headers of the POST the client sent and the address the front resolved.
 */


const cluster = useScaleOut()

async function instance(prefix: string): Promise<string> {
  const { http } = await cluster.start(prefix, scale => {
    const server = createServer({ name: 'forwarded', version: '1' }, { ...scale.server })
    server.tool('whoami', {}, (_args, ctx) => ({
      content: [{ type: 'text', text: JSON.stringify({ tag: ctx.requestInfo.headers?.get('x-tag') ?? null, remoteAddress: ctx.requestInfo.remoteAddress ?? null }) }],
    }))
    return { server, http: streamableHttp({ ...scale.http, clientAddress: request => request.header('x-real-ip') ?? undefined }) }
  })
  return http.url!
}

describe('issue 21: ctx.request', { timeout: 30_000 }, () => {
  it('gives a request forwarded to the session\'s owner the headers of the client\'s POST and the address the front resolved', async () => {
    const prefix = `request-info-${randomUUID()}:`
    const front = await instance(prefix)
    const owner = await instance(prefix)
    const init = await postTo(owner, { 'x-real-ip': '203.0.113.10' }, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } })
    expect(init.status).toBe(200)
    const session = init.headers.get('mcp-session-id')!
    const headers = { 'x-real-ip': '203.0.113.10', 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' }
    expect((await postTo(owner, headers, { jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202)
    // Through the front, from another client address and with a header of the client's own.
    const call = await postTo(front, { ...headers, 'x-real-ip': '203.0.113.20', 'x-tag': 'forwarded' }, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } })
    expect(call.status).toBe(200)
    const data = call.body.split('\n').find(line => line.startsWith('data: {'))!
    const answer = JSON.parse(data.slice('data: '.length)) as { id: number; result: { content: { text: string }[] } }
    expect(answer.id).toBe(1)
    expect(JSON.parse(answer.result.content[0]!.text)).toEqual({ tag: 'forwarded', remoteAddress: '203.0.113.20' })
  })
})
