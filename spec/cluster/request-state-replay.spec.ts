import { describe, expect, it } from 'vitest'
import { randomUUID } from 'node:crypto'
import { createServer } from '../../actors/server.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { ErrorCode } from '../../lib/jsonrpc/errors.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { MetaKey } from '../../lib/schema/modern.ts'
import { useScaleOut } from '../helpers/scale-instances.ts'
import { events, messages } from '../helpers/sse-events.ts'

/**
 * Two instances of one server on a real redis-server, each wired only by spreading what
 * `redisScaleOut` gives (`scale.server`, `scale.http`), each on its own real HTTP listener, as
 * behind a balancer without stickiness. A modern-era (2026-07-28) tool asks one confirmation
 * (an MRTR round), then makes a transfer: a `requestState` must continue its request once across
 * the cluster, not once on each instance.
 */

const MODERN = '2026-07-28'
const META = { [MetaKey.protocolVersion]: MODERN, [MetaKey.clientCapabilities]: { elicitation: { form: {} } }, [MetaKey.clientInfo]: { name: 'replayer', version: '1' } }
const yes = { action: 'accept', content: { ok: true } }
const USED = { code: ErrorCode.InvalidParams, message: 'Invalid params: requestState has already been used; send the request again without it', data: { reason: 'used' } }

const cluster = useScaleOut()

/** One instance: `redisScaleOut`'s options spread, nothing else shared; `transfers` records its side effects. */
async function instance(prefix: string) {
  const transfers: unknown[] = []
  const { http } = await cluster.start(prefix, scale => {
    const server = createServer({ name: 'bank', version: '1' }, { ...scale.server })
    server.tool('transfer', { inputSchema: { type: 'object', properties: { amount: { type: 'integer' } } } }, async ({ amount }, ctx) => {
      const answer = await ctx.elicit({ mode: 'form', message: 'Send it?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } }, { key: 'confirm' })
      if (answer.action !== 'accept' || answer.content?.ok !== true) return { content: [{ type: 'text', text: 'not sent' }] }
      transfers.push(amount)
      return { content: [{ type: 'text', text: `sent ${String(amount)}` }] }
    })
    return { server, http: streamableHttp({ port: 0, ...scale.http }) }
  })
  let nextId = 1
  /** One modern tools/call of `transfer` over HTTP; resolves with its JSON-RPC answer (JSON or SSE). */
  const call = async (params: JsonObject): Promise<JsonObject> => {
    const body = { jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name: 'transfer', _meta: META, ...params } }
    const response = await fetch(http.url!, {
      method: 'POST', body: JSON.stringify(body),
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'transfer' },
    })
    return response.headers.get('content-type')?.includes('text/event-stream') ? messages(await events(response)).at(-1) : await response.json()
  }
  return { transfers, call }
}

describe('issue 20: a requestState can be replayed (across instances)', { timeout: 30_000 }, () => {
  it('refuses on instance B a requestState used on instance A: the transfer runs once in the cluster', async () => {
    const prefix = `rs-${randomUUID()}:`
    const a = await instance(prefix)
    const b = await instance(prefix)
    const round = await a.call({ arguments: { amount: 100 } })
    expect(round.result).toMatchObject({ resultType: 'input_required', inputRequests: { confirm: { method: 'elicitation/create' } } })
    const retry = { arguments: { amount: 100 }, inputResponses: { confirm: yes }, requestState: (round.result as JsonObject).requestState }
    expect((await a.call(retry)).result).toMatchObject({ content: [{ type: 'text', text: 'sent 100' }], resultType: 'complete' })
    expect((await b.call(retry)).error).toEqual(USED)
    expect((await a.call(retry)).error).toEqual(USED)
    expect([...a.transfers, ...b.transfers]).toEqual([100])
  })

  it('lets exactly one of concurrent retries with one state through, sent to both instances', async () => {
    const prefix = `rs-${randomUUID()}:`
    const a = await instance(prefix)
    const b = await instance(prefix)
    const round = await b.call({ arguments: { amount: 7 } })
    const retry = { arguments: { amount: 7 }, inputResponses: { confirm: yes }, requestState: (round.result as JsonObject).requestState }
    const answers = await Promise.all([a.call(retry), b.call(retry), a.call(retry), b.call(retry)])
    expect(answers.filter(answer => answer.result !== undefined)).toHaveLength(1)
    expect(answers.filter(answer => answer.error !== undefined).map(answer => answer.error)).toEqual([USED, USED, USED])
    expect([...a.transfers, ...b.transfers]).toEqual([7])
  })
})
