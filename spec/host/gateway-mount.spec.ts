import { afterEach, describe, expect, it } from 'vitest'
import { filter, firstValueFrom } from 'rxjs'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import {
  CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema, ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js'
import { Client as ClientV2, StreamableHTTPClientTransport as StreamableV2 } from '@modelcontextprotocol/client'
import { createHost, type Host, type HostOptions } from '../../host/host.ts'
import { hostServer, type GatewayOptions } from '../../host/gateway.ts'
import { parseHostConfig } from '../../lib/host-config.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { connect } from '../../actors/client.ts'
import { createServer } from '../../actors/server.ts'

/**
 * The gateway rebuilt on mount and proxy (issue 26): what the old gateway did not forward —
 * templates, completion, subscriptions, the caller answering the server's sampling, elicitation and
 * roots, one downstream client per gateway session — through the official SDK v1 client and ours.
 */
const EXAMPLE = { command: process.execPath, args: ['--import', 'tsx', 'examples/everything/server.ts'] }
const INFO = { name: 'gateway-mount-spec', version: '1' }
const text = (result: unknown) => ((result as { content: { text?: string }[] }).content[0]!).text

const cleanup: (() => Promise<void>)[] = []
afterEach(async () => { for (const close of cleanup.splice(0).reverse()) await close() })

async function readyHost(servers: Record<string, unknown>, options: HostOptions = { gateway: true }): Promise<Host> {
  const host = createHost(parseHostConfig({ mcpServers: servers }), options)
  cleanup.push(() => host.close())
  const names = Object.keys(servers)
  await firstValueFrom(host.tools.pipe(filter(tools => names.every(name => tools.some(tool => tool.server === name)))))
  return host
}

async function gatewayUrl(host: Host, options: GatewayOptions = {}): Promise<string> {
  const gateway = hostServer(host, options)
  // The mounts follow the host: its view at once, then each server's templates, which its own client lists.
  const listed = templatesListed(gateway.server)
  const http = streamableHttp({ port: 0, host: '127.0.0.1' })
  await gateway.server.listen(http)
  cleanup.push(() => gateway.close())
  await listed
  return http.url!
}

/** Resolves when a mount has written the templates its client listed (the resources list changed). */
function templatesListed(server: GatewayServer): Promise<unknown> {
  return firstValueFrom(server.events.pipe(filter(event => event.type === 'list_changed' && event.kind === 'resources')))
}
type GatewayServer = ReturnType<typeof hostServer>['server']

async function officialClient(url: string): Promise<Client> {
  const client = new Client({ name: 'sdk', version: '1' }, { capabilities: { sampling: {}, elicitation: { form: {}, url: {} }, roots: { listChanged: true } } })
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({ role: 'assistant', model: 'caller-model', content: { type: 'text', text: 'from the caller' } }))
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Caller' } }))
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///caller', name: 'caller' }] }))
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  cleanup.push(() => client.close())
  return client
}

