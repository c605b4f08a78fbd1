import { afterEach, describe, expect } from 'vitest'
import { ReplaySubject, filter, firstValueFrom, lastValueFrom, take, toArray, timeout } from 'rxjs'
import { readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { randomUUID } from 'node:crypto'
import { connect } from '../../actors/client.ts'
import type { ListenEvent } from '../../actors/client/api.ts'
import { stdioClient, type StdioClientTransport } from '../../transports/stdio.ts'
import { verifies } from '../helpers/verifies.ts'
import { collected } from '../helpers/collected.ts'

const INFO = { name: 'reqs-wire', version: '1' }
const recordingServer = fileURLToPath(new URL('../fixtures/stdin-recording-server.ts', import.meta.url))
const rogueServer = fileURLToPath(new URL('../fixtures/rogue-modern-stdio-server.ts', import.meta.url))

const cleanups: Array<() => Promise<unknown> | unknown> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** A child running the recording server; what it reads on stdin goes to a file of the test's. */
function recorded(): { transport: StdioClientTransport; file: string } {
  const file = join(tmpdir(), `rxmcp-stdin-${randomUUID()}.log`)
  cleanups.push(() => rmSync(file, { force: true }))
  const transport = stdioClient({ command: process.execPath, args: ['--import', 'tsx', recordingServer, file], stderr: 'pipe', shutdownGraceMs: 5000 })
  return { transport, file }
}

type Message = Record<string, unknown>
const isId = (id: unknown) => typeof id === 'string' || Number.isInteger(id)
const isObject = (value: unknown): value is Message => typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * What is wrong with `line` as one MCP message (a JSON-RPC 2.0 request, notification or response
 * with object params and results), checked here independently of rxmcp's own guards; undefined
 * when nothing is.
 */
function problemOf(line: string): string | undefined {
  let message: unknown
  try { message = JSON.parse(line) } catch { return 'not JSON' }
  if (!isObject(message)) return 'not one JSON object'
  if (message.jsonrpc !== '2.0') return 'jsonrpc is not "2.0"'
  const keys = Object.keys(message)
  if ('method' in message) {
    if (typeof message.method !== 'string') return 'method is not a string'
    if ('id' in message && !isId(message.id)) return 'a request id is not a string or an integer'
    if ('params' in message && !isObject(message.params)) return 'params is not an object'
    return keys.every(key => ['jsonrpc', 'id', 'method', 'params'].includes(key)) ? undefined : `unknown members ${keys}`
  }
  if (!('id' in message) || !(isId(message.id) || message.id === null)) return 'a response id is not a string, an integer or null'
  if (('result' in message) === ('error' in message)) return 'a response carries not exactly one of result and error'
  if ('result' in message && !isObject(message.result)) return 'result is not an object'
  if ('error' in message && !(isObject(message.error) && Number.isInteger(message.error.code) && typeof message.error.message === 'string')) return 'error is not a JSON-RPC error object'
  return keys.every(key => ['jsonrpc', 'id', 'result', 'error'].includes(key)) ? undefined : `unknown members ${keys}`
}

describe('issue 20 requirements: stdio on the wire (reqs-wire)', () => {
  for (const [id, era] of [['stdio:stdin-protocol-only', 'legacy'], ['stdio:stdin-protocol-only@2026-07-28', 'modern']] as const) {
    verifies(id, `writes nothing to the server's stdin but MCP messages, one per line (${era} era: calls, progress, roots, a cancellation, a close)`, async () => {
      const { transport, file } = recorded()
      const client = await connect(transport, INFO, { era, roots: [{ uri: 'file:///work', name: 'work' }] })
      cleanups.push(() => client.close())
      expect(client.era).toBe(era)
      await client.tools()
      expect(await client.callTool('echo', { text: 'a line\nbreak, a \u2028 separator, ünïcödé and 🙂' })).toEqual({ content: [{ type: 'text', text: 'a line\nbreak, a \u2028 separator, ünïcödé and 🙂' }] })
      const steps = await lastValueFrom(client.request('tools/call', { name: 'steps', arguments: {} }).pipe(toArray()))
      expect(steps.filter(event => event.type === 'progress')).toHaveLength(3)
      // Legacy: a live roots/list the client answers; modern: an input round the client retries.
      expect(await client.callTool('roots')).toEqual({ content: [{ type: 'text', text: JSON.stringify([{ uri: 'file:///work', name: 'work' }]) }] })
      // Cancelled while in flight: its notifications/cancelled goes on the wire.
      const hanging = client.request('tools/call', { name: 'hang', arguments: {} }).subscribe({ error: () => {} })
      await client.callTool('echo', { text: 'the hang request is in' })
      hanging.unsubscribe()
      await client.callTool('echo', { text: 'last' })
      await client.close()
      expect(await transport.exited).toMatchObject({ code: 0 })

      const bytes = readFileSync(file)
      // UTF-8 all through (a fatal decoder throws otherwise), each message ended by a newline.
      const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
      expect(text.endsWith('\n')).toBe(true)
      const lines = text.slice(0, -1).split('\n')
      expect(lines.map(line => [line.slice(0, 80), problemOf(line)]).filter(([, problem]) => problem !== undefined)).toEqual([])
      const messages = lines.map(line => JSON.parse(line) as Message)
      expect(messages.filter(message => message.method === 'notifications/cancelled')).toHaveLength(1)
      const responses = messages.filter(message => !('method' in message))
      // The legacy client answers the server's roots/list; the modern one writes no response at all.
      if (era === 'legacy') expect(responses).toEqual([expect.objectContaining({ result: { roots: [{ uri: 'file:///work', name: 'work' }] } })])
      else expect(responses).toEqual([])
    }, 30_000)
  }

  verifies('stdio:client-no-responses@2026-07-28', 'writes no JSON-RPC response in the modern era, not even an error, to a server that sends it requests and unreadable lines', async () => {
    const transport = stdioClient({ command: process.execPath, args: ['--import', 'tsx', rogueServer], stderr: 'pipe', shutdownGraceMs: 2000 })
    // Every line the child read, in order.
    const lines = collected<string>()
    const read = lines.items
    transport.stderr.subscribe(text => { for (const line of text.split('\n')) if (line.startsWith('IN ')) lines.push(line.slice(3)) })
    const unanswered: unknown[] = []
    const client = await connect(transport, INFO, { era: 'modern', inspect: event => { if (event.type === 'rxmcp.request.unanswered') unanswered.push(event.id) } })
    cleanups.push(() => client.close())
    expect(await client.callTool('first')).toEqual({ content: [{ type: 'text', text: 'answer 1' }] })
    expect(await client.callTool('second')).toEqual({ content: [{ type: 'text', text: 'answer 2' }] })
    // The child echoes each line before it answers it, and stdin keeps the client's order: once the
    // second call's line is echoed, so is anything the client wrote after the first call's extras.
    await lines.when(items => items.some(line => line.includes('"second"')))
    const written = read.map(line => JSON.parse(line) as Message)
    expect(written.map(message => message.method)).toEqual(['server/discover', 'tools/call', 'tools/call'])
    expect(written.filter(message => !('method' in message))).toEqual([])
    expect(unanswered).toEqual(['srv-1', null, 'srv-2', null])
  }, 30_000)

  verifies('subscriptions:stdio-relisten@2026-07-28', 'sends subscriptions/listen again after the stdio connection is re-established, and hears the new server', async () => {
    const spawned: Array<{ transport: StdioClientTransport; file: string }> = []
    const client = await connect(() => { const child = recorded(); spawned.push(child); return child.transport }, INFO, {
      era: 'modern', reconnect: { initial: 0, retries: 3 },
    })
    cleanups.push(() => client.close())
    // One listen stream for the whole test; `events` fills as it emits.
    const events = new ReplaySubject<ListenEvent>()
    const subscription = client.listen({ toolsListChanged: true }).subscribe(events)
    cleanups.push(() => subscription.unsubscribe())
    const seen = (count: number, type: ListenEvent['type']) => firstValueFrom(events.pipe(filter(event => event.type === type), take(count), toArray(), timeout(20_000)))
    await seen(1, 'acknowledged')
    // The first server dies: the client starts a second one, and asks it again.
    process.kill(spawned[0]!.transport.pid!, 'SIGKILL')
    await seen(2, 'acknowledged')
    expect(spawned).toHaveLength(2)
    // The second server's change reaches the stream the client asked for before the drop.
    expect(await client.callTool('add_tool')).toEqual({ content: [{ type: 'text', text: 'added_1' }] })
    expect(await seen(1, 'notification')).toEqual([expect.objectContaining({ method: 'notifications/tools/list_changed' })])
    await client.close()
    const second = readFileSync(spawned[1]!.file, 'utf8').trim().split('\n').map(line => JSON.parse(line) as Message)
    expect(second.filter(message => message.method === 'subscriptions/listen')).toHaveLength(1)
  }, 30_000)
})
