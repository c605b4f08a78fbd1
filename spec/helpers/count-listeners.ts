import { BehaviorSubject, Observable } from 'rxjs'
import type { McpServer } from '../../actors/server.ts'

/**
 * How many subscribers the server's event bus has now (listen streams): `events` is wrapped to
 * count them, so call it before any stream opens. Nothing public shows whether a listen stream is
 * still attached; this does, as long as the listen code reads `server.events`.
 */
export function countListeners(server: McpServer): BehaviorSubject<number> {
  const source = server.events
  const count = new BehaviorSubject(0)
  Object.defineProperty(server, 'events', {
    value: new Observable(subscriber => {
      count.next(count.value + 1)
      const subscription = source.subscribe(subscriber)
      return () => { subscription.unsubscribe(); count.next(count.value - 1) }
    }),
  })
  return count
}
