/**
 * The stdio transports' writer (transports/coalescing-writer.ts): writes joined into one `write`
 * of the stream, per callback's microtasks (servers) or per turn of the event loop (clients).
 */
import { describe, expect, it } from 'vitest'
import { Writable } from 'node:stream'
import { setImmediate } from 'node:timers'
import { CoalescingWriter } from '../../transports/coalescing-writer.ts'

/** A stream that records each write it gets. */
function recording(): { stream: Writable; writes: string[] } {
  const writes: string[] = []
  const stream = new Writable({ write(chunk: Buffer, _encoding, done) { writes.push(chunk.toString()); done() } })
  return { stream, writes }
}

/** Writes `a` and `b` from two callbacks of one check phase (as two sockets' reads of one poll phase are). */
function fromTwoCallbacks(writer: CoalescingWriter): Promise<void> {
  return new Promise(resolve => {
    setImmediate(() => { void writer.write('a\n') })
    setImmediate(() => { void writer.write('b\n'); resolve() })
  })
}

describe('CoalescingWriter', () => {
  it("'turn': writes from several callbacks of one turn leave in one write", async () => {
    const { stream, writes } = recording()
    const writer = new CoalescingWriter(stream, 'turn')
    await fromTwoCallbacks(writer)
    await writer.flush()
    expect(writes).toEqual(['a\nb\n'])
  })

  it("'microtask': each callback's writes leave once its microtasks are done", async () => {
    const { stream, writes } = recording()
    const writer = new CoalescingWriter(stream, 'microtask')
    await fromTwoCallbacks(writer)
    await writer.flush()
    expect(writes).toEqual(['a\n', 'b\n'])
  })

  it('joins the writes of one callback in either mode, in order', async () => {
    for (const when of ['turn', 'microtask'] as const) {
      const { stream, writes } = recording()
      const writer = new CoalescingWriter(stream, when)
      for (const line of ['1\n', '2\n', '3\n']) void writer.write(line)
      expect(writes).toEqual([])
      await writer.flush()
      expect(writes).toEqual(['1\n2\n3\n'])
    }
  })

  it('tells of pressure past the high-water mark, and of its end once drained', async () => {
    const held: (() => void)[] = []
    let wrote!: () => void
    const written = new Promise<void>(resolve => { wrote = resolve })
    const stream = new Writable({ highWaterMark: 8, write(_chunk, _encoding, done) { held.push(done); wrote() } })
    const pressure: boolean[] = []
    const writer = new CoalescingWriter(stream, 'turn', isFull => pressure.push(isFull))
    void writer.write('0123456789\n')
    expect(pressure).toEqual([true])
    await written
    expect(pressure).toEqual([true])
    for (const done of held.splice(0)) done()
    await writer.flush()
    expect(pressure).toEqual([true, false])
  })
})
