import type { SchedulerLike } from './rx.ts'
import { createActorSystem, type ActorRef, type ActorSystem } from './actor/system.ts'
import type { IncomingRequest } from './incoming-request.ts'
import { requestLogic, type RequestActorEvent, type RequestMessage } from './request-logic.ts'

/**
 * Where one connection spawns the actor of each incoming request (lib/request-logic.ts): in the
 * system it was given, under the parent it was given (a server's session), or, given none, in a
 * small system of its own made with its first request, whose requests are roots.
 */
export class RequestActors {
  /** The system of a connection given none (made with its first request). */
  #own: ActorSystem | undefined

  constructor(
    readonly given: { readonly system: ActorSystem; readonly parent?: ActorRef<never> } | undefined,
    readonly scheduler: SchedulerLike | undefined,
  ) {}

  /**
   * Spawns `request`'s actor, named by the request id (a string id in quotes, so `"1"` and `1`
   * differ); its events go to `onEvent`, where the owner does the I/O.
   */
  spawn(request: IncomingRequest, onEvent: (event: RequestActorEvent, request: IncomingRequest) => void): ActorRef<RequestMessage> {
    const given = this.given
    const system = given?.system ?? (this.#own ??= createActorSystem({ name: 'connection', scheduler: this.scheduler }))
    const id = request.id
    return system.spawn(requestLogic, {
      // A number is formatted only when read; a string id is quoted, so `"1"` and `1` differ.
      id: typeof id === 'number' ? id : JSON.stringify(id),
      input: request,
      parent: given?.parent,
      onEvent: onEvent as (event: unknown, request: IncomingRequest) => void,
      // The parent (a session) reads nothing from a request's end: spare it the message.
      tellsDone: false,
    })
  }
}
