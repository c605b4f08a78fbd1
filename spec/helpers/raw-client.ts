import { expect } from 'vitest'
import { firstValueFrom } from 'rxjs'
import type { McpServer } from '../../actors/server.ts'
import { createConnection, type Connection } from '../../lib/connection.ts'
import { resultOf } from '../../lib/operators/progress.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { McpError } from '../../lib/jsonrpc/errors.ts'
import { createMemoryPair } from '../../transports/memory.ts'

/**
 * A raw JSON-RPC client of `server` over a memory pair: requests go exactly as a test writes them
 * (no progress token, no timeout). `onClose` receives the closing of the connection.
 */
export async function rawClient(server: McpServer, onClose: (close: () => Promise<void>) => void): Promise<{
  connection: Connection
  /** The result of a request. */
  call: (method: string, params?: JsonObject) => Promise<JsonObject>
  /** The McpError a request fails with (the test fails if it succeeds). */
  failure: (method: string, params?: JsonObject) => Promise<McpError>
}> {
  const [near, far] = createMemoryPair()
  const connection = createConnection(near)
  connection.start()
  await server.listen(far)
  onClose(() => connection.close())
  const call = (method: string, params?: JsonObject) => firstValueFrom(connection.request(method, params, { progress: false, timeout: 0 }).pipe(resultOf()))
  const failure = (method: string, params?: JsonObject) => call(method, params).then(
    value => { throw new Error(`${method} answered ${JSON.stringify(value)}`) },
    (error: unknown) => { expect(error).toBeInstanceOf(McpError); return error as McpError })
  return { connection, call, failure }
}
