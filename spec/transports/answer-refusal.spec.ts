import { describe, expect, it } from 'vitest'
import { answerRefusal, type Exchange } from '../../transports/http-exchange.ts'
import { BODY_TOO_LARGE, NOT_FOUND, STATELESS_METHOD_NOT_ALLOWED, refusal, tooManyStreams, type HttpRefusal } from '../../lib/http/refusal.ts'

/** What an exchange was answered: the call, its status, headers and body. */
function answered(refused: HttpRefusal): [string, number, Record<string, string>, string | undefined] {
  let call: [string, number, Record<string, string>, string | undefined] | undefined
  const exchange = {
    reply: (status: number, headers: Record<string, string>, body?: string) => { call = ['reply', status, headers, body] },
    refuse: (status: number, headers: Record<string, string>, body?: string) => { call = ['refuse', status, headers, body] },
  } as unknown as Exchange
  answerRefusal(exchange, refused)
  return call!
}

describe('answerRefusal', () => {
  it.each<[string, HttpRefusal, [string, number, Record<string, string>, string | undefined]]>([
    ['a JSON-RPC error with one id', refusal(400, -32600, 'Invalid Request', 7), ['reply', 400, { 'content-type': 'application/json' }, '{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"Invalid Request"}}']],
    ['one error per id of a batch, headers after content-type', tooManyStreams('s1', [1, 2]), ['reply', 429, { 'content-type': 'application/json', 'mcp-session-id': 's1' },
      '[{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"Too Many Requests: too many open streams in this session"}},{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"Too Many Requests: too many open streams in this session"}}]']],
    ['an error with data', { type: 'refuse', status: 400, code: -32022, message: 'Unsupported', id: 3, data: { requested: 'x' } },
      ['reply', 400, { 'content-type': 'application/json' }, '{"jsonrpc":"2.0","id":3,"error":{"code":-32022,"message":"Unsupported","data":{"requested":"x"}}}']],
    ['a dropped connection (413)', BODY_TOO_LARGE, ['refuse', 413, { 'content-type': 'application/json' }, '{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Payload Too Large"}}']],
    ['plain text', NOT_FOUND, ['reply', 404, { 'content-type': 'text/plain' }, 'Not Found']],
    ['no body', STATELESS_METHOD_NOT_ALLOWED, ['reply', 405, { allow: 'POST' }, undefined]],
  ])('writes %s', (_, refused, expected) => {
    expect(answered(refused)).toEqual(expected)
  })
})
