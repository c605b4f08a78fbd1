import { describe, expect, it, vi } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js'
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema, LoggingMessageNotificationSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { connect, type ClientOptions } from '../../actors/client.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import type { RedisTarget } from '../../transports/redis.ts'
import { createEverythingServer } from '../../examples/everything/everything.ts'
import { useInstancesBehindNginx, type TopologyInstance } from '../helpers/redis-topologies.ts'
import { collected } from '../helpers/collected.ts'

/** One rxmcp instance of the matrix: its Redis scale-out, server and listener. */
export type Instance = TopologyInstance

/** A Redis for the matrix: where the instances connect (`connectRedis`'s target), and how to stop it. */
export interface MatrixRedis { target: RedisTarget; stop(): Promise<void> }

/** What a file running the matrix may use for cases of its own. */
export interface Matrix {
  readonly instances: readonly Instance[]
  url(): string
  textOf(result: { content: unknown }): string
  legacyClient(options?: ClientOptions): Promise<{ client: Awaited<ReturnType<typeof connect>>; transport: ReturnType<typeof streamableHttpClient> }>
}

/**
 * Issue 13's scale-out matrix: three rxmcp instances (in this process, each with its own
 * listener, server and Redis connections) of the everything server on the Redis `deploy` starts
 * once for the file (a redis-server in redis-cluster.spec.ts, a Redis Cluster of three primaries
 * in redis-cluster-on-cluster.spec.ts), behind a real nginx balancing round-robin without
 * stickiness: every request of a session may land on any instance.
 */
