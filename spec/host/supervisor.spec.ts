/**
 * The host's supervision as actors: the supervisor's and the host's logic as tables (pure, nothing
 * run), then the host in virtual time (a VirtualTimeScheduler through the host's `scheduler`
 * option, servers started by an injected `start`): restarts by the backoff, failed after the
 * retries with stderr kept, a stable run starting the count over, the start timeout, and stopping
 * the host stopping every supervisor and client. No sleeps: each wait is on the state it expects.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { VirtualTimeScheduler, filter, firstValueFrom } from 'rxjs'
import { NONE, effect, type ActorInspectionEvent, type Effect } from '../../actors/actor.ts'
import { connect, type McpClient } from '../../actors/client.ts'
import { createServer } from '../../actors/server.ts'
import { createMemoryPair, type MemoryTransport } from '../../transports/memory.ts'
import { createHost, type Host, type HostOptions } from '../../host/host.ts'
import { hostLogic, type HostMessage, type HostState } from '../../host/host-logic.ts'
import {
  RESTART_DEFAULTS, RUN_ID, restartPolicy, supervisorLogic, type ServerState, type SupervisorMessage, type SupervisorState,
} from '../../host/supervisor.ts'
import { parseHostConfig } from '../../lib/host-config.ts'

const cleanup: (() => Promise<unknown>)[] = []
afterEach(async () => { for (const step of cleanup.splice(0).reverse()) await step() })

const policy = restartPolicy({ initial: 100, max: 1_000, retries: 3, stableMs: 1_000 })
const run = { name: 'client', initial: () => undefined, transition: (state: undefined) => [state, NONE] as const }
const logic = supervisorLogic('files', run, policy)
const client = { name: 'a client' } as unknown as McpClient
const fresh: SupervisorState = logic.initial(undefined)
const failure = new Error('the connection closed')

describe('supervisorLogic', () => {
  it.each<[string, SupervisorState, SupervisorMessage, SupervisorState, readonly Effect[]]>([
    ['run spawns the client run with restart supervision by the policy', fresh, { type: 'run' }, fresh,
      [effect.spawn(RUN_ID, run, { supervision: { strategy: 'restart', backoff: policy, stableMs: 1_000 } })]],
    ['a run starting is reported with its attempt', { ...fresh, attempt: 3 }, { type: 'starting' }, { ...fresh, attempt: 3, server: { status: 'starting', attempt: 3 } },
      [effect.sendParent({ type: 'server', name: 'files', state: { status: 'starting', attempt: 3 } })]],
    ['stderr keeps whole lines, blank ones left out, the rest for later', fresh, { type: 'stderr', chunk: 'one\n\ntwo\nthr' }, { ...fresh, stderr: ['one', 'two'], partial: 'thr' }, NONE],
    ['stderr completes the line being written', { ...fresh, stderr: ['one'], partial: 'tw' }, { type: 'stderr', chunk: 'o\n' }, { ...fresh, stderr: ['one', 'two'], partial: '' }, NONE],
    ['a connected client is reported with its process', fresh, { type: 'connected', client, pid: 7 }, { ...fresh, client, pid: 7 },
      [effect.sendParent({ type: 'server', name: 'files', state: { status: 'starting', attempt: 1 }, client, pid: 7 })]],
    ['an offer goes to the host, named', fresh, { type: 'offer', kind: 'tools', items: [{ name: 't' }] }, fresh,
      [effect.sendParent({ type: 'offer', name: 'files', kind: 'tools', items: [{ name: 't' }] })]],
    ['ready is reported with the client', { ...fresh, client }, { type: 'ready', serverInfo: { name: 's', version: '1' } },
      { ...fresh, client, server: { status: 'ready', serverInfo: { name: 's', version: '1' } } },
      [effect.sendParent({ type: 'server', name: 'files', state: { status: 'ready', serverInfo: { name: 's', version: '1' } }, client, pid: undefined })]],
    ['a restart of the run is restarting, the next attempt, its reason and delay; the client is gone', { ...fresh, client, pid: 7 },
      { type: 'rxmcp.child.restarting', id: RUN_ID, attempt: 2, delay: 200, error: failure },
      { ...fresh, attempt: 3, client: undefined, pid: undefined, server: { status: 'restarting', attempt: 3, reason: 'the connection closed', delayMs: 200 } },
      [effect.sendParent({ type: 'server', name: 'files', state: { status: 'restarting', attempt: 3, reason: 'the connection closed', delayMs: 200 } })]],
    ['the run given up on is failed, with the crashes in a row and the stderr kept', { ...fresh, attempt: 4, stderr: ['boom'] },
      { type: 'rxmcp.child.error', id: RUN_ID, error: new Error('could not start: spawn ENOENT') },
      { ...fresh, attempt: 4, stderr: ['boom'], client: undefined, pid: undefined, server: { status: 'failed', reason: 'could not start: spawn ENOENT (4 times in a row)', stderr: ['boom'] } },
      [effect.sendParent({ type: 'server', name: 'files', state: { status: 'failed', reason: 'could not start: spawn ENOENT (4 times in a row)', stderr: ['boom'] } })]],
    ['a run that ended by itself changes nothing', fresh, { type: 'rxmcp.child.done', id: RUN_ID, output: undefined }, fresh, NONE],
  ])('%s', (_, state, message, next, effects) => {
    expect(logic.transition(state, message)).toEqual([next, effects])
  })

  it('keeps the last 20 stderr lines', () => {
    const [state] = logic.transition(fresh, { type: 'stderr', chunk: Array.from({ length: 25 }, (_, index) => `line ${index}\n`).join('') })
    expect(state.stderr).toHaveLength(20)
    expect(state.stderr[0]).toBe('line 5')
  })

  it('has its defaults, and checks a policy', () => {
    expect(RESTART_DEFAULTS).toEqual({ initial: 500, max: 30_000, factor: 2, jitter: 0, retries: 5, stableMs: 60_000, startTimeoutMs: 30_000 })
    expect(() => restartPolicy({ startTimeoutMs: 0 })).toThrow(RangeError)
    expect(() => restartPolicy({ factor: 0.5 })).toThrow(RangeError)
  })
})

const config = parseHostConfig({ mcpServers: { a: { command: 'unused' }, b: { command: 'unused', tools: { deny: ['hidden'] } } } })
const supervisor = supervisorLogic('a', run, policy)
const empty = hostLogic.initial(config)
const added = hostLogic.transition(empty, { type: 'add', config: config.servers.get('a')!, supervisor })[0]
const connected = hostLogic.transition(added, { type: 'server', name: 'a', state: { status: 'starting', attempt: 1 }, client })[0]
const offered = hostLogic.transition(connected, { type: 'offer', name: 'a', kind: 'tools', items: [{ name: 'read', inputSchema: { type: 'object' } }] })[0]

describe('hostLogic', () => {
  it.each<[string, HostState, HostMessage, (state: HostState) => unknown, unknown, readonly Effect[]]>([
    ['add spawns the server\'s supervisor and tells it to run', empty, { type: 'add', config: config.servers.get('a')!, supervisor },
      state => state.states, new Map([['a', { status: 'starting', attempt: 1 }]]), [effect.spawn('a', supervisor), effect.send({ child: 'a' }, { type: 'run' })]],
    ['add of a server it runs already does nothing', added, { type: 'add', config: config.servers.get('a')!, supervisor }, state => state, added, NONE],
    ['an offer of a connected server is in the view, namespaced', connected, { type: 'offer', name: 'a', kind: 'tools', items: [{ name: 'read', inputSchema: { type: 'object' } }] },
      state => state.tools.map(tool => tool.name), ['a__read'], NONE],
    ['an offer of a server with no client is dropped', added, { type: 'offer', name: 'a', kind: 'tools', items: [{ name: 'read' }] }, state => state, added, NONE],
    ['a crash takes the server\'s offer out of the view', offered, { type: 'server', name: 'a', state: { status: 'restarting', attempt: 2, reason: 'x', delayMs: 100 } },
      state => [state.tools, state.servers.get('a')?.client], [[], undefined], NONE],
    ['remove stops its supervisor: the server is stopped, out of the view, then forgotten', offered, { type: 'remove', name: 'a' },
      state => [state.states, state.tools], [new Map([['a', { status: 'stopped' }]]), []], [effect.stop('a'), effect.send('self', { type: 'forget', name: 'a' })]],
    ['forget drops a stopped server', hostLogic.transition(offered, { type: 'remove', name: 'a' })[0], { type: 'forget', name: 'a' }, state => state.states.size, 0, NONE],
    ['forget leaves a server that runs', offered, { type: 'forget', name: 'a' }, state => state, offered, NONE],
    ['a report of a stopped server is late: dropped', hostLogic.transition(offered, { type: 'remove', name: 'a' })[0], { type: 'server', name: 'a', state: { status: 'starting', attempt: 1 } },
      state => state.states.get('a'), { status: 'stopped' }, NONE],
    ['a report of a server removed meanwhile is late: dropped', empty, { type: 'server', name: 'a', state: { status: 'stopped' } }, state => state, empty, NONE],
    ['allow-always remembers a consent for good', empty, { type: 'allow-always', key: 'tool:a:read' }, state => state.allowedAlways, new Set(['tool:a:read']), NONE],
    ['a supervisor that ended is nothing more to do', added, { type: 'rxmcp.child.done', id: 'a', output: undefined }, state => state, added, NONE],
  ])('%s', (_, state, message, read, expected, effects) => {
    const [next, ran] = hostLogic.transition(state, message)
    expect(read(next)).toEqual(expected)
    expect(ran).toEqual(effects)
  })
})

/** Runs every virtual action due up to `ms` (absolute virtual time), and moves the clock there. */
function advanceTo(scheduler: VirtualTimeScheduler, ms: number): void {
  scheduler.maxFrames = ms
  scheduler.flush()
  scheduler.frame = ms
}

