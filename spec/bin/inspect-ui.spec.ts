import { afterEach, describe, expect, it } from 'vitest'
import { request } from 'node:http'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { connect } from '../../actors/client.ts'
import { createMemoryPair } from '../../transports/memory.ts'
import { createEverythingServer } from '../../examples/everything/everything.ts'
import { serveInspectorUi, type InspectorUi } from '../../bin/inspect-ui.ts'

interface Reply { status: number; headers: Record<string, string | string[] | undefined>; body: string }

/** One HTTP request with any headers (Host included, which fetch would not let us set). */
function send(port: number, path: string, options: { method?: string; headers?: Record<string, string>; body?: string; firstEvent?: boolean } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: options.headers }, response => {
      let body = ''
      response.setEncoding('utf8')
      response.on('data', chunk => {
        body += chunk
        // An event stream stays open: its first event is enough.
        if (options.firstEvent && body.includes('\n\n')) { response.destroy(); resolve({ status: response.statusCode!, headers: response.headers, body }) }
      })
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body }))
    })
    outgoing.on('error', reject)
    outgoing.end(options.body)
  })
}

type Event = { type: string; [key: string]: unknown }

/** The event stream's events (history, then live) until one satisfies `isLast`. */
function readEvents(port: number, token: string, isLast: (event: Event) => boolean): Promise<Event[]> {
  return new Promise((resolve, reject) => {
    const received: Event[] = []
    const outgoing = request({ host: '127.0.0.1', port, path: `/events?token=${token}` }, response => {
      let buffer = ''
      response.setEncoding('utf8')
      response.on('data', chunk => {
        buffer += chunk
        let end: number
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const event = JSON.parse(buffer.slice('data: '.length, end)) as Event
          received.push(event)
          buffer = buffer.slice(end + 2)
          if (isLast(event)) { response.destroy(); resolve(received); return }
        }
      })
    })
    outgoing.on('error', reject)
    outgoing.end()
  })
}

let ui: InspectorUi | undefined
afterEach(async () => { await ui?.close(); ui = undefined })

async function start(): Promise<InspectorUi> {
  const server = createEverythingServer()
  const [clientEnd, serverEnd] = createMemoryPair()
  await server.listen(serverEnd)
  ui = await serveInspectorUi({
    transport: 'memory',
    bundle: async () => 'document.title = "bundle"',
    connect: options => connect(clientEnd, { name: 'inspector-spec', version: '1' }, { ...options, era: 'legacy' }),
  })
  const close = ui.close
  ui.close = async () => { await close(); await server.close() }
  return ui
}

