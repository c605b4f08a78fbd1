/**
 * The message timeline: JSON-RPC frames in and out, a request paired with its response (by the
 * direction it was sent in and its id), notifications on their own.
 */

/** One row: a request and (once it came) its response, a notification, or a response matching nothing. */
export interface TimelineRow {
  key: string
  kind: 'request' | 'notification' | 'response'
  /** `out`: this client sent it; `in`: the server did. */
  dir: 'in' | 'out'
  method: string
  id?: string | number
  t: number
  message: any
  response?: any
  /** Milliseconds from request to response. */
  ms?: number
  isError?: boolean
}

/** A frame as the stream carries it. */
export interface Frame { dir: 'in' | 'out'; message: any; t: number }

/** Pairs frames into rows, in the order the first frame of each row came. */
export function pairFrames(frames: readonly Frame[]): TimelineRow[] {
  const rows: TimelineRow[] = []
  // Requests waiting for their response, by `<direction sent>:<id>`.
  const open = new Map<string, TimelineRow>()
  for (const [index, frame] of frames.entries()) {
    const message = frame.message ?? {}
    const hasId = message.id !== undefined && message.id !== null
    if (typeof message.method === 'string' && hasId) {
      const row: TimelineRow = { key: `r${index}`, kind: 'request', dir: frame.dir, method: message.method, id: message.id, t: frame.t, message }
      open.set(`${frame.dir}:${String(message.id)}`, row)
      rows.push(row)
    } else if (typeof message.method === 'string') {
      rows.push({ key: `n${index}`, kind: 'notification', dir: frame.dir, method: message.method, t: frame.t, message })
    } else {
      const requestDir = frame.dir === 'in' ? 'out' : 'in'
      const request = hasId ? open.get(`${requestDir}:${String(message.id)}`) : undefined
      if (request !== undefined) {
        open.delete(`${requestDir}:${String(message.id)}`)
        request.response = message
        request.ms = frame.t - request.t
        request.isError = message.error !== undefined
      } else {
        rows.push({ key: `x${index}`, kind: 'response', dir: frame.dir, method: '(response)', id: message.id, t: frame.t, message, isError: message.error !== undefined })
      }
    }
  }
  return rows
}

/** The rows a filter keeps: text within the method (or the JSON), and a direction and kind. */
export function filterRows(rows: readonly TimelineRow[], filter: { text: string; dir: string; kind: string }): TimelineRow[] {
  const text = filter.text.trim().toLowerCase()
  return rows.filter(row =>
    (filter.dir === 'all' || row.dir === filter.dir) &&
    (filter.kind === 'all' || row.kind === filter.kind) &&
    (text === '' || row.method.toLowerCase().includes(text) || JSON.stringify(row.message).toLowerCase().includes(text)))
}
