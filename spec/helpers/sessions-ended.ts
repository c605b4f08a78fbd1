import type { McpServer } from '../../actors/server.ts'

/**
 * Resolves once every session `server` holds now has ended and the server has let go of it (its
 * `sessions` no longer has it): an event, not a re-check on a timer. The server drops a session in
 * a callback on `session.closed` registered when it opened it, so by the time all of them have
 * resolved here, `server.sessions` is without them.
 */
export async function sessionsEnded(server: McpServer): Promise<void> {
  await Promise.all([...server.sessions].map(session => session.closed))
}
