/**
 * The HTTP client transport's default exchange on Node (transports/node-fetch.ts): what the
 * transport reads of a response behaves as fetch's does, against a real node:http server on
 * loopback: heads and bodies, keep-alive reuse, redirects left to the caller, abort, a body that
 * breaks off, what it leaves to the global fetch.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { defaultFetch, isNodeRuntime, nodeFetch } from '../../transports/node-fetch.ts'

/** Reads a body through its reader, as the transport does. */
async function readAll(response: Response): Promise<string> {
  const reader = response.body!.getReader()
  const chunks: Uint8Array[] = []
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    chunks.push(value)
  }
  return Buffer.concat(chunks).toString('utf8')
}

describe('nodeFetch', () => {
  let server: Server
  let base: string
  /** The client port of every request, in order: the same port twice means the socket was reused. */
  const ports: number[] = []
  /** Resolves when the server saw a request's connection close, by path. */
  const closed = new Map<string, () => void>()
  /** Responses of /held, kept open until a test ends them. */
  const held: ServerResponse[] = []

  beforeAll(async () => {
    server = createServer((request: IncomingMessage, response: ServerResponse) => {
      ports.push(request.socket.remotePort!)
      const path = new URL(request.url!, 'http://x').pathname
      let body = ''
      request.on('data', chunk => { body += chunk })
      request.on('end', () => {
        if (path === '/echo') {
          response.writeHead(201, 'Made', { 'content-type': 'application/json', 'x-twice': ['a', 'b'] })
          response.end(JSON.stringify({ method: request.method, body, type: request.headers['content-type'], length: request.headers['content-length'], custom: request.headers['x-custom'] }))
        } else if (path === '/redirect') {
          response.writeHead(307, { location: '/echo' })
          response.end()
        } else if (path === '/big') {
          response.writeHead(200, { 'content-type': 'text/plain' })
          for (let i = 0; i < 256; i++) response.write(`${String(i).padStart(4, '0')}${'x'.repeat(16 * 1024 - 4)}`)
          response.end()
        } else if (path === '/broken') {
          response.writeHead(200, { 'content-type': 'text/event-stream' })
          response.write('data: one\n\n', () => response.socket?.destroy())
        } else if (path === '/held') {
          response.writeHead(200, { 'content-type': 'text/event-stream' })
          response.write('data: first\n\n')
          held.push(response)
          response.on('close', () => closed.get(path)?.())
        }
      })
    })
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    for (const response of held) response.destroy()
    await new Promise(resolve => server.close(resolve))
  })

  it('is the default on Node', () => {
    expect(isNodeRuntime()).toBe(true)
    expect(defaultFetch()).toBe(nodeFetch)
  })

  it('sends the method, headers and body, and gives the status, headers and body back', async () => {
    const response = await nodeFetch(`${base}/echo`, { method: 'POST', headers: new Headers({ 'Content-Type': 'application/json', 'X-Custom': 'yes' }), body: '{"é":1}' })
    expect(response.status).toBe(201)
    expect(response.statusText).toBe('Made')
    expect(response.ok).toBe(true)
    expect(response.type).toBe('basic')
    expect(response.headers.get('Content-Type')).toBe('application/json')
    expect(response.headers.get('x-twice')).toBe('a, b')
    expect(response.headers.get('x-none')).toBeNull()
    expect(() => response.headers.set('x', 'y')).toThrow(TypeError)
    // The length counts bytes, not characters.
    expect(JSON.parse(await readAll(response))).toEqual({ method: 'POST', body: '{"é":1}', type: 'application/json', length: '8', custom: 'yes' })
  })

  it('reuses its keep-alive socket for the next exchange', async () => {
    await (await nodeFetch(`${base}/echo`, { method: 'POST', body: 'a' })).text()
    await (await nodeFetch(`${base}/echo`, { method: 'POST', body: 'b' })).text()
    expect(ports.at(-1)).toBe(ports.at(-2))
  })

  it('sends to where a URL object points now, when it was changed in place between requests', async () => {
    const url = new URL(`${base}/redirect`)
    const first = await nodeFetch(url, { method: 'POST', body: 'x' })
    await first.body!.cancel()
    url.pathname = '/echo'
    const second = await nodeFetch(url, { method: 'POST', body: 'y' })
    expect([first.status, second.status]).toEqual([307, 201])
    expect(JSON.parse(await second.text()).body).toBe('y')
  })

  it('hands a redirect back as it came (the transport follows it itself, within the origin)', async () => {
    const response = await nodeFetch(`${base}/redirect`, { method: 'POST', body: 'x', redirect: 'manual' })
    expect(response.status).toBe(307)
    expect(response.headers.get('location')).toBe('/echo')
    await response.body!.cancel()
  })

  it('reads a 4 MiB body whole, in order, through its reader', async () => {
    const text = await readAll(await nodeFetch(`${base}/big`))
    expect(text.length).toBe(256 * 16 * 1024)
    for (let i = 0; i < 256; i += 51) expect(text.slice(i * 16 * 1024, i * 16 * 1024 + 4)).toBe(String(i).padStart(4, '0'))
  })

  it('rejects the read of a body the connection broke off, after what arrived', async () => {
    const reader = (await nodeFetch(`${base}/broken`)).body!.getReader()
    let text = ''
    const error = await (async () => {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) return undefined
        text += Buffer.from(value).toString()
      }
    })().catch((caught: unknown) => caught)
    expect(text).toBe('data: one\n\n')
    expect(error).toBeInstanceOf(TypeError)
  })

  it('aborts: the pending read rejects with the reason and the server sees the connection close', async () => {
    const controller = new AbortController()
    const serverClosed = new Promise<void>(resolve => closed.set('/held', resolve))
    const response = await nodeFetch(`${base}/held`, { signal: controller.signal })
    const reader = response.body!.getReader()
    expect(Buffer.from((await reader.read()).value!).toString()).toBe('data: first\n\n')
    const pending = reader.read()
    controller.abort()
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' })
    await serverClosed
  })

  it('rejects at once for a signal aborted before the exchange', async () => {
    const controller = new AbortController()
    controller.abort(new Error('gone'))
    await expect(nodeFetch(`${base}/echo`, { signal: controller.signal })).rejects.toThrow('gone')
  })

  it('rejects with the socket error when nothing listens', async () => {
    const idle = createServer()
    await new Promise<void>(resolve => idle.listen(0, '127.0.0.1', resolve))
    const port = (idle.address() as AddressInfo).port
    await new Promise(resolve => idle.close(resolve))
    await expect(nodeFetch(`http://127.0.0.1:${port}/`)).rejects.toMatchObject({ code: 'ECONNREFUSED' })
  })

  it('leaves a Request object and a stream body to the global fetch', async () => {
    const viaRequest = await nodeFetch(new Request(`${base}/echo`, { method: 'POST', body: 'r' }))
    expect(viaRequest).toBeInstanceOf(Response)
    expect(JSON.parse(await viaRequest.text()).body).toBe('r')
    const stream = new ReadableStream({ start(controller) { controller.enqueue(new TextEncoder().encode('s')); controller.close() } })
    const viaStream = await nodeFetch(`${base}/echo`, { method: 'POST', body: stream, duplex: 'half' } as RequestInit)
    expect(viaStream).toBeInstanceOf(Response)
    expect(JSON.parse(await viaStream.text()).body).toBe('s')
  })
})
