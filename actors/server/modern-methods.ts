import { map } from '../../lib/rx.ts'
import type { IncomingRequest } from '../../lib/connection.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { ModernContext } from './context.ts'
import type { ServingScope } from './core.ts'
import { discover, finishResult, listen, serveModern } from './modern.ts'
import { Round } from './round.ts'
import type { ServerCore } from './core.ts'

/** A modern-era request's handler: its answer, finished for the era (a value, a Promise or an Observable). */
export type ModernHandler = (params: JsonObject | undefined, request: IncomingRequest) => unknown

/**
 * The handler of a modern-era request (MCP 2026-07-28), looked up once, for a request with or
 * without a session: the era's own methods (`server/discover`, `subscriptions/listen`) through the
 * server's middleware, and the router's and `server.method`'s through {@link serveModern}.
 * Undefined for a method nobody answers (-32601).
 */
export function modernHandler(server: ServerCore, scope: ServingScope, method: string): ModernHandler | undefined {
  switch (method) {
    case 'server/discover':
      return (params, request) => server.throughMiddleware(method, params, () => contextOf(scope, request), () => finishResult(server, method, params, discover(server)))
    case 'subscriptions/listen':
      return (params, request) => server.throughMiddleware(method, params, () => contextOf(scope, request), () =>
        listen(scope, params, request).pipe(map(result => finishResult(server, method, params, result))))
  }
  const route = server.router.routes.get(method) ?? server.methods.get(method)
  if (route === undefined) return undefined
  const wrapped = server.wrap(method, route)
  return (params, request) => serveModern(scope, wrapped, params, request)
}

/** What the middleware sees of one of the era's own methods: a context with no input round. */
function contextOf(scope: ServingScope, request: IncomingRequest): ModernContext {
  return new ModernContext(scope, request, request.modernMeta!, new Round({}, undefined))
}
