import { describe, expect, it } from 'vitest'
import { NEVER, filter, firstValueFrom, from, lastValueFrom, mergeMap, tap, type Observable } from 'rxjs'
import { createServer, proxy, proxyClientOptions, type McpServer } from '../../actors/server.ts'
import { WATCH_READY_MS } from '../../actors/server/server-mounts.ts'
import { TestClock } from '../helpers/test-clock.ts'
import { connect, type McpClient } from '../../actors/client.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { connectInMemory, createMemoryPair } from '../../testing.ts'

/** A server to mount: a tool with progress, one that waits to be cancelled, a resource, a template and a prompt with completion, one that logs. */
function backend(): { server: McpServer; started: Promise<void>; aborted: Promise<void>; watching: (uri: string) => Promise<void> } {
  const server = createServer({ name: 'backend', version: '1.0.0' })
  let markAborted!: () => void
  const aborted = new Promise<void>(resolve => { markAborted = resolve })
  let markStarted!: () => void
  const started = new Promise<void>(resolve => { markStarted = resolve })
  /** Who waits to see the backend asked to watch a URI (resources/subscribe, or a listen stream naming it). */
  const watchers: { uri: string; resolve: () => void }[] = []
  server.use(next => (request, ctx) => {
    const notifications = request.params?.notifications as { resourceSubscriptions?: string[] } | undefined
    const uris = request.method === 'resources/subscribe' ? [String(request.params?.uri)]
      : request.method === 'subscriptions/listen' ? notifications?.resourceSubscriptions ?? [] : []
    for (const watcher of watchers) if (uris.includes(watcher.uri)) watcher.resolve()
    return next(request, ctx)
  })
  const watching = (uri: string) => new Promise<void>(resolve => { watchers.push({ uri, resolve }) })
  server.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } }, async ({ text }, ctx) => {
    ctx.progress(1, 2, 'half')
    ctx.progress(2, 2, 'done')
    return { content: [{ type: 'text', text: `echo ${String(text)}` }] }
  })
  server.tool('wait', {}, (_args, ctx) => new Promise(() => { markStarted(); ctx.signal.addEventListener('abort', () => markAborted()) }))
  server.tool('shout', {}, (_args, ctx) => { ctx.log('warning', 'shouting', 'voice'); return { content: [{ type: 'text', text: 'ok' }] } })
  server.resource('mem://a', { name: 'a', mimeType: 'text/plain' }, () => 'content of a')
  server.resourceTemplate('mem://items/{id}', {
    name: 'item', complete: { id: value => ['one', 'two', 'three'].filter(id => id.startsWith(value)) },
  }, (uri, { id }) => `item ${String(id)}`)
  server.prompt('greet', { arguments: [{ name: 'who', required: true }], complete: { who: value => ['world', 'walrus'].filter(each => each.startsWith(value)) } },
    ({ who }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `hello ${who}` } }] }))
  return { server, started, aborted, watching }
}

/** Resolves when `server` has said its tools list changed (a mount's first offer written). */
function toolsChanged(server: McpServer): Promise<unknown> {
  return firstValueFrom(server.events.pipe(filter(event => event.type === 'list_changed' && event.kind === 'tools')))
}

