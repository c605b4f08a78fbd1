import { afterEach, describe, expect, it, onTestFinished } from 'vitest'
import { firstValueFrom } from 'rxjs'
import { fileURLToPath } from 'node:url'
import { PassThrough, Writable } from 'node:stream'
import { spawn } from 'node:child_process'
import { connect } from '../../actors/client.ts'
import { createServer, type McpServer } from '../../actors/server.ts'
import { STDIO_DEFAULTS, stdio, stdioClient } from '../../transports/stdio.ts'
import { ConnectionClosedError, FrameTooLargeError, TransportError } from '../../lib/jsonrpc/errors.ts'
import { verifies } from '../helpers/verifies.ts'
import { collected } from '../helpers/collected.ts'

const tinyServer = fileURLToPath(new URL('../fixtures/tiny-server.ts', import.meta.url))
const spawnTiny = () => stdioClient({ command: process.execPath, args: ['--import', 'tsx', tinyServer], stderr: 'pipe', shutdownGraceMs: 500 })

describe('stdioClient with an rxmcp server child', () => {
  verifies('stdio:stdout-protocol-only', 'talks to a real child process, whose logs go to stderr only', async () => {
    const transport = spawnTiny()
    const stderr = firstValueFrom(transport.stderr)
    const client = await connect(transport, { name: 'test', version: '1' })
    expect(client.serverInfo).toEqual({ name: 'tiny', version: '1.0.0' })
    expect(await client.callTool('echo', { text: 'over a pipe' })).toEqual({ content: [{ type: 'text', text: 'over a pipe' }] })
    expect(await stderr).toContain('tiny server ready')
    await client.close()
    expect(await transport.exited).toMatchObject({ code: 0 })
  }, 20_000)

  it('fails every pending request at once when the child dies', async () => {
    const transport = spawnTiny()
    const client = await connect(transport, { name: 'test', version: '1' })
    const hanging = [client.callTool('hang'), client.callTool('hang')].map(call => call.catch(error => error))
    await client.callTool('exit')
    const errors = await Promise.all(hanging)
    for (const error of errors) {
      expect(error).toBeInstanceOf(ConnectionClosedError)
      expect(error.message).toContain('code 3')
    }
    await expect(client.callTool('echo', { text: 'x' })).rejects.toBeInstanceOf(ConnectionClosedError)
  }, 20_000)

  it('answers the calls in flight when stdin ends, then exits (printf … | server)', async () => {
    // The echo call is the first with an inputSchema: its validator loads asynchronously, so the
    // call is still running when stdin ends right after it.
    const child = spawn(process.execPath, ['--import', 'tsx', tinyServer], { stdio: ['pipe', 'pipe', 'ignore'] })
    onTestFinished(() => { child.kill() })
    const output: Buffer[] = []
    child.stdout.on('data', (chunk: Buffer) => output.push(chunk))
    const exited = new Promise<number | null>(resolve => child.on('exit', code => resolve(code)))
    child.stdin.end([
      '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}',
      '{"jsonrpc":"2.0","method":"notifications/initialized"}',
      '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"piped"}}}',
      '',
    ].join('\n'))
    expect(await exited).toBe(0)
    const answers = Buffer.concat(output).toString('utf8').trim().split('\n').map(line => JSON.parse(line))
    expect(answers.map(answer => answer.id)).toEqual([1, 2])
    expect(answers[1].result).toEqual({ content: [{ type: 'text', text: 'piped' }] })
  }, 20_000)

  it('reports a command that cannot start as a TransportError', async () => {
    const error = await connect(stdioClient({ command: 'rxmcp-no-such-command' }), { name: 'test', version: '1' }).catch(e => e)
    expect(error).toBeInstanceOf(ConnectionClosedError)
    expect(error.cause).toBeInstanceOf(TransportError)
  })
})

describe('stdioClient and answers over its size limit', () => {
  it('fails the request at once with FrameTooLargeError naming the size and the limit, and goes on', async () => {
    const transport = stdioClient({ command: process.execPath, args: ['--import', 'tsx', tinyServer], stderr: 'pipe', shutdownGraceMs: 500, maxMessageSize: 1024 * 1024 })
    const client = await connect(transport, { name: 'test', version: '1' })
    try {
      // No timeout: without the id read from the oversized line, this call would wait forever.
      const error = await client.callTool('echo', { text: 'x'.repeat(1536 * 1024) }, { timeout: 0 }).then(() => undefined, e => e)
      expect(error).toBeInstanceOf(FrameTooLargeError)
      expect(error.code).toBe('RXMCP_ERR_FRAME_TOO_LARGE')
      expect(error.message).toMatch(/^Message of \d+ bytes exceeds the limit of 1048576 bytes$/)
      expect(error.size).toBeGreaterThan(1024 * 1024)
      expect(await client.callTool('echo', { text: 'after' })).toEqual({ content: [{ type: 'text', text: 'after' }] })
    } finally {
      await client.close()
    }
  }, 20_000)
})

