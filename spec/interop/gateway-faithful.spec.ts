/**
 * Issue 26, the checks: the gateway as a faithful proxy. `rxmcp gateway --config FILE --port 0` as
 * a child process in front of two servers, driven by the official SDK v1 client (legacy era) and
 * the official SDK v2 client (2026-07-28, modern era) over Streamable HTTP:
 *
 *   test process: caller (v1 | v2) --HTTP--> rxmcp gateway (child) --stdio--> server-everything (grandchild)
 *                                                                  --HTTP--> our everything example (this process)
 *
 * Names through the gateway are `<server>__<tool>`: `everything__*` for @modelcontextprotocol/
 * server-everything, `rx__*` for examples/everything. Resource URIs and templates keep their URIs.
 *
 * Our everything example runs in this process, so that a cancellation reaching its handler is seen
 * where it happens: a middleware on it notes each `long_running` call's start and the abort of its
 * signal (the handler's unsubscription), keyed by the call's `steps` (each test uses its own).
 * server-everything's own long-running tool ignores cancellation, so cancellation is checked on ours.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createEverythingServer } from '../../examples/everything/everything.ts'
import type { McpServer } from '../../actors/server.ts'
import { bounded, legacyCaller, modernCaller, startEverythingGateway, textOf, untilTemplates, type Caller, type GatewayChild } from './fixtures/gateway-callers.ts'

/** A promise with its resolver outside. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void
  const promise = new Promise<void>(done => { resolve = done })
  return { promise, resolve }
}

/** Our everything server's `long_running` calls by their `steps`: when each reached the handler, and when its signal aborted. */
const started = new Map<number, ReturnType<typeof deferred>>()
const cancelled = new Map<number, ReturnType<typeof deferred>>()
const once = (table: Map<number, ReturnType<typeof deferred>>, steps: number) => {
  if (!table.has(steps)) table.set(steps, deferred())
  return table.get(steps)!
}

let rx: McpServer
let gateway: GatewayChild
const callers: Caller[] = []
afterEach(async () => { for (const caller of callers.splice(0)) await caller.close().catch(() => {}) })

beforeAll(async () => {
  rx = createEverythingServer()
  rx.use(next => (request, ctx) => {
    const args = request.params?.arguments as { steps?: number } | undefined
    if (request.method === 'tools/call' && request.params?.name === 'long_running' && typeof args?.steps === 'number') {
      const steps = args.steps
      once(started, steps).resolve()
      ctx.signal.addEventListener('abort', () => once(cancelled, steps).resolve(), { once: true })
    }
    return next(request, ctx)
  })
  gateway = await startEverythingGateway(rx)
  // The gateway lists a server's templates after its tools: wait for both servers' too.
  await untilTemplates(gateway.url, ['demo://resource/dynamic/text/{resourceId}', 'everything://items/{id}'])
}, 60_000)

afterAll(async () => {
  await gateway?.close()
  await rx?.close()
})

const CALLERS = [
  ['the official SDK v1 client (legacy era)', (url: string) => legacyCaller(url)],
  ['the official SDK v2 client (2026-07-28, modern era)', (url: string) => modernCaller(url)],
] as const

