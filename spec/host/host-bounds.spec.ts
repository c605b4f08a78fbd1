/**
 * Issue 20: the gateway passed a 10 MiB description and 100k tools through, and a list_changed
 * storm cost 150 MiB. A raw in-memory server (no rxmcp server in between to tidy what it sends)
 * offers oversized lists and sends storms; the host's view, and the gateway that serves it, stay
 * within HOST_LIMIT_DEFAULTS, and a storm is coalesced on the host's scheduler (virtual time here).
 */
import { afterEach, describe, expect, it } from 'vitest'
import { Subject, VirtualTimeScheduler, asyncScheduler, filter, firstValueFrom, lastValueFrom, toArray } from 'rxjs'
import { createMemoryPair, type MemoryTransport } from '../../transports/memory.ts'
import { connect } from '../../actors/client.ts'
import { createHost, type Host, type HostOptions } from '../../host/host.ts'
import { hostServer } from '../../host/gateway.ts'
import { HOST_LIMIT_DEFAULTS, newestListing } from '../../host/bounds.ts'
import { createTestScheduler } from '../helpers/marbles.ts'
import { parseHostConfig } from '../../lib/host-config.ts'

const cleanup: (() => Promise<unknown>)[] = []
afterEach(async () => { for (const step of cleanup.splice(0).reverse()) await step() })

type Item = Record<string, unknown>

/**
 * A server as raw JSON-RPC on a memory transport: lists what `offer` holds, in pages of `pageSize`,
 * and counts the listings it is asked for (first pages only: one per listing).
 */
function rawServer(end: MemoryTransport, offer: { tools: Item[]; resources: Item[]; prompts: Item[] }, pageSize = 500) {
  const listings = { tools: 0, resources: 0, prompts: 0 }
  /** Every request's method, as it comes. */
  const requests = new Subject<string>()
  /** When set, the next listing's answer (made when asked) waits for it. */
  const control: { hold: Promise<void> | undefined } = { hold: undefined }
  end.inbound.subscribe(item => {
    if (item.type !== 'message') return
    const message = item.message as { id?: number | string; method?: string; params?: { cursor?: string } }
    if (message.id === undefined || message.method === undefined) return
    requests.next(message.method)
    const hold = message.method.endsWith('/list') ? control.hold : undefined
    control.hold = hold === undefined ? control.hold : undefined
    const reply = (result: unknown) => hold === undefined ? end.send({ jsonrpc: '2.0', id: message.id!, result: result as never })
      : void hold.then(() => end.send({ jsonrpc: '2.0', id: message.id!, result: result as never }))
    if (message.method === 'initialize') {
      return reply({
        protocolVersion: '2025-11-25', serverInfo: { name: 'raw', version: '1' },
        capabilities: { tools: { listChanged: true }, resources: { listChanged: true }, prompts: { listChanged: true } },
      })
    }
    const kind = message.method.replace(/\/list$/, '') as keyof typeof offer
    if (!(kind in offer) || !message.method.endsWith('/list')) return end.send({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'Method not found' } })
    const start = Number(message.params?.cursor ?? 0)
    if (start === 0) listings[kind]++
    const page = offer[kind].slice(start, start + pageSize)
    const next = start + pageSize < offer[kind].length ? String(start + pageSize) : undefined
    reply({ [kind]: page, ...(next === undefined ? {} : { nextCursor: next }) })
  })
  const changed = (kind: keyof typeof offer) => end.send({ jsonrpc: '2.0', method: `notifications/${kind}/list_changed` })
  return { listings, changed, requests, control }
}

/** A host of one server, `raw`, whose client runs over a memory pair to the raw server. */
function hostOf(offer: { tools: Item[]; resources: Item[]; prompts: Item[] }, options: HostOptions = {}) {
  const [clientEnd, serverEnd] = createMemoryPair()
  const server = rawServer(serverEnd, offer)
  const warnings: string[] = []
  const host = createHost(parseHostConfig({ mcpServers: { raw: { command: 'unused' } } }), {
    start: async (_config, clientOptions) => ({ client: await connect(clientEnd, { name: 'host', version: '1' }, clientOptions) }),
    onTrimmed: (_server, warning) => warnings.push(warning),
    ...options,
  })
  cleanup.push(() => host.close())
  return { host, server, warnings }
}