/**
 * A stdout that takes bytes only when told to: while `hold` is set, writes stay in its buffer, so
 * `write()` returns false past its high-water mark, as a pipe to a peer that does not read does.
 */
class HeldOutput extends Writable {
  hold = false
  /** The lines written, a list a test awaits a state of (`lines.when(…)`): no re-check on a timer or turn. */
  readonly lines = collected<string>()
  #rest = ''
  #waiting: (() => void)[] = []
  constructor() { super({ highWaterMark: 1024 }) }
  override _write(chunk: Buffer, _encoding: string, callback: () => void): void {
    const take = () => {
      const parts = (this.#rest + chunk.toString('utf8')).split('\n')
      this.#rest = parts.pop()!
      for (const part of parts) this.lines.push(part)
      callback()
    }
    if (this.hold) this.#waiting.push(take)
    else take()
  }
  release(): void {
    this.hold = false
    const waiting = this.#waiting
    this.#waiting = []
    for (const take of waiting) take()
  }
}

describe('stdio', () => {
  let server: McpServer | undefined
  afterEach(async () => { await server?.close(); server = undefined })

  async function serve(input: PassThrough, output: Writable, handled: { count: number }) {
    server = createServer({ name: 'stdio-test', version: '1' })
    server.tool('big', {}, () => { handled.count++; return { content: [{ type: 'text', text: 'z'.repeat(4096) }] } })
    server.tool('echo', {}, args => ({ content: [{ type: 'text', text: String(args.text) }] }))
    await server.listen(stdio({ input, output }))
    input.write('{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n')
    input.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
  }

  it('stops reading requests while stdout is not drained, and resumes on drain', async () => {
    const input = new PassThrough()
    const output = new HeldOutput()
    const handled = { count: 0 }
    await serve(input, output, handled)
    await output.lines.when(lines => lines.length === 1)
    output.hold = true
    // A held stdout would keep close() waiting for its drain: let it go whatever happens below.
    onTestFinished(() => output.release())
    const total = 100
    // One request per turn of the event loop, as a pipe delivers a client's writes.
    for (let id = 1; id <= total; id++) {
      input.write(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"big"}}\n`)
      await new Promise(resolve => setImmediate(resolve))
    }
    // Paused with almost every request still unread: the answers cannot pile up in memory.
    expect(input.isPaused()).toBe(true)
    expect(handled.count).toBeLessThan(10)
    expect(input.readableLength).toBeGreaterThan(0)
    output.release()
    // Released for good: each drain lets a few more in, until every answer is out.
    await output.lines.when(lines => lines.length === total + 1)
    expect(handled.count).toBe(total)
    expect(output.lines.items.slice(1).map(line => JSON.parse(line).id)).toEqual(Array.from({ length: total }, (_, i) => i + 1))
  })

  it('takes a 10 MiB request and answers a 10 MiB result with its defaults', async () => {
    expect(STDIO_DEFAULTS.maxMessageSize).toBe(64 * 1024 * 1024)
    const input = new PassThrough()
    const output = new HeldOutput()
    await serve(input, output, { count: 0 })
    const text = 'q'.repeat(10 * 1024 * 1024)
    input.write(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"${text}"}}}\n`)
    await output.lines.when(lines => lines.length === 2)
    const answer = JSON.parse(output.lines.items[1]!)
    expect(answer.id).toBe(1)
    expect(answer.result.content[0].text.length).toBe(text.length)
  })

  it('answers a request over its limit with -32600 carrying the request id', async () => {
    const input = new PassThrough()
    const output = new HeldOutput()
    server = createServer({ name: 'stdio-test', version: '1' })
    await server.listen(stdio({ input, output, maxMessageSize: 1024 }))
    input.write(`{"jsonrpc":"2.0","id":"too-big","method":"ping","params":{"pad":"${'p'.repeat(2048)}"}}\n{"jsonrpc":"2.0","id":2,"method":"ping"}\n`)
    await output.lines.when(lines => lines.length === 2)
    expect(output.lines.items.map(line => JSON.parse(line))).toEqual([
      { jsonrpc: '2.0', id: 'too-big', error: { code: -32600, message: 'Invalid Request: Message of 2116 bytes exceeds the limit of 1024 bytes', data: { size: 2116, limit: 1024 } } },
      { jsonrpc: '2.0', id: 2, result: {} },
    ])
  })
})
