import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { filter, firstValueFrom, lastValueFrom, shareReplay, take, toArray } from 'rxjs'
import { connect, type ClientOptions, type ListenEvent, type McpClient } from '../../actors/client.ts'
import { createServer, type McpServer } from '../../actors/server.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { createMemoryPair } from '../../transports/memory.ts'
import type { Transport } from '../../lib/transport.ts'

const INFO = { name: 'own-client', version: '1' }

const OPTIONS: ClientOptions = {
  elicitation: { form: () => ({ action: 'accept', content: { name: 'Ada' } }) },
  sampling: () => ({ role: 'assistant', model: 'rx-model', content: { type: 'text', text: 'sampled' } }),
  roots: [{ uri: 'file:///work', name: 'work' }],
}

/** An rxmcp server whose tools ask the client back (elicit, sample, roots) and mirror a header. */
function ownServer(): McpServer {
  const server = createServer({ name: 'own-server', version: '3.0.0' })
  server.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
    ({ text }) => ({ content: [{ type: 'text', text: String(text) }] }))
  server.tool('ask', {}, async (_args, ctx) => {
    const answer = await ctx.elicit({ mode: 'form', message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } })
    const sampled = await ctx.sample({ messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 8 })
    const roots = await ctx.listRoots()
    return { content: [{ type: 'text', text: `${String(answer.content?.name)} / ${(sampled.content as { text: string }).text} / ${roots.roots.map(root => root.uri).join(',')}` }] }
  })
  server.tool('route', { inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } }, required: ['region'] } },
    ({ region }) => ({ content: [{ type: 'text', text: `routed to ${String(region)}` }] }))
  return server
}

const text = (result: { content: unknown[] }) => (result.content[0] as { text: string }).text

function againstOwnServer(name: string, start: (server: McpServer) => Promise<Transport>) {
  describe(`the rxmcp client against the rxmcp server over ${name} (modern era)`, () => {
    let server: McpServer
    let client: McpClient
    beforeAll(async () => {
      server = ownServer()
      client = await connect(await start(server), INFO, OPTIONS)
    })
    afterAll(async () => { await client?.close(); await server?.close() })

    it('picks the modern era from server/discover', () => {
      expect(client.era).toBe('modern')
      expect(client.protocolVersion).toBe('2026-07-28')
      expect(client.serverInfo).toMatchObject({ name: 'own-server', version: '3.0.0' })
    })

    it('lists and calls tools, one of them with an x-mcp-header argument the server checks', async () => {
      const tools = await lastValueFrom(client.tools().pipe(toArray()))
      expect(tools.map(tool => tool.name)).toEqual(['echo', 'ask', 'route'])
      expect(text(await client.callTool('echo', { text: 'mine' }))).toBe('mine')
      expect(text(await client.callTool('route', { region: 'eu-west' }))).toBe('routed to eu-west')
    })

    it('answers elicitation, sampling and roots input rounds with the client handlers', async () => {
      expect(text(await client.callTool('ask'))).toBe('Ada / sampled / file:///work')
    })

    it('listens and hears a tools list change', async () => {
      const events = client.listen({ toolsListChanged: true }).pipe(shareReplay())
      const subscription = events.subscribe()
      expect(await firstValueFrom(events)).toMatchObject({ type: 'acknowledged', notifications: { toolsListChanged: true } })
      const changed = firstValueFrom(events.pipe(filter((event: ListenEvent) => event.type === 'notification'), take(1)))
      server.tool('late', {}, () => ({ content: [] }))
      expect(await changed).toMatchObject({ method: 'notifications/tools/list_changed' })
      subscription.unsubscribe()
    })
  })
}

againstOwnServer('Streamable HTTP', async server => {
  const http = streamableHttp()
  await server.listen(http)
  return streamableHttpClient(http.url!)
})

againstOwnServer('a memory pair', async server => {
  const [clientSide, serverSide] = createMemoryPair()
  void server.listen(serverSide)
  return clientSide
})
