/**
 * The watches behind a legacy session's resource subscriptions: a URI a mounted source owns is
 * watched there, either counted by the server (one shared watch while anyone subscribes) or, when
 * the source keeps a client per caller session (`Mountable.watchFor`: a proxy in mode 'session'),
 * through this session's own client, whose updates then reach this session alone.
 */
import type { Subscription } from '../../lib/rx.ts'
import type { ServerCore } from './core.ts'
import type { MountCallerSession } from './mountable.ts'
import { startWatch } from './server-mounts.ts'

/** What the watches need of their session. */
export interface WatchingSession extends MountCallerSession {
  readonly server: ServerCore
}

/** One session's watches (see the file's comment). */
export class SessionWatches {
  /** The session's own watch of each URI whose source watches per session; made on the first. */
  #own: Map<string, Subscription> | undefined

  /** @param updated told when a URI watched for this session alone changed */
  constructor(readonly session: WatchingSession, readonly updated: (uri: string) => void) {}

  /** True when `uri` is watched for this session alone (the server's shared updates of it are not this session's). */
  isOwn(uri: string): boolean {
    return this.#own?.has(uri) === true
  }

  /**
   * The session subscribed `uri`: its own watch when the owning source has them, else counted by the
   * server. Settles once the source watches it (undefined when no mounted source owns it): the
   * session answers its subscribe then.
   */
  watch(uri: string): Promise<void> | undefined {
    const server = this.session.server
    const source = server.router.mountOf(uri)
    if (source?.watchFor === undefined) return server.subscribed(uri)
    const own = startWatch(source.watchFor(uri, this.session), () => this.updated(uri), error => server.report(error), server.options.scheduler)
    ;(this.#own ??= new Map()).set(uri, own.subscription)
    return own.ready
  }

  /** The session no longer subscribes `uri` (it unsubscribed, or it ended). */
  unwatch(uri: string): void {
    const own = this.#own?.get(uri)
    if (own === undefined) return this.session.server.unsubscribed(uri)
    own.unsubscribe()
    this.#own!.delete(uri)
  }
}
