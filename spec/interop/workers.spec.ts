/**
 * Issue 23: the everything server as a Cloudflare Worker on the real runtime. `serve.ts` runs as a
 * child (bundling examples/workers/worker.ts and starting workerd) with two ports, each served by a
 * Worker isolate of its own that shares the McpSession Durable Objects, as Cloudflare serves one
 * Worker from many isolates. The official SDK clients of both eras drive the first; the raw
 * requests below check that a legacy session lives in its Durable Object (any isolate reaches it)
 * and a modern input_required round continues on another isolate than the one that began it, once.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freeLoopbackPort } from '../../examples/cluster/spawn-nginx.ts'
import { connect } from '../../actors/client.ts'
import { sseClient } from '../../transports/http-client.ts'
import { describeEverythingContract } from '../helpers/everything-contract.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))
/** tsx's loader, resolved from here so the child finds it. */
const TSX = import.meta.resolve('tsx')
/** Bound on the bundle and workerd's start (a cold tsx compile and esbuild included). */
const START_TIMEOUT_MS = 60_000
/** Bound on serve.ts's exit (it stops workerd first) before the group is killed. */
const STOP_TIMEOUT_MS = 10_000

let serve: ChildProcess
let exited: Promise<void>
/** The endpoints, one per Worker isolate. */
let urls: URL[]

/** Signals serve.ts's process group: it and the workerd it started. */
function killGroup(signal: NodeJS.Signals): void {
  try { process.kill(-serve.pid!, signal) } catch { /* gone */ }
}

/**
 * The processes of a process group still running, as `pid command` (Linux's /proc). Zombies are
 * left out: they are gone, waiting for whoever adopted them to reap them.
 */
function runningInGroup(group: number): string[] {
  const found: string[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    let stat: string
    try { stat = readFileSync(`/proc/${entry}/stat`, 'utf8') } catch { continue }
    // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses, so read after the last ')'.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    if (Number(pgrp) === group && state !== 'Z') found.push(`${entry} ${stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))}`)
  }
  return found
}

beforeAll(async () => {
  const ports = [await freeLoopbackPort(), await freeLoopbackPort()]
  // Its own process group, so that nothing it started outlives the run; stdin a pipe it watches.
  serve = spawn(process.execPath, ['--import', TSX, 'examples/workers/serve.ts', ...ports.map(String)], { cwd: root, stdio: ['pipe', 'pipe', 'inherit'], detached: true })
  exited = new Promise(resolve => serve.once('exit', () => resolve()))
  process.once('exit', () => killGroup('SIGKILL'))
  const line = await new Promise<string>((resolve, reject) => {
    let output = ''
    serve.stdout!.on('data', chunk => {
      output += chunk
      if (output.includes('\n')) resolve(output.split('\n')[0]!)
    })
    serve.once('exit', code => reject(new Error(`serve.ts exited ${code} before listening`)))
  })
  urls = line.split(' ').map(url => new URL(url))
  expect(urls.map(url => Number(url.port))).toEqual(ports)
}, START_TIMEOUT_MS)

afterAll(async () => {
  if (serve === undefined || serve.exitCode !== null || serve.signalCode !== null) return
  killGroup('SIGTERM')
  const timer = setTimeout(() => killGroup('SIGKILL'), STOP_TIMEOUT_MS)
  await exited
  clearTimeout(timer)
}, STOP_TIMEOUT_MS + 5_000)

describeEverythingContract('on workerd (a Cloudflare Worker, legacy sessions in Durable Objects)', () => urls[0]!)

const LEGACY = '2025-06-18'
const MODERN = '2026-07-28'
const ACCEPT = 'application/json, text/event-stream'

/** One JSON-RPC message out of an answer (a JSON body, or the last `data:` of an SSE stream). */
async function messageOf(response: Response): Promise<any> {
  const text = await response.text()
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) return JSON.parse(text)
  const data = text.split('\n').filter(line => line.startsWith('data: ') && line.length > 6).at(-1)
  return JSON.parse(data!.slice(6))
}

/** A legacy-era POST to `url`, in the session `sessionId` when given. */
function legacyPost(url: URL, body: object, sessionId?: string): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: ACCEPT, 'mcp-protocol-version': LEGACY }
  if (sessionId !== undefined) headers['mcp-session-id'] = sessionId
  return fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', ...body }), signal: AbortSignal.timeout(10_000) })
}

/** Opens a legacy session through `url`: its id. */
async function initialize(url: URL): Promise<string> {
  const response = await legacyPost(url, { id: 0, method: 'initialize', params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })
  expect(response.status).toBe(200)
  await response.text()
  const sessionId = response.headers.get('mcp-session-id')!
  expect((await legacyPost(url, { method: 'notifications/initialized' }, sessionId)).status).toBe(202)
  return sessionId
}

const meta = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } }, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' } }

/** A modern-era request to `url`. */
function modernPost(url: URL, id: number, method: string, params: Record<string, unknown>, name?: string): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: ACCEPT, 'mcp-protocol-version': MODERN, 'mcp-method': method }
  if (name !== undefined) headers['mcp-name'] = name
  return fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } }), signal: AbortSignal.timeout(10_000) })
}

