/**
 * The URL-mode elicitations a client knows of, so that it hears each one's completion once
 * (MCP 2025-11-25 elicitation, "Completion Notifications": clients MUST ignore
 * `notifications/elicitation/complete` referencing unknown or already-completed elicitation IDs).
 */
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { UrlElicitationRequiredError } from '../../lib/jsonrpc/errors.ts'

/** Defaults of {@link UrlElicitations}. */
export const URL_ELICITATIONS_DEFAULTS = {
  /** URL elicitations remembered at once, waiting for their completion; past it the oldest is forgotten. */
  maxPending: 1_000,
} as const

/**
 * The elicitation ids a client was given and whose completion it has not heard yet: those of the
 * URL-mode `elicitation/create` requests it took (a live request, an MRTR input request) and of the
 * -32042 errors it got. An id is compared as the exact string the server sent (it is opaque: never
 * parsed, trimmed or folded). Bounded: at most `maxPending`, the oldest forgotten first, so a
 * server that never completes what it asks cannot grow the client's memory.
 */
export class UrlElicitations {
  /** Ids waiting for their completion, oldest first (a Map keeps insertion order). */
  readonly #pending = new Map<string, true>()

  constructor(readonly maxPending: number = URL_ELICITATIONS_DEFAULTS.maxPending) {}

  /** The client was given the URL elicitation `id`: its completion will be heard once. */
  saw(id: string): void {
    this.#pending.delete(id)
    this.#pending.set(id, true)
    if (this.#pending.size > this.maxPending) this.#pending.delete(this.#pending.keys().next().value!)
  }

  /** Notes the URL elicitations a -32042 lists, when `error` is one. */
  sawError(error: unknown): void {
    if (error instanceof UrlElicitationRequiredError) for (const elicitation of error.data.elicitations) this.saw(elicitation.elicitationId)
  }

  /**
   * Whether a `notifications/elicitation/complete` with these params is one to hear: its
   * `elicitationId` is one the client was given and has not heard completed. Hearing it completes it.
   */
  complete(params: JsonObject | undefined): boolean {
    const id = params?.elicitationId
    return typeof id === 'string' && this.#pending.delete(id)
  }
}
