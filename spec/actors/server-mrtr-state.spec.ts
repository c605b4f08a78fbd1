import { afterEach, describe, expect, it } from 'vitest'
import { createServer, type McpServer, type ServerOptions } from '../../actors/server.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { ErrorCode } from '../../lib/jsonrpc/errors.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { MetaKey } from '../../lib/schema/modern.ts'
import type { ElicitParams } from '../../lib/schema/types.ts'
import { events, messages } from '../helpers/sse-events.ts'

const MODERN = '2026-07-28'
const META = { [MetaKey.protocolVersion]: MODERN, [MetaKey.clientCapabilities]: { elicitation: { form: {} } }, [MetaKey.clientInfo]: { name: 'replayer', version: '1' } }
const CONFIRM: ElicitParams = { mode: 'form', message: 'Send it?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } }
const yes = { action: 'accept', content: { ok: true } }
const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] })

let mcp: McpServer | undefined
afterEach(async () => {
  await mcp?.close()
  mcp = undefined
})

/**
 * A modern server over real HTTP with tools whose side effect (a transfer) comes after their inputs:
 * `transfer` asks one confirmation, `two-step` asks `first` and then `second`, `quote` carries a
 * price of its own (`ctx.setRequestState`) before it asks for a confirmation.
 */
async function start(options: ServerOptions = {}) {
  const server = createServer({ name: 'bank', version: '1' }, options)
  mcp = server
  /** The side effects, in order. */
  const transfers: unknown[] = []
  server.tool('transfer', { inputSchema: { type: 'object', properties: { amount: { type: 'integer' } } } }, async ({ amount }, ctx) => {
    const answer = await ctx.elicit(CONFIRM, { key: 'confirm' })
    if (answer.action !== 'accept' || answer.content?.ok !== true) return text('not sent')
    transfers.push(amount)
    return text(`sent ${String(amount)}`)
  })
  server.tool('two-step', {}, async (_args, ctx) => {
    const first = await ctx.elicit(CONFIRM, { key: 'first' })
    const second = await ctx.elicit(CONFIRM, { key: 'second' })
    transfers.push(`${first.action}+${second.action}`)
    return text('both')
  })
  server.tool('quote', {}, async (_args, ctx) => {
    if (ctx.requestState === undefined) ctx.setRequestState({ price: 42 })
    const answer = await ctx.elicit(CONFIRM, { key: 'confirm' })
    transfers.push(`quote ${(ctx.requestState as { price: number }).price} ${answer.action}`)
    return text('bought')
  })
  const http = streamableHttp({ port: 0 })
  await server.listen(http)
  let nextId = 1
  /** One modern tools/call over HTTP; resolves with its JSON-RPC answer (JSON or SSE). */
  const call = async (name: string, params: JsonObject = {}): Promise<JsonObject> => {
    const body = { jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name, _meta: META, ...params } }
    const response = await fetch(http.url!, {
      method: 'POST', body: JSON.stringify(body),
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': name },
    })
    return response.headers.get('content-type')?.includes('text/event-stream') ? messages(await events(response)).at(-1) : await response.json()
  }
  return { transfers, call }
}

const USED = { code: ErrorCode.InvalidParams, message: 'Invalid params: requestState has already been used; send the request again without it', data: { reason: 'used' } }

