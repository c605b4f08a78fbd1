import { map, type Observable } from '../../lib/rx.ts'
import type { IncomingRequest } from '../../lib/connection.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { outcomeObservable, type HandlerOutcome } from '../request.ts'
import { ModernContext } from './context.ts'
import type { ServingScope } from './core.ts'
import { discover, finishResult, listen, serveModern } from './modern.ts'
import { Round } from './round.ts'
import type { ServerCore } from './core.ts'

/** A modern-era request's handler: its answer, finished for the era, as an Observable. */
export type ModernHandler = (params: JsonObject | undefined, request: IncomingRequest) => Observable<JsonObject>

/**
 * The handler of a modern-era request (MCP 2026-07-28), looked up once, for a request with or
 * without a session: the era's own methods (`server/discover`, `subscriptions/listen`) through the
 * server's middleware, and the router's and `server.method`'s through {@link serveModern}.
 * Undefined for a method nobody answers (-32601).
 */
export function modernHandler(server: ServerCore, scope: ServingScope, method: string): ModernHandler | undefined {
  switch (method) {
    case 'server/discover':
      return (params, request) => guarded(scope, method, params, request, () => finishResult(server, method, params, discover(server)))
    case 'subscriptions/listen':
      return (params, request) => guarded(scope, method, params, request, () =>
        listen(scope, params, request).pipe(map(result => finishResult(server, method, params, result))))
  }
  const route = server.router.routes.get(method) ?? server.methods.get(method)
  if (route === undefined) return undefined
  const wrapped = server.wrap(method, route)
  return (params, request) => serveModern(scope, wrapped, params, request)
}

/** One of the era's own methods, through the server's middleware when it has any. */
function guarded(scope: ServingScope, method: string, params: JsonObject | undefined, request: IncomingRequest, handler: () => HandlerOutcome<JsonObject>): Observable<JsonObject> {
  const server = scope.server
  if (!server.hasMiddleware) return outcomeObservable(handler())
  const ctx = new ModernContext(scope, request, request.modernMeta!, new Round({}, undefined))
  return outcomeObservable(server.compose(method, handler)(params, ctx) as HandlerOutcome<JsonObject>)
}
