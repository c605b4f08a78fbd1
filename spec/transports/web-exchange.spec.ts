/**
 * The web exchange's SSE streams run a timer of their own, set while their request is served:
 * on Cloudflare Workers a timer belongs to the request that set it, and a request whose stream
 * waits on nothing of its own is cancelled as hung (spec/interop/workers.spec.ts runs workerd).
 */
import { describe, expect, it } from 'vitest'
import { WebExchange } from '../../transports/web-exchange.ts'
import { TestClock } from '../helpers/test-clock.ts'

const KEEP_ALIVE = ': keep-alive\n\n'

/** A streamed answer on a virtual clock: its sink, and everything its body held once it ended. */
async function streamed(ms: number, clock: TestClock) {
  const exchange = new WebExchange(new Request('http://127.0.0.1/mcp', { method: 'POST' }), {}, undefined, undefined, { ms, scheduler: clock })
  const sink = exchange.stream(200, { 'content-type': 'text/event-stream' }, 1024 * 1024)
  const response = await exchange.response
  return { sink, response, text: () => response.text() }
}

describe('WebExchange.stream', () => {
  it('sends a keep-alive comment when nothing else was written for keepAliveMs', async () => {
    const clock = new TestClock()
    const { sink, text } = await streamed(1000, clock)
    clock.advance(500)
    sink.write('data: a\n\n')
    clock.advance(500) // the first run: something was written since the stream opened
    clock.advance(1000) // the second: nothing since the first
    sink.write('data: b\n\n')
    clock.advance(1000)
    sink.end()
    expect(await text()).toBe(`data: a\n\n${KEEP_ALIVE}data: b\n\n`)
  })

  it('holds a timer while the stream is open even with keep-alives off, and writes nothing on it', async () => {
    const clock = new TestClock()
    const { sink, text } = await streamed(0, clock)
    expect(clock.actions).toHaveLength(1)
    clock.advance(120_000)
    sink.write('data: a\n\n')
    sink.end()
    expect(clock.actions).toHaveLength(0)
    expect(await text()).toBe('data: a\n\n')
  })

  it('stops its timer when the client cancels the stream', async () => {
    const clock = new TestClock()
    const { response } = await streamed(1000, clock)
    expect(clock.actions).toHaveLength(1)
    await response.body!.cancel()
    expect(clock.actions).toHaveLength(0)
  })
})
