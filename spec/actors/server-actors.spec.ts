import { describe, expect, it } from 'vitest'
import { NEVER, VirtualTimeScheduler, filter, firstValueFrom, lastValueFrom, type Observable } from 'rxjs'
import { createServer, type McpServer } from '../../actors/server.ts'
import type { ActorInspectionEvent } from '../../actors/actor.ts'
import { connectInMemory, createMemoryPair } from '../../testing.ts'
import { createConnection } from '../../lib/connection.ts'
import { resultOf } from '../../lib/operators/progress.ts'
import { CancelledError, ConnectionClosedError } from '../../lib/jsonrpc/errors.ts'

const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] })

/** One inspection event as a line: paths under the session read `session/...`, the request's `session/request`. */
function line(event: ActorInspectionEvent, session: string, request: string | undefined): string {
  const name = (path: string | undefined) => path === undefined ? '-' : path.replace(request ?? '\0', 'session/request').replace(session, 'session')
  switch (event.type) {
    case 'rxmcp.actor.spawned': return `spawned ${name(event.actor)} (${event.logic}) under ${name(event.parent)}`
    case 'rxmcp.actor.message': return `${name(event.actor)} <- ${(event.message as { type: string }).type}`
    case 'rxmcp.actor.transition': {
      const state = event.state as { phase?: string; status?: string }
      const effects = event.effects.map(effect => effect.type === 'emit' ? `emit ${(effect.event as { type: string }).type}` : effect.type)
      return `${name(event.actor)} -> ${state.phase ?? state.status} [${effects.join(', ')}]`
    }
    case 'rxmcp.actor.ended': return `${name(event.actor)} ended ${event.status}`
    default: return `${name(event.actor)} ${event.type}`
  }
}

function serverWithTools(): { server: McpServer; signals: AbortSignal[] } {
  const server = createServer({ name: 'actors', version: '1' })
  const signals: AbortSignal[] = []
  server.tool('step', { description: 'Reports one step, then answers' }, async (_args, ctx) => {
    ctx.progress(1, 1)
    return text('stepped')
  })
  server.tool('wait', { description: 'Runs until stopped' }, (_args, ctx) => {
    signals.push(ctx.signal)
    return NEVER as Observable<never>
  })
  server.resource('notes://a', { name: 'a' }, () => ({ contents: [{ uri: 'notes://a', text: 'a' }] }))
  return { server, signals }
}

/** The first spawn of a request actor from now on. */
const requestSpawned = (server: McpServer) => firstValueFrom(server.system.inspect.pipe(
  filter((event): event is Extract<ActorInspectionEvent, { type: 'rxmcp.actor.spawned' }> => event.type === 'rxmcp.actor.spawned' && event.logic === 'request')))

describe('the server side as actors', () => {
  it('shows a whole tools/call in server.system.inspect: the spawned request, its progress, its outcome, its end', async () => {
    const { server } = serverWithTools()
    await using pair = await connectInMemory(server)
    const session = `${server.system.name}/${pair.session.id}`
    const events: ActorInspectionEvent[] = []
    const watching = server.system.inspect.subscribe(event => events.push(event))
    const progress: number[] = []
    expect(await pair.client.callTool('step', {}, { onProgress: event => progress.push(event.progress) })).toEqual(text('stepped'))
    watching.unsubscribe()
    expect(progress).toEqual([1])
    const request = events.find(event => event.type === 'rxmcp.actor.spawned')?.actor
    expect(request).toMatch(new RegExp(`^${session}/\\d+$`))
    expect(events.map(event => line(event, session, request))).toEqual([
      'spawned session/request (request) under session',
      'session/request <- progress',
      'session/request -> running [emit-message]',
      'session/request <- result',
      'session/request -> answered [emit-message, done]',
      'session/request ended done',
    ])
  })

  it('stops the in-flight requests and the subscriptions of a session that closes, then the session', async () => {
    const { server, signals } = serverWithTools()
    const pair = await connectInMemory(server)
    await pair.client.subscribeResource('notes://a')
    const spawned = requestSpawned(server)
    const call = pair.client.callTool('wait', {}).catch(error => error)
    const request = (await spawned).actor
    const session = `${server.system.name}/${pair.session.id}`
    const lines: string[] = []
    const watching = server.system.inspect.subscribe(event => { if (event.type === 'rxmcp.actor.ended') lines.push(line(event, session, request)) })
    await pair.session.close()
    watching.unsubscribe()
    expect(lines).toEqual(['session/request ended done', 'session/subscription:notes://a ended stopped', 'session ended stopped'])
    expect(signals[0]!.aborted).toBe(true)
    expect(signals[0]!.reason).toBeInstanceOf(ConnectionClosedError)
    expect(pair.session.connection.incoming.size).toBe(0)
    expect(await call).toBeInstanceOf(Error)
    await pair[Symbol.asyncDispose]()
  })

  it('stops a request\'s handler when its session actor is stopped (server.system.stop())', async () => {
    const { server, signals } = serverWithTools()
    await using pair = await connectInMemory(server)
    await pair.client.subscribeResource('notes://a')
    const spawned = requestSpawned(server)
    const call = pair.client.callTool('wait', {}, { timeout: 0 }).catch(error => error)
    const request = (await spawned).actor
    const session = `${server.system.name}/${pair.session.id}`
    const lines: string[] = []
    const watching = server.system.inspect.subscribe(event => { if (event.type === 'rxmcp.actor.ended') lines.push(line(event, session, request)) })
    server.system.stop()
    watching.unsubscribe()
    // Children first, in the order they were spawned; the request is stopped from outside, unanswered.
    expect(lines).toEqual(['session/subscription:notes://a ended stopped', 'session/request ended stopped', 'session ended stopped'])
    expect(signals[0]!.reason).toBeInstanceOf(CancelledError)
    expect(pair.session.connection.incoming.size).toBe(0)
    await pair.client.close()
    expect(await call).toBeInstanceOf(Error)
  })

  it('times out a request to the client on the server\'s scheduler, in virtual time', async () => {
    const scheduler = new VirtualTimeScheduler()
    const server = createServer({ name: 'clock', version: '1' }, { scheduler })
    server.tool('roots', { description: 'Asks the client for its roots, waiting 5 s at most' }, async (_args, ctx) => {
      try {
        return text(JSON.stringify(await ctx.listRoots({ timeout: 5_000 })))
      } catch (error) {
        return { ...text(`${(error as Error).name}: ${(error as Error).message}`), isError: true }
      }
    })
    const [clientSide, serverSide] = createMemoryPair()
    await server.listen(serverSide)
    const client = createConnection(clientSide)
    let asked!: () => void
    const isAsked = new Promise<void>(resolve => { asked = resolve })
    const cancelled = firstValueFrom(client.notifications('notifications/cancelled'))
    // A client that never answers roots/list.
    client.setRequestHandler('roots/list', () => { asked(); return NEVER })
    client.start()
    await lastValueFrom(client.request('initialize', { protocolVersion: '2025-11-25', capabilities: { roots: {} }, clientInfo: { name: 'c', version: '1' } }, { progress: false }))
    await client.notify('notifications/initialized')
    const call = lastValueFrom(client.request('tools/call', { name: 'roots', arguments: {} }, { timeout: 0 }).pipe(resultOf()))
    await isAsked
    expect(scheduler.now()).toBe(0)
    scheduler.flush()
    expect(scheduler.now()).toBe(5_000)
    expect(await call).toEqual({ ...text('TimeoutError: roots/list timed out after 5000 ms'), isError: true })
    expect(await cancelled).toMatchObject({ requestId: expect.anything() })
    await client.close()
    await server.close()
  })
})