describe.each(['legacy', 'modern'] as const)('McpServer.mount of a server (caller %s)', era => {
  it('lists the mounted tools namespaced, resources and templates by URI, prompts namespaced', async () => {
    const parent = createServer({ name: 'parent', version: '1.0.0' })
    parent.tool('own', {}, () => ({ content: [] }))
    const changed = toolsChanged(parent)
    parent.mount('b', backend().server)
    await changed
    await using pair = await connectInMemory(parent, { era })
    const tools = (await pair.client.listTools()).tools.map(tool => tool.name)
    expect(tools.sort()).toEqual(['b__echo', 'b__shout', 'b__wait', 'own'])
    expect((await pair.client.listResources()).resources.map(resource => resource.uri)).toEqual(['mem://a'])
    expect((await pair.client.listResourceTemplates()).resourceTemplates.map(template => template.uriTemplate)).toEqual(['mem://items/{id}'])
    expect((await pair.client.listPrompts()).prompts.map(prompt => prompt.name)).toEqual(['b__greet'])
  })

  it('forwards a call with its progress, a read of a resource and of a template URI, a prompt and completions', async () => {
    const parent = createServer({ name: 'parent', version: '1.0.0' })
    const changed = toolsChanged(parent)
    parent.mount('b', backend().server)
    await changed
    await using pair = await connectInMemory(parent, { era })
    const progress: unknown[] = []
    const result = await pair.client.callTool('b__echo', { text: 'hi' }, { onProgress: event => progress.push(event.progress) })
    expect(result.content).toEqual([{ type: 'text', text: 'echo hi' }])
    expect(progress).toEqual([1, 2])
    expect((await pair.client.readResource('mem://a')).contents).toEqual([{ uri: 'mem://a', mimeType: 'text/plain', text: 'content of a' }])
    expect((await pair.client.readResource('mem://items/7')).contents).toEqual([{ uri: 'mem://items/7', text: 'item 7' }])
    const prompt = await pair.client.getPrompt('b__greet', { who: 'you' })
    expect(prompt.messages[0]!.content).toEqual({ type: 'text', text: 'hello you' })
    expect(pair.client.serverCapabilities.completions).toBeDefined()
    expect((await pair.client.complete({ ref: { type: 'ref/prompt', name: 'b__greet' }, argument: { name: 'who', value: 'wa' } })).completion.values).toEqual(['walrus'])
    expect((await pair.client.complete({ ref: { type: 'ref/resource', uri: 'mem://items/{id}' }, argument: { name: 'id', value: 't' } })).completion.values).toEqual(['two', 'three'])
  })

  it('does not validate arguments itself: the mounted server answers an invalid call', async () => {
    const parent = createServer({ name: 'parent', version: '1.0.0' })
    const changed = toolsChanged(parent)
    parent.mount('b', backend().server)
    await changed
    await using pair = await connectInMemory(parent, { era })
    const result = await pair.client.callTool('b__echo', { text: 5 })
    expect(result.isError).toBe(true)
    expect(JSON.stringify(result.content)).toContain('Invalid arguments for tool echo')
  })

  it('cancels the forwarded call downstream when the caller cancels: the mounted handler is aborted', async () => {
    const parent = createServer({ name: 'parent', version: '1.0.0' })
    const changed = toolsChanged(parent)
    const { server, started, aborted } = backend()
    parent.mount('b', server)
    await changed
    await using pair = await connectInMemory(parent, { era })
    const controller = new AbortController()
    const call = pair.client.callTool('b__wait', {}, { signal: controller.signal })
    await started
    controller.abort()
    await expect(call).rejects.toThrow()
    await aborted
  })
})

