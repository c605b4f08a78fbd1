import { createServer, type Server, type ServerResponse } from 'node:http'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { startNginx, type NginxAccess, type TestNginx } from './nginx.ts'

/** A plain node:http upstream that says who it is, echoes the headers it got, and holds SSE streams open. */
interface Upstream {
  readonly address: string
  /** The SSE responses it has open, to end from the test. */
  readonly streams: ServerResponse[]
  close(): Promise<void>
}

async function startUpstream(name: string): Promise<Upstream> {
  const streams: ServerResponse[] = []
  const server: Server = createServer((req, res) => {
    req.resume()
    req.once('end', () => {
      if (req.url === '/sse') {
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        res.write(`data: first from ${name}\n\n`)
        streams.push(res)
        return
      }
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ name, headers: req.headers }))
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  return {
    address: `127.0.0.1:${port}`,
    streams,
    close: async () => {
      server.closeAllConnections()
      await new Promise(resolve => server.close(resolve))
    },
  }
}

/** Polls the access log until it holds `count` requests (bounded: 5 s). */
async function logOf(nginx: TestNginx, count: number): Promise<NginxAccess[]> {
  const deadline = Date.now() + 5000
  for (;;) {
    const log = await nginx.accessLog()
    if (log.length >= count) return log
    if (Date.now() > deadline) throw new Error(`nginx logged ${log.length} of ${count} requests`)
    await new Promise(resolve => setTimeout(resolve, 10))
  }
}

/** Resolves with `promise`, or rejects after `ms` saying what was awaited. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms) })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

describe('startNginx', () => {
  let upstreams: Upstream[]
  let nginx: TestNginx

  beforeEach(async () => {
    upstreams = await Promise.all(['a', 'b', 'c'].map(startUpstream))
    nginx = await startNginx({ upstreams: upstreams.map(upstream => upstream.address) })
  })

  afterEach(async () => {
    await nginx.stop()
    for (const upstream of upstreams) upstream.close().catch(() => {})
  })

  it('sends consecutive requests to different upstreams, round-robin across all of them', async () => {
    const names: string[] = []
    for (let i = 0; i < 9; i++) {
      const response = await fetch(`${nginx.url}/mcp`, { method: 'POST', body: '{}' })
      expect(response.status).toBe(200)
      names.push((await response.json() as { name: string }).name)
    }
    const log = await logOf(nginx, 9)
    expect(log.map(entry => entry.status)).toEqual(Array(9).fill(200))
    for (let i = 1; i < log.length; i++) expect(log[i]!.upstream).not.toBe(log[i - 1]!.upstream)
    expect(new Set(log.map(entry => entry.upstream))).toEqual(new Set(upstreams.map(upstream => upstream.address)))
    expect(new Set(names)).toEqual(new Set(['a', 'b', 'c']))
  })

  it('passes Host, Accept, Mcp-Session-Id and Last-Event-ID through, and logs the session id', async () => {
    const response = await fetch(`${nginx.url}/mcp?x=1`, {
      headers: { accept: 'application/json, text/event-stream', 'mcp-session-id': 'session-1', 'last-event-id': 'event-7' },
    })
    const { headers } = await response.json() as { headers: Record<string, string> }
    expect(headers).toMatchObject({
      host: `127.0.0.1:${nginx.port}`,
      accept: 'application/json, text/event-stream',
      'mcp-session-id': 'session-1',
      'last-event-id': 'event-7',
    })
    // Kept-alive HTTP/1.1 upstream connections: nginx sends no `Connection: close`.
    expect(headers.connection).toBeUndefined()
    const [entry] = await logOf(nginx, 1)
    expect(entry).toMatchObject({ method: 'GET', uri: '/mcp?x=1', status: 200, sessionId: 'session-1' })
  })

  it('streams an SSE event to the client while the upstream still holds the response open', async () => {
    const response = await fetch(`${nginx.url}/sse`, { headers: { accept: 'text/event-stream' } })
    const reader = response.body!.getReader()
    const decoder = new TextDecoder()
    let text = ''
    const firstEvent = async () => {
      while (!text.includes('\n\n')) {
        const chunk = await reader.read()
        if (chunk.done) break
        text += decoder.decode(chunk.value, { stream: true })
      }
    }
    await within(firstEvent(), 5000, 'first SSE event through nginx')
    expect(text).toMatch(/^data: first from [abc]\n\n$/)
    const open = upstreams.flatMap(upstream => upstream.streams)
    expect(open).toHaveLength(1)
    expect(open[0]!.writableEnded).toBe(false)
    open[0]!.end('data: last\n\n')
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += decoder.decode(chunk.value, { stream: true })
    expect(text).toMatch(/^data: first from [abc]\n\ndata: last\n\n$/)
  })

  it('skips an upstream that refuses connections, POSTs included', async () => {
    const [dead, ...alive] = upstreams as [Upstream, Upstream, Upstream]
    await dead.close()
    for (let i = 0; i < 6; i++) {
      const response = await fetch(`${nginx.url}/mcp`, { method: 'POST', body: '{"jsonrpc":"2.0"}' })
      expect(response.status).toBe(200)
      expect(['b', 'c']).toContain((await response.json() as { name: string }).name)
    }
    const log = await logOf(nginx, 6)
    const answeredBy = log.map(entry => entry.upstream.split(', ').at(-1))
    expect(answeredBy.every(address => alive.some(upstream => upstream.address === address))).toBe(true)
    // Round-robin reaches the dead one within three picks: tried, refused, then the next one answered.
    expect(log.some(entry => entry.upstream.startsWith(`${dead.address}, `))).toBe(true)
  })
})
