import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServer, type McpServer } from '../../actors/server.ts'
import { connect } from '../../actors/client.ts'
import { streamableHttp, type StreamableHttpServer } from '../../transports/streamable-http.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { redisScaleOut, type RedisScaleOut } from '../../transports/redis.ts'
import { redisCli, startRedisSentinel, until, type TestRedisSentinel } from '../helpers/redis-server.ts'
import { startNginx, type NginxAccess, type TestNginx } from '../helpers/nginx.ts'

/**
 * Issue 27: a Sentinel-managed Redis (Debian's redis-server x2 and redis-sentinel, quorum 1) under
 * two rxmcp instances behind a round-robin nginx. The primary is SIGKILLed under a live session;
 * the Sentinel promotes the replica; the session is served again through both instances, with
 * what was replicated before the kill (its record, a completed task) still there.
 */
interface Instance { scale: RedisScaleOut; server: McpServer; http: StreamableHttpServer }

let redis: TestRedisSentinel
let nginx: TestNginx
const instances: Instance[] = []

async function startInstance(index: number): Promise<Instance> {
  const scale = await redisScaleOut({ sentinel: [redis.sentinel.url], name: redis.name }, { prefix: 'sentinel:' })
  const server = createServer({ name: 'failover', version: '1' }, { ...scale.server })
  server.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
    ({ text }) => ({ content: [{ type: 'text', text: `${String(text)} (session held by ${index})` }] }))
  server.tool('job', { execution: { taskSupport: 'optional' } }, () => ({ content: [{ type: 'text', text: 'job done' }] }))
  const http = streamableHttp({ ...scale.http, retryMs: 10 })
  await server.listen(http)
  return { scale, server, http }
}

beforeAll(async () => {
  redis = await startRedisSentinel()
  for (let i = 0; i < 2; i++) instances.push(await startInstance(i))
  nginx = await startNginx({ upstreams: instances.map(instance => new URL(instance.http.url!).host) })
}, 60_000)

afterAll(async () => {
  await nginx?.stop()
  for (const instance of instances) {
    await instance.server.close().catch(() => {})
    await instance.http.close().catch(() => {})
    await instance.scale.close()
  }
  await redis?.stop()
})

/** The instances that answered a session's POSTs with 200, from entry `from` of nginx's log on. */
function upstreamsOf(log: NginxAccess[], sessionId: string, from: number): Set<string> {
  return new Set(log.slice(from).filter(entry => entry.sessionId === sessionId && entry.method === 'POST' && entry.status === 200).map(entry => entry.upstream))
}

/** The replication offset a server reports: the primary's written, or the replica's applied. */
async function offset(port: number, field: 'master_repl_offset' | 'slave_repl_offset'): Promise<number> {
  const match = new RegExp(`^${field}:(\\d+)`, 'm').exec(await redisCli(port, 'INFO', 'replication'))
  return match === null ? -1 : Number(match[1])
}

describe('connectRedis({ sentinel, name })', () => {
  it('serves a live session again after the primary is killed and the Sentinel promotes the replica (recovery time printed)', async () => {
    expect(instances[0]!.scale.redis.topology).toBe('sentinel')
    const transport = streamableHttpClient(`${nginx.url}/mcp`)
    const client = await connect(transport, { name: 'c', version: '1' }, { era: 'legacy', protocolVersion: '2025-11-25' })
    const sessionId = transport.sessionId!
    const raw = (id: string, text: string) => fetch(`${nginx.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text } } }),
      // Bounded: a call forwarded while the pub/sub connection moves to the new primary may wait for nothing.
      signal: AbortSignal.timeout(3000),
    }).then(async response => ({ status: response.status, body: await response.text() }), (error: unknown) => ({ status: 0, body: String(error) }))
    try {
      // Before: the session is served through both instances (every other POST is forwarded over Redis).
      const before = await Promise.all([raw('b1', 'before'), raw('b2', 'before')])
      expect(before.map(answer => answer.status)).toEqual([200, 200])
      await until('nginx logging both instances serving the session', async () => upstreamsOf(await nginx.accessLog(), sessionId, 0).size === 2)
      const task = await client.callToolAsTaskResult('job', {})
      expect(task.content).toEqual([{ type: 'text', text: 'job done' }])
      // Replication is asynchronous: the kill below loses what the replica has not applied yet.
      // The test waits until it has applied everything, so what follows shows the failover itself.
      const primaryOffset = await offset(redis.primary.port, 'master_repl_offset')
      await until('the replica caught up', async () => await offset(redis.replica.port, 'slave_repl_offset') >= primaryOffset)

      const killedAt = performance.now()
      await redis.primary.kill()
      await until('the Sentinel naming the replica primary', async () => await redis.primaryAddress() === `127.0.0.1:${redis.replica.port}`, 30_000)
      const promotedMs = Math.round(performance.now() - killedAt)
      const logged = (await nginx.accessLog()).length
      // Served again: two calls in a row answered (round-robin: one through each instance).
      let inRow = 0
      let attempt = 0
      await until('the session served again', async () => {
        const answer = await raw(`after-${attempt}`, `after ${attempt}`)
        const isServed = answer.status === 200 && answer.body.includes(`after ${attempt++}`)
        inRow = isServed ? inRow + 1 : 0
        return inRow >= 2
      }, 60_000)
      const servedMs = Math.round(performance.now() - killedAt)
      await until('nginx logging both instances serving the session after the failover', async () => upstreamsOf(await nginx.accessLog(), sessionId, logged).size === 2)
      console.log(`redis sentinel failover: replica promoted ${promotedMs} ms after the primary was killed; the session served through both instances again ${servedMs} ms after the kill`)
      // The same session, and its client goes on as before.
      expect(((await client.callTool('echo', { text: 'same session' })).content as { text: string }[])[0]!.text).toMatch(/^same session \(session held by \d\)$/)
      expect(transport.sessionId).toBe(sessionId)
      // What was replicated before the kill is on the new primary: the session's record and the task.
      expect(await redisCli(redis.replica.port, 'EXISTS', `sentinel:session:${sessionId}`)).toBe('1\n')
      const listed = await fetch(`${nginx.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 'list', method: 'tasks/list', params: {} }),
      }).then(response => response.text())
      expect(listed).toContain('"status":"completed"')
    } finally {
      await client.close()
    }
  }, 120_000)
})
