/**
 * Helpers for testing code built on rxmcp: an in-memory transport pair, and a server and client
 * wired over it.
 */
import { createMemoryPair, type MemoryPairOptions } from './transports/memory.ts'
import { connect, type ClientOptions, type McpClient } from './actors/client.ts'
import type { McpServer, ServerSession } from './actors/server.ts'

export { createMemoryPair }
export type { MemoryPairOptions }

/**
 * Connects a client to `server` over an in-memory pair. Dispose the result (`await using`) to
 * close both sides. The client opens a legacy session (initialize), so `session` is the session
 * it talks to; pass `era: 'modern'` (or `'auto'`) to test the stateless era (MCP 2026-07-28) over
 * the same pair.
 * @example
 * await using pair = await connectInMemory(server)
 * await pair.client.callTool('echo', { text: 'hi' })
 */
export async function connectInMemory(server: McpServer, options: ClientOptions & MemoryPairOptions = {}): Promise<{ client: McpClient; session: ServerSession } & AsyncDisposable> {
  const [clientSide, serverSide] = createMemoryPair(options)
  const session = await server.listen(serverSide)
  const client = await connect(clientSide, { name: 'rxmcp-test', version: '0.0.0' }, { era: 'legacy', ...options })
  return {
    client,
    session,
    async [Symbol.asyncDispose]() {
      await client.close()
      await session.closed
    },
  }
}
