import type { SchedulerLike } from '../lib/rx.ts'
import type { StructureLimits } from '../lib/codec/structure.ts'
import { backoff, type Backoff, type BackoffOptions } from '../lib/operators/retry-policy.ts'

/** Options of the HTTP client transports. */
export interface HttpClientOptions {
  /** Extra headers on every request (an Authorization header, say). */
  headers?: Record<string, string>
  /**
   * The fetch to use. Default: on Node, an exchange over node:http and node:https with keep-alive
   * agents (`nodeFetch`, about a quarter of the global fetch's CPU per request); elsewhere the
   * global fetch. Give `globalThis.fetch` to use undici on Node too.
   */
  fetch?: typeof fetch
  /**
   * Reconnection of dropped SSE streams, by the one retry policy (`lib/operators/retry-policy.ts`):
   * `initial` wait, `max` wait, `factor`, `jitter` and `retries` in a row (defaults
   * `HTTP_CLIENT_DEFAULTS.reconnect`: 1 s doubling to 30 s, no jitter, 5 attempts). A `retry` field
   * the server sent on the stream wins: the client waits exactly that many milliseconds before it
   * reconnects (MCP Streamable HTTP).
   */
  reconnect?: BackoffOptions
  /**
   * Where the client's time comes from (default RxJS's `asyncScheduler`, real time): the waits
   * between reconnections and the bound on the DELETE that ends a session. A test passes a virtual
   * one (a `TestScheduler` or `VirtualTimeScheduler`) and moves time itself.
   */
  scheduler?: SchedulerLike
  /**
   * Largest incoming message in bytes (default 4 MiB). It bounds a JSON body and one SSE event too:
   * a server that sends more (an event that never ends, say) fails the request it answers with a
   * TransportError whose cause is a FrameTooLargeError, and its stream is cancelled.
   */
  maxMessageSize?: number
  /**
   * Bounds on each incoming message's nesting and members, in a JSON body or an SSE event
   * (default `STRUCTURE_DEFAULTS`: 128 levels, 100,000 members), checked before it is parsed: a
   * response past them fails the request it answers at once with `StructureLimitError`, and the
   * connection serves on.
   */
  structureLimits?: StructureLimits
  /** Streamable HTTP: open the GET stream for server-initiated messages after initialize (default true). */
  openStandaloneStream?: boolean
  /**
   * Streamable HTTP: when the server answers 404 for the session (it expired or restarted), run
   * initialize again with the same parameters and retry the request (default true). Subscriptions
   * and other session state of the old session are gone. With false, the connection closes.
   */
  reinitializeOnExpiry?: boolean
}

/** DEFAULTS of {@link HttpClientOptions}: `reconnect` waits 1 s doubling to 30 s, no jitter, 5 attempts in a row. */
export const HTTP_CLIENT_DEFAULTS: { readonly reconnect: Backoff } = Object.freeze({
  reconnect: backoff({ initial: 1000, max: 30_000, factor: 2, jitter: 0, retries: 5 }),
})