describe('McpServer.mount', () => {
  it('follows list changes of the mounted server, and remove() takes its entries out', async () => {
    const parent = createServer({ name: 'parent', version: '1.0.0' })
    const { server } = backend()
    let changed = toolsChanged(parent)
    const mount = parent.mount('b', server)
    await changed
    await using pair = await connectInMemory(parent)
    const heard = firstValueFrom(pair.client.notifications('notifications/tools/list_changed'))
    changed = toolsChanged(parent)
    server.tool('late', {}, () => ({ content: [] }))
    await changed
    await heard
    expect((await pair.client.listTools()).tools.map(tool => tool.name)).toContain('b__late')
    mount.remove()
    expect((await pair.client.listTools()).tools).toEqual([])
    expect((await pair.client.listResources()).resources).toEqual([])
  })

  it('keeps a name it already has: the mounted one is left out and reported', async () => {
    const parent = createServer({ name: 'parent', version: '1.0.0' })
    parent.tool('b__echo', { description: 'mine' }, () => ({ content: [] }))
    const skipped: string[] = []
    const changed = toolsChanged(parent)
    parent.mount('b', backend().server, { onSkipped: (kind, name) => skipped.push(`${kind} ${name}`) })
    await changed
    await using pair = await connectInMemory(parent)
    const echo = (await pair.client.listTools()).tools.find(tool => tool.name === 'b__echo')
    expect(echo?.description).toBe('mine')
    expect(skipped).toEqual(['tool b__echo'])
  })

  it('mounts with an empty prefix under the original names', async () => {
    const parent = createServer({ name: 'parent', version: '1.0.0' })
    const changed = toolsChanged(parent)
    parent.mount('', backend().server)
    await changed
    await using pair = await connectInMemory(parent)
    expect((await pair.client.listTools()).tools.map(tool => tool.name).sort()).toEqual(['echo', 'shout', 'wait'])
    expect((await pair.client.callTool('echo', { text: 'x' })).content).toEqual([{ type: 'text', text: 'echo x' }])
  })

  it('passes the mounted server\'s log messages to each session at its level, the prefix as logger', async () => {
    const parent = createServer({ name: 'parent', version: '1.0.0' })
    const changed = toolsChanged(parent)
    parent.mount('b', backend().server)
    await changed
    await using quiet = await connectInMemory(parent)
    await using loud = await connectInMemory(parent)
    await quiet.client.setLoggingLevel('error')
    await loud.client.setLoggingLevel('debug')
    const quietHeard: unknown[] = []
    quiet.client.notifications('notifications/message').subscribe(params => quietHeard.push(params))
    const heard = firstValueFrom(loud.client.notifications('notifications/message'))
    await loud.client.callTool('b__shout', {})
    expect(await heard).toEqual({ level: 'warning', logger: 'b/voice', data: 'shouting' })
    await quiet.client.ping()
    expect(quietHeard).toEqual([])
  })

  it.each(['legacy', 'modern'] as const)('sends updates of a mounted resource to exactly its subscribers (%s subscriber), watching downstream only meanwhile', async era => {
    const parent = createServer({ name: 'parent', version: '1.0.0' })
    const { server, watching } = backend()
    const changed = toolsChanged(parent)
    parent.mount('b', server)
    await changed
    const watched = watching('mem://a')
    await using subscriber = await connectInMemory(parent, { era })
    await using other = await connectInMemory(parent)
    const otherHeard: unknown[] = []
    other.client.notifications('notifications/resources/updated').subscribe(params => otherHeard.push(params))
    const updates = subscriber.client.listen({ resourceSubscriptions: ['mem://a'] })
    const events: unknown[] = []
    const acknowledged = new Promise<void>(resolve => updates.subscribe(event => { events.push(event); if (event.type === 'acknowledged') resolve() }))
    await acknowledged
    // The parent asked the backend to watch the URI.
    await watched
    const received = firstValueFrom(subscriber.client.notifications('notifications/resources/updated'))
    server.notifyResourceUpdated('mem://a')
    expect(await received).toEqual(expect.objectContaining({ uri: 'mem://a' }))
    await other.client.ping()
    expect(otherHeard).toEqual([])
  })
})


/** A server whose tool asks its caller: a form elicitation, a URL elicitation, a sampling, and the roots. */
function askingBackend(): McpServer {
  const server = createServer({ name: 'asking', version: '1.0.0' })
  server.tool('ask', {}, async (_args, ctx) => {
    const form = await ctx.elicit({ mode: 'form', message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } })
    const url = await ctx.elicit({ mode: 'url', message: 'Sign in', url: 'https://example.com/sign-in', elicitationId: 'e-1' })
    const sampled = await ctx.sample({ messages: [{ role: 'user', content: { type: 'text', text: 'Say hi' } }], maxTokens: 10 })
    const roots = await ctx.listRoots()
    return { content: [{ type: 'text', text: JSON.stringify({ form: form.content, url: url.action, sampled: sampled.content, roots: roots.roots.map(root => root.uri) }) }] }
  })
  return server
}