describe('a legacy session on workerd', () => {
  it('is served by its Durable Object whichever Worker isolate takes the request', async () => {
    const [first, second] = urls as [URL, URL]
    const sessionId = await initialize(first)
    // The other isolate serves other requests meanwhile: another session, a modern-era call.
    await initialize(second)
    expect((await messageOf(await modernPost(second, 1, 'tools/call', { name: 'echo', arguments: { text: 'modern' } }, 'echo'))).result.content).toEqual([{ type: 'text', text: 'modern' }])
    // The session's requests through the isolate that did not open it, one after the other.
    const echoed = await messageOf(await legacyPost(second, { id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'one' } } }, sessionId))
    expect(echoed).toEqual({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'one' }] } })
    // Session state set through one isolate is seen through the other: the log level.
    expect((await messageOf(await legacyPost(second, { id: 2, method: 'logging/setLevel', params: { level: 'error' } }, sessionId))).result).toEqual({})
    const logged = await legacyPost(first, { id: 3, method: 'tools/call', params: { name: 'log', arguments: { level: 'info', message: 'below the level' } } }, sessionId)
    expect(await logged.text()).not.toContain('notifications/message')
  })

  it('gets 404 for a session id no Durable Object holds', async () => {
    const response = await legacyPost(urls[0]!, { id: 1, method: 'tools/list' }, 'no-such-session-0123456789abcdef')
    expect(response.status).toBe(404)
    expect(await response.json()).toMatchObject({ error: { code: -32001 } })
  })

  it('ends with DELETE, after which every isolate answers 404', async () => {
    const [first, second] = urls as [URL, URL]
    const sessionId = await initialize(first)
    const deleted = await fetch(second, { method: 'DELETE', headers: { 'mcp-session-id': sessionId, 'mcp-protocol-version': LEGACY }, signal: AbortSignal.timeout(10_000) })
    expect(deleted.status).toBe(200)
    for (const url of urls) expect((await legacyPost(url, { id: 1, method: 'tools/list' }, sessionId)).status).toBe(404)
  })

  it('opens a new session for an initialize that names one, never the id the client chose', async () => {
    const response = await legacyPost(urls[0]!, { id: 0, method: 'initialize', params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }, 'a-session-id-the-client-picked')
    expect(response.status).toBe(200)
    await response.text()
    expect(response.headers.get('mcp-session-id')).not.toBe('a-session-id-the-client-picked')
    expect((await legacyPost(urls[0]!, { id: 1, method: 'tools/list' }, 'a-session-id-the-client-picked')).status).toBe(404)
  })
})

describe('a legacy HTTP+SSE session (2024-11-05) on workerd', () => {
  it('is served by its Durable Object: the GET /sse stream and the POSTs to /messages', async () => {
    const client = await connect(sseClient(new URL('/sse', urls[0])), { name: 'sse', version: '1' })
    try {
      expect(await client.callTool('echo', { text: 'over sse' })).toEqual({ content: [{ type: 'text', text: 'over sse' }] })
      expect((await client.readResource('everything://items/3')).contents).toEqual([{ uri: 'everything://items/3', mimeType: 'application/json', text: '{"id":"3","name":"Item 3"}' }])
    } finally {
      await client.close()
    }
  })
})

describe('the modern era on workerd', () => {
  it('refuses a body past the 4 MiB limit with 413, as the handler does elsewhere', async () => {
    const text = 'x'.repeat(4 * 1024 * 1024)
    const response = await modernPost(urls[0]!, 1, 'tools/call', { name: 'echo', arguments: { text } }, 'echo')
    expect(response.status).toBe(413)
  })

  it('continues an input_required round on another Worker isolate than the one that began it', async () => {
    const [first, second] = urls as [URL, URL]
    const round = await messageOf(await modernPost(first, 1, 'tools/call', { name: 'elicit', arguments: {} }, 'elicit'))
    expect(round.result.resultType).toBe('input_required')
    const [key] = Object.keys(round.result.inputRequests)
    const answer = { action: 'accept', content: { name: 'Ada', age: 36, color: 'red', extras: [] } }
    const retried = await messageOf(await modernPost(second, 2, 'tools/call', {
      name: 'elicit', arguments: {}, requestState: round.result.requestState, inputResponses: { [key!]: answer },
    }, 'elicit'))
    expect(retried.result.structuredContent).toEqual({ action: 'accept', ...{ content: answer.content } })
  })

  it('continues a round once: the same requestState again, on either isolate, is refused as used', async () => {
    const [first, second] = urls as [URL, URL]
    const round = await messageOf(await modernPost(first, 1, 'tools/call', { name: 'elicit', arguments: {} }, 'elicit'))
    const [key] = Object.keys(round.result.inputRequests)
    const retry = { name: 'elicit', arguments: {}, requestState: round.result.requestState, inputResponses: { [key!]: { action: 'decline' } } }
    expect((await messageOf(await modernPost(second, 2, 'tools/call', retry, 'elicit'))).result.structuredContent).toEqual({ action: 'decline' })
    for (const url of urls) {
      expect((await messageOf(await modernPost(url, 3, 'tools/call', retry, 'elicit'))).error).toMatchObject({ code: -32602, data: { reason: 'used' } })
    }
  })
})

describe('serve.ts', () => {
  // Last in the file: the tests above need the Worker.
  it('stops workerd and exits when its stdin closes (its parent went away)', async () => {
    serve.stdin!.end()
    await exited
    expect(serve.exitCode).toBe(0)
    // Nothing is left running in its process group: workerd was stopped, not orphaned.
    expect(runningInGroup(serve.pid!)).toEqual([])
  }, STOP_TIMEOUT_MS)
})
