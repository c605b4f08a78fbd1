import { afterEach, describe, expect, it } from 'vitest'
import { createServer } from '../../actors/server.ts'
import { connect } from '../../actors/client.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'

let cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
  cleanups = []
})

describe('the HTTP client keeps no abort listener per request on its own signal', () => {
  for (const era of ['legacy', 'modern'] as const) {
    it(`${era}: 64 requests in flight, then 1,500 one after another, and no listener warning`, async () => {
      const warnings: string[] = []
      const onWarning = (warning: Error) => { if (warning.name === 'MaxListenersExceededWarning') warnings.push(warning.message) }
      process.on('warning', onWarning)
      cleanups.push(async () => { process.off('warning', onWarning) })
      const server = createServer({ name: 'signals', version: '1' })
      server.tool('echo', {}, () => ({ content: [{ type: 'text', text: 'ok' }] }))
      const http = streamableHttp({ port: 0 })
      await server.listen(http)
      cleanups.push(() => server.close())
      const client = await connect(streamableHttpClient(http.url!), { name: 'signals', version: '1' }, { era })
      cleanups.push(() => client.close())
      await Promise.all(Array.from({ length: 64 }, () => client.callTool('echo')))
      for (let i = 0; i < 1500; i++) await client.callTool('echo')
      // Warnings are emitted on the next tick.
      await new Promise(resolve => setImmediate(resolve))
      expect(warnings).toEqual([])
    }, 60_000)
  }
})
