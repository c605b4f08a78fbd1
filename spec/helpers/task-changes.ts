import { ReplaySubject, filter, firstValueFrom } from 'rxjs'
import type { McpServer } from '../../actors/server.ts'
import type { TaskState } from '../../lib/tasks/state.ts'

/**
 * Every task change `server` publishes on its event bus (each is stored before it is published),
 * from now on, and a way to wait for one: `reached(taskId, status)` resolves with the task once a
 * change of it to `status` was published (at once if it was already). Event-driven: what tests
 * wait on instead of polling tasks/get.
 */
export function taskChanges(server: McpServer): { reached(taskId: string, status: TaskState['status']): Promise<TaskState>; stop(): void } {
  const changes = new ReplaySubject<TaskState>()
  const subscription = server.events.subscribe(event => { if (event.type === 'task') changes.next(event.task) })
  return {
    reached: (taskId, status) => firstValueFrom(changes.pipe(filter(task => task.taskId === taskId && task.status === status))),
    /** Stops recording and lets go of what was recorded (a test that measures the heap). */
    stop: () => subscription.unsubscribe(),
  }
}