describe.each(['legacy', 'modern'] as const)('McpServer.mount: what the mounted server asks goes to the caller (%s caller)', era => {
  it('answers its form and URL elicitation, sampling and roots with the calling client\'s handlers', async () => {
    const parent = createServer({ name: 'parent', version: '1.0.0' })
    const changed = toolsChanged(parent)
    parent.mount('b', askingBackend())
    await changed
    await using pair = await connectInMemory(parent, {
      era,
      elicitation: { form: () => ({ action: 'accept', content: { name: 'Ann' } }), url: () => ({ action: 'accept' }) },
      sampling: () => ({ role: 'assistant', content: { type: 'text', text: 'hi from the caller' }, model: 'caller-model' }),
      roots: [{ uri: 'file:///caller/root', name: 'mine' }],
    })
    const result = await pair.client.callTool('b__ask', {})
    expect(result.isError).toBeUndefined()
    expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual({
      form: { name: 'Ann' }, url: 'accept', sampled: { type: 'text', text: 'hi from the caller' }, roots: ['file:///caller/root'],
    })
  })

  it('keeps two callers\' answers apart when they call at once', async () => {
    const parent = createServer({ name: 'parent', version: '1.0.0' })
    const changed = toolsChanged(parent)
    parent.mount('b', askingBackend())
    await changed
    const callerOf = (who: string) => connectInMemory(parent, {
      era,
      elicitation: { form: () => ({ action: 'accept', content: { name: who } }), url: () => ({ action: 'decline' }) },
      sampling: () => ({ role: 'assistant', content: { type: 'text', text: who }, model: 'm' }),
      roots: [{ uri: `file:///${who}`, name: who }],
    })
    await using alice = await callerOf('alice')
    await using bob = await callerOf('bob')
    const [a, b] = await Promise.all([alice.client.callTool('b__ask', {}), bob.client.callTool('b__ask', {})])
    expect(JSON.parse((a.content[0] as { text: string }).text)).toEqual({ form: { name: 'alice' }, url: 'decline', sampled: { type: 'text', text: 'alice' }, roots: ['file:///alice'] })
    expect(JSON.parse((b.content[0] as { text: string }).text)).toEqual({ form: { name: 'bob' }, url: 'decline', sampled: { type: 'text', text: 'bob' }, roots: ['file:///bob'] })
  })
})

describe('McpServer.mount: tasks', () => {
  it.each(['legacy', 'modern'] as const)('runs a %s caller\'s task call of a mounted task-only tool as a task here, whose work is a task downstream', async era => {
    const backendServer = createServer({ name: 'tasks', version: '1.0.0' })
    const seen: string[] = []
    backendServer.tool('slow', { execution: { taskSupport: 'required' } }, async (_args, ctx) => {
      seen.push(ctx.task === undefined ? 'plain' : 'task')
      return { content: [{ type: 'text', text: 'slow done' }] }
    })
    backendServer.tool('either', { execution: { taskSupport: 'optional' } }, () => ({ content: [{ type: 'text', text: 'either done' }] }))
    const parent = createServer({ name: 'parent', version: '1.0.0' })
    const changed = toolsChanged(parent)
    parent.mount('b', backendServer)
    await changed
    await using pair = await connectInMemory(parent, { era })
    const listed = (await pair.client.listTools()).tools
    expect(listed.find(tool => tool.name === 'b__slow')?.execution).toEqual({ taskSupport: 'required' })
    const events: string[] = []
    const result = await lastValueFrom(pair.client.callToolAsTask('b__slow', {}).pipe(tap(event => events.push(event.type))))
    expect(result).toEqual({ type: 'result', result: expect.objectContaining({ content: [{ type: 'text', text: 'slow done' }] }) })
    expect(events[0]).toBe('task')
    expect(seen).toEqual(['task'])
    expect((await pair.client.callToolAsTaskResult('b__either', {})).content).toEqual([{ type: 'text', text: 'either done' }])
  })
})

