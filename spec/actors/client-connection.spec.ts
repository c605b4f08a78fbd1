import { describe, expect, it } from 'vitest'
import { Subject, VirtualTimeScheduler, filter, firstValueFrom, lastValueFrom, toArray } from 'rxjs'
import { connect, RECONNECT_DEFAULTS, type ClientOptions, type ClientState, type McpClient } from '../../actors/client.ts'
import type { ActorInspectionEvent } from '../../actors/actor.ts'
import { createConnection, type Connection } from '../../lib/connection.ts'
import { ConnectionClosedError } from '../../lib/jsonrpc/errors.ts'
import { resultOf } from '../../lib/operators/progress.ts'
import { createMemoryPair } from '../../transports/memory.ts'

/**
 * A server made of raw connections, one per transport the client asks for, so a test can drop a
 * session, refuse attempts, and see when each attempt was made on the virtual clock.
 */
function fakeServer(scheduler: VirtualTimeScheduler) {
  const sessions: Connection[] = []
  /** Virtual time of each transport the client asked for. */
  const attempts: number[] = []
  /** Tool calls each session received, by session number. */
  const calls: number[] = []
  /** Each tool call's name, as it arrives. */
  const called = new Subject<string>()
  const server = {
    sessions, attempts, calls, called,
    /** How many of the next attempts fail (the server is down). */
    refusals: 0,
    makeTransport() {
      attempts.push(scheduler.frame)
      if (server.refusals > 0) { server.refusals--; throw new Error('server down') }
      const [near, far] = createMemoryPair()
      const session = createConnection(far)
      const index = sessions.length
      calls[index] = 0
      session.setRequestHandler('initialize', params => ({ protocolVersion: params!.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'fake', version: '1' } }))
      session.setRequestHandler('tools/call', params => {
        calls[index]++
        called.next(params!.name as string)
        // `hang` never answers: a request in flight for as long as the session lives.
        return params!.name === 'hang' ? new Promise(() => {}) : { content: [{ type: 'text', text: `session ${index}` }] }
      })
      session.start()
      sessions.push(session)
      return near
    },
    /** Drops the newest session, as a crashed server or a cut socket would. */
    async drop() { await sessions.at(-1)!.close() },
  }
  return server
}

/** Resolves when the client's state has `status` (at once when it has it now): an event, not a poll. */
function statusOf(client: McpClient, status: ClientState['status']): Promise<ClientState> {
  return firstValueFrom(client.states.pipe(filter(state => state.status === status)))
}

/** Resolves once a live session serves the client's streams: a listen stream is acknowledged on it. */
function liveSession(client: McpClient): Promise<unknown> {
  return firstValueFrom(client.listen({}).pipe(filter(event => event.type === 'acknowledged')))
}

/** Runs every virtual action due up to `ms` (absolute virtual time). */
function advanceTo(scheduler: VirtualTimeScheduler, ms: number): void {
  scheduler.maxFrames = ms
  scheduler.flush()
  // flush() stops at the last action it ran: the clock moves on to `ms` regardless.
  scheduler.frame = ms
}

async function setup(options: ClientOptions = {}) {
  const scheduler = new VirtualTimeScheduler()
  scheduler.maxFrames = 0
  const server = fakeServer(scheduler)
  const reported: unknown[] = []
  // Legacy: the fake server knows only initialize, and a discover probe on the virtual clock would
  // time out whenever a test jumps the clock past it while an answer is on its way.
  const client = await connect(() => server.makeTransport(), { name: 'resilient', version: '1' }, {
    era: 'legacy',
    reconnect: { initial: 100, max: 300, retries: 5 },
    scheduler, reportUnhandledError: error => reported.push(error), ...options,
  })
  /** Drops the session and waits until the client noticed (it is between sessions). */
  const drop = async () => {
    await server.drop()
    await statusOf(client, 'awaiting-initialize')
  }
  return { scheduler, server, client, reported, drop }
}

