/**
 * The tools the conformance suite's `tasks-*` scenarios (the `io.modelcontextprotocol/tasks`
 * extension, 0.2.0-alpha.12) ask for. They are registered on a conformance server of their own:
 * task-capable tools make a server declare tasks, which the other suites do not expect.
 */
import type { McpServer, ServerContext } from '../../actors/server.ts'
import { InternalError } from '../../lib/jsonrpc/errors.ts'

const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] })

/** Resolves after `ms`, or rejects as soon as `signal` aborts (a cancelled task stops waiting). */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason)
    const timer = setTimeout(resolve, ms)
    signal.addEventListener('abort', () => { clearTimeout(timer); reject(signal.reason) }, { once: true })
  })
}

const seconds = (value: unknown) => typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.min(value, 60) : 0

/** Registers greet, slow_compute, failing_job, protocol_error_job, confirm_delete, multi_input and test_tool_with_task. */
export function registerTaskFixtures(server: McpServer): void {
  server.tool('greet', {
    description: 'Greets synchronously; never a task',
    inputSchema: { type: 'object', properties: { name: { type: 'string' } } },
  }, args => text(`Hello, ${String(args.name ?? 'world')}!`))

  server.tool('slow_compute', {
    description: 'Sleeps `seconds`, then answers; runs as a task when the client can take one',
    inputSchema: { type: 'object', properties: { seconds: { type: 'number' } } },
    execution: { taskSupport: 'optional' },
  }, async (args, ctx: ServerContext) => {
    const wait = seconds(args.seconds)
    ctx.task?.setStatusMessage(`Computing for ${wait} s`)
    if (wait > 0) await pause(wait * 1000, ctx.signal)
    return text(`Computed after ${wait} seconds`)
  })

  server.tool('failing_job', {
    description: 'Fails with a tool execution error after about a second; only ever as a task',
    inputSchema: { type: 'object', properties: {} },
    execution: { taskSupport: 'required' },
  }, async (_args, ctx) => {
    await pause(1000, ctx.signal)
    return { ...text('The job failed'), isError: true }
  })

  server.tool('protocol_error_job', {
    description: 'Fails with a JSON-RPC error',
    inputSchema: { type: 'object', properties: {} },
    execution: { taskSupport: 'optional' },
  }, () => { throw new InternalError('Internal error: the job hit a protocol error') })

  server.tool('confirm_delete', {
    description: 'Asks the user to confirm before it deletes anything',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
    execution: { taskSupport: 'optional' },
  }, async (args, ctx) => {
    const answer = await ctx.elicit({
      mode: 'form',
      message: `Delete ${String(args.path ?? 'the file')}?`,
      requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean' } }, required: ['confirm'] },
    })
    const confirmed = answer.action === 'accept' && answer.content?.confirm === true
    return text(confirmed ? `Deleted ${String(args.path ?? 'the file')}` : 'Nothing deleted')
  })

  server.tool('multi_input', {
    description: 'Asks two questions at once; the task waits for both answers',
    inputSchema: { type: 'object', properties: {} },
    execution: { taskSupport: 'optional' },
  }, async (_args, ctx) => {
    const schema = { type: 'object' as const, properties: { name: { type: 'string' as const }, confirm: { type: 'boolean' as const } } }
    const [first, second] = await Promise.all([
      ctx.elicit({ mode: 'form', message: 'First question', requestedSchema: schema }),
      ctx.elicit({ mode: 'form', message: 'Second question', requestedSchema: schema }),
    ])
    return text(`Answers: ${String(first.content?.name)}, ${String(second.content?.name)}`)
  })

  server.tool('test_tool_with_task', {
    description: 'Asks for a user name (an input_required round), then runs as a task',
    inputSchema: { type: 'object', properties: {} },
    execution: { taskSupport: 'required' },
    taskStart: 'handler',
  }, async (_args, ctx) => {
    const answer = await ctx.elicit({
      mode: 'form',
      message: 'What is your name?',
      requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    }, { key: 'user_name' })
    const name = String(answer.content?.name ?? 'nobody')
    return ctx.runAsTask(async () => text(`Task done for ${name}`))
  })
}
