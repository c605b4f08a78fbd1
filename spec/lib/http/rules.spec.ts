import { describe, expect, it } from 'vitest'
import { ErrorCode, StructureLimitError } from '../../../lib/jsonrpc/errors.ts'
import { requestsOf } from '../../../lib/http/requests.ts'
import {
  answersOf, checkPostBody, checkRequestIds, checkSession, classifyPost, isJsonContentType, legacySessionIdOf, legacySseMessage,
  legacySseOpen, mcpRequest, routeForwarded, routeRequest, type HttpRules,
} from '../../../lib/http/rules.ts'
import { checkModernPost, isModernPost } from '../../../lib/http/modern-rules.ts'
import { corsHeaders, preflightHeaders } from '../../../lib/http/origin.ts'
import {
  BODY_TIMEOUT, BODY_TOO_LARGE, NOT_FOUND, UNKNOWN_LAST_EVENT_ID, exchangesFull, overFailedAuthBudget, overRequestBudget,
  sessionIdRepeated, sessionsFull, tooManyStreams, type HttpRefusal,
} from '../../../lib/http/refusal.ts'

/** The listener's defaults, as streamableHttp() resolves them. */
const RULES: HttpRules = {
  path: '/mcp', legacySsePath: '/sse', legacyMessagesPath: '/messages', allowedOrigins: undefined, allowedHosts: undefined,
  boundHost: '127.0.0.1', isStateless: false, versions: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'],
  modernVersions: ['2026-07-28'], isStrictVersion: false,
}
const STATELESS: HttpRules = { ...RULES, isStateless: true }
const STRICT: HttpRules = { ...RULES, isStrictVersion: true }
const NO_LEGACY: HttpRules = { ...RULES, legacySsePath: undefined }
const PUBLIC: HttpRules = { ...RULES, boundHost: '0.0.0.0', allowedOrigins: ['https://app.example'], allowedHosts: ['mcp.example'] }

/** A JSON-RPC refusal as the listener answers it. */
const refused = (status: number, code: number, message: string, id: unknown = null, headers?: Record<string, string>) =>
  headers === undefined ? { type: 'refuse', status, code, message, id } : { type: 'refuse', status, code, message, id, headers }

const BOTH = 'application/json, text/event-stream'
const JSON_TYPE = 'application/json'
const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } } }
const call = { jsonrpc: '2.0', id: 7, method: 'tools/list' }
const modernMeta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} }
const modernCall = { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'echo', arguments: {}, _meta: modernMeta } }

