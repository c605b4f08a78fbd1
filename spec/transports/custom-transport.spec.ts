import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { MessageChannel, type MessagePort } from 'node:worker_threads'
import { Observable } from 'rxjs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connect, createServer, type McpServer, type Transport } from '../../index.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))
const generated = join(root, 'spec', '.doc-examples')

/** The code block of docs/transports.md that starts with `// message-port-transport.ts`, imports pointed at this tree. */
function transportFromDocs(): string {
  const page = readFileSync(join(root, 'docs', 'transports.md'), 'utf8')
  const block = /```ts\n(\/\/ message-port-transport\.ts\n[\s\S]*?)```/.exec(page)
  if (block === null) throw new Error('docs/transports.md has no message-port-transport.ts example')
  const entry = (file: string) => `'${pathToFileURL(join(root, file)).href}'`
  return block[1]!
    .replace(/from 'rxmcp'/g, `from ${entry('index.ts')}`)
    .replace(/from 'rxmcp\/errors'/g, `from ${entry('entries/errors.ts')}`)
    .replace(/from 'rxmcp\/kernel'/g, `from ${entry('entries/kernel.ts')}`)
}

function echoServer(cancelled: { count: number; resolve?: () => void }): McpServer {
  const server = createServer({ name: 'port-server', version: '1.0.0' })
  server.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
    ({ text }) => ({ content: [{ type: 'text', text: `echo: ${String(text)}` }] }))
  // Reports progress once, then waits until it is cancelled.
  server.tool('wait', { inputSchema: { type: 'object' } }, (_args, ctx) => new Observable(() => {
    ctx.progress(1, 2)
    return () => { cancelled.count++; cancelled.resolve?.() }
  }))
  return server
}

describe('issue 21: a custom transport written from the docs alone carries a whole session', () => {
  let messagePortTransport: (port: MessagePort) => Transport

  beforeAll(async () => {
    mkdirSync(generated, { recursive: true })
    const file = join(generated, 'message-port-transport.ts')
    writeFileSync(file, transportFromDocs())
    ;({ messagePortTransport } = await import(pathToFileURL(file).href) as { messagePortTransport: typeof messagePortTransport })
  })

  afterAll(() => { rmSync(generated, { recursive: true, force: true }) })

  it.each(['legacy', 'modern'] as const)('in the %s era: handshake, listing, a call, progress, a cancelled call, close', async era => {
    const cancelled: { count: number; resolve?: () => void } = { count: 0 }
    const server = echoServer(cancelled)
    const { port1, port2 } = new MessageChannel()
    const listening = server.listen(messagePortTransport(port1))
    const client = await connect(messagePortTransport(port2), { name: 'port-client', version: '1' }, { era })
    const session = await listening
    expect(client.state).toMatchObject({ era, status: 'operating' })

    expect((await client.listTools()).tools.map(tool => tool.name).sort()).toEqual(['echo', 'wait'])
    expect(await client.callTool('echo', { text: 'over a port' })).toMatchObject({ content: [{ type: 'text', text: 'echo: over a port' }] })

    // Progress arrives as an event of the request's Observable; unsubscribing cancels it on the server.
    const wasCancelled = new Promise<void>(resolve => { cancelled.resolve = resolve })
    const progress = await new Promise<unknown>((resolve, reject) => {
      const subscription = client.request('tools/call', { name: 'wait', arguments: {} }).subscribe({
        next: event => { if (event.type === 'progress') { subscription.unsubscribe(); resolve(event) } },
        error: reject,
      })
    })
    expect(progress).toMatchObject({ type: 'progress', progress: 1, total: 2 })
    await wasCancelled
    expect(cancelled.count).toBe(1)

    await client.close()
    await session.closed
    expect(client.state.status).toBe('closed')
  }, 30_000)

  it('answers a malformed frame with -32700 and keeps serving', async () => {
    const server = echoServer({ count: 0 })
    const { port1, port2 } = new MessageChannel()
    await server.listen(messagePortTransport(port1))
    const answers: unknown[] = []
    const answered = new Promise<void>(resolve => port2.on('message', text => { answers.push(JSON.parse(String(text))); if (answers.length === 2) resolve() }))
    port2.postMessage('{"jsonrpc":"2.0","id":1,"method":')
    port2.postMessage(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }))
    await answered
    expect(answers[0]).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } })
    expect(answers[1]).toMatchObject({ jsonrpc: '2.0', id: 2, result: { protocolVersion: '2025-11-25' } })
    port2.close()
  }, 30_000)
})