function stateOf(host: Host, server: string, accept: (state: ServerState) => boolean): Promise<ServerState> {
  return firstValueFrom(host.states.pipe(filter(states => states.has(server) && accept(states.get(server)!)))).then(states => states.get(server)!)
}

/** The virtual clock of the newest host (a start runs as the host is made, before it is returned). */
let clock: VirtualTimeScheduler

/** A host of `servers` on a virtual clock, each server's client started by `start`. */
function virtualHost(servers: string[], start: NonNullable<HostOptions['start']>, restart: HostOptions['restart'] = { initial: 100, max: 1_000, retries: 3, stableMs: 1_000 }) {
  const scheduler = clock = new VirtualTimeScheduler()
  const host = createHost(parseHostConfig({ mcpServers: Object.fromEntries(servers.map(name => [name, { command: 'unused' }])) }), { scheduler, restart, start })
  cleanup.push(() => host.close())
  return { scheduler, host }
}

/** A real server over a memory pair, and the client end connected to it; `crash` cuts the pair. */
async function memoryServer(options: Parameters<typeof connect>[2]): Promise<{ client: McpClient; crash: () => Promise<void> }> {
  const server = createServer({ name: 'memory', version: '1' })
  server.tool('echo', {}, () => ({ content: [{ type: 'text', text: 'hi' }] }))
  const [near, far]: [MemoryTransport, MemoryTransport] = createMemoryPair()
  await server.listen(far)
  cleanup.push(() => server.close())
  const client = await connect(near, { name: 'host', version: '1' }, options)
  return { client, crash: () => far.close() }
}

