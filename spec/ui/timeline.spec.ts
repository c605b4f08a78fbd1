import { describe, expect, it } from 'vitest'
import { filterRows, pairFrames } from '../../ui/timeline.ts'

const frames = [
  { dir: 'out' as const, t: 0, message: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'a' } } },
  // The server's own request with the same id as ours: paired by direction, not by id alone.
  { dir: 'in' as const, t: 5, message: { jsonrpc: '2.0', id: 1, method: 'elicitation/create', params: {} } },
  { dir: 'in' as const, t: 6, message: { jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 1 } } },
  { dir: 'out' as const, t: 9, message: { jsonrpc: '2.0', id: 1, result: { action: 'decline' } } },
  { dir: 'in' as const, t: 12, message: { jsonrpc: '2.0', id: 1, result: { content: [] } } },
  { dir: 'out' as const, t: 13, message: { jsonrpc: '2.0', id: 2, method: 'ping' } },
  { dir: 'in' as const, t: 20, message: { jsonrpc: '2.0', id: 7, error: { code: -32600, message: 'x' } } },
]

describe('pairFrames', () => {
  it('pairs each request with the response that came the other way with its id, and times it', () => {
    const rows = pairFrames(frames)
    expect(rows.map(row => [row.kind, row.dir, row.method, row.ms, row.response === undefined ? '-' : 'paired'])).toEqual([
      ['request', 'out', 'tools/call', 12, 'paired'],
      ['request', 'in', 'elicitation/create', 4, 'paired'],
      ['notification', 'in', 'notifications/progress', undefined, '-'],
      ['request', 'out', 'ping', undefined, '-'],
      ['response', 'in', '(response)', undefined, '-'],
    ])
    expect(rows[0]!.response).toEqual({ jsonrpc: '2.0', id: 1, result: { content: [] } })
    expect(rows[4]!.isError).toBe(true)
  })
})

describe('filterRows', () => {
  it.each([
    [{ text: '', dir: 'all', kind: 'all' }, ['tools/call', 'elicitation/create', 'notifications/progress', 'ping', '(response)']],
    [{ text: 'TOOLS', dir: 'all', kind: 'all' }, ['tools/call']],
    [{ text: '', dir: 'in', kind: 'all' }, ['elicitation/create', 'notifications/progress', '(response)']],
    [{ text: '', dir: 'all', kind: 'request' }, ['tools/call', 'elicitation/create', 'ping']],
    [{ text: '"name":"a"', dir: 'out', kind: 'request' }, ['tools/call']],
  ])('keeps the rows %j asks for', (filter, methods) => {
    expect(filterRows(pairFrames(frames), filter).map(row => row.method)).toEqual(methods)
  })
})
