/**
 * Server-Sent Events framing (the WHATWG `text/event-stream` format) for the HTTP transports:
 * encoding events on the server, parsing them incrementally on the client.
 */

/** One SSE event. */
export interface SseEvent {
  /** The event type; absent means "message". */
  event?: string
  data: string
  id?: string
  /** Reconnection delay the server asks for, in ms. */
  retry?: number
}

/**
 * One event as text. Field values may not contain line breaks (a `data` value is split into one
 * `data:` line per line), so a value can never inject a field of its own.
 * @example
 * encodeSseEvent({ event: 'message', id: '1', data: '{"jsonrpc":"2.0"}' }) // 'event: message\nid: 1\ndata: {...}\n\n'
 */
export function encodeSseEvent(event: SseEvent): string {
  let out = ''
  if (event.event !== undefined) out += `event: ${singleLine(event.event)}\n`
  if (event.id !== undefined) out += `id: ${singleLine(event.id)}\n`
  if (event.retry !== undefined && Number.isInteger(event.retry) && event.retry >= 0) out += `retry: ${event.retry}\n`
  for (const line of event.data.split(/\r\n|\r|\n/)) out += `data: ${line}\n`
  return out + '\n'
}

/** A comment line: ignored by clients, keeps proxies from cutting an idle stream. */
export function encodeSseComment(text = ''): string {
  return `: ${singleLine(text)}\n\n`
}

function singleLine(value: string): string {
  return value.replace(/[\r\n\0]/g, '')
}

/**
 * An incremental SSE parser: feed it text chunks split anywhere, it calls `onEvent` for each
 * complete event. An event whose data, with the unfinished line, passes `maxEventLength` characters
 * makes `write` throw a RangeError (a stream that never ends a line or an event would otherwise grow
 * without bound).
 */
export interface SseParser {
  write(text: string): void
  /** The id of the last event that carried one (for Last-Event-ID). */
  readonly lastEventId: string | undefined
}

/** Makes an {@link SseParser}. */
export function createSseParser(onEvent: (event: SseEvent) => void, maxEventLength = 16 * 1024 * 1024): SseParser {
  // The unfinished line carried over from the previous chunk.
  let pending = ''
  // Fields of the event being built.
  let data: string[] = []
  // Characters held in `data` (each line plus its line break), bounded with the pending line.
  let dataLength = 0
  let eventType: string | undefined
  let id: string | undefined
  let retry: number | undefined
  let lastEventId: string | undefined
  // Set when a chunk ended with '\r': a following '\n' belongs to the same line break.
  let isAfterCr = false

  const dispatch = () => {
    if (id !== undefined) lastEventId = id
    if (data.length > 0) {
      const event: SseEvent = { data: data.join('\n') }
      if (eventType !== undefined) event.event = eventType
      if (id !== undefined) event.id = id
      if (retry !== undefined) event.retry = retry
      onEvent(event)
    } else if (retry !== undefined) {
      onEvent({ data: '', retry, ...(id !== undefined ? { id } : undefined), ...(eventType !== undefined ? { event: eventType } : undefined) })
    }
    data = []
    dataLength = 0
    eventType = undefined
    id = undefined
    retry = undefined
  }

  const line = (text: string) => {
    if (text === '') return dispatch()
    if (text.startsWith(':')) return
    const colon = text.indexOf(':')
    const field = colon < 0 ? text : text.slice(0, colon)
    let value = colon < 0 ? '' : text.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    switch (field) {
      case 'data':
        dataLength += value.length + 1
        if (dataLength > maxEventLength) throw new RangeError(`SSE event longer than ${maxEventLength} characters`)
        data.push(value)
        break
      case 'event': eventType = value; break
      case 'id': if (!value.includes('\0')) id = value; break
      case 'retry': if (/^\d+$/.test(value)) retry = Number(value); break
    }
  }

  return {
    get lastEventId() { return lastEventId },
    write(text: string) {
      let start = 0
      if (isAfterCr && text.startsWith('\n')) start = 1
      isAfterCr = false
      for (let i = start; i < text.length; i++) {
        const char = text.charCodeAt(i)
        if (char !== 10 && char !== 13) continue
        line(pending + text.slice(start, i))
        pending = ''
        if (char === 13) {
          if (i + 1 < text.length) { if (text.charCodeAt(i + 1) === 10) i++ } else isAfterCr = true
        }
        start = i + 1
      }
      pending += text.slice(start)
      if (dataLength + pending.length > maxEventLength) throw new RangeError(`SSE event longer than ${maxEventLength} characters`)
    },
  }
}
