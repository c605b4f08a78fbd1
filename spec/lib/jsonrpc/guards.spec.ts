import { describe, expect, it } from 'vitest'
import { checkMessage, isCheckFailure } from '../../../lib/jsonrpc/guards.ts'
import { InvalidParamsError, InvalidRequestError } from '../../../lib/jsonrpc/errors.ts'
import { verifies } from '../../helpers/verifies.ts'

describe('checkMessage', () => {
  it.each([
    [{ jsonrpc: '2.0', id: 1, method: 'ping' }],
    [{ jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name: 'x' } }],
    [{ jsonrpc: '2.0', method: 'notifications/initialized' }],
    [{ jsonrpc: '2.0', id: 1, result: {} }],
    [{ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }],
  ])('accepts %j', message => {
    expect(checkMessage(message)).toBe(message)
  })

  it.each<[unknown, unknown, unknown]>([
    [null, InvalidRequestError, null],
    [[], InvalidRequestError, null],
    [{ jsonrpc: '2.0' }, InvalidRequestError, null],
    [{ jsonrpc: '1.0', id: 3, method: 'ping' }, InvalidRequestError, 3],
    [{ jsonrpc: '2.0', id: 4, method: 'x', params: 'text' }, InvalidRequestError, 4],
    [{ jsonrpc: '2.0', id: 5, method: 'x', params: [1] }, InvalidParamsError, 5],
    [{ jsonrpc: '2.0', id: 6, result: 'text' }, InvalidRequestError, 6],
    [{ jsonrpc: '2.0', id: 7, error: { code: 'x', message: 'm' } }, InvalidRequestError, 7],
    [{ jsonrpc: '2.0', id: 8, error: { code: 1.5, message: 'm' } }, InvalidRequestError, 8],
    [{ jsonrpc: '2.0', id: true, method: 'ping' }, InvalidRequestError, null],
    [{ jsonrpc: '2.0', id: Number.NaN, method: 'ping' }, InvalidRequestError, null],
  ])('refuses %j with %o, answering id %j', (value, kind, id) => {
    const checked = checkMessage(value)
    expect(isCheckFailure(checked)).toBe(true)
    if (!isCheckFailure(checked)) return
    expect(checked.error).toBeInstanceOf(kind as typeof InvalidRequestError)
    expect(checked.id).toBe(id)
  })

  verifies('jsonrpc:id-not-null', 'refuses a request with a null id and answers id null', () => {
    const checked = checkMessage({ jsonrpc: '2.0', id: null, method: 'ping' })
    expect(isCheckFailure(checked) && checked.error.code).toBe(-32600)
  })
})
