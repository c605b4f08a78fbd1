import { afterEach, describe, expect, it } from 'vitest'
import { lastValueFrom, take, toArray } from 'rxjs'
import { createServer, type McpServer } from '../../actors/server.ts'
import { connectInMemory } from '../../testing.ts'
import { CapabilityError, InvalidParamsError, McpError, TaskCancelledError } from '../../lib/jsonrpc/errors.ts'
import type { ToolTaskEvent } from '../../actors/client/tasks.ts'
import { arrivals } from '../helpers/arrivals.ts'

const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] })

let cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
  cleanups = []
})

/** Lets the `slow` tool finish, one call per open; `started(n)` resolves once `n` calls wait at it. */
function gate() {
  const waiting = arrivals<() => void>()
  return {
    wait: () => new Promise<void>(resolve => waiting.push(resolve)),
    open: () => waiting.items.splice(0).forEach(resolve => resolve()),
    started: (n: number) => waiting.atLeast(n),
  }
}

function makeServer() {
  const server = createServer({ name: 'tasks', version: '1' }, { tasks: { pollIntervalMs: 10 } })
  cleanups.push(() => server.close())
  const slow = gate()
  server.tool('slow', { execution: { taskSupport: 'optional' } }, async (_args, ctx) => {
    ctx.task?.setStatusMessage('waiting')
    await slow.wait()
    return text('slow done')
  })
  server.tool('asks', { execution: { taskSupport: 'optional' } }, async (_args, ctx) => {
    const answer = await ctx.elicit({ mode: 'form', message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } })
    return text(`hello ${String(answer.content?.name)}`)
  })
  server.tool('broken', { execution: { taskSupport: 'optional' } }, () => { throw new InvalidParamsError('Invalid params: broken') })
  server.tool('plain', {}, () => text('plain'))
  return { server, slow }
}

async function client(server: McpServer, era: 'legacy' | 'modern') {
  const pair = await connectInMemory(server, { era, elicitation: { form: () => ({ action: 'accept', content: { name: 'Ada' } }) } })
  cleanups.push(async () => { await pair[Symbol.asyncDispose]() })
  return pair.client
}

/** Subscribes, and hands over the events as they come. */
function record(events: ReturnType<Awaited<ReturnType<typeof client>>['callToolAsTask']>) {
  const seen: ToolTaskEvent[] = []
  let failure: unknown
  const done = new Promise<void>(resolve => events.subscribe({ next: event => { seen.push(event) }, error: error => { failure = error; resolve() }, complete: resolve }))
  return { seen, done, get failure() { return failure } }
}

for (const era of ['legacy', 'modern'] as const) {
  describe(`client.callToolAsTask against an rxmcp server (${era} era)`, () => {
    it('emits the task as it changes, then the result', async () => {
      const { server, slow } = makeServer()
      const mcp = await client(server, era)
      const run = record(mcp.callToolAsTask('slow'))
      await slow.started(1)
      slow.open()
      await run.done
      expect(run.failure).toBeUndefined()
      const tasks = run.seen.filter(event => event.type === 'task').map(event => event.type === 'task' ? event.task : undefined)
      expect(tasks[0]).toMatchObject({ status: 'working', ttlMs: 900_000, pollIntervalMs: 10 })
      expect(tasks.at(-1)?.status).toBe('completed')
      expect(run.seen.at(-1)).toMatchObject({ type: 'result', result: text('slow done') })
    })

    it("answers the task's elicitation with the client's handler", async () => {
      const { server } = makeServer()
      const mcp = await client(server, era)
      expect(await mcp.callToolAsTaskResult('asks')).toMatchObject(text('hello Ada'))
    })

    it("fails with the task's JSON-RPC error", async () => {
      const { server } = makeServer()
      const mcp = await client(server, era)
      const error = await mcp.callToolAsTaskResult('broken').catch((e: unknown) => e)
      expect(error).toBeInstanceOf(McpError)
      expect((error as McpError).code).toBe(-32602)
    })

    it('does not cancel when unsubscribed; tasks.cancel does, and tasks.result then fails with TaskCancelledError', async () => {
      const { server, slow } = makeServer()
      const mcp = await client(server, era)
      const [first] = await lastValueFrom(mcp.callToolAsTask('slow').pipe(take(1), toArray()))
      const taskId = first!.type === 'task' ? first!.task.taskId : ''
      expect((await mcp.tasks.get(taskId)).status).toBe('working')
      const follower = mcp.tasks.result(taskId)
      await mcp.tasks.cancel(taskId)
      await expect(follower).rejects.toBeInstanceOf(TaskCancelledError)
      expect((await mcp.tasks.get(taskId)).status).toBe('cancelled')
      expect(await slow.started(1)).toHaveLength(1)
      slow.open()
    })

    it('gets the result at once when the server runs the call without a task', async () => {
      const { server } = makeServer()
      const mcp = await client(server, era)
      if (era === 'legacy') {
        // A legacy server refuses params.task for a tool that forbids it.
        await expect(mcp.callToolAsTaskResult('plain')).rejects.toMatchObject({ code: -32601 })
      } else {
        expect(await mcp.callToolAsTaskResult('plain')).toMatchObject(text('plain'))
      }
    })
  })
}

