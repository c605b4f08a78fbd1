/**
 * The Streamable HTTP part of `npm run bench`: echo over HTTP, rxmcp's server against the official
 * SDK's, driven by one raw keep-alive HTTP driver (the same for both), and memory per idle session.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { request as httpRequest, Agent } from 'node:http'
import { fileURLToPath } from 'node:url'
import { within } from './procs.ts'
import { serverArgs } from './built.ts'
import { heapByHolder, type HeapHolder } from './heap-holders.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))
export const HTTP_SERVERS = {
  rxmcp: ['--import', 'tsx', 'examples/everything/server.ts', '--http', '0'],
  official: ['--import', 'tsx', 'spec/bench/official-http-echo-server.ts', '0'],
  // fastmcp, the TypeScript framework, over its Streamable HTTP (fastmcp-echo-server.ts).
  fastmcp: ['--import', 'tsx', 'spec/bench/fastmcp-echo-server.ts', 'http'],
  // No MCP library: node:http and JSON, answering the drivers by hand (http-floor-server.ts).
  floor: ['--import', 'tsx', 'spec/bench/http-floor-server.ts', '0'],
  // The same everything server through the web handler (rxmcp/web) behind @hono/node-server.
  web: ['--import', 'tsx', 'spec/bench/web-http-server.ts', '0'],
  // A minimal rxmcp server (one echo tool) over Streamable HTTP (rxmcp-http-echo-server.ts).
  minimal: ['--import', 'tsx', 'spec/bench/rxmcp-http-echo-server.ts', '0'],
  // A proxy with no MCP library (http-floor-proxy.ts) in front of the server its argument names.
  'floor-proxy': ['--import', 'tsx', 'spec/bench/http-floor-proxy.ts'],
} as const

/** Starts a server child (with `args` after its own) and reads its endpoint URL from its output. */
export async function startHttpServer(name: keyof typeof HTTP_SERVERS, cwd = root, args: readonly string[] = []): Promise<{ child: ChildProcess; url: URL }> {
  const child = spawn(process.execPath, serverArgs([...HTTP_SERVERS[name], ...args], cwd), { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
  const url = await within(new Promise<string>((resolve, reject) => {
    let seen = ''
    const onData = (chunk: Buffer) => { seen += chunk; const match = /(http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(seen); if (match) resolve(match[1]!) }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    child.on('exit', code => reject(new Error(`${name} exited ${code}: ${seen}`)))
  }), 20_000, `${name} did not print its URL`)
  return { child, url: new URL(url) }
}

const agent = new Agent({ keepAlive: true, maxSockets: 256 })

/** One POST; resolves with the response text and the session id header. */
export function post(url: URL, body: string, sessionId?: string, localAddress?: string): Promise<{ text: string; sessionId: string | undefined; status: number }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' }
    if (sessionId !== undefined) headers['mcp-session-id'] = sessionId
    const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers, agent, ...(localAddress === undefined ? {} : { localAddress }) }, res => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', chunk => { text += chunk })
      res.on('end', () => resolve({ text, sessionId: res.headers['mcp-session-id'] as string | undefined, status: res.statusCode ?? 0 }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(body)
  })
}

/**
 * Opens an initialized session; returns its id. `localAddress` (a loopback address, 127.0.0.0/8)
 * makes the session another client's: a listener keeps at most `maxSessionsPerClient` per client.
 */
export async function openSession(url: URL, localAddress?: string): Promise<string> {
  const init = await post(url, JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } }), undefined, localAddress)
  if (init.sessionId === undefined) throw new Error(`no session id (${init.status}): ${init.text.slice(0, 200)}`)
  await post(url, '{"jsonrpc":"2.0","method":"notifications/initialized"}', init.sessionId, localAddress)
  return init.sessionId
}

/**
 * Heap per idle initialized session, in this process (gc'd before and after; `node --expose-gc`
 * or the flag set at runtime): the whole stack (everything server over Streamable HTTP) and the
 * listener alone (a bare transport answering initialize), so the transport's share is known; with
 * `byHolder`, the whole stack's heap per session again, listed by what holds it (heap-holders.ts,
 * over `byHolder` sessions: two heap snapshots are slow).
 * Run it alone: `npx tsx spec/bench/http-bench.ts memory`.
 */
