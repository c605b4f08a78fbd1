import { afterEach, describe, expect, it } from 'vitest'
import { Subject, filter, firstValueFrom, take, toArray } from 'rxjs'
import { createServer, type McpServer } from '../../actors/server.ts'
import { OPEN_METHODS, permissions, permissionVisibility, type PermissionPolicy } from '../../actors/server/middleware.ts'
import { connect, type ListenEvent, type McpClient } from '../../actors/client.ts'
import type { Authenticator, Principal } from '../../lib/auth.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { httpClient } from '../../transports/http-client.ts'

/**
 * list_changed per principal (ServerOptions.listVisibility): a session hears that a list changed
 * only when what its own principal may see of it changed.
 */
const closers: (() => Promise<void>)[] = []
afterEach(async () => { for (const close of closers.splice(0).reverse()) await close() })

const PRINCIPALS: Record<string, Principal> = {
  alice: { subject: 'alice', scopes: [], claims: { roles: ['a'] } },
  bob: { subject: 'bob', scopes: [], claims: { roles: ['b'] } },
}
const keys: Authenticator = {
  async authenticate(request) {
    const principal = PRINCIPALS[request.header('x-api-key') ?? '']
    return principal !== undefined ? { type: 'allow', principal } : { type: 'refuse', answer: { status: 401, headers: {}, body: '' } }
  },
}
const POLICY: PermissionPolicy = {
  roles: { a: ['tools:call:a_*', 'tools:call:shared', 'resources:read:file:///a/*', 'prompts:get:marker*'], b: ['tools:call:b_*', 'tools:call:shared', 'prompts:get:marker*'] },
  open: [...OPEN_METHODS, 'tools/list', 'resources/list', 'resources/templates/list', 'prompts/list'],
}
const tool = (server: McpServer, name: string, description = name) => server.tool(name, { description }, () => ({ content: [] }))

async function served(options: { visibility: boolean }): Promise<{ server: McpServer; client: (key: string, era?: 'legacy' | 'modern') => Promise<McpClient> }> {
  const server = createServer({ name: 'views', version: '1' }, options.visibility ? { listVisibility: permissionVisibility(POLICY) } : {})
  server.use(permissions(POLICY))
  tool(server, 'a_one')
  tool(server, 'b_one')
  server.resource('file:///a/readme', { name: 'readme' }, () => 'hi')
  server.prompt('marker_start', {}, () => ({ messages: [] }))
  const http = streamableHttp({ auth: keys })
  await server.listen(http)
  closers.push(() => server.close())
  return {
    server,
    client: async (key, era = 'legacy') => {
      const client = await connect(httpClient(http.url!, { headers: { 'x-api-key': key } }), { name: key, version: '1' }, { era })
      closers.push(() => client.close())
      return client
    },
  }
}

/** The next `count` tools/list_changed a client hears, and what it then lists. */
function changes(client: McpClient, count: number): Promise<unknown[]> {
  return firstValueFrom(client.notifications('notifications/tools/list_changed').pipe(take(count), toArray()))
}

describe('ServerOptions.listVisibility', () => {
  it('tells each session of a change only when what its principal may see changed', async () => {
    const { server, client } = await served({ visibility: true })
    const alice = await client('alice')
    const bob = await client('bob')
    expect((await alice.listTools()).tools.map(t => t.name)).toEqual(['a_one'])
    expect((await bob.listTools()).tools.map(t => t.name)).toEqual(['b_one'])
    const heardByAlice: string[] = []
    const heardByBob: string[] = []
    alice.notifications('notifications/tools/list_changed').subscribe(() => heardByAlice.push('changed'))
    bob.notifications('notifications/tools/list_changed').subscribe(() => heardByBob.push('changed'))

    // Only Alice may see a_two; only Bob b_two; each hears of its own.
    let aliceHears = changes(alice, 1)
    tool(server, 'a_two')
    await aliceHears
    const bobHears = changes(bob, 1)
    tool(server, 'b_two')
    await bobHears
    // A change both may see: both hear of it. Had either been told of the other's change, that
    // notification would have come first on the same stream.
    aliceHears = changes(alice, 1)
    const bobHearsShared = changes(bob, 1)
    const shared = tool(server, 'shared')
    await Promise.all([aliceHears, bobHearsShared])
    expect(heardByAlice).toEqual(['changed', 'changed'])
    expect(heardByBob).toEqual(['changed', 'changed'])

    // A changed definition is a change; a resource of Alice's changes her resources only.
    aliceHears = changes(alice, 1)
    const bothHear = changes(bob, 1)
    shared.update({ description: 'now shared' })
    await Promise.all([aliceHears, bothHear])
    const resources = firstValueFrom(alice.notifications('notifications/resources/list_changed'))
    server.resource('file:///a/other', { name: 'other' }, () => 'x')
    await resources
    expect((await alice.listTools()).tools.map(t => t.name)).toEqual(['a_one', 'a_two', 'shared'])
    // A prompt both see marks the end: what each was told before it has come in on its stream.
    const marked = Promise.all([alice, bob].map(client => firstValueFrom(client.notifications('notifications/prompts/list_changed'))))
    server.prompt('marker', {}, () => ({ messages: [] }))
    await marked
    expect(heardByAlice).toEqual(['changed', 'changed', 'changed'])
    expect(heardByBob).toEqual(['changed', 'changed', 'changed'])
  })

  it('without it, every session hears every change (the default)', async () => {
    const { server, client } = await served({ visibility: false })
    const bob = await client('bob')
    await bob.listTools()
    const bobHears = changes(bob, 1)
    tool(server, 'a_two')
    await expect(bobHears).resolves.toHaveLength(1)
  })

  it('tells a modern listen stream only of the changes its principal may see', async () => {
    const { server, client } = await served({ visibility: true })
    const bob = await client('bob', 'modern')
    const live = new Subject<ListenEvent>()
    /** The tools/list_changed Bob's stream brought. */
    const tools: ListenEvent[] = []
    const acknowledged = firstValueFrom(live.pipe(filter(event => event.type === 'acknowledged')))
    const listening = bob.listen({ toolsListChanged: true, promptsListChanged: true }).subscribe(event => {
      if (event.type === 'notification' && event.method === 'notifications/tools/list_changed') tools.push(event)
      live.next(event)
    })
    closers.push(async () => listening.unsubscribe())
    await acknowledged
    tool(server, 'a_two')
    // The registries tell of their changes once per microtask: a_two is told (or not) before b_two.
    await Promise.resolve()
    tool(server, 'b_two')
    await Promise.resolve()
    // A prompt Bob sees marks the end: what the stream carried before it has come in.
    const marked = firstValueFrom(live.pipe(filter(event => event.type === 'notification' && event.method === 'notifications/prompts/list_changed')))
    server.prompt('marker', {}, () => ({ messages: [] }))
    await marked
    expect(tools).toHaveLength(1)
  })
})
