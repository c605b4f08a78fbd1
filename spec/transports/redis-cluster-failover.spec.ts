import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServer, type McpServer } from '../../actors/server.ts'
import { connect } from '../../actors/client.ts'
import { streamableHttp, type StreamableHttpServer } from '../../transports/streamable-http.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { redisScaleOut, type RedisScaleOut } from '../../transports/redis.ts'
import { redisCli, startRedisCluster, until, type TestRedisCluster } from '../helpers/redis-server.ts'
import { startNginx, type NginxAccess, type TestNginx } from '../helpers/nginx.ts'

/**
 * Issue 27: a Redis Cluster of three primaries, each with a replica (Debian's redis-server x6,
 * `--cluster-replicas 1`), under two rxmcp instances behind a round-robin nginx. The primary
 * holding a live session's record is SIGKILLed; the cluster promotes its replica (cluster-node-timeout
 * 2 s); the session is served again through both instances, and each instance's Redis health went
 * down and came back up.
 */
interface Instance { scale: RedisScaleOut; server: McpServer; http: StreamableHttpServer; health: string[] }

let cluster: TestRedisCluster
let nginx: TestNginx
const instances: Instance[] = []

async function startInstance(index: number): Promise<Instance> {
  const scale = await redisScaleOut({ cluster: cluster.urls }, { prefix: 'failover:' })
  const health: string[] = []
  scale.health.subscribe(state => health.push(state))
  const server = createServer({ name: 'failover', version: '1' }, { ...scale.server })
  server.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
    ({ text }) => ({ content: [{ type: 'text', text: `${String(text)} (session held by ${index})` }] }))
  const http = streamableHttp({ ...scale.http, retryMs: 10 })
  await server.listen(http)
  return { scale, server, http, health }
}

beforeAll(async () => {
  cluster = await startRedisCluster({ replicas: 1 })
  for (let i = 0; i < 2; i++) instances.push(await startInstance(i))
  nginx = await startNginx({ upstreams: instances.map(instance => new URL(instance.http.url!).host) })
}, 90_000)

afterAll(async () => {
  await nginx?.stop()
  for (const instance of instances) {
    await instance.server.close().catch(() => {})
    await instance.http.close().catch(() => {})
    await instance.scale.close()
  }
  await cluster?.stop()
})

/** The instances that answered a session's POSTs with 200, from entry `from` of nginx's log on. */
function upstreamsOf(log: NginxAccess[], sessionId: string, from: number): Set<string> {
  return new Set(log.slice(from).filter(entry => entry.sessionId === sessionId && entry.method === 'POST' && entry.status === 200).map(entry => entry.upstream))
}

/** The primary serving `key`'s slot and its replica, by port, from CLUSTER KEYSLOT and CLUSTER NODES. */
async function holdersOf(key: string): Promise<{ primary: number; replica: number }> {
  const port = cluster.nodes[0]!.port
  const slot = Number((await redisCli(port, 'CLUSTER', 'KEYSLOT', key)).trim())
  const nodes = (await redisCli(port, 'CLUSTER', 'NODES')).trim().split('\n').map(line => {
    const [id, address, flags, primaryId, , , , , ...ranges] = line.split(' ')
    return { id: id!, port: Number(address!.split('@')[0]!.split(':')[1]), flags: flags!, primaryId: primaryId!, ranges }
  })
  const primary = nodes.find(node => node.flags.includes('master') && node.ranges.some(range => {
    const [low, high] = range.split('-').map(Number)
    return slot >= low! && slot <= (high ?? low!)
  }))
  const replica = nodes.find(node => node.flags.includes('slave') && node.primaryId === primary?.id)
  if (primary === undefined || replica === undefined) throw new Error(`no primary and replica for slot ${slot}`)
  return { primary: primary.port, replica: replica.port }
}

/** The replication offset a server reports: the primary's written, or the replica's applied. */
async function offset(port: number, field: 'master_repl_offset' | 'slave_repl_offset'): Promise<number> {
  const match = new RegExp(`^${field}:(\\d+)`, 'm').exec(await redisCli(port, 'INFO', 'replication'))
  return match === null ? -1 : Number(match[1])
}

describe('connectRedis({ cluster }) through a failover', () => {
  it('serves a live session again after the primary holding its record is killed and its replica promoted (recovery time printed)', async () => {
    const transport = streamableHttpClient(`${nginx.url}/mcp`)
    const client = await connect(transport, { name: 'c', version: '1' }, { era: 'legacy', protocolVersion: '2025-11-25' })
    const sessionId = transport.sessionId!
    const raw = (id: string, text: string) => fetch(`${nginx.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text } } }),
      // Bounded: a call forwarded to an instance whose channel is not heard yet waits for nothing.
      signal: AbortSignal.timeout(3000),
    }).then(async response => ({ status: response.status, body: await response.text() }), (error: unknown) => ({ status: 0, body: String(error) }))
    try {
      const before = await Promise.all([raw('b1', 'before'), raw('b2', 'before')])
      expect(before.map(answer => answer.status)).toEqual([200, 200])
      await until('nginx logging both instances serving the session', async () => upstreamsOf(await nginx.accessLog(), sessionId, 0).size === 2)
      const record = `failover:session:${sessionId}`
      const { primary, replica } = await holdersOf(record)
      const primaryOffset = await offset(primary, 'master_repl_offset')
      await until('the replica caught up', async () => await offset(replica, 'slave_repl_offset') >= primaryOffset)
      const logged = (await nginx.accessLog()).length

      const killedAt = performance.now()
      await cluster.nodes.find(node => node.port === primary)!.kill()
      await until('the replica promoted', async () => (await redisCli(replica, 'INFO', 'replication')).includes('role:master'), 30_000)
      const promotedMs = Math.round(performance.now() - killedAt)
      let inRow = 0
      let attempt = 0
      await until('the session served again', async () => {
        const answer = await raw(`after-${attempt}`, `after ${attempt}`)
        const isServed = answer.status === 200 && answer.body.includes(`after ${attempt++}`)
        inRow = isServed ? inRow + 1 : 0
        return inRow >= 2
      }, 60_000)
      await until('nginx logging both instances serving the session after the failover', async () => upstreamsOf(await nginx.accessLog(), sessionId, logged).size === 2)
      const servedMs = Math.round(performance.now() - killedAt)
      console.log(`redis cluster failover: replica promoted ${promotedMs} ms after its primary was killed; the session served through both instances again ${servedMs} ms after the kill`)
      expect(((await client.callTool('echo', { text: 'same session' })).content as { text: string }[])[0]!.text).toMatch(/^same session \(session held by \d\)$/)
      expect(transport.sessionId).toBe(sessionId)
      // The record is on the promoted replica, and each instance's health went down and came back.
      expect(await redisCli(replica, 'EXISTS', record)).toBe('1\n')
      for (const instance of instances) await until('the instance\'s Redis health up again', async () => instance.health.at(-1) === 'up' && instance.health.includes('down'), 30_000)
    } finally {
      await client.close()
    }
  }, 150_000)
})