describe('serveInspectorUi', () => {
  it('prints a loopback URL with a 256-bit token and listens on 127.0.0.1 alone', async () => {
    const { url, port, token } = await start()
    expect(url).toBe(`http://127.0.0.1:${port}/?token=${token}`)
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/)
  })

  it('serves the page, its script, the event stream and the API to a request with the token and its own Host and Origin', async () => {
    const { port, token } = await start()
    const host = { host: `127.0.0.1:${port}` }
    const page = await send(port, `/?token=${token}`, { headers: host })
    expect(page.status).toBe(200)
    expect(page.body).toContain(`data-token="${token}"`)
    expect(page.headers['content-security-policy']).toContain("script-src 'self'")
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'")
    expect(page.headers['referrer-policy']).toBe('no-referrer')
    expect((await send(port, `/app.js?token=${token}`, { headers: host })).body).toBe('document.title = "bundle"')
    const events = await send(port, `/events?token=${token}`, { headers: { host: `localhost:${port}`, origin: `http://127.0.0.1:${port}` }, firstEvent: true })
    expect(events.status).toBe(200)
    expect(events.headers['content-type']).toBe('text/event-stream')
    expect(JSON.parse(events.body.slice('data: '.length))).toMatchObject({ type: 'frame', dir: 'out', message: { method: 'initialize' } })
    const tools = await send(port, '/api/tools', { method: 'POST', headers: { ...host, origin: `http://127.0.0.1:${port}`, 'x-rxmcp-token': token, 'content-type': 'application/json' }, body: '{}' })
    expect(tools.status).toBe(200)
    expect(JSON.parse(tools.body).tools.map((tool: { name: string }) => tool.name)).toContain('long_running')
  })

  it.each([
    ['no token', (_port: number, _token: string) => ({ path: '/', headers: {} })],
    ['a wrong token', (_port: number, token: string) => ({ path: `/?token=${token.slice(1)}x`, headers: {} })],
    ['a token one character short', (_port: number, token: string) => ({ path: `/?token=${token.slice(1)}`, headers: {} })],
    ['no token, for the script', () => ({ path: '/app.js', headers: {} })],
    ['no token, for the event stream', () => ({ path: '/events', headers: {} })],
    ['a foreign Origin', (_port: number, token: string) => ({ path: `/?token=${token}`, headers: { origin: 'http://evil.example' } })],
    ['a foreign Origin on the loopback at another port', (port: number, token: string) => ({ path: `/events?token=${token}`, headers: { origin: `http://127.0.0.1:${port + 1}` } })],
    ['another loopback origin', (port: number, token: string) => ({ path: `/events?token=${token}`, headers: { origin: `http://localhost:${port}` } })],
    ['a rebinding Host', (port: number, token: string) => ({ path: `/?token=${token}`, headers: { host: `evil.example:${port}` } })],
    ['a rebinding Host, for the event stream', (port: number, token: string) => ({ path: `/events?token=${token}`, headers: { host: `rebind.evil.example:${port}` } })],
    ['a loopback Host at another port', (port: number, token: string) => ({ path: `/?token=${token}`, headers: { host: `127.0.0.1:${port + 1}` } })],
    ['a cross-site fetch', (_port: number, token: string) => ({ path: `/events?token=${token}`, headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'cors' } })],
    ['a cross-site script load', (_port: number, token: string) => ({ path: `/app.js?token=${token}`, headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors' } })],
  ])('answers 403 to a GET with %s', async (_name, make) => {
    const { port, token } = await start()
    const { path, headers } = make(port, token)
    const reply = await send(port, path, { headers: { host: `127.0.0.1:${port}`, ...headers } })
    expect(reply.status).toBe(403)
    expect(reply.body).not.toContain(token)
  })

  it.each([
    ['no token', {}],
    ['a foreign Origin', { origin: 'http://evil.example' }],
    ['a rebinding Host', { host: 'evil.example' }],
  ])('answers 403 to an API call with %s and runs nothing', async (name, extra: Record<string, string>) => {
    const { port, token } = await start()
    const headers: Record<string, string> = { host: `127.0.0.1:${port}`, 'content-type': 'application/json', 'x-rxmcp-token': token, ...extra }
    if (name === 'no token') delete headers['x-rxmcp-token']
    if (extra.host !== undefined) headers.host = `${extra.host}:${port}`
    const reply = await send(port, '/api/call', { method: 'POST', headers, body: JSON.stringify({ callId: 'x', name: 'echo', arguments: { text: 'nope' } }) })
    expect(reply.status).toBe(403)
    const reading = readEvents(port, token, event => event.type === 'frame' && JSON.stringify(event.message).includes('"yes"'))
    const check = await send(port, '/api/call', { method: 'POST', headers: { host: `127.0.0.1:${port}`, 'content-type': 'application/json', 'x-rxmcp-token': token }, body: JSON.stringify({ callId: 'y', name: 'echo', arguments: { text: 'yes' } }) })
    expect(JSON.parse(check.body).result.content[0].text).toBe('yes')
    // The refused call never reached the server: the only tools/call sent is the check's own.
    const calls = (await reading).filter(event => event.type === 'frame' && (event.message as { method?: string }).method === 'tools/call')
    expect(calls.map(event => (event.message as { params: { arguments: unknown } }).params.arguments)).toEqual([{ text: 'yes' }])
  })

  it('streams live events after the history: a tool call\'s request and response frames, and its progress', async () => {
    const { port, token } = await start()
    const reading = readEvents(port, token, event => event.type === 'frame' && event.dir === 'in' && (event.message as { result?: { content?: Array<{ text?: string }> } }).result?.content?.[0]?.text === 'Finished 3 steps')
    const answer = await send(port, '/api/call', { method: 'POST', headers: { 'content-type': 'application/json', 'x-rxmcp-token': token }, body: JSON.stringify({ callId: 'c1', name: 'long_running', arguments: { steps: 3, ms: 1 } }) })
    expect(JSON.parse(answer.body).result.content[0].text).toBe('Finished 3 steps')
    const received = await reading
    expect(received.filter(event => event.type === 'progress').map(event => [event.callId, event.progress, event.total])).toEqual([['c1', 1, 3], ['c1', 2, 3], ['c1', 3, 3]])
    expect(received.find(event => event.type === 'connection')).toMatchObject({ transport: 'memory', era: 'legacy', serverInfo: { name: 'rxmcp-everything' } })
  })

  it('answers 404 to an unknown operation and 415 to a body that is not JSON', async () => {
    const { port, token } = await start()
    const headers = { 'x-rxmcp-token': token }
    expect((await send(port, '/api/toString', { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: '{}' })).status).toBe(404)
    expect((await send(port, '/api/tools', { method: 'POST', headers: { ...headers, 'content-type': 'text/plain' }, body: '{}' })).status).toBe(415)
  })

  it('is what `rxmcp inspect --ui --no-open` serves when run from sources with tsx: one UI line, the page bundled from ui/, the client forced to --era, and an end on SIGTERM', async () => {
    const root = fileURLToPath(new URL('../..', import.meta.url))
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/rxmcp.ts', 'inspect', '--ui', '--no-open', '--era', 'legacy', '--', process.execPath, '--import', 'tsx', 'examples/everything/server.ts'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
    const exited = new Promise<number | null>(resolve => child.once('exit', code => resolve(code)))
    try {
      let stdout = ''
      const line = await new Promise<string>((resolve, reject) => {
        child.stdout!.on('data', chunk => { stdout += chunk; if (stdout.includes('\n')) resolve(stdout) })
        child.once('exit', code => reject(new Error(`exited ${code} before printing the URL`)))
      })
      const match = /^UI: http:\/\/127\.0\.0\.1:(\d+)\/\?token=([A-Za-z0-9_-]{43})\n$/.exec(line)
      expect(match, line).not.toBeNull()
      const [, port, token] = match!
      const script = await send(Number(port), `/app.js?token=${token}`, { headers: { host: `127.0.0.1:${port}` } })
      expect(script.status).toBe(200)
      // preact, minified, with the page's own code.
      expect(script.body).toContain('rxmcp inspector')
      expect(script.body.length).toBeGreaterThan(10_000)
      expect((await send(Number(port), '/app.js', { headers: { host: `127.0.0.1:${port}` } })).status).toBe(403)
      const events = await readEvents(Number(port), token!, event => event.type === 'connection')
      expect(events.at(-1)).toMatchObject({ era: 'legacy', protocolVersion: '2025-11-25', transport: expect.stringContaining('stdio: ') })
      child.kill('SIGTERM')
      expect(await exited).toBe(0)
    } finally {
      child.kill('SIGKILL')
    }
  }, 60_000)
})
