import type { Observable } from '../rx.ts'
import { NONE, type ActorLogic } from './logic.ts'

/**
 * Logic whose behaviour is an Observable the actor owns: subscribed when the actor starts (and
 * again when it restarts), unsubscribed when it ends. Each value goes to the parent as a message;
 * completion ends the actor `done` (output: the last value); an error fails it, so the parent's
 * supervision decides (restart resubscribes after the backoff).
 *
 * @example
 * // a task's work, as a child of the task: progress and the result come to the task as messages
 * effect.spawn('work', fromObservable('work', () => work$.pipe(map(toTaskMessage))))
 */
export function fromObservable<T, I = undefined>(name: string, create: (input: I) => Observable<T>): ActorLogic<undefined, never, I> {
  return {
    name,
    initial: () => undefined,
    transition: state => [state, NONE],
    start: (input, self) => {
      let last: T | undefined
      return create(input).subscribe({
        next: value => { last = value; self.sendParent(value) },
        error: (error: unknown) => self.fail(error),
        complete: () => self.done(last),
      })
    },
  }
}