describe('McpServer.mount of a server, mode session', () => {
  it('gives each caller session its own in-process client, closed when the session ends', async () => {
    const other = createServer({ name: 'other', version: '1.0.0' })
    other.tool('roots', {}, async (_args, ctx) => ({ content: [{ type: 'text', text: JSON.stringify((await ctx.listRoots()).roots.map(root => root.uri)) }] }))
    const parent = createServer({ name: 'parent', version: '1.0.0' })
    const changed = toolsChanged(parent)
    parent.mount('o', other, { mode: 'session' })
    await changed
    // The lister's own client.
    expect(other.sessions.size).toBe(1)
    const alice = await connectInMemory(parent, { roots: [{ uri: 'file:///alice', name: 'a' }] })
    await using bob = await connectInMemory(parent, { roots: [{ uri: 'file:///bob', name: 'b' }] })
    const [a, b] = await Promise.all([alice.client.callTool('o__roots', {}), bob.client.callTool('o__roots', {})])
    expect(a.content).toEqual([{ type: 'text', text: '["file:///alice"]' }])
    expect(b.content).toEqual([{ type: 'text', text: '["file:///bob"]' }])
    expect(other.sessions.size).toBe(3)
    await alice.client.close()
    await waitForSize(other, 2)
    expect(other.sessions.size).toBe(2)
  })
})

/** Resolves once `server` has `size` sessions (each session's end is awaited, none is timed). */
async function waitForSize(server: McpServer, size: number): Promise<void> {
  while (server.sessions.size > size) await Promise.race([...server.sessions].map(session => session.closed))
}

/** Makes `server` hold its resources/subscribe (legacy) or the subscriptions/listen naming mem://a (modern) on `held` (NEVER: for good). */
function holdWatches(server: McpServer, held: Observable<unknown>): void {
  const isWatch = (method: string, params: JsonObject | undefined) => method === 'resources/subscribe'
    || (method === 'subscriptions/listen' && JSON.stringify(params?.notifications).includes('mem://a'))
  server.use(next => (request, ctx) => isWatch(request.method, request.params) ? held.pipe(mergeMap(() => next(request, ctx))) : next(request, ctx))
}

/** `client` subscribes to mem://a in its era (legacy resources/subscribe, modern listen); `answered()` tells whether it was answered yet. */
function subscribeA(client: McpClient, era: 'legacy' | 'modern'): { done: Promise<void>; answered: () => boolean } {
  let isAnswered = false
  const done = era === 'legacy'
    ? client.subscribeResource('mem://a').then(() => { isAnswered = true })
    : new Promise<void>(resolve => client.listen({ resourceSubscriptions: ['mem://a'] }).subscribe(event => { if (event.type === 'acknowledged') { isAnswered = true; resolve() } }))
  return { done, answered: () => isAnswered }
}

describe('a subscription through a mount is answered once the source watches', () => {
  const cases = (['legacy', 'modern'] as const).flatMap(caller => (['legacy', 'modern'] as const).flatMap(source => (['shared', 'session'] as const).map(mode => [caller, source, mode] as const)))
  it.each(cases)('%s caller, %s source, mode %s: the answer waits for the source, and the update the caller causes next arrives', async (caller, source, mode) => {
    const { server, watching } = backend()
    // The source holds its resources/subscribe (legacy) or the subscriptions/listen naming the URI (modern) until released.
    let release!: () => void
    holdWatches(server, from(new Promise<void>(resolve => { release = resolve })))
    server.tool('touch', {}, () => { server.notifyResourceUpdated('mem://a'); return { content: [] } })
    const parent = createServer({ name: 'parent', version: '1.0.0' })
    const changed = toolsChanged(parent)
    const connectSource = async () => {
      const [clientSide, serverSide] = createMemoryPair()
      await server.listen(serverSide)
      return connect(clientSide, { name: 'proxy', version: '1' }, { era: source, ...proxyClientOptions() })
    }
    const shared = await connectSource()
    parent.mount('b', proxy(shared, mode === 'session' ? { mode, connect: connectSource } : {}))
    await changed
    await using pair = await connectInMemory(parent, { era: caller })
    const watched = watching('mem://a')
    const subscription = subscribeA(pair.client, caller)
    await watched
    // The parent serves on (a round trip through it and through the source) while the subscription waits.
    await pair.client.callTool('b__echo', { text: 'meanwhile' })
    expect(subscription.answered()).toBe(false)
    release()
    await subscription.done
    const received = firstValueFrom(pair.client.notifications('notifications/resources/updated'))
    await pair.client.callTool('b__touch', {})
    expect(await received).toEqual(expect.objectContaining({ uri: 'mem://a' }))
    await shared.close()
  })
})

