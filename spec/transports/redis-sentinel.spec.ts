import { describe, expect, it } from 'vitest'
import { createServer } from '../../actors/server.ts'
import { redisCli, replicationOffset, startRedisSentinel, until, untilServedAgain, upstreamsOf, sessionThroughBoth, useInstancesBehindNginx } from '../helpers/redis-topologies.ts'

/**
 * Issue 27: a Sentinel-managed Redis (Debian's redis-server x2 and redis-sentinel, quorum 1) under
 * two rxmcp instances behind a round-robin nginx. The primary is SIGKILLed under a live session;
 * the Sentinel promotes the replica; the session is served again through both instances, with
 * what was replicated before the kill (its record, a completed task) still there.
 */
const { instances, deployed, nginx } = useInstancesBehindNginx({
  deploy: () => startRedisSentinel(),
  target: redis => ({ sentinel: [redis.sentinel.url], name: redis.name }),
  prefix: 'sentinel:',
  count: 2,
  build(scale, index) {
    const server = createServer({ name: 'failover', version: '1' }, { ...scale.server })
    server.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
      ({ text }) => ({ content: [{ type: 'text', text: `${String(text)} (session held by ${index})` }] }))
    server.tool('job', { execution: { taskSupport: 'optional' } }, () => ({ content: [{ type: 'text', text: 'job done' }] }))
    return server
  },
})

describe('connectRedis({ sentinel, name })', () => {
  it('serves a live session again after the primary is killed and the Sentinel promotes the replica (recovery time printed)', async () => {
    expect(instances[0]!.scale.redis.topology).toBe('sentinel')
    const redis = deployed()
    // Before: the session is served through both instances (every other POST is forwarded over Redis).
    const { client, transport, sessionId, echo: raw } = await sessionThroughBoth(nginx())
    try {
      const task = await client.callToolAsTaskResult('job', {})
      expect(task.content).toEqual([{ type: 'text', text: 'job done' }])
      // Replication is asynchronous: the kill below loses what the replica has not applied yet.
      // The test waits until it has applied everything, so what follows shows the failover itself.
      const primaryOffset = await replicationOffset(redis.primary.port, 'master_repl_offset')
      await until('the replica caught up', async () => await replicationOffset(redis.replica.port, 'slave_repl_offset') >= primaryOffset)

      const killedAt = performance.now()
      await redis.primary.kill()
      await until('the Sentinel naming the replica primary', async () => await redis.primaryAddress() === `127.0.0.1:${redis.replica.port}`, 30_000)
      const promotedMs = Math.round(performance.now() - killedAt)
      const logged = (await nginx().accessLog()).length
      // Served again: two calls in a row answered (round-robin: one through each instance).
      await untilServedAgain(raw)
      const servedMs = Math.round(performance.now() - killedAt)
      await until('nginx logging both instances serving the session after the failover', async () => upstreamsOf(await nginx().accessLog(), sessionId, logged).size === 2)
      console.log(`redis sentinel failover: replica promoted ${promotedMs} ms after the primary was killed; the session served through both instances again ${servedMs} ms after the kill`)
      // The same session, and its client goes on as before.
      expect(((await client.callTool('echo', { text: 'same session' })).content as { text: string }[])[0]!.text).toMatch(/^same session \(session held by \d\)$/)
      expect(transport.sessionId).toBe(sessionId)
      // What was replicated before the kill is on the new primary: the session's record and the task.
      expect(await redisCli(redis.replica.port, 'EXISTS', `sentinel:session:${sessionId}`)).toBe('1\n')
      const listed = await fetch(`${nginx().url}/mcp`, {
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
