import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fileURLToPath } from 'node:url'
import { lastValueFrom, take, toArray } from 'rxjs'
import { connect, type McpClient } from '../../actors/client.ts'
import { stdioClient } from '../../transports/stdio.ts'
import { TaskCancelledError } from '../../lib/jsonrpc/errors.ts'

const fixture = fileURLToPath(new URL('./fixtures/official-task-server.ts', import.meta.url))
const RELATED = 'io.modelcontextprotocol/related-task'

describe('the rxmcp client calling tools as tasks on an official SDK v1.32 server (stdio)', () => {
  let client: McpClient

  beforeAll(async () => {
    client = await connect(stdioClient({ command: process.execPath, args: ['--import', 'tsx', fixture], stderr: 'inherit' }), { name: 'rxmcp-tasks', version: '1' })
  }, 30_000)

  afterAll(async () => { await client?.close() })

  it('follows a task from working to completed and ends with its result (tasks/get, then tasks/result)', async () => {
    const events = await lastValueFrom(client.callToolAsTask('finishes').pipe(toArray()))
    const tasks = events.filter(event => event.type === 'task').map(event => event.task)
    expect(tasks[0]).toMatchObject({ status: 'working', ttlMs: 60_000, pollIntervalMs: 20 })
    expect(tasks.at(-1)?.status).toBe('completed')
    const last = events.at(-1)!
    expect(last.type).toBe('result')
    if (last.type === 'result') {
      expect(last.result.content).toEqual([{ type: 'text', text: 'finished by the SDK' }])
      expect((last.result._meta as Record<string, unknown>)[RELATED]).toEqual({ taskId: tasks[0]!.taskId })
    }
  })

  it("gives a failed task's tool result with isError", async () => {
    expect(await client.callToolAsTaskResult('fails_later')).toMatchObject({ isError: true, content: [{ type: 'text', text: 'the SDK task failed' }] })
  })

  it('lists the tasks it made, and cancels one: the follower ends with TaskCancelledError', async () => {
    const [first] = await lastValueFrom(client.callToolAsTask('waits', undefined, { maxPollIntervalMs: 50 }).pipe(take(1), toArray()))
    if (first?.type !== 'task') throw new Error('no task event first')
    const taskId = first.task.taskId
    expect((await client.tasks.list()).tasks.map(task => task.taskId)).toContain(taskId)
    // Unsubscribing (take(1) above) left the task running in the server.
    expect((await client.tasks.get(taskId)).status).toBe('working')
    await client.tasks.cancel(taskId)
    expect((await client.tasks.get(taskId)).status).toBe('cancelled')
    await expect(client.tasks.result(taskId)).rejects.toBeInstanceOf(TaskCancelledError)
  })
})
