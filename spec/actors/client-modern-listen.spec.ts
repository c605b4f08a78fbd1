import { describe, expect, it } from 'vitest'
import { NEVER, Observable, Subject, firstValueFrom } from 'rxjs'
import { connect, type ListenEvent } from '../../actors/client.ts'
import type { Connection } from '../../lib/connection.ts'
import type { JsonObject, RequestId } from '../../lib/jsonrpc/message.ts'
import { InvalidParamsError } from '../../lib/jsonrpc/errors.ts'
import { fakeServer, settle } from './client-modern-helpers.ts'

const INFO = { name: 'listen-test', version: '1.0.0' }
const SUBSCRIPTION = 'io.modelcontextprotocol/subscriptionId'

/**
 * A modern fake server whose subscriptions/listen acknowledges what it was asked for and then stays
 * open; `end$` answers the open listen requests (a graceful end).
 */
async function modernListening() {
  /** The fake server's connection, to send on; set once connected. */
  let server: Connection | undefined
  const end$ = new Subject<void>()
  const fake = fakeServer({
    'subscriptions/listen': (params, request) => {
      void server!.notify('notifications/subscriptions/acknowledged', { _meta: { [SUBSCRIPTION]: request.id }, notifications: params!.notifications as JsonObject })
      return new Observable(subscriber => end$.subscribe(() => { subscriber.next({ resultType: 'complete', _meta: { [SUBSCRIPTION]: request.id } }); subscriber.complete() }))
    },
  })
  server = fake.server
  const client = await connect(fake.transport, INFO)
  const listenId = (): RequestId => fake.of('subscriptions/listen').at(-1)!.id
  return { ...fake, client, end$, listenId }
}

describe('listen (modern era)', () => {
  it('emits the acknowledgement, then only the notifications tagged with its subscription id', async () => {
    const { client, server, received, listenId } = await modernListening()
    const events: ListenEvent[] = []
    const subscription = client.listen({ toolsListChanged: true, resourceSubscriptions: ['file:///a'] }).subscribe(event => events.push(event))
    await settle()
    expect(received.at(-1)).toMatchObject({ method: 'subscriptions/listen', params: { notifications: { toolsListChanged: true, resourceSubscriptions: ['file:///a'] } } })
    const id = listenId()
    await server.notify('notifications/tools/list_changed', { _meta: { [SUBSCRIPTION]: id } })
    await server.notify('notifications/tools/list_changed', { _meta: { [SUBSCRIPTION]: 'someone-else' } })
    await server.notify('notifications/resources/updated', { uri: 'file:///a', _meta: { [SUBSCRIPTION]: id } })
    await settle()
    expect(events).toEqual([
      { type: 'acknowledged', notifications: { toolsListChanged: true, resourceSubscriptions: ['file:///a'] } },
      { type: 'notification', method: 'notifications/tools/list_changed', params: { _meta: { [SUBSCRIPTION]: id } } },
      { type: 'notification', method: 'notifications/resources/updated', params: { uri: 'file:///a', _meta: { [SUBSCRIPTION]: id } } },
    ])
    subscription.unsubscribe()
    await client.close()
  })

  it('sends notifications/cancelled naming the listen request when unsubscribed (stdio and other non-HTTP transports)', async () => {
    const { client, cancelled, listenId } = await modernListening()
    const subscription = client.listen({ promptsListChanged: true }).subscribe()
    await settle()
    subscription.unsubscribe()
    await settle()
    expect(cancelled).toEqual([{ requestId: listenId(), reason: 'Request cancelled by the caller' }])
    await client.close()
  })

  it('completes when the server answers the listen request (a graceful end)', async () => {
    const { client, end$ } = await modernListening()
    let isComplete = false
    client.listen({ toolsListChanged: true }).subscribe({ complete: () => { isComplete = true } })
    await settle()
    expect(isComplete).toBe(false)
    end$.next()
    await settle()
    expect(isComplete).toBe(true)
    await client.close()
  })

  it('completes when the server cancels the subscription with notifications/cancelled', async () => {
    const { client, server, listenId } = await modernListening()
    let isComplete = false
    client.listen({ toolsListChanged: true }).subscribe({ complete: () => { isComplete = true } })
    await settle()
    await server.notify('notifications/cancelled', { requestId: listenId(), reason: 'shutting down' })
    await settle()
    expect(isComplete).toBe(true)
    await client.close()
  })

  it('completes when the client closes, and errors when the listen request fails', async () => {
    const { client } = await modernListening()
    const done = new Promise(resolve => client.listen({ toolsListChanged: true }).subscribe({ complete: () => resolve('complete'), error: resolve }))
    await settle()
    await client.close()
    expect(await done).toBe('complete')
    const failing = fakeServer({ 'subscriptions/listen': () => { throw new InvalidParamsError('Invalid params: notifications') } })
    await using other = await connect(failing.transport, INFO)
    const error = await firstValueFrom(other.listen({})).catch(caught => caught)
    expect(error).toBeInstanceOf(InvalidParamsError)
  })

  it('serves subscribeResource with one listen stream whose updates reach notifications()', async () => {
    const { client, server, of, cancelled } = await modernListening()
    const updates: unknown[] = []
    client.notifications('notifications/resources/updated').subscribe(params => updates.push(params))
    await client.subscribeResource('file:///a')
    await client.subscribeResource('file:///b')
    expect(of('subscriptions/listen').map(request => request.params!.notifications)).toEqual([
      { resourceSubscriptions: ['file:///a'] }, { resourceSubscriptions: ['file:///a', 'file:///b'] }])
    // The first stream was replaced by the second one.
    expect(cancelled.map(params => params.requestId)).toEqual([of('subscriptions/listen')[0]!.id])
    await server.notify('notifications/resources/updated', { uri: 'file:///b', _meta: { [SUBSCRIPTION]: of('subscriptions/listen')[1]!.id } })
    await settle()
    expect(updates).toEqual([{ uri: 'file:///b', _meta: { [SUBSCRIPTION]: of('subscriptions/listen')[1]!.id } }])
    await client.unsubscribeResource('file:///a')
    await client.unsubscribeResource('file:///b')
    await settle()
    expect(of('subscriptions/listen')).toHaveLength(3)
    expect(cancelled).toHaveLength(3)
    expect(of('resources/subscribe')).toEqual([])
    await client.close()
  })
})

