import { describe, expect, it } from 'vitest'
import { decodeJsonFrame } from '../../../lib/codec/json.ts'
import { FrameTooLargeError } from '../../../lib/jsonrpc/errors.ts'

describe('decodeJsonFrame', () => {
  it('decodes one frame, as text or bytes', () => {
    expect(decodeJsonFrame('{"jsonrpc":"2.0","id":1,"method":"ping"}')).toEqual({ type: 'message', message: { jsonrpc: '2.0', id: 1, method: 'ping' } })
    expect(decodeJsonFrame(new TextEncoder().encode('{"a":1}'))).toEqual({ type: 'message', message: { a: 1 } })
  })

  it.each([
    ['text', (frame: string) => frame],
    ['bytes', (frame: string) => new TextEncoder().encode(frame)],
  ])('refuses an oversized %s frame with its size, its id and its kind, without parsing it', (_name, as) => {
    const frame = `{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"text":"${'é'.repeat(100)}"}}`
    const decoded = decodeJsonFrame(as(frame), 100)
    expect(decoded.type).toBe('invalid')
    const error = (decoded as unknown as { error: FrameTooLargeError }).error
    expect(error).toBeInstanceOf(FrameTooLargeError)
    expect({ size: error.size, limit: error.limit, id: error.id, kind: error.kind }).toEqual({ size: new TextEncoder().encode(frame).length, limit: 100, id: 'big', kind: 'request' })
    expect(error.message).toBe(`Message of ${error.size} bytes exceeds the limit of 100 bytes`)
  })

  it('reads the id of an oversized response written result first from its end', () => {
    const decoded = decodeJsonFrame(`{"result":{"text":"${'x'.repeat(200)}"},"jsonrpc":"2.0","id":9}\n`, 100)
    expect((decoded as unknown as { error: FrameTooLargeError }).error).toMatchObject({ id: 9, kind: 'response', size: 246 })
  })
})
