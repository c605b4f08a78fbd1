import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { connect, type McpClient } from '../../actors/client.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { startRedis, type TestRedis } from '../helpers/redis-server.ts'
import { startNginx, type TestNginx } from '../helpers/nginx.ts'
import { collected, type Collected } from '../helpers/collected.ts'
import { spawnInstance, type SpawnedInstance } from '../../examples/cluster/spawn-instance.ts'

/**
 * Issue 27, item 5: a rolling restart of all three instances (child processes on one
 * redis-server, behind a real nginx) while our client and the official SDK's each run a stream of
 * calls with progress and hold a resource subscription. Each instance in turn: a fresh one starts,
 * nginx is reloaded with it in place of the old one, and the old one gets SIGTERM (it drains: each
 * session goes to a running instance, its streams end, and the clients resume them there). Neither
 * client sends anything twice: a request that fails fails the test.
 */
const FIXTURE = fileURLToPath(new URL('./fixture-instance.ts', import.meta.url))
const RESOURCE = 'everything://readme'

let redis: TestRedis
let nginx: TestNginx
const children: SpawnedInstance[] = []
const spawnFixture = async () => {
  const child = await spawnInstance({ redisUrl: redis.url, prefix: 'roll:', script: FIXTURE, stderr: 'ignore' })
  children.push(child)
  return child
}

beforeAll(async () => {
  redis = await startRedis()
  await Promise.all([spawnFixture(), spawnFixture(), spawnFixture()])
  nginx = await startNginx({ upstreams: children.map(child => child.address) })
}, 90_000)

afterAll(async () => {
  await nginx?.stop()
  for (const child of children) await child.stop()
  await redis?.stop()
})

const textOf = (result: { content: unknown }) => (result.content as { text: string }[])[0]!.text

/** One client's stream of calls: echo with a sequence number, then a progress call, over and over, until stopped. */
function callStream(name: string, call: (n: number) => Promise<string>, progressCall: (onProgress: (progress: number) => void) => Promise<string>, calls: Collected<string>) {
  const failures: string[] = []
  const answered: number[] = []
  const progressRuns: number[][] = []
  let isStopped = false
  const done = (async () => {
    for (let n = 0; !isStopped; n++) {
      try {
        const text = await call(n)
        if (text !== `${name} ${n}`) failures.push(`call ${n} answered ${JSON.stringify(text)}`)
        answered.push(n)
        calls.push(`${name} ${n}`)
        const progress: number[] = []
        progressRuns.push(progress)
        const finished = await progressCall(value => progress.push(value))
        if (finished !== 'Finished 4 steps') failures.push(`progress call after ${n} answered ${JSON.stringify(finished)}`)
      } catch (error) {
        failures.push(`call ${n}: ${error instanceof Error ? error.message : String(error)}`)
      }
    }
  })()
  return { failures, answered, progressRuns, stop: async () => { isStopped = true; await done } }
}

