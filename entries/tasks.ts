/**
 * `rxmcp/tasks`: Tasks (MCP 2025-11-25 utilities/tasks, and the 2026-07-28 tasks extension): the
 * task actor and its pure state machine, the task stores, the server's task options and the client's
 * task API.
 */
export {
  TASKS_EXTENSION, SERVER_TASKS_DEFAULTS, TooManyRunningTasksError, TOO_MANY_RUNNING_TASKS_ERROR_CODE,
} from '../actors/server/tasks.ts'
export {
  RELATED_TASK_META, withRelatedTask, settledAnswer, createTask, stepTask, canTransition, isTerminalStatus, taskToWire,
  taskToModernWire, TaskTransitionError, TaskExpiredError, TASK_DEFAULTS, TERMINAL_STATUSES, TASK_TRANSITION_ERROR_CODE,
  TASK_EXPIRED_ERROR_CODE,
} from '../actors/tasks/task.ts'
export type { TaskState, TaskMessage, TaskOptions, TaskRef } from '../actors/tasks/task.ts'
export { taskLogic, tasksLogic, taskWork, initialTask, TASK_WORK } from '../actors/tasks/task-logic.ts'
export type { TaskActorState, TaskEvent, TaskInput, TaskLogicMessage, TaskWorkMessage, TasksEvent, Timed } from '../actors/tasks/task-logic.ts'
export {
  MEMORY_TASK_STORE_DEFAULTS, TaskStoreFullError, TASK_STORE_FULL_ERROR_CODE, randomTaskId, createMemoryTaskStore,
} from '../actors/tasks/store.ts'
export type { TaskCreate, TaskPage, MemoryTaskStoreOptions, TaskStoreLimits, TaskStore } from '../actors/tasks/store.ts'
export { ClientTasks, TASK_POLL_DEFAULTS, readTask } from '../actors/client.ts'
export type { CallToolAsTaskOptions, TaskInfo, ToolTaskEvent } from '../actors/client.ts'
export type { ClientTaskOptions } from '../actors/client/task-requests.ts'