describe('issue 21: Streamable HTTP rules', () => {
  describe('routeRequest', () => {
    it.each<[string, HttpRules, string, string, string | null, string | null, unknown]>([
      ['a foreign Origin is 403', RULES, 'POST', '/mcp', 'https://evil.example', '127.0.0.1:3000', refused(403, -32000, 'Forbidden: origin not allowed')],
      ['an Origin that is no URL is 403', RULES, 'GET', '/mcp', 'null', '127.0.0.1:3000', refused(403, -32000, 'Forbidden: origin not allowed')],
      ['a foreign Host is 403 (DNS rebinding)', RULES, 'POST', '/mcp', null, 'evil.example', refused(403, -32000, 'Forbidden: host not allowed')],
      ['a listed Origin and Host pass beyond loopback', PUBLIC, 'POST', '/mcp', 'https://app.example', 'mcp.example', { type: 'mcp', isGuarded: true, sessionIdIn: 'header' }],
      ['an unlisted Host is 403 beyond loopback', PUBLIC, 'POST', '/mcp', null, 'other.example', refused(403, -32000, 'Forbidden: host not allowed')],
      ['a loopback Origin passes by default', RULES, 'POST', '/mcp', 'http://localhost:5173', '127.0.0.1:3000', { type: 'mcp', isGuarded: true, sessionIdIn: 'header' }],
      ['Host LOCALHOST:port passes (no case)', RULES, 'POST', '/mcp', null, 'LOCALHOST:3000', { type: 'mcp', isGuarded: true, sessionIdIn: 'header' }],
      ['no Host passes', RULES, 'POST', '/mcp', null, null, { type: 'mcp', isGuarded: true, sessionIdIn: 'header' }],
      ['OPTIONS on any path is a preflight', RULES, 'OPTIONS', '/anything', null, null, { type: 'preflight' }],
      ['OPTIONS from a foreign Origin is 403 first', RULES, 'OPTIONS', '/mcp', 'https://evil.example', null, refused(403, -32000, 'Forbidden: origin not allowed')],
      ['GET /sse opens a legacy session', RULES, 'GET', '/sse', null, null, { type: 'legacy-sse-open', isGuarded: true, sessionIdIn: undefined }],
      ['POST /messages is a legacy message', RULES, 'POST', '/messages', null, null, { type: 'legacy-sse-message', isGuarded: true, sessionIdIn: 'query' }],
      ['POST /sse is not found, once authenticated', RULES, 'POST', '/sse', null, null, { type: 'not-found', isGuarded: true, sessionIdIn: undefined }],
      ['GET /messages is not found, once authenticated and routed', RULES, 'GET', '/messages', null, null, { type: 'not-found', isGuarded: true, sessionIdIn: 'query' }],
      ['another path is not found', RULES, 'GET', '/other', null, null, { type: 'not-found', isGuarded: false, sessionIdIn: undefined }],
      ['legacy SSE off: /sse is not found, unguarded', NO_LEGACY, 'GET', '/sse', null, null, { type: 'not-found', isGuarded: false, sessionIdIn: undefined }],
    ])('%s', (_, rules, method, path, origin, host, expected) => {
      expect(routeRequest(rules, method, path, origin, host)).toEqual(expected)
    })

    it.each<[string, string, string, string]>([
      ['the endpoint', 'DELETE', '/mcp', 'mcp'],
      ['a legacy message', 'POST', '/messages', 'legacy-sse-message'],
      ['a legacy stream (never forwarded)', 'GET', '/sse', 'not-found'],
    ])('routeForwarded: %s', (_, method, path, type) => {
      expect(routeForwarded(NO_LEGACY, method, path).type).toBe(type)
    })

    it('answers a preflight with the headers asked for, and CORS only to listed origins', () => {
      expect(preflightHeaders(null)['access-control-allow-headers']).toBe('content-type, accept, authorization, mcp-session-id, mcp-protocol-version, last-event-id, mcp-method, mcp-name')
      expect(preflightHeaders('mcp-param-city')['access-control-allow-headers']).toMatch(/, mcp-param-city$/)
      expect(corsHeaders(undefined, 'https://a.example')).toEqual({})
      expect(corsHeaders(['https://b.example'], 'https://a.example')).toEqual({})
      expect(corsHeaders(['*'], 'https://a.example')['access-control-allow-origin']).toBe('*')
      expect(corsHeaders(['https://a.example'], 'https://a.example')).toEqual({
        'access-control-allow-origin': 'https://a.example', 'access-control-expose-headers': 'mcp-session-id, mcp-protocol-version, www-authenticate', vary: 'origin',
      })
    })
  })

  describe('mcpRequest', () => {
    it.each<[string, HttpRules, string, string | null, string | null, string | null, unknown]>([
      ['a POST accepting JSON and SSE, sending JSON', RULES, 'POST', null, BOTH, JSON_TYPE, { type: 'post' }],
      ['a POST with a charset parameter', RULES, 'POST', null, BOTH, 'Application/JSON; charset=utf-8', { type: 'post' }],
      ['a POST with an unsupported version (checked with its body)', RULES, 'POST', '1999-01-01', BOTH, JSON_TYPE, { type: 'post' }],
      ['a POST without Accept is 406', RULES, 'POST', null, null, JSON_TYPE, refused(406, -32000, 'Not Acceptable: the client must accept both application/json and text/event-stream')],
      ['a POST accepting JSON only is 406', RULES, 'POST', null, 'application/json', JSON_TYPE, refused(406, -32000, 'Not Acceptable: the client must accept both application/json and text/event-stream')],
      ['a text/plain POST is 415', RULES, 'POST', null, BOTH, 'text/plain', refused(415, -32000, 'Unsupported Media Type: Content-Type must be application/json')],
      ['a POST naming JSON in a parameter is 415', RULES, 'POST', null, BOTH, 'text/plain; x=application/json', refused(415, -32000, 'Unsupported Media Type: Content-Type must be application/json')],
      ['a POST without Content-Type is 415', RULES, 'POST', null, BOTH, null, refused(415, -32000, 'Unsupported Media Type: Content-Type must be application/json')],
      ['a GET accepting SSE', RULES, 'GET', '2025-11-25', 'text/event-stream', null, { type: 'get-stream' }],
      ['a GET not accepting SSE is 406', RULES, 'GET', null, 'application/json', null, refused(406, -32000, 'Not Acceptable: the client must accept text/event-stream')],
      ['a GET with an unsupported version is 400', RULES, 'GET', '1999-01-01', 'text/event-stream', null, refused(400, -32000, 'Bad Request: unsupported protocol version 1999-01-01')],
      ['a DELETE with an unsupported version is 400', RULES, 'DELETE', '1999-01-01', null, null, refused(400, -32000, 'Bad Request: unsupported protocol version 1999-01-01')],
      ['a DELETE', RULES, 'DELETE', null, null, null, { type: 'delete-session' }],
      ['a stateless GET is 405, Allow: POST', STATELESS, 'GET', null, 'text/event-stream', null, { type: 'refuse', status: 405, message: '', headers: { allow: 'POST' } }],
      ['a stateless DELETE is 405, Allow: POST', STATELESS, 'DELETE', null, null, null, { type: 'refuse', status: 405, message: '', headers: { allow: 'POST' } }],
      ['a stateless GET with an unsupported version is 400 first', STATELESS, 'GET', 'x', null, null, refused(400, -32000, 'Bad Request: unsupported protocol version x')],
      ['a PUT is 405', RULES, 'PUT', null, null, null, { type: 'refuse', status: 405, message: 'Method Not Allowed', headers: { allow: 'GET, POST, DELETE, OPTIONS', 'content-type': 'text/plain' } }],
    ])('%s', (_, rules, method, version, accept, contentType, expected) => {
      expect(mcpRequest(rules, method, version, accept, contentType)).toEqual(expected)
    })
  })

  describe('a POST body', () => {
    it.each<[string, Parameters<typeof checkPostBody>[0], unknown]>([
      ['invalid JSON is 400 -32700, id null', { type: 'invalid', error: new Error('Parse error: Unexpected token') }, refused(400, -32700, 'Parse error: Unexpected token')],
      ['JSON past maxDepth is 400 -32700 with the id read', { type: 'invalid', error: new StructureLimitError('maxDepth', 128, { id: 5 }) }, refused(400, -32700, 'Parse error: the message nests deeper than 128 levels (maxDepth)', 5)],
      ['JSON past maxMembers with no readable id is id null', { type: 'invalid', error: new StructureLimitError('maxMembers', 100_000) }, refused(400, -32700, 'Parse error: the message holds more than 100000 object members and array elements (maxMembers)')],
      ['an id 1e400 is 400 -32600, id null', { type: 'message', message: { jsonrpc: '2.0', id: Infinity, method: 'ping' } }, refused(400, -32600, 'Invalid Request: an id must be a string or a finite number')],
      ['a request passes', { type: 'message', message: call }, undefined],
    ])('%s', (_, decoded, expected) => {
      const requests = decoded.type === 'message' ? requestsOf(decoded.message) : undefined
      expect(checkPostBody(decoded, requests)).toEqual(expected)
    })

    it.each<[string, unknown, unknown]>([
      ['one request: its id', call, 7],
      ['a notification: null', { jsonrpc: '2.0', method: 'notifications/initialized' }, null],
      ['a batch: its request ids', [call, { jsonrpc: '2.0', id: 'b', method: 'ping' }], [7, 'b']],
    ])('answersOf: %s', (_, payload, expected) => {
      expect(answersOf(payload, requestsOf(payload).ids)).toEqual(expected)
    })
  })

  describe('classifyPost', () => {
    it.each<[string, HttpRules, unknown, string | null, string | null, unknown]>([
      ['a modern request (version header, no session)', RULES, call, null, '2026-07-28', { type: 'post-modern' }],
      ['a modern request (_meta)', RULES, modernCall, null, null, { type: 'post-modern' }],
      ['a modern-only method', RULES, { jsonrpc: '2.0', id: 1, method: 'server/discover' }, null, null, { type: 'post-modern' }],
      ['a modern header with a session id is the session\'s (then 400)', RULES, call, 's1', '2026-07-28', { type: 'post-session' }],
      ['an initialize', RULES, init, null, null, { type: 'post-initialize' }],
      ['an initialize with modern _meta is modern', RULES, { ...init, params: { ...init.params, _meta: modernMeta } }, null, null, { type: 'post-modern' }],
      ['an initialize in a batch is 400 -32600', RULES, [init, call], null, null, refused(400, -32600, 'Invalid Request: initialize must be sent alone', [1, 7])],
      ['a request of a session', RULES, call, 's1', '2025-11-25', { type: 'post-session' }],
      ['an unsupported version is 400 -32000 with the id', RULES, call, 's1', '2024-01-01', refused(400, -32000, 'Bad Request: unsupported protocol version 2024-01-01', 7)],
      ['a modern version the listener does not serve is 400', { ...RULES, versions: ['2025-11-25'] }, call, 's1', '2026-07-28', refused(400, -32000, 'Bad Request: unsupported protocol version 2026-07-28', 7)],
      ['stateless', STATELESS, call, null, '2025-11-25', { type: 'post-stateless' }],
      ['stateless initialize', STATELESS, init, null, null, { type: 'post-stateless' }],
    ])('%s', (_, rules, payload, sessionId, version, expected) => {
      const requests = requestsOf(payload)
      expect(classifyPost(rules, payload, requests, sessionId, version, answersOf(payload, requests.ids))).toEqual(expected)
    })

    it('isModernPost needs one object and no session id', () => {
      expect(isModernPost(null, '2026-07-28', [call])).toBe(false)
      expect(isModernPost(null, ' 2026-07-28 ', call)).toBe(true)
      expect(isModernPost(null, '2025-11-25', call)).toBe(false)
    })
  })

  describe('checkModernPost', () => {
    const named = (headers: [string | null, string | null, string | null], message: Record<string, unknown> = modernCall) =>
      checkModernPost(message, headers[0], headers[1], headers[2], ['2026-07-28'], RULES.versions)
    it.each<[string, Record<string, unknown>, [string | null, string | null, string | null], unknown]>([
      ['a notification is answered 202', { jsonrpc: '2.0', method: 'notifications/progress' }, [null, null, null], { type: 'modern-notification' }],
      ['a request with headers matching its body', modernCall, ['2026-07-28', 'tools/call', 'echo'], { type: 'serve-modern' }],
      ['Mcp-Name in base64', modernCall, ['2026-07-28', 'tools/call', '=?base64?ZWNobw==?='], { type: 'serve-modern' }],
      ['a method with no name needs no Mcp-Name', { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: modernMeta } }, ['2026-07-28', 'tools/list', null], { type: 'serve-modern' }],
      ['no method is -32600', { jsonrpc: '2.0', id: 2 }, [null, null, null], refused(400, -32600, 'Invalid Request: a POST carries a request or a notification', 2)],
      ['no _meta is -32602', { jsonrpc: '2.0', id: 2, method: 'tools/list' }, ['2026-07-28', 'tools/list', null],
        refused(400, -32602, 'Invalid params: a request must carry _meta with io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities', 2)],
      ['no MCP-Protocol-Version is -32020', modernCall, [null, 'tools/call', 'echo'], refused(400, -32020, 'Header mismatch: the MCP-Protocol-Version header is required', 9)],
      ['MCP-Protocol-Version unlike _meta is -32020', modernCall, ['2025-11-25', 'tools/call', 'echo'], refused(400, -32020, 'Header mismatch: MCP-Protocol-Version "2025-11-25" does not match _meta "2026-07-28"', 9)],
      ['a version not served is -32022 with data', { ...modernCall, params: { name: 'echo', _meta: { ...modernMeta, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } } }, ['2099-01-01', 'tools/call', 'echo'],
        { type: 'refuse', status: 400, code: -32022, message: `Unsupported protocol version 2099-01-01; supported: ${RULES.versions.join(', ')}`, id: 9, data: { supported: RULES.versions, requested: '2099-01-01' } }],
      ['no Mcp-Method is -32020', modernCall, ['2026-07-28', null, 'echo'], refused(400, -32020, 'Header mismatch: the Mcp-Method header is required', 9)],
      ['Mcp-Method unlike the body is -32020', modernCall, ['2026-07-28', 'tools/list', 'echo'], refused(400, -32020, 'Header mismatch: Mcp-Method "tools/list" does not match the body\'s method "tools/call"', 9)],
      ['no Mcp-Name on tools/call is -32020', modernCall, ['2026-07-28', 'tools/call', null], refused(400, -32020, 'Header mismatch: the Mcp-Name header is required for tools/call', 9)],
      ['Mcp-Name that decodes to nothing is -32020', modernCall, ['2026-07-28', 'tools/call', '=?base64?!!?='], refused(400, -32020, 'Header mismatch: Mcp-Name is not a valid header value', 9)],
      ['Mcp-Name unlike the body is -32020', modernCall, ['2026-07-28', 'tools/call', 'other'], refused(400, -32020, 'Header mismatch: Mcp-Name "other" does not match the body\'s "echo"', 9)],
    ])('%s', (_, message, headers, expected) => {
      expect(named(headers, message)).toEqual(expected)
    })
  })

  describe('checkSession and checkRequestIds', () => {
    const negotiated = { protocolVersion: '2025-11-25' }
    it.each<[string, HttpRules, string | null, { protocolVersion: string | undefined } | undefined, string | null, unknown]>([
      ['no Mcp-Session-Id is 400', RULES, null, undefined, null, refused(400, -32000, 'Bad Request: Mcp-Session-Id header is required', 7)],
      ['an unknown (or expired, or another principal\'s) session is 404 -32001', RULES, 'nope', undefined, null, refused(404, -32001, 'Session not found', 7)],
      ['the session\'s version passes', STRICT, 's1', negotiated, '2025-11-25', undefined],
      ['another supported version passes unless strict', RULES, 's1', negotiated, '2025-06-18', undefined],
      ['another supported version is 400 when strict', STRICT, 's1', negotiated, '2025-06-18', refused(400, -32000, 'Bad Request: MCP-Protocol-Version 2025-06-18 is not the session\'s 2025-11-25', 7)],
      ['no version header passes when strict', STRICT, 's1', negotiated, null, undefined],
      ['before initialize is answered, any version passes', STRICT, 's1', { protocolVersion: undefined }, '2025-06-18', undefined],
    ])('%s', (_, rules, id, session, version, expected) => {
      expect(checkSession(rules, id, session, version, 7)).toEqual(expected)
    })

    it.each<[string, (string | number)[], unknown]>([
      ['a request id in flight is 400 -32600 with the id', [3, 4], refused(400, -32600, 'Invalid Request: request id 4 is already in use', [3, 4], { 'mcp-session-id': 's1' })],
      ['fresh ids pass', [5], undefined],
    ])('%s', (_, ids, expected) => {
      expect(checkRequestIds(ids, id => id === 4, 's1', ids.length > 1 ? ids : ids[0]!)).toEqual(expected)
    })
  })

  describe('legacy HTTP+SSE', () => {
    it.each<[string, string | null, unknown]>([
      ['no Accept', null, undefined],
      ['Accept: text/event-stream', 'text/event-stream', undefined],
      ['Accept: */*', '*/*', undefined],
      ['Accept: application/json is 406', 'application/json', refused(406, -32000, 'Not Acceptable')],
    ])('GET /sse with %s', (_, accept, expected) => {
      expect(legacySseOpen(accept)).toEqual(expected)
    })

    it.each<[string, boolean, string | null, unknown]>([
      ['a session and JSON', true, 'application/json', undefined],
      ['no such session is 404 in plain text', false, 'application/json', { type: 'refuse', status: 404, message: 'Session not found', headers: { 'content-type': 'text/plain' } }],
      ['text/plain is 415', true, 'text/plain', refused(415, -32000, 'Unsupported Media Type: Content-Type must be application/json')],
    ])('POST /messages with %s', (_, hasSession, contentType, expected) => {
      expect(legacySseMessage(hasSession, contentType)).toEqual(expected)
    })

    it('reads the session id off the query', () => {
      expect(legacySessionIdOf('?sessionId=a%2Bb')).toBe('a+b')
      expect(legacySessionIdOf('')).toBeNull()
    })
  })

  describe('refusals the listener answers after its own checks', () => {
    it.each<[string, HttpRefusal, unknown]>([
      ['a body past maxBodyBytes: 413, dropped', BODY_TOO_LARGE, { ...refused(413, -32000, 'Payload Too Large'), isDropped: true }],
      ['a body slower than bodyTimeoutMs: 408, dropped', BODY_TIMEOUT, { ...refused(408, -32000, 'Request Timeout: the body did not arrive in time'), isDropped: true }],
      ['a path not served: 404 in plain text', NOT_FOUND, { type: 'refuse', status: 404, message: 'Not Found', headers: { 'content-type': 'text/plain' } }],
      ['a Last-Event-ID the session cannot replay: 404', UNKNOWN_LAST_EVENT_ID, refused(404, -32000, 'Unknown Last-Event-ID')],
      ['maxStreamsPerSession, all attached: 429', tooManyStreams('s1', 7), refused(429, -32000, 'Too Many Requests: too many open streams in this session', 7, { 'mcp-session-id': 's1' })],
      ['maxSessionsPerClient: 429, -31029, Retry-After', sessionsFull('client', 1500, 1), refused(429, ErrorCode.RateLimited, 'Too Many Requests: too many sessions of this client', 1, { 'retry-after': '2' })],
      ['maxSessions: 503, Retry-After', sessionsFull('total', 60_000), refused(503, -32000, 'Service Unavailable: too many sessions', null, { 'retry-after': '60' })],
      ['maxExchangesPerClient: 429, -31029, Retry-After: 1', exchangesFull('client', 9), refused(429, -31029, 'Too Many Requests: too many requests of this client in progress', 9, { 'retry-after': '1' })],
      ['maxExchanges: 503, Retry-After: 1', exchangesFull('total', 9), refused(503, -32000, 'Service Unavailable: too many requests in progress', 9, { 'retry-after': '1' })],
      ['rateLimit: 429, -31029 per request', overRequestBudget(2500, [1, 2]), refused(429, -31029, 'Too many requests: try again in 3 s', [1, 2], { 'retry-after': '3' })],
      ['failedAuthLimit: 429, -31029, id null', overFailedAuthBudget(10), refused(429, -31029, 'Too many failed authentications: try again in 1 s', null, { 'retry-after': '1' })],
      ['a repeated session id: 500 -32603', sessionIdRepeated(1), refused(500, -32603, 'Internal error: the session id generator repeated an id in use', 1)],
    ])('%s', (_, refusal, expected) => {
      expect(refusal).toEqual(expected)
    })
  })

  it('isJsonContentType compares the media type only, without case', () => {
    expect([JSON_TYPE, ' application/json ; charset=utf-8', 'APPLICATION/JSON', 'application/json-seq', 'text/json', null].map(isJsonContentType))
      .toEqual([true, true, true, false, false, false])
  })
})
