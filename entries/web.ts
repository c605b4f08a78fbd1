/**
 * `rxmcp/web`: the Streamable HTTP server as a web-standard handler, for every runtime that speaks
 * `Request` and `Response` (Deno, Bun, Cloudflare Workers, Hono, a Service Worker) and, through
 * `nodeHandler` from `rxmcp/transports/streamable-http`, for Express and Fastify. Nothing in this
 * entry's module graph imports `node:` (spec/layout/web-entry.spec.ts checks it).
 *
 * @example
 * import { createServer } from 'rxmcp/server'
 * import { webHandler } from 'rxmcp/web'
 * const server = createServer({ name: 'edge', version: '1.0.0' })
 * const mcp = webHandler()
 * await server.listen(mcp)
 * export default { fetch: (request: Request) => mcp.fetch(request) }
 */
export { webHandler } from '../transports/http-handler.ts'
export type { WebHandler, WebRequestInit } from '../transports/http-handler.ts'
export { STREAMABLE_HTTP_DEFAULTS } from '../transports/streamable-http-options.ts'
export type { StreamableHttpOptions } from '../transports/streamable-http-options.ts'
export { createMemoryRateLimiterStore } from '../lib/token-bucket.ts'
export type { RateLimiterStore } from '../lib/token-bucket.ts'
