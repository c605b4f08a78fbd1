import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { createSseParser, encodeSseComment, encodeSseEvent, type SseEvent } from '../../../lib/codec/sse.ts'

function parse(chunks: string[]): { events: SseEvent[]; lastEventId: string | undefined } {
  const events: SseEvent[] = []
  const parser = createSseParser(event => events.push(event))
  for (const chunk of chunks) parser.write(chunk)
  return { events, lastEventId: parser.lastEventId }
}

describe('encodeSseEvent', () => {
  it('writes the fields and splits data lines', () => {
    expect(encodeSseEvent({ event: 'message', id: 's1_4', data: 'a\nb', retry: 3000 })).toBe('event: message\nid: s1_4\nretry: 3000\ndata: a\ndata: b\n\n')
  })

  it('keeps line breaks out of event and id', () => {
    expect(encodeSseEvent({ event: 'x\ndata: injected', id: '1\r\n', data: 'ok' })).toBe('event: xdata: injected\nid: 1\ndata: ok\n\n')
    expect(encodeSseComment('ping\n')).toBe(': ping\n\n')
  })
})

describe('createSseParser', () => {
  const stream = 'retry: 1000\nid: p0\ndata:\n\n: comment\nevent: message\nid: s_1\ndata: {"a":1}\n\nevent: endpoint\r\ndata: /messages?x=1\r\n\r\ndata: line1\ndata: line2\n\n'
  const expected = [
    { data: '', id: 'p0', retry: 1000 },
    { event: 'message', id: 's_1', data: '{"a":1}' },
    { event: 'endpoint', data: '/messages?x=1' },
    { data: 'line1\nline2' },
  ]

  it('parses events, comments, CRLF and multi-line data', () => {
    expect(parse([stream])).toEqual({ events: expected, lastEventId: 's_1' })
  })

  it('parses the same at every split offset', () => {
    for (let offset = 0; offset <= stream.length; offset++) {
      expect(parse([stream.slice(0, offset), stream.slice(offset)]).events).toEqual(expected)
    }
  })

  it('round-trips encoded events', () => {
    fc.assert(fc.property(fc.array(fc.record({ data: fc.string(), id: fc.stringMatching(/^[a-z0-9_]{1,8}$/) }), { maxLength: 5 }), events => {
      const text = events.map(event => encodeSseEvent(event)).join('')
      expect(parse([text]).events).toEqual(events.map(event => ({ ...event, data: event.data.replace(/\r\n|\r/g, '\n') })))
    }))
  })

  it('refuses a line that never ends', () => {
    const parser = createSseParser(() => {}, 10)
    expect(() => parser.write('data: ' + 'x'.repeat(20))).toThrow(RangeError)
  })

  it('refuses an event that never ends, made of short lines', () => {
    const events: SseEvent[] = []
    const parser = createSseParser(event => events.push(event), 100)
    parser.write('data: ok\n\n')
    expect(() => { for (let i = 0; i < 100; i++) parser.write('data: 0123456789\n') }).toThrow(/SSE event longer than 100 characters/)
    expect(events).toEqual([{ data: 'ok' }])
  })
})
