/**
 * The node:http exchange's SSE answers: one whose events are all written in the turn it starts
 * (a POST answered while its body was handled) goes out as one body with its length; one still
 * open after that turn streams (chunked), its headers and events reaching the client before it ends.
 * Its body reads: taken from the buffer when it came with its headers, else read as it comes.
 */
import { createServer, request, type IncomingMessage, type Server } from 'node:http'
import { connect, type Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { NodeExchange } from '../../transports/node-exchange.ts'
import type { Sink } from '../../transports/http-exchange.ts'

const SSE = { 'content-type': 'text/event-stream' }
let server: Server | undefined

afterEach(() => new Promise<void>(resolve => { server?.closeAllConnections(); server?.close(() => resolve()); server = undefined }))

/** A server whose one request is answered by `answer` with an SSE sink; resolves with the client's response. */
async function exchange(answer: (sink: Sink) => void): Promise<IncomingMessage> {
  server = createServer((req, res) => answer(new NodeExchange(req, res, { 'x-extra': '1' }).stream(200, SSE, 1 << 20)))
  await new Promise<void>(resolve => server!.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  return new Promise((resolve, reject) => request({ host: '127.0.0.1', port, method: 'POST' }, resolve).on('error', reject).end())
}

/** A server whose one request is answered by `answer` with the exchange itself. */
async function replied(answer: (exchange: NodeExchange) => void): Promise<IncomingMessage> {
  server = createServer((req, res) => answer(new NodeExchange(req, res, {})))
  await new Promise<void>(resolve => server!.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  return new Promise((resolve, reject) => request({ host: '127.0.0.1', port, method: 'POST' }, resolve).on('error', reject).end())
}

/** Listens on a free loopback port and makes one POST to `listening`: resolves with the response. */
async function requestTo(listening: Server): Promise<IncomingMessage> {
  await new Promise<void>(resolve => listening.listen(0, '127.0.0.1', resolve))
  const { port } = listening.address() as { port: number }
  return new Promise((resolve, reject) => request({ host: '127.0.0.1', port, method: 'POST' }, resolve).on('error', reject).end())
}

/** The next chunk the client reads. */
const nextChunk = (response: IncomingMessage) => new Promise<string>(resolve => response.once('data', (chunk: Buffer) => resolve(chunk.toString('utf8'))))
const rest = async (response: IncomingMessage) => { let text = ''; for await (const chunk of response) text += chunk; return text }

describe('NodeExchange.stream', () => {
  it('sends an answer written and ended in its first turn as one body with a Content-Length', async () => {
    const response = await exchange(sink => { sink.write('id: 1\ndata: \n\n'); sink.write('event: message\ndata: {"ü":1}\n\n'); sink.end() })
    expect(response.headers['content-type']).toBe('text/event-stream')
    expect(response.headers['x-extra']).toBe('1')
    expect(response.headers['transfer-encoding']).toBeUndefined()
    const text = await rest(response)
    expect(response.headers['content-length']).toBe(String(Buffer.byteLength(text)))
    expect(text).toBe('id: 1\ndata: \n\nevent: message\ndata: {"ü":1}\n\n')
  })

  it('streams an answer still open after its first turn: what was written arrives before the end', async () => {
    let sink!: Sink
    const response = await exchange(opened => { sink = opened; opened.write('id: 1\ndata: \n\n') })
    expect(response.headers['transfer-encoding']).toBe('chunked')
    expect(response.headers['content-length']).toBeUndefined()
    expect(await nextChunk(response)).toBe('id: 1\ndata: \n\n')
    sink.write('event: message\ndata: 2\n\n')
    expect(await nextChunk(response)).toBe('event: message\ndata: 2\n\n')
    sink.end()
    expect(await rest(response)).toBe('')
  })

  it('sends the headers of a stream with nothing written yet once its hold is over', async () => {
    let sink!: Sink
    const response = await exchange(opened => { sink = opened })
    expect(response.statusCode).toBe(200)
    expect(response.headers['x-extra']).toBe('1')
    sink.write('data: late\n\n')
    sink.end()
    expect(await rest(response)).toBe('data: late\n\n')
  })

  it('sends an answer ended within the hold after its first turn as one body with a Content-Length', async () => {
    server = createServer((req, res) => {
      const exchange = new NodeExchange(req, res, {})
      // Long enough that no machine's stall can run it out: the answer ends it, not the timer.
      exchange.sseHoldMs = 60_000
      const sink = exchange.stream(200, SSE, 1 << 20)
      sink.write('id: 1\ndata: \n\n')
      setImmediate(() => { sink.write('event: message\ndata: 2\n\n'); sink.end() })
    })
    const response = await requestTo(server)
    expect(response.headers['transfer-encoding']).toBeUndefined()
    const text = await rest(response)
    expect(response.headers['content-length']).toBe(String(Buffer.byteLength(text)))
    expect(text).toBe('id: 1\ndata: \n\nevent: message\ndata: 2\n\n')
  })

  it('starts the stream at the first event within the hold, without waiting for the hold or the end', async () => {
    let sink!: Sink
    server = createServer((req, res) => {
      const exchange = new NodeExchange(req, res, {})
      exchange.sseHoldMs = 60_000
      sink = exchange.stream(200, SSE, 1 << 20)
      sink.write('id: 1\ndata: \n\n')
      setImmediate(() => sink.write('event: message\ndata: progress\n\n'))
    })
    const response = await requestTo(server)
    expect(response.headers['transfer-encoding']).toBe('chunked')
    let text = ''
    while (!text.includes('progress')) text += await nextChunk(response)
    expect(text).toBe('id: 1\ndata: \n\nevent: message\ndata: progress\n\n')
    sink.end()
    expect(await rest(response)).toBe('')
  })

  it('lets a client that goes away while its answer is held leave: what the server writes later is dropped, the server serves on', async () => {
    let sink!: Sink
    let closed!: () => void
    const gone = new Promise<void>(resolve => { closed = resolve })
    let held!: () => void
    const isHeld = new Promise<void>(resolve => { held = resolve })
    let requests = 0
    server = createServer((req, res) => {
      requests++
      const exchange = new NodeExchange(req, res, {})
      exchange.sseHoldMs = 60_000
      if (requests > 1) return exchange.reply(200, { 'content-type': 'application/json' }, '{"ok":true}')
      sink = exchange.stream(200, SSE, 1 << 20)
      sink.write('id: 1\ndata: \n\n')
      res.once('close', closed)
      held()
    })
    await new Promise<void>(resolve => server!.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as { port: number }
    // The first POST gets no head while held: the client gives up on it.
    const first = request({ host: '127.0.0.1', port, method: 'POST' })
    first.on('error', () => {})
    first.end()
    await isHeld
    first.destroy()
    await gone
    expect(() => { sink.write('event: message\ndata: late\n\n'); sink.end() }).not.toThrow()
    const second = await new Promise<IncomingMessage>((resolve, reject) => request({ host: '127.0.0.1', port, method: 'POST' }, resolve).on('error', reject).end())
    expect(await rest(second)).toBe('{"ok":true}')
  })

  // node:http corks a chunked write until the next tick: an answer event and the end written in one turn go out together.
  it('sends an event and the end written in one later turn in one write to the socket', async () => {
    let sink!: Sink
    /** Writes the socket made (its stream's _write and _writev calls), counted once the stream started. */
    let writes = 0
    let socket!: Socket
    server = createServer((req, res) => {
      socket = res.socket!
      const counted = socket as unknown as { _write: (...args: unknown[]) => void; _writev: (...args: unknown[]) => void }
      const [write, writev] = [counted._write, counted._writev]
      counted._write = (...args) => { writes++; write.apply(socket, args) }
      counted._writev = (...args) => { writes++; writev.apply(socket, args) }
      sink = new NodeExchange(req, res, {}).stream(200, SSE, 1 << 20)
      sink.write('id: 1\ndata: \n\n')
    })
    await new Promise<void>(resolve => server!.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as { port: number }
    const response = await new Promise<IncomingMessage>((resolve, reject) => request({ host: '127.0.0.1', port, method: 'POST' }, resolve).on('error', reject).end())
    expect(await nextChunk(response)).toBe('id: 1\ndata: \n\n')
    const before = writes
    sink.write('event: message\ndata: 2\n\n')
    sink.end()
    expect(await rest(response)).toBe('event: message\ndata: 2\n\n')
    expect(writes - before).toBe(1)
  })
})

describe('NodeExchange.reply', () => {
  it('sends a body with its Content-Length, not chunked', async () => {
    const response = await replied(exchange => exchange.reply(200, { 'content-type': 'application/json' }, '{"ü":1}'))
    expect(response.headers['transfer-encoding']).toBeUndefined()
    expect(response.headers['content-length']).toBe(String(Buffer.byteLength('{"ü":1}')))
    expect(await rest(response)).toBe('{"ü":1}')
  })

  it('sends an answer without a body with Content-Length 0, and a 204 with none', async () => {
    const accepted = await replied(exchange => exchange.reply(202, {}))
    expect(accepted.headers['content-length']).toBe('0')
    expect(accepted.headers['transfer-encoding']).toBeUndefined()
    expect(await rest(accepted)).toBe('')
    await new Promise<void>(resolve => { server?.closeAllConnections(); server?.close(() => resolve()); server = undefined })
    const empty = await replied(exchange => exchange.reply(204, {}))
    expect(empty.statusCode).toBe(204)
    expect(empty.headers['content-length']).toBeUndefined()
  })
})

describe('NodeExchange.body', () => {
  const LIMITS = { maxBytes: 1024, timeoutMs: 30_000 }
  const BODY = '{"jsonrpc":"2.0","id":1,"method":"ping"}'

  /**
   * A server answering each request with what `body()` read: `body:<text>` or the result's type,
   * then how the body was read (`read:buffer`: taken from the request's buffer, no listener;
   * `read:stream`: read as it came). Resolves with its port.
   */
  async function reading(): Promise<number> {
    server = createServer((req, res) => {
      const exchange = new NodeExchange(req, res, {})
      void exchange.body(LIMITS).then(result => {
        const how = req.listenerCount('data') === 0 ? 'buffer' : 'stream'
        exchange.reply(200, {}, `${result.type === 'body' ? `body:${Buffer.from(result.body).toString('utf8')}` : result.type} read:${how}`)
      })
    })
    await new Promise<void>(resolve => server!.listen(0, '127.0.0.1', resolve))
    return (server.address() as { port: number }).port
  }

  /** Writes `parts` in order on one raw connection (a function part is awaited between writes); resolves with the bodies of the first `count` answers. */
  async function raw(port: number, parts: (string | (() => Promise<unknown>))[], count: number): Promise<string[]> {
    const socket = connect(port, '127.0.0.1')
    let text = ''
    const bodies: string[] = []
    const done = new Promise<string[]>((resolve, reject) => {
      socket.on('data', chunk => {
        text += chunk
        for (;;) {
          const end = text.indexOf('\r\n\r\n')
          const length = Number(/content-length: (\d+)/i.exec(text.slice(0, end))?.[1])
          if (end < 0 || text.length < end + 4 + length) break
          bodies.push(text.slice(end + 4, end + 4 + length))
          text = text.slice(end + 4 + length)
        }
        if (bodies.length >= count) resolve(bodies)
      })
      socket.on('error', reject)
    })
    for (const part of parts) {
      if (typeof part === 'string') socket.write(part)
      else await part()
    }
    try { return await done } finally { socket.destroy() }
  }

  const head = (length: number | 'chunked') => `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${length === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${length}`}\r\n\r\n`

  it('takes a body that came with its headers from the buffer, and the connection serves the next request', async () => {
    const port = await reading()
    expect(await raw(port, [head(BODY.length) + BODY + head(2) + '{}'], 2)).toEqual([`body:${BODY} read:buffer`, 'body:{} read:buffer'])
  })

  it('reads a body that comes after its headers as it comes', async () => {
    const port = await reading()
    const half = BODY.length >> 1
    // Heard after the server's own listener, whose read looks at the buffer first: the rest is written after that look.
    const headersSeen = new Promise(resolve => server!.once('request', resolve))
    const bodies = await raw(port, [head(BODY.length) + BODY.slice(0, half), () => headersSeen, BODY.slice(half)], 1)
    expect(bodies).toEqual([`body:${BODY} read:stream`])
  })

  it('reads a chunked body as it comes, and refuses one past the limit', async () => {
    const port = await reading()
    const half = BODY.length >> 1
    const chunk = (part: string) => `${part.length.toString(16)}\r\n${part}\r\n`
    expect(await raw(port, [head('chunked') + chunk(BODY.slice(0, half)) + chunk(BODY.slice(half)) + '0\r\n\r\n'], 1)).toEqual([`body:${BODY} read:stream`])
    const large = await raw(port, [head('chunked') + chunk('x'.repeat(2048)) + '0\r\n\r\n'], 1)
    expect(large[0]).toMatch(/^too-large/)
  })

  it('refuses a body whose declared length is over the limit, before reading it', async () => {
    const port = await reading()
    expect((await raw(port, [head(2048) + 'x'.repeat(2048)], 1))[0]).toMatch(/^too-large/)
  })
})
