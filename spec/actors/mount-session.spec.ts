import { describe, expect, it } from 'vitest'
import { filter, firstValueFrom } from 'rxjs'
import { createServer, type McpServer } from '../../actors/server.ts'
import { connectInMemory } from '../../testing.ts'

/** A server with one resource, telling each time it is asked to watch it (resources/subscribe or a listen stream naming it). */
function watchedBackend(): { server: McpServer; watches: number; next: () => Promise<void> } {
  const server = createServer({ name: 'watched', version: '1.0.0' })
  server.resource('mem://a', { name: 'a' }, () => 'a')
  const state = { server, watches: 0, next: () => new Promise<void>(resolve => { waiting.push(resolve) }) }
  const waiting: (() => void)[] = []
  server.use(next => (request, ctx) => {
    const notifications = request.params?.notifications as { resourceSubscriptions?: string[] } | undefined
    const uris = request.method === 'resources/subscribe' ? [String(request.params?.uri)]
      : request.method === 'subscriptions/listen' ? notifications?.resourceSubscriptions ?? [] : []
    if (uris.includes('mem://a')) { state.watches++; for (const resolve of waiting.splice(0)) resolve() }
    return next(request, ctx)
  })
  return state
}

describe('McpServer.mount of a server, mode session: subscriptions', () => {
  it('watches a subscribed URI through each caller session\'s own client, and sends each session the updates of its own', async () => {
    const backend = watchedBackend()
    const parent = createServer({ name: 'parent', version: '1.0.0' })
    const changed = firstValueFrom(parent.events.pipe(filter(event => event.type === 'list_changed' && event.kind === 'resources')))
    parent.mount('w', backend.server, { mode: 'session' })
    await changed
    await using alice = await connectInMemory(parent)
    await using bob = await connectInMemory(parent)
    const heard = { alice: 0, bob: 0 }
    alice.client.notifications('notifications/resources/updated').subscribe(() => heard.alice++)
    bob.client.notifications('notifications/resources/updated').subscribe(() => heard.bob++)
    let watched = backend.next()
    await alice.client.subscribeResource('mem://a')
    await watched
    watched = backend.next()
    await bob.client.subscribeResource('mem://a')
    await watched
    // One watch per session, each through that session's own client (the lister's is not one of them).
    expect(backend.watches).toBe(2)
    expect(backend.server.sessions.size).toBe(3)
    const bothHeard = Promise.all([
      firstValueFrom(alice.client.notifications('notifications/resources/updated')),
      firstValueFrom(bob.client.notifications('notifications/resources/updated')),
    ])
    backend.server.notifyResourceUpdated('mem://a')
    await bothHeard
    await alice.client.ping()
    await bob.client.ping()
    expect(heard).toEqual({ alice: 1, bob: 1 })
    await alice.client.unsubscribeResource('mem://a')
    const bobHeard = firstValueFrom(bob.client.notifications('notifications/resources/updated'))
    backend.server.notifyResourceUpdated('mem://a')
    await bobHeard
    await alice.client.ping()
    expect(heard).toEqual({ alice: 1, bob: 2 })
  })
})
