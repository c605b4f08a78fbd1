/**
 * The smallest useful Worker: one tool (echo) served over Streamable HTTP, both eras, stateless.
 * It is what the bundle-size budget is measured on (spec/interop/workers-bundle.spec.ts): what any
 * Worker built on rxmcp pays before its own code.
 */
import { createServer } from '../../actors/server.ts'
import { webHandler, type WebHandler } from '../../entries/web.ts'

/** Made on the first request: Workers refuse timers and random numbers in a module's global scope. */
let handler: WebHandler | undefined

function start(): WebHandler {
  const server = createServer({ name: 'one-tool', version: '1.0.0' })
  server.tool('echo', {
    description: 'Returns the text it is given',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  }, ({ text }) => ({ content: [{ type: 'text', text: text as string }] }))
  const mcp = webHandler()
  void server.listen(mcp)
  return mcp
}

/** The Worker: every request to the one handler. */
export default {
  fetch(request: Request): Promise<Response> {
    handler ??= start()
    return handler.fetch(request)
  },
}
