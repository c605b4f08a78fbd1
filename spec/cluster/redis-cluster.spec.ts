import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { firstValueFrom, filter, take, toArray } from 'rxjs'
import { createServer, type McpServer } from '../../actors/server.ts'
import { connect, type ClientOptions } from '../../actors/client.ts'
import { streamableHttp, type StreamableHttpServer } from '../../transports/streamable-http.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { redisScaleOut, type RedisScaleOut } from '../../transports/redis.ts'
import { startRedis, type TestRedis } from '../helpers/redis-server.ts'
import { startNginx, type TestNginx } from '../helpers/nginx.ts'

/**
 * Three rxmcp instances (in this process, each with its own listener, server and Redis
 * connections) on one real redis-server, behind a real nginx balancing round-robin without
 * stickiness: every request of a session may land on any instance.
 */
interface Instance { scale: RedisScaleOut; server: McpServer; http: StreamableHttpServer; served: string[] }

let redis: TestRedis
let nginx: TestNginx
const instances: Instance[] = []
let prefixCount = 0

async function startInstance(prefix: string, index: number): Promise<Instance> {
  const scale = await redisScaleOut(redis.url, { prefix })
  const server = createServer({ name: 'cluster', version: '1' }, { ...scale.server, capabilities: { logging: {}, resources: { subscribe: true } } })
  const served: string[] = []
  server.use(next => (request, ctx) => { served.push(request.method); return next(request, ctx) })
  server.tool('whoami', {}, () => ({ content: [{ type: 'text', text: String(index) }] }))
  server.tool('ask', { inputSchema: z.object({ question: z.string() }) }, async ({ question }, ctx) => {
    const answer = await ctx.elicit({ message: question, requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } })
    return { content: [{ type: 'text', text: `${answer.action}:${String((answer.content as { name?: string } | undefined)?.name)}` }] }
  })
  server.tool('log', { inputSchema: z.object({ text: z.string() }) }, ({ text }, ctx) => {
    ctx.log('info', text)
    return { content: [{ type: 'text', text: 'logged' }] }
  })
  const http = streamableHttp({ ...scale.http, retryMs: 10 })
  await server.listen(http)
  return { scale, server, http, served }
}

beforeAll(async () => {
  redis = await startRedis()
  const prefix = `c${++prefixCount}:`
  for (let i = 0; i < 3; i++) instances.push(await startInstance(prefix, i))
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

const url = () => `${nginx.url}/mcp`

/** Our client in the legacy era (sessions), through the balancer. */
async function legacyClient(options: ClientOptions = {}) {
  const transport = streamableHttpClient(url())
  const client = await connect(transport, { name: 'c', version: '1' }, { era: 'legacy', protocolVersion: '2025-11-25', ...options })
  return { client, transport }
}

describe('sessions shared through Redis behind a round-robin balancer', () => {
  it('serves every request of one session whichever instance it lands on', async () => {
    const { client, transport } = await legacyClient()
    try {
      const seen = new Set<string>()
      for (let i = 0; i < 9; i++) {
        const result = await client.callTool('whoami', {})
        seen.add((result.content[0] as { text: string }).text)
      }
      // The session lives on one instance; the requests arrived on all three.
      expect(seen.size).toBe(1)
      const log = (await nginx.accessLog()).filter(entry => entry.sessionId === transport.sessionId && entry.method === 'POST')
      expect(new Set(log.map(entry => entry.upstream)).size).toBe(3)
      for (let i = 1; i < log.length; i++) expect(log[i]!.upstream).not.toBe(log[i - 1]!.upstream)
    } finally {
      await client.close()
    }
  })

  it('carries a server-to-client request across instances: elicitation asked on one, answered through another', async () => {
    const { client } = await legacyClient({ elicitation: { form: () => ({ action: 'accept' as const, content: { name: 'Ada' } }) } })
    try {
      for (let i = 0; i < 3; i++) {
        const result = await client.callTool('ask', { question: 'name?' })
        expect(result.content).toEqual([{ type: 'text', text: 'accept:Ada' }])
      }
    } finally {
      await client.close()
    }
  })

  it('keeps the log level set through one instance for messages sent by the owner', async () => {
    const { client } = await legacyClient()
    try {
      await client.setLoggingLevel('warning')
      const messages = client.notifications('notifications/message')
      const got = firstValueFrom(messages.pipe(take(1), toArray()))
      await client.setLoggingLevel('debug')
      await client.callTool('log', { text: 'hello' })
      const [message] = await got
      expect(message).toMatchObject({ level: 'info', data: 'hello' })
    } finally {
      await client.close()
    }
  })

  it('ends a session on every instance with DELETE through any of them', async () => {
    const { client, transport } = await legacyClient()
    const sessionId = transport.sessionId!
    await client.close()
    // The session's requests now get 404 whichever instance they reach.
    for (let i = 0; i < 3; i++) {
      const response = await fetch(url(), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      })
      expect(response.status).toBe(404)
    }
  })
})
