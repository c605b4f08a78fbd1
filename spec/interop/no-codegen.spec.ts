/**
 * Issue 23: JSON Schema without code generation. The everything server runs under
 * `node --disallow-code-generation-from-strings` (what Cloudflare Workers enforce: `new Function`
 * and `eval` throw EvalError), driven over stdio by the official SDK v1 client. Every schema it has
 * (tool inputs and outputs, the elicitation's requestedSchema) is checked there by the interpreted
 * validator, which the default choice ('auto') picks when the runtime refuses code generation.
 * tsx's loader works under the flag (it transforms with esbuild, a separate process).
 */
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { CreateMessageRequestSchema, ElicitRequestSchema, McpError, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const NO_CODEGEN = '--disallow-code-generation-from-strings'

/** Runs a TypeScript file under the flag with tsx; resolves with its stdout. */
function runUnderFlag(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [NO_CODEGEN, '--import', 'tsx', file], { cwd: root, timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${file} failed: ${stderr}`, { cause: error }))
      else resolve(stdout)
    })
  })
}

describe('the everything server under node --disallow-code-generation-from-strings', () => {
  let client: Client
  /** What the server wrote to stderr: nothing is expected, and it helps when a case fails. */
  let stderr = ''
  /** Every message the client's transport read from the server, in order. */
  const wire: Record<string, any>[] = []
  /** The answer the client's elicitation handler gives next. */
  let elicitAnswer: { action: 'accept' | 'decline'; content?: Record<string, unknown> } = { action: 'decline' }

  beforeAll(async () => {
    client = new Client({ name: 'no-codegen-client', version: '1.0.0' }, { capabilities: { sampling: {}, elicitation: {} } })
    client.setRequestHandler(CreateMessageRequestSchema, async request => ({
      role: 'assistant', model: 'edge-model', content: { type: 'text', text: `answer to ${JSON.stringify(request.params.messages[0]?.content)}` },
    }))
    client.setRequestHandler(ElicitRequestSchema, async () => elicitAnswer)
    const transport = new StdioClientTransport({
      command: process.execPath, args: [NO_CODEGEN, '--import', 'tsx', 'examples/everything/server.ts'], cwd: root, stderr: 'pipe',
    })
    transport.stderr?.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
    await client.connect(transport)
    // The transport calls onmessage once per line read, in wire order, synchronously: what the
    // server sent is asserted there, not through the SDK's progress callback, which hands progress
    // on a turn late and drops what comes after the result.
    const dispatch = transport.onmessage!
    transport.onmessage = (message: JSONRPCMessage) => { wire.push(message as Record<string, any>); dispatch(message) }
  }, 30_000)

  afterAll(async () => { await client?.close() })

  it('runs where code generation is refused, and the default choice is the interpreted validator there', async () => {
    const probe = JSON.parse(await runUnderFlag('spec/interop/fixtures/no-codegen-probe.ts')) as Record<string, unknown>
    expect(probe).toEqual({
      canGenerateCode: false,
      autoIsInterpreted: true,
      autoVerdict: { valid: false, message: '/text: must be string', errors: [{ path: '/text', message: 'must be string' }] },
      // The control: the compiled validator cannot work in such a process at all.
      compiledError: 'TypeError: Invalid JSON Schema: Code generation from strings disallowed for this context',
    })
  }, 60_000)

  it('lists its tools with their schemas', async () => {
    const { tools } = await client.listTools()
    expect(tools.find(tool => tool.name === 'add')).toMatchObject({
      inputSchema: { type: 'object', required: ['a', 'b'] }, outputSchema: { type: 'object', required: ['sum'] },
    })
  })

  it('calls echo and add, whose structuredContent is checked against its outputSchema', async () => {
    expect(await client.callTool({ name: 'echo', arguments: { text: 'edge' } })).toEqual({ content: [{ type: 'text', text: 'edge' }] })
    expect(await client.callTool({ name: 'add', arguments: { a: 20, b: 22 } })).toEqual({ content: [{ type: 'text', text: '42' }], structuredContent: { sum: 42 } })
    expect(stderr).toBe('')
  })

  it('answers arguments that break the inputSchema with a tool error naming the problem (MCP: the model can retry)', async () => {
    // Under the flag, a compiled validator could not even compile the schema: the call would fail
    // with -32603 instead of this verdict.
    expect(await client.callTool({ name: 'echo', arguments: { text: 7 } })).toEqual({
      content: [{ type: 'text', text: 'Invalid arguments for tool echo: /text: must be string' }], isError: true,
    })
    expect(await client.callTool({ name: 'add', arguments: { a: 1 } })).toEqual({
      content: [{ type: 'text', text: "Invalid arguments for tool add: must have required property 'b'" }], isError: true,
    })
    expect(await client.callTool({ name: 'long_running', arguments: { steps: 0 } })).toMatchObject({
      content: [{ type: 'text', text: 'Invalid arguments for tool long_running: /steps: must be >= 1' }], isError: true,
    })
  })

  it('reports progress of long_running before its result', async () => {
    const from = wire.length
    const result = await client.callTool({ name: 'long_running', arguments: { steps: 3, ms: 5 } }, undefined, { onprogress: () => {} })
    const arrived = wire.slice(from)
    const resultAt = arrived.findIndex(message => 'result' in message)
    const progress = arrived.slice(0, resultAt).filter(message => message.method === 'notifications/progress').map(message => message.params.progress)
    expect(result.content).toEqual([{ type: 'text', text: 'Finished 3 steps' }])
    expect(progress).toEqual([1, 2, 3])
  })

  it('reads a resource and gets a prompt', async () => {
    expect((await client.readResource({ uri: 'everything://readme' })).contents[0]).toMatchObject({ mimeType: 'text/markdown', text: expect.stringContaining('rxmcp everything') })
    expect((await client.getPrompt({ name: 'greeting', arguments: { name: 'Ada' } })).messages).toEqual([{ role: 'user', content: { type: 'text', text: 'Say hello to Ada' } }])
  })

  it('samples through the client', async () => {
    expect((await client.callTool({ name: 'sample', arguments: { prompt: 'hi' } })).content).toEqual([{ type: 'text', text: 'edge-model: answer to {"type":"text","text":"hi"}' }])
  })

  it('elicits, and checks the answer against the requestedSchema', async () => {
    elicitAnswer = { action: 'accept', content: { name: 'Grace', age: 36, color: 'red', extras: ['tea'] } }
    expect((await client.callTool({ name: 'elicit' })).structuredContent).toEqual({ action: 'accept', content: { name: 'Grace', age: 36, color: 'red', extras: ['tea'] } })
    // An accepted form whose content breaks the schema never reaches the tool.
    elicitAnswer = { action: 'accept', content: { name: 'Grace', age: 'old' } }
    const refused = await client.callTool({ name: 'elicit' }).then(result => result, (error: unknown) => error)
    const text = refused instanceof McpError ? refused.message : JSON.stringify(refused)
    expect(text).toContain('does not match its requestedSchema: /age: must be integer')
    elicitAnswer = { action: 'accept', content: { name: 'Grace', color: 'blue' } }
    const color = await client.callTool({ name: 'elicit' }).then(result => result, (error: unknown) => error)
    expect(color instanceof McpError ? color.message : JSON.stringify(color)).toContain('/color: must match exactly one schema in oneOf')
  })
})