export function scaleOutMatrix(deploy: () => Promise<MatrixRedis>): Matrix {
  const { instances, nginx } = useInstancesBehindNginx({
    deploy,
    target: deployed => deployed.target,
    prefix: 'matrix:',
    count: 3,
    build(scale, index) {
      const server = createEverythingServer({ ...scale.server })
      server.tool('whoami', { description: 'Which instance served this call', inputSchema: { type: 'object', properties: {} } },
        () => ({ content: [{ type: 'text', text: String(index) }] }))
      return server
    },
  })

  const url = () => `${nginx().url}/mcp`
  const textOf = (result: { content: unknown }) => (result.content as { text: string }[])[0]!.text

  /** Our client in the legacy era (sessions), through the balancer. */
  async function legacyClient(options: ClientOptions = {}) {
    const transport = streamableHttpClient(url())
    const client = await connect(transport, { name: 'c', version: '1' }, { era: 'legacy', protocolVersion: '2025-11-25', ...options })
    return { client, transport }
  }

  /** The POSTs nginx logged for a session: consecutive ones went to different instances, and all three served some. */
  async function expectRoundRobin(sessionId: string): Promise<void> {
    // nginx writes a request's line once it has sent the response: the client may be ahead of the log.
    await vi.waitFor(async () => {
      const posts = (await nginx().accessLog()).filter(entry => entry.sessionId === sessionId && entry.method === 'POST')
      expect(posts.length).toBeGreaterThan(6)
      expect(new Set(posts.map(entry => entry.upstream)).size).toBe(3)
    }, { timeout: 10_000, interval: 20 })
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
        await vi.waitFor(async () => {
          const log = (await nginx().accessLog()).filter(entry => entry.sessionId === transport.sessionId && entry.method === 'POST')
          expect(new Set(log.map(entry => entry.upstream)).size).toBe(3)
          for (let i = 1; i < log.length; i++) expect(log[i]!.upstream).not.toBe(log[i - 1]!.upstream)
        }, { timeout: 10_000, interval: 20 })
      } finally {
        await client.close()
      }
    })

    it('runs the full feature matrix with our client: every request may land on another instance', async () => {
      const { client, transport } = await legacyClient({
        sampling: () => ({ role: 'assistant', content: { type: 'text', text: 'sampled' }, model: 'test-model' }),
        elicitation: { form: () => ({ action: 'accept' as const, content: { name: 'Ada' } }) },
        roots: [{ uri: 'file:///tmp/project', name: 'project' }],
      })
      try {
        const logs = collected<unknown>()
        const updates = collected<unknown>()
        client.notifications('notifications/message').subscribe(message => logs.push(message))
        client.notifications('notifications/resources/updated').subscribe(update => updates.push(update))
        // Pages of one listing come from different instances: the cursor is the server's, not an instance's.
        const tools: string[] = []
        let cursor: string | undefined
        do { const page = await client.listTools(cursor); tools.push(...page.tools.map(tool => tool.name)); cursor = page.nextCursor } while (cursor !== undefined)
        expect(tools).toEqual(expect.arrayContaining(['echo', 'long_running', 'sample', 'elicit', 'roots', 'log', 'whoami']))
        expect(textOf(await client.callTool('echo', { text: 'hi' }))).toContain('hi')
        const progress: number[] = []
        await client.callTool('long_running', { steps: 4, ms: 5 }, { onProgress: event => progress.push(event.progress) })
        expect(progress).toEqual([1, 2, 3, 4])
        expect(textOf(await client.callTool('sample', { prompt: 'hello' }))).toBe('test-model: sampled')
        expect(JSON.parse(textOf(await client.callTool('elicit', {})))).toMatchObject({ action: 'accept', content: { name: 'Ada' } })
        expect(JSON.parse(textOf(await client.callTool('roots', {})))).toEqual([{ uri: 'file:///tmp/project', name: 'project' }])
        await client.setLoggingLevel('debug')
        await client.callTool('log', { level: 'info', message: 'hello logs' })
        await logs.when(items => items.length > 0)
        expect(logs.items[0]).toMatchObject({ level: 'info', data: 'hello logs' })
        const prompts: string[] = []
        cursor = undefined
        do { const page = await client.listPrompts(cursor); prompts.push(...page.prompts.map(prompt => prompt.name)); cursor = page.nextCursor } while (cursor !== undefined)
        expect(prompts).toEqual(expect.arrayContaining(['greeting', 'code_review', 'simple_1']))
        expect((await client.getPrompt('greeting', { name: 'Ada' })).messages[0]!.content).toEqual({ type: 'text', text: 'Say hello to Ada' })
        expect((await client.complete({ ref: { type: 'ref/prompt', name: 'greeting' }, argument: { name: 'name', value: 'A' } })).completion.values).toEqual(['Ada', 'Alan'])
        expect((await client.listResourceTemplates()).resourceTemplates.map(template => template.uriTemplate)).toContain('everything://items/{id}')
        expect((await client.readResource('everything://items/7')).contents[0]).toMatchObject({ text: JSON.stringify({ id: '7', name: 'Item 7' }) })
        await client.subscribeResource('everything://readme')
        await client.callTool('touch', { uri: 'everything://readme' })
        await updates.when(items => items.length > 0)
        await client.ping()
        await expectRoundRobin(transport.sessionId!)
      } finally {
        await client.close()
      }
    })

    it('runs the full feature matrix with the official SDK client (legacy era, with a session)', async () => {
      const sdkTransport = new StreamableHTTPClientTransport(new URL(url()))
      const sdk = new Client({ name: 'official', version: '1' }, { capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } } })
      sdk.setRequestHandler(CreateMessageRequestSchema, () => ({ role: 'assistant', content: { type: 'text', text: 'sampled' }, model: 'sdk-model' }))
      sdk.setRequestHandler(ElicitRequestSchema, () => ({ action: 'accept', content: { name: 'Grace' } }))
      sdk.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: 'file:///srv', name: 'srv' }] }))
      const logs = collected<unknown>()
      const updates = collected<unknown>()
      sdk.setNotificationHandler(LoggingMessageNotificationSchema, notification => { logs.push(notification.params) })
      sdk.setNotificationHandler(ResourceUpdatedNotificationSchema, notification => { updates.push(notification.params) })
      await sdk.connect(sdkTransport)
      try {
        const tools: string[] = []
        let cursor: string | undefined
        do { const page = await sdk.listTools(cursor === undefined ? {} : { cursor }); tools.push(...page.tools.map(tool => tool.name)); cursor = page.nextCursor } while (cursor !== undefined)
        expect(tools).toEqual(expect.arrayContaining(['echo', 'long_running', 'sample', 'elicit', 'roots', 'log']))
        expect(textOf(await sdk.callTool({ name: 'echo', arguments: { text: 'sdk' } }) as { content: unknown })).toContain('sdk')
        const progress: number[] = []
        await sdk.callTool({ name: 'long_running', arguments: { steps: 4, ms: 5 } }, undefined, { onprogress: event => { progress.push(event.progress) } })
        expect(progress).toEqual([1, 2, 3, 4])
        expect(textOf(await sdk.callTool({ name: 'sample', arguments: { prompt: 'x' } }) as { content: unknown })).toBe('sdk-model: sampled')
        expect((await sdk.callTool({ name: 'elicit', arguments: {} })).structuredContent).toEqual({ action: 'accept', content: { name: 'Grace' } })
        expect(JSON.parse(textOf(await sdk.callTool({ name: 'roots', arguments: {} }) as { content: unknown }))).toEqual([{ uri: 'file:///srv', name: 'srv' }])
        await sdk.setLoggingLevel('debug')
        await sdk.callTool({ name: 'log', arguments: { level: 'warning', message: 'sdk logs' } })
        await logs.when(items => items.length > 0)
        expect(logs.items[0]).toMatchObject({ level: 'warning', data: 'sdk logs' })
        const prompts = await sdk.listPrompts()
        expect(prompts.nextCursor).toBeDefined()
        expect((await sdk.listPrompts({ cursor: prompts.nextCursor })).prompts.length).toBeGreaterThan(0)
        expect((await sdk.getPrompt({ name: 'code_review', arguments: { language: 'go', code: 'x' } })).description).toBe('Review of go code')
        expect((await sdk.complete({ ref: { type: 'ref/resource', uri: 'everything://items/{id}' }, argument: { name: 'id', value: '11' } })).completion.values).toContain('110')
        const resources = await sdk.listResources()
        expect(resources.resources.map(resource => resource.uri)).toContain('everything://readme')
        expect((await sdk.readResource({ uri: 'everything://static/2' })).contents[0]).toMatchObject({ text: 'Static resource 2' })
        await sdk.subscribeResource({ uri: 'everything://logo' })
        await sdk.callTool({ name: 'touch', arguments: { uri: 'everything://logo' } })
        await updates.when(items => items.length > 0)
        expect(updates.items[0]).toEqual({ uri: 'everything://logo' })
        await sdk.ping()
        await expectRoundRobin(sdkTransport.sessionId!)
        await sdkTransport.terminateSession()
      } finally {
        await sdk.close()
      }
    })

    it('serves the 2024-11-05 HTTP+SSE transport: the stream on one instance, its POSTs through any', async () => {
      const sseTransport = new SSEClientTransport(new URL(`${nginx().url}/sse`))
      const sdk = new Client({ name: 'official-sse', version: '1' }, { capabilities: { elicitation: {} } })
      sdk.setRequestHandler(ElicitRequestSchema, () => ({ action: 'decline' }))
      await sdk.connect(sseTransport)
      try {
        for (let i = 0; i < 4; i++) expect(textOf(await sdk.callTool({ name: 'echo', arguments: { text: `sse ${i}` } }) as { content: unknown })).toContain(`sse ${i}`)
        expect((await sdk.callTool({ name: 'elicit', arguments: {} })).structuredContent).toEqual({ action: 'decline' })
        await vi.waitFor(async () => {
          const posts = (await nginx().accessLog()).filter(entry => entry.method === 'POST' && entry.uri.startsWith('/messages?sessionId='))
          expect(new Set(posts.map(entry => entry.upstream)).size).toBe(3)
        }, { timeout: 10_000, interval: 20 })
      } finally {
        await sdk.close()
      }
      // Its stream closed, the session is forgotten in Redis too.
      const sessionId = new URLSearchParams((await nginx().accessLog()).find(entry => entry.uri.startsWith('/messages?sessionId='))!.uri.split('?')[1]).get('sessionId')!
      const redisClient = instances[0]!.scale.redis as unknown as { exists(key: string): Promise<number> }
      const end = Date.now() + 10_000
      while (await redisClient.exists(`matrix:session:${sessionId}`) === 1) {
        if (Date.now() > end) throw new Error('the legacy session\'s record is still in Redis')
        await new Promise(resolve => setTimeout(resolve, 20))
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
  return { instances, url, textOf, legacyClient }
}
