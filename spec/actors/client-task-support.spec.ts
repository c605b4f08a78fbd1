import { afterEach, describe, expect, it } from 'vitest'
import { firstValueFrom, lastValueFrom, toArray } from 'rxjs'
import { connect, type McpClient } from '../../actors/client.ts'
import { createServer, type McpServer } from '../../actors/server.ts'
import { ToolTaskSupportError } from '../../actors/client/errors.ts'
import { CapabilityError, LocalErrorCode, McpError } from '../../lib/jsonrpc/errors.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'

const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] })

const closers: (() => Promise<unknown>)[] = []
afterEach(async () => { for (const close of closers.splice(0).reverse()) await close() })

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(value => { throw new Error(`expected a failure, got ${JSON.stringify(value)}`) }, (error: unknown) => error)
}

/**
 * An rxmcp server with tasks on a real HTTP listener: `forbidden` and `plain` (no execution) may not
 * run as tasks, `optional` may, `required` must. `calls` lists the tools/call requests it served
 * (`name`, and whether as a task); `posts` counts the HTTP POSTs it received.
 */
async function taskServer(): Promise<{ server: McpServer; url: string; calls: string[]; posts: () => number }> {
  const server = createServer({ name: 'tasks', version: '1' }, { tasks: { pollIntervalMs: 10 } })
  server.tool('forbidden', { execution: { taskSupport: 'forbidden' } }, () => text('forbidden ran'))
  server.tool('plain', {}, () => text('plain ran'))
  server.tool('optional', { execution: { taskSupport: 'optional' } }, () => text('optional ran'))
  server.tool('required', { execution: { taskSupport: 'required' } }, () => text('required ran'))
  const calls: string[] = []
  server.use(next => (request, ctx) => {
    if (request.method === 'tools/call') calls.push(`${String(request.params?.name)}${request.params?.task === undefined ? '' : ' as task'}`)
    return next(request, ctx)
  })
  const http = streamableHttp({})
  await server.listen(http)
  closers.push(() => server.close())
  let posts = 0
  http.httpServer!.on('request', request => { if (request.method === 'POST') posts++ })
  return { server, url: http.url!, calls, posts: () => posts }
}

async function client(url: string, era: 'legacy' | 'modern'): Promise<McpClient> {
  const mcp = await connect(streamableHttpClient(url), { name: 'rx', version: '1' }, { era })
  closers.push(() => mcp.close())
  return mcp
}

describe('issue 20: callToolAsTask ignores the tool\'s execution.taskSupport', () => {
  it('refuses to call as a task a listed tool whose taskSupport is "forbidden" or absent, with ToolTaskSupportError and nothing sent', async () => {
    const { url, calls, posts } = await taskServer()
    const mcp = await client(url, 'legacy')
    await mcp.listTools()
    const before = posts()
    for (const name of ['forbidden', 'plain']) {
      const error = await failure(mcp.callToolAsTaskResult(name))
      expect(error).toBeInstanceOf(ToolTaskSupportError)
      expect(error).toBeInstanceOf(CapabilityError)
      expect(error).toMatchObject({ name: 'ToolTaskSupportError', code: LocalErrorCode.Capability, tool: name, taskSupport: 'forbidden' })
      expect((error as Error).message).toBe(`Tool "${name}" cannot run as a task (its execution.taskSupport is "forbidden" or absent): call it with callTool`)
    }
    expect(posts()).toBe(before)
    expect(calls).toEqual([])
    // The same tools called plainly, and an optional one as a task, go as before.
    expect(await mcp.callTool('forbidden')).toMatchObject(text('forbidden ran'))
    expect(await mcp.callToolAsTaskResult('optional')).toMatchObject(text('optional ran'))
    expect(calls).toEqual(['forbidden', 'optional as task'])
  })

  it('refuses a plain call of a listed tool whose taskSupport is "required" (callTool and callTool$), with nothing sent, and runs it as a task', async () => {
    const { url, calls, posts } = await taskServer()
    const mcp = await client(url, 'legacy')
    // Listed through the lazy, paginated tools() this time.
    expect((await lastValueFrom(mcp.tools().pipe(toArray()))).map(tool => tool.name)).toEqual(['forbidden', 'plain', 'optional', 'required'])
    const before = posts()
    const error = await failure(mcp.callTool('required', {}))
    expect(error).toBeInstanceOf(ToolTaskSupportError)
    expect(error).toMatchObject({ tool: 'required', taskSupport: 'required', code: LocalErrorCode.Capability })
    expect((error as Error).message).toBe('Tool "required" must run as a task (its execution.taskSupport is "required"): call it with callToolAsTask')
    expect(await failure(lastValueFrom(mcp.callTool$('required')))).toBeInstanceOf(ToolTaskSupportError)
    expect(posts()).toBe(before)
    expect(calls).toEqual([])
    expect(await mcp.callToolAsTaskResult('required')).toMatchObject(text('required ran'))
    expect(calls).toEqual(['required as task'])
  })

  it('sends a call of a tool it has not listed, or listed before the server said its tools changed, and the server answers -32601', async () => {
    const { server, url, calls } = await taskServer()
    const mcp = await client(url, 'legacy')
    // Not listed: the server decides.
    expect(await failure(mcp.callToolAsTaskResult('forbidden'))).toMatchObject({ code: -32601 })
    await mcp.listTools()
    expect(await failure(mcp.callToolAsTaskResult('forbidden'))).toBeInstanceOf(ToolTaskSupportError)
    // The server's tools change: what the listing said is forgotten.
    const changed = firstValueFrom(mcp.notifications('notifications/tools/list_changed'))
    server.tool('late', {}, () => text('late'))
    await changed
    expect(await failure(mcp.callToolAsTaskResult('forbidden'))).toMatchObject({ code: -32601 })
    expect(await failure(mcp.callTool('required'))).toBeInstanceOf(McpError)
    expect(calls).toEqual(['forbidden as task', 'forbidden as task', 'required'])
  })

  it('leaves the choice to the server in the modern era, which has no per-tool task support', async () => {
    const { url } = await taskServer()
    const mcp = await client(url, 'modern')
    await mcp.listTools()
    expect(await mcp.callToolAsTaskResult('plain')).toMatchObject(text('plain ran'))
    expect(await mcp.callToolAsTaskResult('required')).toMatchObject(text('required ran'))
  })
})
