import { describe, expect, it } from 'vitest'
import { createServer } from '../../actors/server.ts'
import { redisCli, replicationOffset, startRedisCluster, until, untilServedAgain, upstreamsOf, sessionThroughBoth, useInstancesBehindNginx } from '../helpers/redis-topologies.ts'

/**
 * Issue 27: a Redis Cluster of three primaries, each with a replica (Debian's redis-server x6,
 * `--cluster-replicas 1`), under two rxmcp instances behind a round-robin nginx. The primary
 * holding a live session's record is SIGKILLed; the cluster promotes its replica (cluster-node-timeout
 * 2 s); the session is served again through both instances, and each instance's Redis health went
 * down and came back up.
 */
/** Each instance's Redis health states, in order. */
const healths: string[][] = [[], []]
const { instances, deployed, nginx } = useInstancesBehindNginx({
  deploy: () => startRedisCluster({ replicas: 1 }),
  target: cluster => ({ cluster: cluster.urls }),
  prefix: 'failover:',
  count: 2,
  timeoutMs: 90_000,
  build(scale, index) {
    scale.health.subscribe(state => healths[index]!.push(state))
    const server = createServer({ name: 'failover', version: '1' }, { ...scale.server })
    server.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
      ({ text }) => ({ content: [{ type: 'text', text: `${String(text)} (session held by ${index})` }] }))
    return server
  },
})

/** The primary serving `key`'s slot and its replica, by port, from CLUSTER KEYSLOT and CLUSTER NODES. */
async function holdersOf(key: string): Promise<{ primary: number; replica: number }> {
  const port = deployed().nodes[0]!.port
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

describe('connectRedis({ cluster }) through a failover', () => {
  it('serves a live session again after the primary holding its record is killed and its replica promoted (recovery time printed)', async () => {
    // Before: the session is served through both instances (every other POST is forwarded over Redis).
    const { client, transport, sessionId, echo: raw } = await sessionThroughBoth(nginx())
    try {
      const record = `failover:session:${sessionId}`
      const { primary, replica } = await holdersOf(record)
      const primaryOffset = await replicationOffset(primary, 'master_repl_offset')
      await until('the replica caught up', async () => await replicationOffset(replica, 'slave_repl_offset') >= primaryOffset)
      const logged = (await nginx().accessLog()).length

      const killedAt = performance.now()
      await deployed().nodes.find(node => node.port === primary)!.kill()
      await until('the replica promoted', async () => (await redisCli(replica, 'INFO', 'replication')).includes('role:master'), 30_000)
      const promotedMs = Math.round(performance.now() - killedAt)
      await untilServedAgain(raw)
      await until('nginx logging both instances serving the session after the failover', async () => upstreamsOf(await nginx().accessLog(), sessionId, logged).size === 2)
      const servedMs = Math.round(performance.now() - killedAt)
      console.log(`redis cluster failover: replica promoted ${promotedMs} ms after its primary was killed; the session served through both instances again ${servedMs} ms after the kill`)
      expect(((await client.callTool('echo', { text: 'same session' })).content as { text: string }[])[0]!.text).toMatch(/^same session \(session held by \d\)$/)
      expect(transport.sessionId).toBe(sessionId)
      // The record is on the promoted replica, and each instance's health went down and came back.
      expect(await redisCli(replica, 'EXISTS', record)).toBe('1\n')
      for (const health of healths.slice(0, instances.length)) await until('the instance\'s Redis health up again', async () => health.at(-1) === 'up' && health.includes('down'), 30_000)
    } finally {
      await client.close()
    }
  }, 150_000)
})
