import { describe, expect, it } from 'vitest'
import { filter, firstValueFrom } from 'rxjs'
import { createServer, proxy, proxyClientOptions, type McpServer } from '../../actors/server.ts'
import { connect } from '../../actors/client.ts'
import { connectInMemory, createMemoryPair } from '../../testing.ts'

/** A server whose tools wait until cancelled: `held` runs only as a task, `either` may; each says when it started and when its signal aborted. */
function waitingBackend() {
  const server = createServer({ name: 'waiting', version: '1.0.0' })
  const started: Record<string, () => void> = {}
  const aborted: Record<string, () => void> = {}
  const marks = (name: string) => ({
    started: new Promise<void>(resolve => { started[name] = resolve }),
    aborted: new Promise<void>(resolve => { aborted[name] = resolve }),
  })
  const held = marks('held')
  const either = marks('either')
  const wait = (name: string) => (_args: unknown, ctx: { signal: AbortSignal }) => new Promise<never>(() => {
    ctx.signal.addEventListener('abort', () => aborted[name]!())
    started[name]!()
  })
  server.tool('held', { execution: { taskSupport: 'required' } }, wait('held'))
  server.tool('either', { execution: { taskSupport: 'optional' } }, wait('either'))
  return { server, held, either }
}

function toolsChanged(server: McpServer): Promise<unknown> {
  return firstValueFrom(server.events.pipe(filter(event => event.type === 'list_changed' && event.kind === 'tools')))
}

describe.each(['legacy', 'modern'] as const)('McpServer.mount: cancelling the caller\'s task (%s caller)', era => {
  it.each(['in-process', 'legacy client'] as const)('sends tasks/cancel for the downstream task it awaits (%s source)', async sourceKind => {
    const { server, held } = waitingBackend()
    const parent = createServer({ name: 'parent', version: '1.0.0' })
    const changed = toolsChanged(parent)
    const cancels: string[] = []
    server.use(next => (request, ctx) => {
      if (request.method === 'tasks/cancel') cancels.push(String(request.params?.taskId))
      return next(request, ctx)
    })
    if (sourceKind === 'in-process') parent.mount('b', server)
    else {
      const [clientSide, serverSide] = createMemoryPair()
      await server.listen(serverSide)
      parent.mount('b', proxy(await connect(clientSide, { name: 'proxy', version: '1' }, { era: 'legacy', ...proxyClientOptions() }), { closeClient: true }))
    }
    await changed
    await using pair = await connectInMemory(parent, { era })
    const created = await firstValueFrom(pair.client.callToolAsTask('b__held', {}))
    expect(created.type).toBe('task')
    await held.started
    await pair.client.tasks.cancel((created as { task: { taskId: string } }).task.taskId)
    await held.aborted
    expect(cancels).toHaveLength(1)
  })

  it('cancels the plain downstream call its task forwards', async () => {
    const { server, either } = waitingBackend()
    const parent = createServer({ name: 'parent', version: '1.0.0' })
    const changed = toolsChanged(parent)
    parent.mount('b', server)
    await changed
    await using pair = await connectInMemory(parent, { era })
    const created = await firstValueFrom(pair.client.callToolAsTask('b__either', {}))
    await either.started
    await pair.client.tasks.cancel((created as { task: { taskId: string } }).task.taskId)
    await either.aborted
  })
})

describe('McpServer.mount: a downstream task that asks', () => {
  it.each(['legacy', 'modern'] as const)('has its input requests answered by the %s caller of the task', async era => {
    const server = createServer({ name: 'asking-task', version: '1.0.0' })
    server.tool('confirm', { execution: { taskSupport: 'required' } }, async (_args, ctx) => {
      const answer = await ctx.elicit({ mode: 'form', message: 'Sure?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } })
      return { content: [{ type: 'text', text: String(answer.content?.name) }] }
    })
    const parent = createServer({ name: 'parent', version: '1.0.0' })
    const changed = toolsChanged(parent)
    parent.mount('b', server)
    await changed
    await using pair = await connectInMemory(parent, { era, elicitation: { form: () => ({ action: 'accept', content: { name: 'the caller' } }) } })
    expect((await pair.client.callToolAsTaskResult('b__confirm', {})).content).toEqual([{ type: 'text', text: 'the caller' }])
  })
})