describe('client.callToolAsTask, refusals', () => {
  it('refuses locally when a legacy server declared no tasks for tools/call', async () => {
    const server = createServer({ name: 'no-tasks', version: '1' })
    cleanups.push(() => server.close())
    server.tool('plain', {}, () => text('plain'))
    const mcp = await client(server, 'legacy')
    await expect(mcp.callToolAsTaskResult('plain')).rejects.toBeInstanceOf(CapabilityError)
  })

  it('does not declare the tasks extension on a plain modern callTool: the result is never a task', async () => {
    const { server, slow } = makeServer()
    const mcp = await client(server, 'modern')
    const call = mcp.callTool('slow')
    await slow.started(1)
    slow.open()
    expect(await call).toMatchObject(text('slow done'))
  })
})

describe('the client running the server\'s requests as tasks (legacy era, tasks: true)', () => {
  it('declares tasks.requests, answers CreateTaskResult, then the server reads the answer with tasks/result', async () => {
    const server = createServer({ name: 'asks-as-task', version: '1' })
    cleanups.push(() => server.close())
    const seen: string[] = []
    server.tool('ask', {}, async (_args, ctx) => {
      const answer = await ctx.elicit({ mode: 'form', message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } }, { task: { ttlMs: 10_000 } })
      return text(`task answer: ${String(answer.content?.name)}`)
    })
    const pair = await connectInMemory(server, {
      tasks: true,
      elicitation: { form: async () => { seen.push('handler'); return { action: 'accept', content: { name: 'Tom' } } } },
    })
    cleanups.push(async () => { await pair[Symbol.asyncDispose]() })
    expect(pair.session.state.clientCapabilities.tasks).toEqual({ list: {}, cancel: {}, requests: { elicitation: { create: {} } } })
    expect(await pair.client.callTool('ask')).toEqual(text('task answer: Tom'))
    expect(seen).toEqual(['handler'])
    // The task stays in the client until its TTL: the server may list it and read its state.
    const listed = await lastValueFrom(pair.session.request('tasks/list' as never, {} as never)) as unknown as { result: { tasks: Array<{ status: string }> } }
    expect(listed.result.tasks.map(task => task.status)).toEqual(['completed'])
  })
})

describe('the client\'s tasks, cancelled by the server', () => {
  it('cancels a running client task: cancelled at once, a second cancel is -32602, tasks/result fails', async () => {
    const server = createServer({ name: 'cancels', version: '1' })
    cleanups.push(() => server.close())
    const pair = await connectInMemory(server, { tasks: true, elicitation: { form: () => new Promise<never>(() => {}) } })
    cleanups.push(async () => { await pair[Symbol.asyncDispose]() })
    const call = async (method: string, params: object) => {
      const event = await lastValueFrom(pair.session.request(method as never, params as never, { progress: false } as never)) as unknown as { result: Record<string, unknown> }
      return event.result
    }
    const { task } = await call('elicitation/create', { mode: 'form', message: 'Never answered', requestedSchema: { type: 'object', properties: {} }, task: {} }) as { task: { taskId: string; status: string } }
    expect(task.status).toBe('working')
    expect(await call('tasks/cancel', { taskId: task.taskId })).toMatchObject({ taskId: task.taskId, status: 'cancelled' })
    await expect(call('tasks/cancel', { taskId: task.taskId })).rejects.toMatchObject({ code: -32602 })
    await expect(call('tasks/result', { taskId: task.taskId })).rejects.toBeInstanceOf(McpError)
    await expect(call('tasks/get', { taskId: 'unknown' })).rejects.toMatchObject({ code: -32602 })
  })
})