describe('connect (reconnect on a scheduler)', () => {
  it('runs a request built before a reconnect on the new session', async () => {
    const { scheduler, server, client, drop } = await setup()
    const call = client.callTool$('echo', { text: 'hi' })
    const list = client.request('tools/call', { name: 'echo' }, { progress: false })
    await drop()
    advanceTo(scheduler, 100)
    await statusOf(client, 'operating')
    expect(await lastValueFrom(call.pipe(resultOf()))).toEqual({ content: [{ type: 'text', text: 'session 1' }] })
    expect(await lastValueFrom(list.pipe(resultOf()))).toEqual({ content: [{ type: 'text', text: 'session 1' }] })
    expect(server.calls).toEqual([0, 2])
    await client.close()
  })

  it('waits for the next session when subscribed between sessions', async () => {
    const { scheduler, client, drop } = await setup()
    await drop()
    const pending = client.callTool('echo')
    advanceTo(scheduler, 100)
    expect(await pending).toEqual({ content: [{ type: 'text', text: 'session 1' }] })
    await client.close()
  })

  it('backs off by doubling from initial up to max, on the scheduler', async () => {
    const { scheduler, server, client, reported, drop } = await setup()
    server.refusals = 4
    await drop()
    advanceTo(scheduler, 99)
    expect(server.attempts).toEqual([0])
    advanceTo(scheduler, 10_000)
    // Waits of 100, 200, 300 (capped), 300, 300 after the drop at 0.
    expect(server.attempts).toEqual([0, 100, 300, 600, 900, 1200])
    await statusOf(client, 'operating')
    expect(reported).toHaveLength(4)
    expect(reported[0]).toBeInstanceOf(Error)
    expect((reported[0] as Error).message).toBe('server down')
    await client.close()
  })

  it('starts counting attempts over after each successful reconnect', async () => {
    const { scheduler, server, client, drop } = await setup({ reconnect: { initial: 100, retries: 2 } })
    server.refusals = 1
    await drop()
    advanceTo(scheduler, 1_000)
    await statusOf(client, 'operating')
    server.refusals = 1
    await drop()
    advanceTo(scheduler, 2_000)
    await statusOf(client, 'operating')
    expect(server.attempts).toEqual([0, 100, 300, 1100, 1300])
    await client.close()
  })

  it('gives up after `retries` attempts and closes', async () => {
    const { scheduler, server, client, reported, drop } = await setup({ reconnect: { initial: 100, retries: 3 } })
    server.refusals = Infinity
    await drop()
    advanceTo(scheduler, 100_000)
    await client.closed
    expect(server.attempts).toEqual([0, 100, 300, 700])
    expect(client.state.status).toBe('closed')
    expect(reported).toHaveLength(3)
    const error = await client.callTool('echo').catch(caught => caught)
    expect(error).toBeInstanceOf(ConnectionClosedError)
    expect(error.code).toBe('RXMCP_ERR_CONNECTION_CLOSED')
    expect(error.message).toBe('Cannot send tools/call: the connection is closed')
  })

  it('closes on a drop when reconnect is off', async () => {
    const { server, client } = await setup({ reconnect: undefined })
    await server.drop()
    await client.closed
    expect(client.state.status).toBe('closed')
    expect(server.attempts).toEqual([0])
  })

  it('stops a backoff wait when closed', async () => {
    const { scheduler, server, client, drop } = await setup()
    await drop()
    await client.close()
    advanceTo(scheduler, 10_000)
    expect(server.attempts).toEqual([0])
    expect(client.state.status).toBe('closed')
  })

  it('fails a request in flight at the drop with ConnectionClosedError and does not resend it', async () => {
    const { scheduler, server, client } = await setup()
    const heard = firstValueFrom(server.called)
    const pending = client.callTool('hang').catch(caught => caught)
    expect(await heard).toBe('hang')
    await server.drop()
    const error = await pending
    expect(error).toBeInstanceOf(ConnectionClosedError)
    expect(error.code).toBe('RXMCP_ERR_CONNECTION_CLOSED')
    advanceTo(scheduler, 100)
    await statusOf(client, 'operating')
    expect(server.calls).toEqual([1, 0])
    await client.close()
  })

  it('delivers notifications across a reconnect and completes them on close', async () => {
    const { scheduler, server, client, drop } = await setup()
    const messages: unknown[] = []
    let isComplete = false
    client.notifications('notifications/message').subscribe({ next: params => messages.push(params), complete: () => { isComplete = true } })
    const first = firstValueFrom(client.notifications('notifications/message'))
    await server.sessions[0]!.notify('notifications/message', { level: 'info', data: 'before' })
    await first
    await drop()
    advanceTo(scheduler, 100)
    // The new session serves the client's streams (operating alone is a moment too early: its
    // notifications/initialized is still on its way).
    await liveSession(client)
    const second = firstValueFrom(client.notifications('notifications/message'))
    await server.sessions[1]!.notify('notifications/message', { level: 'info', data: 'after' })
    await second
    expect(isComplete).toBe(false)
    await client.close()
    expect(isComplete).toBe(true)
    expect(messages).toEqual([{ level: 'info', data: 'before' }, { level: 'info', data: 'after' }])
  })

  it('completes notifications at once when asked for after close', async () => {
    const { client } = await setup()
    await client.close()
    expect(await lastValueFrom(client.notifications('notifications/message').pipe(toArray()))).toEqual([])
  })

  it('rejects connect with the first handshake failure, without retrying', async () => {
    const scheduler = new VirtualTimeScheduler()
    const server = fakeServer(scheduler)
    server.refusals = 1
    const error = await connect(() => server.makeTransport(), { name: 'c', version: '1' }, { reconnect: {}, scheduler }).catch(caught => caught)
    expect(error.message).toBe('server down')
    advanceTo(scheduler, 100_000)
    expect(server.attempts).toEqual([0])
  })

  it('waits by the policy\'s factor, capped at max', async () => {
    const { scheduler, server, client, drop } = await setup({ reconnect: { initial: 100, factor: 3, max: 1_000, retries: 5 } })
    server.refusals = 3
    await drop()
    advanceTo(scheduler, 10_000)
    await statusOf(client, 'operating')
    // Waits of 100, 300, 900, then 1,000 (2,700 capped) after the drop at 0.
    expect(server.attempts).toEqual([0, 100, 400, 1300, 2300])
    await client.close()
  })

  it('runs its state as an actor of its own system: a drop and a reconnect are transitions, inspectable', async () => {
    const { scheduler, client, drop } = await setup()
    const seen: string[] = []
    client.system.inspect.subscribe((event: ActorInspectionEvent) => {
      if (event.type === 'rxmcp.actor.message') seen.push(`${event.actor} ${(event.message as { type: string }).type}`)
    })
    await drop()
    advanceTo(scheduler, 100)
    await statusOf(client, 'operating')
    await client.close()
    expect(seen).toEqual(['client:resilient/client reconnecting', 'client:resilient/client initialize', 'client:resilient/client initialized', 'client:resilient/client closed'])
    expect(client.system.scheduler).toBe(scheduler)
  })

  it('refuses a reconnect policy that could not work, with a RangeError', async () => {
    const server = fakeServer(new VirtualTimeScheduler())
    const error = await connect(() => server.makeTransport(), { name: 'c', version: '1' }, { reconnect: { factor: 0.5 } }).catch(caught => caught)
    expect(error).toBeInstanceOf(RangeError)
    expect(error.message).toBe('backoff: factor must be a finite number >= 1, not 0.5')
    expect(server.attempts).toEqual([])
  })

  it('keeps its defaults', () => {
    expect(RECONNECT_DEFAULTS).toEqual({ initial: 500, max: 30_000, factor: 2, jitter: 0, retries: 10 })
  })
})