describe('the host\'s supervision, in virtual time', () => {
  it('restarts a crashing start by the backoff, then marks it failed with the stderr of every attempt', async () => {
    const starts: number[] = []
    const { scheduler, host } = virtualHost(['flaky'], async (_config, _options, stderr) => {
      starts.push(clock.now())
      stderr(`attempt ${starts.length}: config not found\n`)
      throw new Error('exited with code 3')
    })
    const restarting = (attempt: number) => stateOf(host, 'flaky', state => state.status === 'restarting' && state.attempt === attempt)
    expect(await restarting(2)).toEqual({ status: 'restarting', attempt: 2, reason: 'could not start: exited with code 3', delayMs: 100 })
    advanceTo(scheduler, 100)
    expect(await restarting(3)).toMatchObject({ delayMs: 200 })
    advanceTo(scheduler, 300)
    expect(await restarting(4)).toMatchObject({ delayMs: 400 })
    advanceTo(scheduler, 700)
    expect(await stateOf(host, 'flaky', state => state.status === 'failed')).toEqual({
      status: 'failed', reason: 'could not start: exited with code 3 (4 times in a row)',
      stderr: ['attempt 1: config not found', 'attempt 2: config not found', 'attempt 3: config not found', 'attempt 4: config not found'],
    })
    expect(starts).toEqual([0, 100, 300, 700])
    expect(scheduler).toBe(clock)
    advanceTo(scheduler, 100_000)
    expect(starts).toHaveLength(4)
  })

  it('restarts a server whose connection closed, and a run that lasted stableMs starts the count over', async () => {
    const crashes: (() => Promise<void>)[] = []
    const { scheduler, host } = virtualHost(['memory'], async (_config, options) => {
      const started = await memoryServer(options)
      crashes.push(started.crash)
      return { client: started.client }
    })
    const ready = () => stateOf(host, 'memory', state => state.status === 'ready')
    await ready()
    expect(host.currentTools().map(tool => tool.name)).toEqual(['memory__echo'])
    await crashes[0]!()
    expect(await stateOf(host, 'memory', state => state.status === 'restarting')).toEqual({ status: 'restarting', attempt: 2, reason: 'the connection closed', delayMs: 100 })
    expect(host.currentTools()).toEqual([])
    expect(host.client('memory')).toBeUndefined()
    advanceTo(scheduler, 100)
    await ready()
    await crashes[1]!()
    expect(await stateOf(host, 'memory', state => state.status === 'restarting')).toMatchObject({ attempt: 3, delayMs: 200 })
    advanceTo(scheduler, 300)
    await ready()
    // Up for stableMs: the next crash is the first in a row again.
    advanceTo(scheduler, 1_300)
    await crashes[2]!()
    expect(await stateOf(host, 'memory', state => state.status === 'restarting')).toMatchObject({ attempt: 2, delayMs: 100 })
  })

  it('counts a start that takes longer than startTimeoutMs as a crash, and closes its client when it comes late', async () => {
    let finish!: (client: McpClient) => void
    let closed!: () => void
    const isClosed = new Promise<void>(resolve => { closed = resolve })
    const { scheduler, host } = virtualHost(['slow'], () => new Promise(resolve => { finish = late => resolve({ client: late }) }),
      { initial: 100, startTimeoutMs: 5_000 })
    advanceTo(scheduler, 4_999)
    expect(host.currentStates().get('slow')).toEqual({ status: 'starting', attempt: 1 })
    advanceTo(scheduler, 5_000)
    expect(await stateOf(host, 'slow', state => state.status === 'restarting')).toEqual({ status: 'restarting', attempt: 2, reason: 'could not start: no answer within 5000 ms', delayMs: 100 })
    finish({ close: async () => closed() } as unknown as McpClient)
    await isClosed
  })

  it('stops every supervisor and client when closed, children first', async () => {
    const clients: McpClient[] = []
    const { host } = virtualHost(['a', 'b'], async (_config, options) => {
      const { client } = await memoryServer(options)
      clients.push(client)
      return { client }
    })
    await Promise.all(['a', 'b'].map(name => stateOf(host, name, state => state.status === 'ready')))
    const ended: string[] = []
    host.system.inspect.subscribe((event: ActorInspectionEvent) => { if (event.type === 'rxmcp.actor.ended') ended.push(`${event.actor} ${event.status}`) })
    let isComplete = false
    const states: string[] = []
    host.states.subscribe({ next: map => states.push([...map].map(([name, state]) => `${name} ${state.status}`).join(', ')), complete: () => { isComplete = true } })
    await host.close()
    // Each server seen stopped, then gone, as before the actors.
    expect(states).toEqual(['a ready, b ready', 'a stopped, b ready', 'b ready', 'b stopped', ''])
    expect(ended).toEqual([
      'host/host/a/client stopped', 'host/host/a stopped', 'host/host/b/client stopped', 'host/host/b stopped', 'host/host stopped',
    ])
    expect(isComplete).toBe(true)
    // Each client's connection closed, its session over.
    await Promise.all(clients.map(client => client.closed))
  })
})