describe('listen (legacy era)', () => {
  /** A legacy fake server: tools and resource subscriptions declared, prompts without listChanged. */
  async function legacyListening() {
    const fake = fakeServer({
      initialize: params => ({
        protocolVersion: params!.protocolVersion, serverInfo: { name: 'old', version: '1' },
        capabilities: { tools: { listChanged: true }, prompts: {}, resources: { subscribe: true } },
      }),
      'resources/subscribe': () => ({}),
      'resources/unsubscribe': () => ({}),
      'tools/call': () => NEVER,
    })
    const client = await connect(fake.transport, INFO, { era: 'legacy' })
    return { ...fake, client }
  }

  it('acknowledges what the capabilities offer, subscribes the resources, and passes the matching session notifications', async () => {
    const { client, server, of } = await legacyListening()
    const events: ListenEvent[] = []
    const subscription = client.listen({ toolsListChanged: true, promptsListChanged: true, resourceSubscriptions: ['file:///a'] }).subscribe(event => events.push(event))
    await settle()
    expect(of('resources/subscribe').map(request => request.params!.uri)).toEqual(['file:///a'])
    await server.notify('notifications/prompts/list_changed')
    await server.notify('notifications/tools/list_changed')
    await server.notify('notifications/resources/updated', { uri: 'file:///other' })
    await server.notify('notifications/resources/updated', { uri: 'file:///a' })
    await settle()
    expect(events).toEqual([
      { type: 'acknowledged', notifications: { toolsListChanged: true, resourceSubscriptions: ['file:///a'] } },
      { type: 'notification', method: 'notifications/tools/list_changed', params: {} },
      { type: 'notification', method: 'notifications/resources/updated', params: { uri: 'file:///a' } },
    ])
    subscription.unsubscribe()
    await settle()
    expect(of('resources/unsubscribe').map(request => request.params!.uri)).toEqual(['file:///a'])
    await client.close()
  })

  it('errors with ConnectionClosedError when the session drops, and completes when the client closes', async () => {
    const dropped = await legacyListening()
    const error = new Promise(resolve => dropped.client.listen({ toolsListChanged: true }).subscribe({ error: resolve }))
    await settle()
    await dropped.server.close()
    expect(await error).toMatchObject({ name: 'ConnectionClosedError' })
    const closed = await legacyListening()
    const complete = new Promise(resolve => closed.client.listen({ toolsListChanged: true }).subscribe({ complete: () => resolve(true) }))
    await settle()
    await closed.client.close()
    expect(await complete).toBe(true)
  })
})