describe('a rolling restart of every instance behind nginx', () => {
  it('loses no call, no progress event and no subscription update, for our client and the official one', async () => {
    const url = `${nginx.url}/mcp`
    // Each request on a connection of its own: nginx's reload closes the idle keep-alive
    // connections its old workers hold, and a POST written on one as it closes is lost before
    // nginx reads it (any HTTP/1.1 service behind a reloading proxy meets this; clients do not
    // send a POST again by themselves). Nothing is sent twice: a request that fails, fails the test.
    const ownConnection: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers)
      headers.set('connection', 'close')
      return fetch(input, { ...init, headers })
    }
    const ours: McpClient = await connect(streamableHttpClient(url, { fetch: ownConnection }), { name: 'ours', version: '1' }, { era: 'legacy', protocolVersion: '2025-11-25' })
    const sdk = new Client({ name: 'official', version: '1' })
    const sdkErrors: string[] = []
    sdk.onerror = error => { sdkErrors.push(error.message) }
    await sdk.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: ownConnection }))
    const ourUpdates = collected<unknown>()
    const sdkUpdates = collected<unknown>()
    ours.notifications('notifications/resources/updated').subscribe(update => ourUpdates.push(update))
    sdk.setNotificationHandler(ResourceUpdatedNotificationSchema, notification => { sdkUpdates.push(notification.params) })
    await ours.subscribeResource(RESOURCE)
    await sdk.subscribeResource({ uri: RESOURCE })
    let touches = 0
    const touch = async () => {
      touches++
      await ours.callTool('touch', { uri: RESOURCE }, { timeout: 20_000 })
      await within(ourUpdates.when(items => items.length >= touches), `our client's update ${touches}`)
      await within(sdkUpdates.when(items => items.length >= touches), `the official client's update ${touches}`)
    }
    await touch()

    // Every echo call answered, from both clients: the restarts wait on it.
    const calls = collected<string>()
    const ourStream = callStream('ours',
      async n => textOf(await ours.callTool('echo', { text: `ours ${n}` }, { timeout: 20_000 })),
      async onProgress => textOf(await ours.callTool('long_running', { steps: 4, ms: 20 }, { timeout: 20_000, onProgress: event => onProgress(event.progress) })), calls)
    const sdkStream = callStream('sdk',
      async n => textOf(await sdk.callTool({ name: 'echo', arguments: { text: `sdk ${n}` } }, undefined, { timeout: 20_000 }) as { content: unknown }),
      async onProgress => textOf(await sdk.callTool({ name: 'long_running', arguments: { steps: 4, ms: 20 } }, undefined, { timeout: 20_000, onprogress: p => onProgress(p.progress) }) as { content: unknown }), calls)
    const drainMs: number[] = []
    // The instances nginx balances over.
    let live = [...children]
    try {
      for (const old of children.slice(0, 3)) {
        // Let calls run on the current set, then replace `old`.
        const before = calls.items.length
        await within(calls.when(items => items.length >= before + 6), 'six calls answered')
        const fresh = await spawnFixture()
        live = [...live.filter(child => child !== old), fresh]
        await nginx.reload(live.map(child => child.address))
        const started = Date.now()
        await within(old.stop(), `instance ${old.pid} to stop`)
        drainMs.push(Date.now() - started)
        // It drained and exited by itself (a SIGKILL after 15 s would say 'SIGKILL').
        expect(await old.exited).toBe(0)
        // The subscription still delivers, to both clients, after each restart.
        await touch()
      }
      // Calls went on after the last restart too.
      const after = calls.items.length
      await within(calls.when(items => items.length >= after + 6), 'six calls answered after the last restart')
    } finally {
      await ourStream.stop()
      await sdkStream.stop()
    }
    // No call failed; every progress call reported 1..4 once each, in order.
    expect(ourStream.failures).toEqual([])
    expect(sdkStream.failures).toEqual([])
    for (const run of [...ourStream.progressRuns, ...sdkStream.progressRuns]) expect(run).toEqual([1, 2, 3, 4])
    // Each touch was heard exactly once by each client: none lost, none replayed twice.
    expect(ourUpdates.items).toHaveLength(touches)
    expect(sdkUpdates.items).toHaveLength(touches)
    console.info(`rolling restart: ${ourStream.answered.length} + ${sdkStream.answered.length} echo calls (each followed by a progress call), drains took ${drainMs.join(', ')} ms, the official client heard ${sdkUpdates.items.length} of ${touches} updates (errors: ${sdkErrors.join('; ') || 'none'})`)
    await ours.close()
    await sdk.close()
  }, 120_000)
})

/** `promise`, or an error naming `what` past `ms` (30 s): a bound on a wait, never a sleep. */
async function within<T>(promise: Promise<T>, what: string | (() => string), ms = 30_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`waited ${ms} ms for ${typeof what === 'string' ? what : what()}`)), ms) })
  try { return await Promise.race([promise, late]) } finally { clearTimeout(timer) }
}