const ready = (host: Host) => firstValueFrom(host.states.pipe(filter(states => states.get('raw')?.status === 'ready')))
const tool = (name: string, extra: Item = {}) => ({ name, inputSchema: { type: 'object' }, ...extra })
/** A request to the raw server and its answer (an error: it knows no ping), after everything sent before it. */
const roundTrip = (host: Host) => lastValueFrom(host.client('raw')!.request('ping', undefined, { progress: false })).catch(() => {})

describe('issue 20: the gateway passes a 10 MiB description and 100k tools through; a list_changed storm costs 150 MiB', () => {
  it('keeps at most maxToolsPerServer tools, cuts long descriptions, leaves out oversized definitions, and says so', async () => {
    const tools = Array.from({ length: 1500 }, (_, index) => tool(`t${index}`))
    tools[0] = tool('huge_description', { description: 'd'.repeat(10 * 1024 * 1024) })
    tools[1] = tool('huge_schema', { inputSchema: { type: 'object', properties: Object.fromEntries(Array.from({ length: 5000 }, (_, index) => [`p${index}`, { type: 'string' }])) } })
    const resources = Array.from({ length: 1200 }, (_, index) => ({ uri: `memo://r${index}`, name: `r${index}`, description: index === 0 ? 'x'.repeat(100_000) : 'small' }))
    const { host, server, warnings } = hostOf({ tools, resources, prompts: [] })
    await ready(host)
    const listed = host.currentTools()
    // 1,000 kept of the first 1,001 listed; the oversized schema is one of them, left out.
    expect(listed).toHaveLength(HOST_LIMIT_DEFAULTS.maxToolsPerServer - 1)
    expect(listed.some(entry => entry.tool.name === 'huge_schema')).toBe(false)
    expect(listed.some(entry => entry.tool.name === 't1500')).toBe(false)
    const described = listed.find(entry => entry.tool.name === 'huge_description')!
    expect(described.tool.description).toHaveLength(HOST_LIMIT_DEFAULTS.maxDescriptionLength)
    expect(described.tool.description!.endsWith('…')).toBe(true)
    const kept = await firstValueFrom(host.resources)
    expect(kept).toHaveLength(HOST_LIMIT_DEFAULTS.maxResourcesPerServer)
    expect(kept[0]!.resource.description).toHaveLength(HOST_LIMIT_DEFAULTS.maxDescriptionLength)
    // Pagination stopped past the bound: 3 pages of 500 for tools, not more.
    expect(server.listings.tools).toBe(1)
    expect(warnings.sort()).toEqual([
      expect.stringMatching(/^resources cut to fit the host's limits: "memo:\/\/r0": description of 100000 characters cut to 8192; more than 1000 offered/),
      expect.stringMatching(/^tools cut to fit the host's limits: "huge_description": description of 10485760 characters cut to 8192; "huge_schema": left out, its definition is \d+ bytes \(limit 65536\); more than 1000 offered/),
    ])

    // The gateway serves the bounded view.
    const gateway = hostServer(host, { onSkipped: () => {} })
    cleanup.push(() => gateway.close())
    const [a, b] = createMemoryPair()
    await gateway.server.listen(b)
    const client = await connect(a, { name: 'c', version: '1' })
    cleanup.push(() => client.close())
    const viaGateway = await lastValueFrom(client.tools().pipe(toArray()))
    expect(viaGateway.length).toBe(HOST_LIMIT_DEFAULTS.maxToolsPerServer - 1)
    expect(Math.max(...viaGateway.map(entry => JSON.stringify(entry).length))).toBeLessThanOrEqual(HOST_LIMIT_DEFAULTS.maxDefinitionBytes)
  }, 60_000)

  it('coalesces a storm of list_changed into one listing now and one at the end of the interval, on the host\'s scheduler', async () => {
    const scheduler = new VirtualTimeScheduler()
    const offer = { tools: [tool('first')], resources: [], prompts: [] }
    const { host, server } = hostOf(offer, { scheduler })
    await ready(host)
    expect(server.listings.tools).toBe(1)
    // The interval after the first listing passes with nothing to do.
    scheduler.flush()
    offer.tools = [tool('first'), tool('second')]
    for (let storm = 0; storm < 1000; storm++) server.changed('tools')
    // The first notification lists at once; the other 999 wait for the interval.
    await firstValueFrom(host.tools.pipe(filter(tools => tools.length === 2)))
    expect(server.listings.tools).toBe(2)
    offer.tools = [tool('first'), tool('second'), tool('third')]
    for (let storm = 0; storm < 1000; storm++) server.changed('tools')
    // The storm has been read by the time a later request is answered.
    await roundTrip(host)
    expect(server.listings.tools).toBe(2)
    // At the interval's end, one listing for everything that came meanwhile.
    scheduler.flush()
    await firstValueFrom(host.tools.pipe(filter(tools => tools.length === 3)))
    expect(server.listings.tools).toBe(3)
    scheduler.flush()
    expect(server.listings.tools).toBe(3)
  }, 30_000)

  it('lists again with switchMap: the newest list wins, and a slow listing it overtook is never published', async () => {
    const scheduler = new VirtualTimeScheduler()
    const offer = { tools: [tool('first')], resources: [], prompts: [] }
    const { host, server } = hostOf(offer, { scheduler })
    await ready(host)
    scheduler.flush()
    const published: string[][] = []
    host.tools.subscribe(tools => published.push(tools.map(entry => entry.tool.name)))
    // A list_changed whose listing is slow: the server answers it (with what it offered then) only when released.
    let release!: () => void
    server.control.hold = new Promise(resolve => { release = resolve })
    offer.tools = [tool('stale')]
    const asked = firstValueFrom(server.requests.pipe(filter(method => method === 'tools/list')))
    server.changed('tools')
    await asked
    // A second list_changed while the first listing is in flight, whose listing is fast.
    offer.tools = [tool('newest')]
    server.changed('tools')
    scheduler.flush()
    release()
    const first = await firstValueFrom(host.tools.pipe(filter(tools => tools.some(entry => entry.tool.name === 'stale' || entry.tool.name === 'newest'))))
    expect(first.map(entry => entry.tool.name)).toEqual(['newest'])
    // The slow answer has come back by the time a later request is answered: it changed nothing.
    await roundTrip(host)
    expect(host.currentTools().map(entry => entry.tool.name)).toEqual(['newest'])
    expect(published.flat()).not.toContain('stale')
    expect(server.listings.tools).toBe(3)
  }, 30_000)
})

describe('newestListing', () => {
  it('lists at once, at most once per interval, and drops a listing a newer one overtakes (switchMap)', () => {
    createTestScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const changes = hot('--a-b---|')
      // The first listing is slow: the change at 2 lists again at the interval's end (3), before it answers.
      const listings = [cold('----(1|)'), cold('-(2|)'), cold('-(3|)')]
      let next = 0
      expectObservable(newestListing(changes, () => listings[next++]!, 3, asyncScheduler)).toBe('----2--3|')
      expectSubscriptions(listings[0]!.subscriptions).toBe('^--!')
      expectSubscriptions(listings[1]!.subscriptions).toBe('---^!')
      expectSubscriptions(listings[2]!.subscriptions).toBe('------^!')
    })
  })

  it('is one listing for a storm within an interval, and none after the changes end', () => {
    createTestScheduler().run(({ cold, hot, expectObservable }) => {
      const changes = hot('-aaaaa-----|')
      let next = 0
      expectObservable(newestListing(changes, () => cold('(x|)', { x: ++next }), 3, asyncScheduler)).toBe('x--y--z----|', { x: 1, y: 2, z: 3 })
    })
  })

  it('is empty when the changes end before anything changed, after its first listing', () => {
    createTestScheduler().run(({ cold, expectObservable }) => {
      expectObservable(newestListing(cold('|'), () => cold('-(x|)'), 3, asyncScheduler)).toBe('-(x|)')
    })
  })
})