describe('a subscription through a mount whose source never watches', () => {
  it.each(['legacy', 'modern'] as const)('is answered once WATCH_READY_MS passed (%s caller), and updates still arrive', async caller => {
    const { server, watching } = backend()
    // The source never answers the subscribe or acknowledges the listen naming the URI.
    holdWatches(server, NEVER)
    const clock = new TestClock()
    const parent = createServer({ name: 'parent', version: '1.0.0' }, { scheduler: clock })
    const changed = toolsChanged(parent)
    parent.mount('b', server)
    await changed
    await using pair = await connectInMemory(parent, { era: caller })
    const watched = watching('mem://a')
    const subscription = subscribeA(pair.client, caller)
    await watched
    expect(await clock.nextWait(WATCH_READY_MS)).toBe(WATCH_READY_MS)
    await pair.client.callTool('b__echo', { text: 'meanwhile' })
    expect(subscription.answered()).toBe(false)
    clock.advance(WATCH_READY_MS)
    await subscription.done
    // The parent's own notice of the URI still reaches the subscriber.
    const received = firstValueFrom(pair.client.notifications('notifications/resources/updated'))
    parent.notifyResourceUpdated('mem://a')
    expect(await received).toEqual(expect.objectContaining({ uri: 'mem://a' }))
  })
})

describe('proxy of a legacy client', () => {
  it.each(['legacy', 'modern'] as const)('answers the legacy server\'s live requests through the %s caller', async era => {
    const [clientSide, serverSide] = createMemoryPair()
    const downstreamServer = askingBackend()
    await downstreamServer.listen(serverSide)
    await using downstream = await connect(clientSide, { name: 'proxy', version: '1' }, { era: 'legacy', ...proxyClientOptions() })
    const parent = createServer({ name: 'parent', version: '1.0.0' })
    const changed = toolsChanged(parent)
    parent.mount('b', proxy(downstream))
    await changed
    await using pair = await connectInMemory(parent, {
      era,
      elicitation: { form: () => ({ action: 'accept', content: { name: 'Ann' } }), url: () => ({ action: 'accept' }) },
      sampling: () => ({ role: 'assistant', content: { type: 'text', text: 'caller' }, model: 'm' }),
      roots: [{ uri: 'file:///caller', name: 'caller' }],
    })
    const result = await pair.client.callTool('b__ask', {})
    expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual({ form: { name: 'Ann' }, url: 'accept', sampled: { type: 'text', text: 'caller' }, roots: ['file:///caller'] })
  })

  it('mounts again cleanly after remove(), under another prefix', async () => {
    const parent = createServer({ name: 'parent', version: '1.0.0' })
    const { server } = backend()
    let changed = toolsChanged(parent)
    const first = parent.mount('b', server)
    await changed
    first.remove()
    changed = toolsChanged(parent)
    parent.mount('c', server)
    await changed
    await using pair = await connectInMemory(parent)
    expect((await pair.client.listTools()).tools.map(tool => tool.name).sort()).toEqual(['c__echo', 'c__shout', 'c__wait'])
    expect((await pair.client.listResources()).resources.map(resource => resource.uri)).toEqual(['mem://a'])
    expect((await pair.client.callTool('c__echo', { text: 'again' })).content).toEqual([{ type: 'text', text: 'echo again' }])
  })
})
