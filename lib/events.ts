import type { Observable } from './rx.ts'
import type { TaskState } from './tasks/state.ts'

/*
 * What a server's event bus carries, and the contract of a bus shared between instances (Redis in
 * transports/). A leaf, so the bus implementations and the server import it, never each other.
 */

/** What the server's event bus carries (see McpServer.events). */
export type ServerEvent =
  | { type: 'list_changed'; kind: 'tools' | 'resources' | 'prompts' }
  | { type: 'resource_updated'; uri: string }
  /** A task's state changed (and is stored); `sessionId` names the legacy session that created it. */
  | { type: 'task'; task: TaskState; sessionId?: string }

/** Events shared between instances of one server (see ServerOptions.eventBus). */
export interface EventBus {
  /** Shares an event this instance raised. */
  publish(event: ServerEvent): void
  /** The events the other instances raised (not this one's own). */
  readonly remote: Observable<ServerEvent>
}
