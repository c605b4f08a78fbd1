/**
 * Issue 26, the per-session mode: `rxmcp gateway` with one downstream session per gateway session,
 * so that what a downstream server learns of its client (roots here) is the calling user's own.
 * Two official SDK v1 clients with different roots call through one gateway; each sees its own.
 *
 * ASSUMPTION (the mode's config key is being designed beside this test): the config file turns the
 * mode on with a top-level `"gateway": { "mode": "session" }` (GatewayOptions `mode: 'shared' |
 * 'session'`). If the key lands elsewhere, change `SESSION_MODE` below and nothing else.
 *
 *   caller A (roots file:///alice) --\                       /-- rx client A --HTTP--> our everything (this process)
 *                                     rxmcp gateway (child)  ---- everything A --stdio--> server-everything
 *   caller B (roots file:///bob)   --/                       \-- rx client B, everything B
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createEverythingServer } from '../../examples/everything/everything.ts'
import type { McpServer } from '../../actors/server.ts'
import { legacyCaller, startEverythingGateway, textOf, type Caller, type GatewayChild } from './fixtures/gateway-callers.ts'

/** The part of the config file that selects the per-session mode (see the assumption above). */
const SESSION_MODE = { gateway: { mode: 'session' } }

let rx: McpServer
let gateway: GatewayChild
const callers: Caller[] = []
afterEach(async () => { for (const caller of callers.splice(0)) await caller.close().catch(() => {}) })

beforeAll(async () => {
  rx = createEverythingServer()
  gateway = await startEverythingGateway(rx, SESSION_MODE)
}, 60_000)

afterAll(async () => {
  await gateway?.close()
  await rx?.close()
})

async function twoCallers(): Promise<[Caller, Caller]> {
  const alice = await legacyCaller(gateway.url, 'alice')
  callers.push(alice)
  const bob = await legacyCaller(gateway.url, 'bob')
  callers.push(bob)
  return [alice, bob]
}

describe('rxmcp gateway in per-session mode ("gateway": { "mode": "session" })', { timeout: 30_000 }, () => {
  it('shows our everything each caller\'s own roots', async () => {
    const [alice, bob] = await twoCallers()
    // Interleaved, so a shared downstream session that kept the first caller's answer would show it to the second.
    const [fromAlice, fromBob] = await Promise.all([alice.call('rx__roots'), bob.call('rx__roots')])
    expect(JSON.parse(textOf(fromAlice))).toEqual([{ uri: 'file:///alice', name: 'alice' }])
    expect(JSON.parse(textOf(fromBob))).toEqual([{ uri: 'file:///bob', name: 'bob' }])
  })

  it('shows server-everything each caller\'s own roots (it asks once per downstream session and keeps the answer)', async () => {
    const [alice, bob] = await twoCallers()
    // server-everything offers its roots tool only to a client that declares roots.
    expect(await alice.toolNames()).toContain('everything__get-roots-list')
    const fromAlice = textOf(await alice.call('everything__get-roots-list'))
    const fromBob = textOf(await bob.call('everything__get-roots-list'))
    expect(fromAlice).toContain('file:///alice')
    expect(fromAlice).not.toContain('file:///bob')
    expect(fromBob).toContain('file:///bob')
    expect(fromBob).not.toContain('file:///alice')
  })
})