describe.each(CALLERS)('rxmcp gateway in front of server-everything (stdio) and our everything (HTTP), called by %s', { timeout: 30_000 }, (_, make) => {
  async function caller(): Promise<Caller> {
    const made = await make(gateway.url)
    callers.push(made)
    return made
  }
  // 0 for the v1 block, 1 for the v2 block: markers and URIs differ per era, so the blocks never share one.
  const eraIndex = make === CALLERS[0][1] ? 0 : 1
  const marker = (base: number) => base + eraIndex

  // ---- resource templates ----

  it('lists both servers\' resource templates with their own URIs', async () => {
    const client = await caller()
    expect(await client.templateUris()).toEqual(expect.arrayContaining([
      'demo://resource/dynamic/text/{resourceId}',
      'demo://resource/dynamic/blob/{resourceId}',
      'everything://items/{id}',
      'everything://files/{+path}',
    ]))
  })

  it('reads a template URI of server-everything through the gateway', async () => {
    const client = await caller()
    const contents = await client.read('demo://resource/dynamic/text/3')
    expect(contents).toEqual([expect.objectContaining({ uri: 'demo://resource/dynamic/text/3', text: expect.stringContaining('Resource 3:') })])
  })

  it('reads a template URI of our everything through the gateway', async () => {
    const client = await caller()
    const contents = await client.read('everything://items/42')
    expect(contents).toEqual([expect.objectContaining({ uri: 'everything://items/42' })])
    expect(JSON.parse(contents[0]!.text!)).toEqual({ id: '42', name: 'Item 42' })
  })

  // ---- completion ----

  it('completes a prompt argument of server-everything (its namespaced prompt, the context passed on)', async () => {
    const client = await caller()
    expect(await client.complete({ type: 'ref/prompt', name: 'everything__completable-prompt' }, { name: 'department', value: 'Sa' })).toEqual(['Sales'])
    // The second argument's completions depend on the first, sent as context.
    expect(await client.complete({ type: 'ref/prompt', name: 'everything__completable-prompt' }, { name: 'name', value: '' }, { department: 'Support' })).toEqual(['John', 'Kim', 'Lee'])
  })

  it('completes a prompt argument of our everything (its namespaced prompt)', async () => {
    const client = await caller()
    expect(await client.complete({ type: 'ref/prompt', name: 'rx__greeting' }, { name: 'name', value: 'Gr' })).toEqual(['Grace'])
  })

  it('completes a template variable of each server (by template URI)', async () => {
    const client = await caller()
    expect(await client.complete({ type: 'ref/resource', uri: 'demo://resource/dynamic/text/{resourceId}' }, { name: 'resourceId', value: '7' })).toEqual(['7'])
    expect(await client.complete({ type: 'ref/resource', uri: 'everything://items/{id}' }, { name: 'id', value: '11' }))
      .toEqual(['11', '110', '111', '112', '113', '114', '115', '116', '117', '118', '119'])
  })

  // ---- subscriptions ----

  it('delivers a resource update of server-everything to the caller that subscribed', async () => {
    const client = await caller()
    // A listed resource (not a template's), so the subscription is accepted by the gateway as it is today.
    const uri = `demo://resource/static/document/${['features', 'architecture'][eraIndex]}.md`
    const subscription = await client.subscribe(uri)
    // server-everything sends its subscribers an update at once when the toggle starts (then every 5 s until toggled off).
    expect(textOf(await client.call('everything__toggle-subscriber-updates'))).toContain('Started')
    try {
      await bounded(subscription.updated(uri), `no notifications/resources/updated for ${uri} arrived`)
    } finally {
      await client.call('everything__toggle-subscriber-updates')
      await subscription.end()
    }
  })

  it('delivers a resource update of our everything to the caller that subscribed', async () => {
    const client = await caller()
    const uri = `everything://static/${marker(1)}`
    const subscription = await client.subscribe(uri)
    try {
      expect(textOf(await client.call('rx__touch', { uri }))).toBe(`touched ${uri}`)
      await bounded(subscription.updated(uri), `no notifications/resources/updated for ${uri} arrived`)
    } finally {
      await subscription.end()
    }
  })

  it('delivers a resource update only to the callers that subscribed to its URI', async () => {
    const [first, second] = [await caller(), await caller()]
    const [one, two, three] = [3, 4, 5].map(n => `everything://static/${n}`) as [string, string, string]
    const firstSubscription = await first.subscribe(one, three)
    const secondSubscription = await second.subscribe(two)
    try {
      // Touched in this order through one downstream connection, so each caller's updates keep it: a
      // `one` leaked to the second caller would come before its `two`, a `two` leaked to the first
      // before its `three`.
      for (const uri of [one, two, three]) await first.call('rx__touch', { uri })
      await bounded(Promise.all([firstSubscription.updated(three), secondSubscription.updated(two)]), 'the subscribers did not both get their updates')
      expect(first.updated).toEqual([one, three])
      expect(second.updated).toEqual([two])
    } finally {
      await firstSubscription.end()
      await secondSubscription.end()
    }
  })

  // ---- sampling, elicitation, roots: answered by the caller ----

  it('has server-everything\'s sampling request answered by the caller', async () => {
    const client = await caller()
    expect(await client.toolNames()).toContain('everything__trigger-sampling-request')
    const result = await client.call('everything__trigger-sampling-request', { prompt: 'What is a gateway?', maxTokens: 20 })
    expect(textOf(result)).toContain(`sampled by ${client.who}`)
    expect(client.asked.sampling).toEqual([expect.objectContaining({ maxTokens: 20 })])
  })

  it('has our everything\'s sampling request answered by the caller', async () => {
    const client = await caller()
    const result = await client.call('rx__sample', { prompt: 'What is a gateway?' })
    expect(result.isError).not.toBe(true)
    expect(textOf(result)).toBe(`${client.who}-model: sampled by ${client.who}`)
    expect(client.asked.sampling).toHaveLength(1)
  })

  it('has server-everything\'s form elicitation answered by the caller', async () => {
    const client = await caller()
    expect(await client.toolNames()).toContain('everything__trigger-elicitation-request')
    const result = await client.call('everything__trigger-elicitation-request')
    expect(textOf(result)).toContain(client.who)
    expect(client.asked.elicitation).toEqual([expect.objectContaining({ message: 'Please provide inputs for the following fields:' })])
  })

  it('has our everything\'s form elicitation answered by the caller', async () => {
    const client = await caller()
    const result = await client.call('rx__elicit')
    expect(result.isError).not.toBe(true)
    expect(result.structuredContent).toMatchObject({ action: 'accept', content: { name: client.who } })
    expect(client.asked.elicitation).toEqual([expect.objectContaining({ message: 'Tell me about yourself' })])
  })

  it('shows our everything the caller\'s roots', async () => {
    const client = await caller()
    const result = await client.call('rx__roots')
    expect(result.isError).not.toBe(true)
    expect(JSON.parse(textOf(result))).toEqual([{ uri: `file:///${client.who}`, name: client.who }])
    expect(client.asked.roots).toBe(1)
  })

  // ---- cancellation and progress ----

  it('carries the caller\'s cancellation to our everything\'s handler', async () => {
    const client = await caller()
    const steps = marker(9001)
    const controller = new AbortController()
    // A minute per step: the call ends only by being cancelled.
    const call = client.call('rx__long_running', { steps, ms: 60_000 }, { signal: controller.signal }).then(() => 'completed', () => 'failed')
    await bounded(once(started, steps).promise, 'the call did not reach our everything\'s handler')
    controller.abort()
    await bounded(once(cancelled, steps).promise, 'the cancellation did not reach our everything\'s handler')
    expect(await call).toBe('failed')
  })

  it('reports progress of server-everything\'s long-running operation to the caller', async () => {
    const client = await caller()
    const progress: number[] = []
    const result = await client.call('everything__trigger-long-running-operation', { duration: 0.3, steps: 3 }, { onProgress: value => progress.push(value) })
    expect(textOf(result)).toContain('completed')
    expect(progress).toEqual([1, 2, 3])
  })

  it('reports progress of our everything\'s long_running to the caller', async () => {
    const client = await caller()
    const progress: number[] = []
    const result = await client.call('rx__long_running', { steps: 3, ms: 1 }, { onProgress: value => progress.push(value) })
    expect(textOf(result)).toBe('Finished 3 steps')
    expect(progress).toEqual([1, 2, 3])
  })
})
