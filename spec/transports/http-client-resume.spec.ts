import { describe, expect, it } from 'vitest'
import { firstValueFrom } from 'rxjs'
import { createServer } from '../../actors/server.ts'
import { connect } from '../../actors/client.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { TestClock } from '../helpers/test-clock.ts'

/**
 * The client's SSE streams across failed reconnections (a server restarting, a balancer between
 * instances answering 503 for a moment): it keeps trying, from the same place.
 */

/**
 * A fetch that answers the first `count` GETs matching `when` with 503, as a busy instance would;
 * `passed` resolves when a GET has gone through after them and its response headers are in (the
 * listener has its stream open then).
 */
function refusingGets(count: number, when: (headers: Headers) => boolean = () => true) {
  const refused: string[] = []
  let heardPassed!: () => void
  const passed = new Promise<void>(resolve => { heardPassed = resolve })
  const fetcher: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers)
    if ((init?.method ?? 'GET') === 'GET' && refused.length < count && when(headers)) {
      refused.push(headers.get('last-event-id') ?? '')
      return new Response('{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"busy"}}', { status: 503, headers: { 'content-type': 'application/json' } })
    }
    const response = await fetch(input, init)
    if ((init?.method ?? 'GET') === 'GET' && refused.length === count) heardPassed()
    return response
  }
  return { fetcher, refused, passed }
}

describe('the Streamable HTTP client after a refused reconnection', () => {
  it('keeps trying to open its standalone stream, and gets the notifications sent on it', async () => {
    const server = createServer({ name: 's', version: '1' }, { capabilities: { tools: { listChanged: true } } })
    server.tool('one', {}, () => ({ content: [] }))
    const http = streamableHttp()
    await server.listen(http)
    const { fetcher, refused, passed } = refusingGets(2)
    const clock = new TestClock()
    const client = await connect(streamableHttpClient(http.url!, { fetch: fetcher, reconnect: { initial: 5 }, scheduler: clock }), { name: 'c', version: '1' }, { era: 'legacy' })
    try {
      const changed = firstValueFrom(client.notifications('notifications/tools/list_changed'))
      // Refused twice, each time waiting longer on the client's clock (5 ms doubling: 10, then 20).
      expect(await clock.nextWait()).toBe(10)
      clock.advance(10)
      expect(await clock.nextWait()).toBe(20)
      clock.advance(20)
      // Then open: a notification unrelated to any request reaches the client.
      await passed
      server.tool('two', {}, () => ({ content: [] }))
      await changed
      expect(refused).toEqual(['', ''])
    } finally {
      await client.close()
      await server.close()
      await http.close()
    }
  })

  it('resumes a response stream from the same Last-Event-ID after a refused resume', async () => {
    const server = createServer({ name: 's', version: '1' })
    server.tool('steps', {}, async (_args, ctx) => {
      // Once the answer stream is open: the listener opens it in the same turn that it hands the
      // request on, right after, so the next turn finds it open (no time involved).
      await new Promise(resolve => setImmediate(resolve))
      ctx.progress(1, 3)
      // The stream ends here; the client comes back with Last-Event-ID for the rest.
      ctx.closeStream()
      ctx.progress(2, 3)
      ctx.progress(3, 3)
      return { content: [{ type: 'text', text: 'done' }] }
    })
    const http = streamableHttp({ retryMs: 5 })
    await server.listen(http)
    const { fetcher, refused } = refusingGets(1, headers => headers.has('last-event-id'))
    const clock = new TestClock()
    const client = await connect(streamableHttpClient(http.url!, { fetch: fetcher, reconnect: { initial: 5 }, scheduler: clock }), { name: 'c', version: '1' }, { era: 'legacy' })
    try {
      const progress: number[] = []
      const called = client.callTool('steps', {}, { onProgress: event => progress.push(event.progress) })
      // The server's retry (5 ms) rules the first wait exactly; the refused resume then waits by the
      // client's own backoff (5 ms doubling: 10 for the second attempt).
      expect(await clock.nextWait()).toBe(5)
      clock.advance(5)
      expect(await clock.nextWait()).toBe(10)
      clock.advance(10)
      const result = await called
      expect(result.content).toEqual([{ type: 'text', text: 'done' }])
      expect(progress).toEqual([1, 2, 3])
      // The refused resume and the one that worked asked for the same place.
      expect(refused).toHaveLength(1)
      expect(refused[0]).not.toBe('')
    } finally {
      await client.close()
      await server.close()
      await http.close()
    }
  })
})