describe('the gateway on mount and proxy', () => {
  it('lists and reads templates and answers completion for prompts and templates', async () => {
    const url = await gatewayUrl(await readyHost({ one: EXAMPLE }))
    const client = await officialClient(url)
    const templates = (await client.listResourceTemplates()).resourceTemplates.map(template => template.uriTemplate)
    expect(templates).toEqual(expect.arrayContaining(['everything://items/{id}', 'everything://files/{+path}']))
    expect((await client.readResource({ uri: 'everything://items/42' })).contents[0]).toMatchObject({ text: '{"id":"42","name":"Item 42"}' })
    expect(client.getServerCapabilities()?.completions).toBeDefined()
    expect((await client.complete({ ref: { type: 'ref/prompt', name: 'one__greeting' }, argument: { name: 'name', value: 'g' } })).completion.values).toEqual(['Grace'])
    expect((await client.complete({ ref: { type: 'ref/resource', uri: 'everything://items/{id}' }, argument: { name: 'id', value: '12' } })).completion.values)
      .toEqual(['12', '120'])
  }, 60_000)

  it('answers the server\'s sampling, elicitation and roots with the calling client\'s handlers', async () => {
    const url = await gatewayUrl(await readyHost({ one: EXAMPLE }))
    const client = await officialClient(url)
    expect(text(await client.callTool({ name: 'one__sample', arguments: { prompt: 'hi' } }))).toBe('caller-model: from the caller')
    expect((await client.callTool({ name: 'one__elicit', arguments: {} })).structuredContent).toEqual({ action: 'accept', content: { name: 'Caller' } })
    expect(text(await client.callTool({ name: 'one__roots', arguments: {} }))).toBe('[{"uri":"file:///caller","name":"caller"}]')
  }, 60_000)

  it('answers the server\'s sampling and elicitation with the official SDK v2 client\'s handlers, as input_required rounds (2026-07-28)', async () => {
    const url = await gatewayUrl(await readyHost({ one: EXAMPLE }))
    const client = new ClientV2({ name: 'sdk-v2', version: '2' }, { capabilities: { elicitation: { form: {} }, sampling: {} }, versionNegotiation: { mode: { pin: '2026-07-28' } } })
    client.setRequestHandler('sampling/createMessage', async () => ({ role: 'assistant', model: 'v2-model', content: { type: 'text', text: 'modern caller' } }))
    client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { name: 'Modern' } }))
    await client.connect(new StreamableV2(new URL(url)))
    cleanup.push(() => client.close())
    expect(text(await client.callTool({ name: 'one__sample', arguments: { prompt: 'hi' } }))).toBe('v2-model: modern caller')
    expect((await client.callTool({ name: 'one__elicit', arguments: {} })).structuredContent).toEqual({ action: 'accept', content: { name: 'Modern' } })
  }, 60_000)

  it('sends a subscribed resource\'s updates to the subscriber only', async () => {
    const url = await gatewayUrl(await readyHost({ one: EXAMPLE }))
    const subscriber = await officialClient(url)
    await using other = await connect(streamableHttpClient(url), INFO, { era: 'legacy' })
    const otherUpdates: unknown[] = []
    other.notifications('notifications/resources/updated').subscribe(params => otherUpdates.push(params))
    const updated = new Promise<string>(resolve => subscriber.setNotificationHandler(ResourceUpdatedNotificationSchema, notification => resolve(notification.params.uri)))
    await subscriber.subscribeResource({ uri: 'everything://static/3' })
    await other.callTool('one__touch', { uri: 'everything://static/3' })
    expect(await updated).toBe('everything://static/3')
    await other.ping()
    expect(otherUpdates).toEqual([])
  }, 60_000)

  it('keeps the host\'s policy: a denied tool is not listed, and a tool call the user refuses is an error result', async () => {
    const host = await readyHost({ one: { ...EXAMPLE, tools: { deny: ['add'] } } }, { gateway: true, consent: request => request.kind === 'tool' && request.tool === 'fail' ? 'deny' : 'allow-once' })
    const url = await gatewayUrl(host)
    const client = await officialClient(url)
    const names = (await client.listTools()).tools.map(tool => tool.name)
    expect(names).toContain('one__echo')
    expect(names).not.toContain('one__add')
    const refused = await client.callTool({ name: 'one__fail', arguments: {} })
    expect(refused).toMatchObject({ isError: true, content: [{ type: 'text', text: 'one: tool fail denied by the user' }] })
    await expect(client.callTool({ name: 'one__add', arguments: { a: 1, b: 2 } })).rejects.toThrow(/unknown tool/)
  }, 60_000)

  it('in mode session, gives each gateway session its own client per server, with that session\'s roots', async () => {
    const url = await gatewayUrl(await readyHost({ one: EXAMPLE }), { mode: 'session' })
    await using alice = await connect(streamableHttpClient(url), INFO, { era: 'legacy', roots: [{ uri: 'file:///alice', name: 'alice' }] })
    await using bob = await connect(streamableHttpClient(url), INFO, { era: 'legacy', roots: [{ uri: 'file:///bob', name: 'bob' }] })
    const [a, b] = await Promise.all([alice.callTool('one__roots', {}), bob.callTool('one__roots', {})])
    expect(text(a)).toBe('[{"uri":"file:///alice","name":"alice"}]')
    expect(text(b)).toBe('[{"uri":"file:///bob","name":"bob"}]')
  }, 60_000)

  it('follows a server\'s restart: its entries leave with the crashed client and come back with the new one', async () => {
    const host = await readyHost({ one: EXAMPLE })
    const gateway = hostServer(host)
    cleanup.push(() => gateway.close())
    const listed = templatesListed(gateway.server)
    await using pair = await (await import('../../testing.ts')).connectInMemory(gateway.server)
    await listed
    expect((await pair.client.listTools()).tools.some(tool => tool.name === 'one__echo')).toBe(true)
    const firstPid = host.pid('one')!
    const restarted = firstValueFrom(host.states.pipe(filter(states => states.get('one')?.status === 'ready' && host.pid('one') !== firstPid)))
    /** The gateway's tools list changes from the crash on: out with the old client, in with the new. */
    const changes: unknown[] = []
    const watching = gateway.server.events.pipe(filter(event => event.type === 'list_changed' && event.kind === 'tools')).subscribe(event => changes.push(event))
    process.kill(firstPid, 'SIGKILL')
    // The gateway follows host.states (subscribed before this test's filter): remounted by now, from the host's view.
    await restarted
    await pair.client.ping()
    watching.unsubscribe()
    expect(changes.length).toBeGreaterThanOrEqual(2)
    expect(text(await pair.client.callTool('one__echo', { text: 'after restart' }))).toContain('after restart')
  }, 60_000)
})

