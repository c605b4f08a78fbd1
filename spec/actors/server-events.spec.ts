import { describe, expect, it } from 'vitest'
import { lastValueFrom } from 'rxjs'
import { createServer } from '../../actors/server.ts'
import { connectInMemory } from '../../testing.ts'

describe('McpServer.events', () => {
  it('carries list changes once per kind per microtask and resource updates, and sessions hear them from it', async () => {
    const server = createServer({ name: 'bus', version: '1.0.0' })
    server.resource('bus://a', { name: 'a' }, () => 'a')
    const events: unknown[] = []
    server.events.subscribe(event => events.push(event))
    await using pair = await connectInMemory(server)
    const heard: string[] = []
    pair.client.notifications('notifications/tools/list_changed').subscribe(() => heard.push('tools'))
    pair.client.notifications('notifications/resources/updated').subscribe(params => heard.push(String(params.uri)))
    await lastValueFrom(pair.client.request('resources/subscribe', { uri: 'bus://a' }))
    const first = server.tool('one', {}, () => ({ content: [] }))
    server.tool('two', {}, () => ({ content: [] }))
    first.disable()
    server.notifyResourceUpdated('bus://a')
    server.notifyResourceUpdated('bus://other')
    await pair.client.ping()
    await pair.client.ping()
    expect(events).toEqual([
      { type: 'resource_updated', uri: 'bus://a' },
      { type: 'resource_updated', uri: 'bus://other' },
      { type: 'list_changed', kind: 'tools' },
    ])
    expect(heard.sort()).toEqual(['bus://a', 'tools'])
  })
})
