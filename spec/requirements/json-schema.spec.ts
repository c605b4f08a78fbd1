import { afterEach, describe, expect, it } from 'vitest'
import { createServer as createHttpServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { compileSchema } from '../../lib/json-schema.ts'
import { compileSchema as compileInterpreted } from '../../lib/json-schema-interpreted.ts'
import { createServer } from '../../actors/server.ts'
import { connectInMemory } from '../../testing.ts'

/** A listener on 127.0.0.1 that serves a schema and counts the requests it gets. */
let listener: Server | undefined
afterEach(async () => { await new Promise(resolve => listener?.close(resolve) ?? resolve(undefined)); listener = undefined })

async function schemaHost() {
  const seen: string[] = []
  listener = createHttpServer((request, response) => {
    seen.push(request.url ?? '')
    response.writeHead(200, { 'content-type': 'application/schema+json' }).end(JSON.stringify({ type: 'string' }))
  })
  await new Promise<void>(resolve => listener!.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(listener.address() as AddressInfo).port}/string.json`, seen }
}

describe('MCP 2026-07-28 $ref resolution', () => {
  it('refuses a $ref to a network URI without fetching it', async () => {
    const host = await schemaHost()
    for (const compile of [compileSchema, compileInterpreted]) {
      expect(() => compile({ type: 'object', properties: { name: { $ref: host.url } } })).toThrow(new TypeError(`Invalid JSON Schema: can't resolve reference ${host.url} from id (root)`))
    }
    // A tool whose inputSchema holds one never runs (its schema compiles on the first call), and
    // nothing was asked of the host either way, whichever validator the server has.
    for (const jsonSchemaValidator of ['compiled', 'interpreted'] as const) {
      const server = createServer({ name: 'refs', version: '1' }, { reportUnhandledError: () => {}, jsonSchemaValidator })
      let ran = false
      server.tool('remote', { inputSchema: { type: 'object', properties: { name: { $ref: host.url } } } }, () => { ran = true; return { content: [] } })
      await using pair = await connectInMemory(server)
      const outcome = await pair.client.callTool('remote', { name: 'x' }).then(result => result, (error: unknown) => error)
      expect(outcome instanceof Error || (outcome as { isError?: boolean }).isError === true).toBe(true)
      expect(ran).toBe(false)
    }
    expect(host.seen).toEqual([])
  })
})