/** A server over Streamable HTTP in this process, noting what it is asked (a retry of an input round marked); its `ask` tool elicits twice. */
async function countingHttpServer(): Promise<{ url: string; asked: string[] }> {
  const server = createServer({ name: 'counted', version: '1.0.0' })
  const asked: string[] = []
  server.use(next => (request, ctx) => { asked.push(request.params?.requestState === undefined ? request.method : `${request.method} (retry)`); return next(request, ctx) })
  server.tool('ask', {}, async (_args, ctx) => {
    const first = await ctx.elicit({ mode: 'form', message: 'First?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } })
    const second = await ctx.elicit({ mode: 'form', message: 'Second?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } })
    return { content: [{ type: 'text', text: `${String(first.content?.name)} ${String(second.content?.name)}` }] }
  })
  server.resourceTemplate('counted://{id}', { name: 'counted' }, (_uri, { id }) => String(id))
  const http = streamableHttp({ port: 0, host: '127.0.0.1' })
  await server.listen(http)
  cleanup.push(() => server.close())
  return { url: http.url!, asked }
}

describe('the gateway: one listing, one consent', () => {
  it('lists each server once: the host\'s listing feeds the mount, which lists only the templates', async () => {
    const { url, asked } = await countingHttpServer()
    const host = await readyHost({ one: { url } })
    await gatewayUrl(host)
    expect(asked.filter(method => method === 'tools/list')).toEqual(['tools/list'])
    expect(asked.filter(method => method === 'resources/templates/list')).toEqual(['resources/templates/list'])
  }, 60_000)

  it('asks the host\'s consent once for a modern caller\'s call across its input rounds, forwarded as one exchange downstream', async () => {
    const { url, asked } = await countingHttpServer()
    const consents: string[] = []
    const host = await readyHost({ one: { url } }, { gateway: true, consent: request => { consents.push(request.kind); return 'allow-once' } })
    const gateway = await gatewayUrl(host)
    await using caller = await connect(streamableHttpClient(gateway), INFO, { era: 'modern', elicitation: { form: params => ({ action: 'accept', content: { name: (params as { message: string }).message } }) } })
    expect(text(await caller.callTool('one__ask', {}))).toBe('First? Second?')
    expect(consents).toEqual(['tool'])
    // The server speaks 2026-07-28: the call is one exchange of its own rounds (a call forwarded again per round would make six).
    expect(asked.filter(method => method.startsWith('tools/call'))).toEqual(['tools/call', 'tools/call (retry)', 'tools/call (retry)'])
  }, 60_000)
})
