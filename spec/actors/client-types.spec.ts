import { describe, expectTypeOf, it } from 'vitest'
import type { Observable } from 'rxjs'
import type { McpClient } from '../../actors/client.ts'
import type { RequestEvent } from '../../lib/operators/progress.ts'
import type { CallToolResult, Tool } from '../../lib/schema/types.ts'
import { createServer } from '../../actors/server.ts'
import { connectInMemory } from '../../testing.ts'

describe('McpClient types', () => {
  it('types requests as Observables of events and Promise forms by their results', async () => {
    const server = createServer({ name: 't', version: '1' })
    server.tool('noop', {}, () => ({ content: [] }))
    await using pair = await connectInMemory(server)
    const client: McpClient = pair.client
    expectTypeOf(client.request<{ answer: number }>('x')).toEqualTypeOf<Observable<RequestEvent<{ answer: number }>>>()
    expectTypeOf(client.tools()).toEqualTypeOf<Observable<Tool>>()
    expectTypeOf(client.callTool('noop')).resolves.toEqualTypeOf<CallToolResult>()
    expectTypeOf(client.callTool$('noop')).toEqualTypeOf<Observable<RequestEvent<CallToolResult>>>()
    expectTypeOf(await client.callTool('noop')).toMatchTypeOf<{ content: unknown[] }>()
  })
})