export async function idleSessionHeap(count = 2000, byHolder = 0): Promise<{ full: number; listenerOnly: number; holders?: { total: number; holders: HeapHolder[] } }> {
  const { setFlagsFromString } = await import('node:v8')
  const { runInNewContext } = await import('node:vm')
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as () => void
  const heap = () => { gc(); gc(); return process.memoryUsage().heapUsed }
  const { streamableHttp } = await import('../../transports/streamable-http.ts')
  const { createEverythingServer } = await import('../../examples/everything/everything.ts')
  const open = async (url: URL, sessions: number) => {
    for (let batch = 0; batch < sessions / 50; batch++) await Promise.all(Array.from({ length: 50 }, () => openSession(url)))
  }
  const measure = async (url: URL) => {
    await open(url, 50)
    const before = heap()
    await open(url, count)
    return (heap() - before) / count
  }
  const server = createEverythingServer()
  // Every session of the measure comes from 127.0.0.1: one client, allowed them all.
  const http = streamableHttp({ maxSessionsPerClient: Infinity })
  await server.listen(http)
  const full = await measure(new URL(http.url!))
  const holders = byHolder > 0 ? await heapByHolder(gc, () => open(new URL(http.url!), byHolder), byHolder) : undefined
  await server.close()
  const bare = await startBareListener()
  const listenerOnly = await measure(new URL(bare.http.url!))
  await bare.close()
  return { full, listenerOnly, ...(holders === undefined ? {} : { holders }) }
}

/**
 * A Streamable HTTP listener with no MCP server behind it: a bare reader answers initialize and
 * keeps nothing per session, so what a session costs there is the transport's share alone.
 */
export async function startBareListener() {
  const { streamableHttp } = await import('../../transports/streamable-http.ts')
  // The measures open every session from 127.0.0.1: one client, allowed them all.
  const http = streamableHttp({ maxSessionsPerClient: Infinity })
  const subscription = http.connections.subscribe(transport => {
    transport.inbound.subscribe(item => {
      const message = item.type === 'message' ? item.message as { id?: number; method?: string } : undefined
      if (message?.method === 'initialize') void transport.send({ jsonrpc: '2.0', id: message.id!, result: { protocolVersion: '2025-06-18', capabilities: {}, serverInfo: { name: 'bare', version: '1' } } })
    })
  })
  await http.start()
  return { http, close: async () => { subscription.unsubscribe(); await http.close() } }
}

/**
 * RSS growth of a server child per idle initialized session, as issue 24 measures it (what a user
 * sees): `warm` sessions opened first and not counted, RSS sampled after a one-second settle, then
 * `count` more initialized sessions kept open, RSS sampled after another second; the growth over `count`.
 */
export async function idleSessionRss(name: keyof typeof HTTP_SERVERS, count = 1000, cwd = root, warm = 10): Promise<number> {
  const { rss } = await import('./procs.ts')
  const { child, url } = await startHttpServer(name, cwd)
  try {
    await Promise.all(Array.from({ length: warm }, () => openSession(url)))
    await new Promise(resolve => setTimeout(resolve, 1000))
    const before = rss(child.pid!)
    // Each batch from another loopback address: another client, within the server's per-client session limit.
    for (let batch = 0; batch < count / 50; batch++) await Promise.all(Array.from({ length: 50 }, () => openSession(url, `127.0.0.${2 + batch}`)))
    await new Promise(resolve => setTimeout(resolve, 1000))
    return (rss(child.pid!) - before) / count
  } finally {
    child.kill('SIGKILL')
  }
}

/** Prints a heap-by-holder table (heap-holders.ts): the rows over `least` bytes, the rest summed. */
export function printHolders(title: string, { total, holders }: { total: number; holders: HeapHolder[] }, least = 48): void {
  console.log(`${title}: ${(total / 1024).toFixed(1)} KiB per session (${total.toFixed(0)} B), by holder (bytes, objects per session):`)
  let rest = 0
  for (const row of holders) {
    if (row.bytes < least) { rest += row.bytes; continue }
    console.log(`  ${row.bytes.toFixed(0).padStart(6)} B ${row.count.toFixed(2).padStart(6)}  ${row.holder}`)
  }
  console.log(`  ${rest.toFixed(0).padStart(6)} B         the rest (each under ${least} B)`)
}

if (process.argv[1] !== undefined && import.meta.url === (await import('node:url')).pathToFileURL(process.argv[1]).href && process.argv[2] === 'memory') {
  const { full, listenerOnly, holders } = await idleSessionHeap(2000, 500)
  console.log(`heap per idle Streamable HTTP session: ${(full / 1024).toFixed(1)} KiB in all, ${(listenerOnly / 1024).toFixed(1)} KiB of it the listener (transport) alone`)
  printHolders('heap per idle session, everything server, over 500 sessions', holders!)
  // RSS in a child: `rss` (the everything example, 1,000 sessions), `minimal` (4,000), `floor`, `official`.
  for (const name of ['rxmcp', 'minimal', 'floor', 'official'] as const) {
    const count = name === 'minimal' ? 4000 : 1000
    if (process.argv.includes(name)) console.log(`RSS per idle session, ${name} (growth over ${count} in a child): ${((await idleSessionRss(name, count)) / 1024).toFixed(1)} KiB`)
  }
  agent.destroy()
}
