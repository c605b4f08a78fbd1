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

/**
 * What instances of one server tell each other about their registries over the bus (never on
 * `McpServer.events`): a runtime change of one entry (`change`), the digest an instance announces
 * when it starts (`hello`), and the answer of the others (`state`: their digest and every runtime
 * change they know, for the newcomer to catch up). See actors/server/registry-sync.ts.
 */
export type RegistryMessage =
  | { type: 'registry'; op: 'change'; from: string; change: RegistryChange }
  | { type: 'registry'; op: 'hello'; from: string; digest: string }
  | { type: 'registry'; op: 'state'; from: string; to: string; digest: string; entries: Record<string, string>; changes: RegistryChange[] }

/**
 * One field of one registry entry as changed at runtime, last writer wins: `key` names the entry
 * (`tool:<name>`, `resource:<uri>`, `template:<uriTemplate>`, `prompt:<name>`), `field` what changed
 * (`enabled`, `removed`, or `def.<name>` for a definition field, absent `value` for one unset),
 * `clock` and `origin` order it (a Lamport clock; the origin breaks ties).
 */
export interface RegistryChange {
  key: string
  field: string
  value?: unknown
  clock: number
  origin: string
}

/** What the bus between instances carries: server events, and what they tell each other of their registries. */
export type BusEvent = ServerEvent | RegistryMessage

/** Events shared between instances of one server (see ServerOptions.eventBus). */
export interface EventBus {
  /** Shares an event this instance raised (as JSON: a bus sends it as text). */
  publish(event: BusEvent): void
  /** The events the other instances raised (not this one's own). */
  readonly remote: Observable<BusEvent>
}