describe('issue 20: a requestState can be replayed and inputResponses sent without a state skip the input round', () => {
  it('runs what follows the input once per state: the same retry sent again is refused with -32602 (used)', async () => {
    const { transfers, call } = await start()
    const round = await call('transfer', { arguments: { amount: 100 } })
    expect(round.result).toMatchObject({ resultType: 'input_required', inputRequests: { confirm: { method: 'elicitation/create' } } })
    const retry = { arguments: { amount: 100 }, inputResponses: { confirm: yes }, requestState: (round.result as JsonObject).requestState }
    expect((await call('transfer', retry)).result).toMatchObject({ ...text('sent 100'), resultType: 'complete' })
    for (let replay = 0; replay < 2; replay++) expect((await call('transfer', retry)).error).toEqual(USED)
    expect(transfers).toEqual([100])
  })

  it('lets exactly one of concurrent retries with one state through', async () => {
    const { transfers, call } = await start()
    const round = await call('transfer', { arguments: { amount: 7 } })
    const retry = { arguments: { amount: 7 }, inputResponses: { confirm: yes }, requestState: (round.result as JsonObject).requestState }
    const answers = await Promise.all([call('transfer', retry), call('transfer', retry), call('transfer', retry)])
    expect(answers.filter(answer => answer.result !== undefined)).toHaveLength(1)
    expect(answers.filter(answer => answer.error !== undefined).map(answer => answer.error)).toEqual([USED, USED])
    expect(transfers).toEqual([7])
  })

  it('takes inputResponses sent without a requestState only as answers checked like any other, and ignores keys nobody asks', async () => {
    const { transfers, call } = await start()
    // Answered ahead, with keys the handler never asks (MRTR: ignore what is not recognized).
    const ahead = await call('transfer', { arguments: { amount: 5 }, inputResponses: { confirm: yes, extra: { action: 'accept', content: { x: 1 } } } })
    expect(ahead.result).toMatchObject({ ...text('sent 5'), resultType: 'complete' })
    // An answer ahead that does not match the requestedSchema runs nothing past the input.
    const wrong = await call('transfer', { arguments: { amount: 6 }, inputResponses: { confirm: { action: 'accept', content: { ok: 'yes' } } } })
    expect((wrong.result as JsonObject | undefined)?.resultType).not.toBe('complete')
    expect(transfers).toEqual([5])
  })

  it('does not combine answers sent without a requestState with data the handler carries: it asks in a round', async () => {
    const { transfers, call } = await start()
    const answer = await call('quote', { inputResponses: { confirm: yes } })
    expect(answer.result).toMatchObject({ resultType: 'input_required', inputRequests: { confirm: { method: 'elicitation/create', params: CONFIRM } } })
    expect(transfers).toEqual([])
    const retry = await call('quote', { inputResponses: { confirm: yes }, requestState: (answer.result as JsonObject).requestState })
    expect(retry.result).toMatchObject({ ...text('bought'), resultType: 'complete' })
    expect(transfers).toEqual(['quote 42 accept'])
  })

  it('does not take answers to an input the state\'s round did not ask for', async () => {
    const { transfers, call } = await start()
    const round1 = await call('two-step')
    expect(Object.keys((round1.result as JsonObject).inputRequests as JsonObject)).toEqual(['first'])
    // The retry answers `second` before being asked: ignored, and `second` is asked in its own round.
    const round2 = await call('two-step', { inputResponses: { first: yes, second: yes }, requestState: (round1.result as JsonObject).requestState })
    expect(round2.result).toMatchObject({ resultType: 'input_required' })
    expect(Object.keys((round2.result as JsonObject).inputRequests as JsonObject)).toEqual(['second'])
    const round3 = await call('two-step', { inputResponses: { second: { action: 'decline' } }, requestState: (round2.result as JsonObject).requestState })
    expect(round3.result).toMatchObject({ ...text('both'), resultType: 'complete' })
    expect(transfers).toEqual(['accept+decline'])
  })

  it('does not spend a state on a retry refused for another reason, nor on a forged one', async () => {
    const { transfers, call } = await start()
    const round = await call('transfer', { arguments: { amount: 9 } })
    const state = (round.result as JsonObject).requestState as string
    const mismatch = await call('transfer', { arguments: { amount: 90_000 }, inputResponses: { confirm: yes }, requestState: state })
    expect(mismatch.error).toMatchObject({ code: ErrorCode.InvalidParams, data: { reason: 'mismatch' } })
    expect((await call('transfer', { arguments: { amount: 9 }, inputResponses: { confirm: yes }, requestState: state })).result).toMatchObject(text('sent 9'))
    expect(transfers).toEqual([9])
  })

  it('asks a shared requestStateStore, so instances behind one balancer refuse a state used on another', async () => {
    const used = new Set<string>()
    const store = { claim: async (id: string) => !used.has(id) && used.add(id) !== undefined }
    const key = 'a key every instance shares, 32B'
    const a = await start({ requestStateKey: key, requestStateStore: store })
    const first = mcp!
    const b = await start({ requestStateKey: key, requestStateStore: store })
    const round = await a.call('transfer', { arguments: { amount: 3 } })
    const retry = { arguments: { amount: 3 }, inputResponses: { confirm: yes }, requestState: (round.result as JsonObject).requestState }
    expect((await b.call('transfer', retry)).result).toMatchObject(text('sent 3'))
    expect((await a.call('transfer', retry)).error).toEqual(USED)
    expect([...a.transfers, ...b.transfers]).toEqual([3])
    await first.close()
  })
})
