import { describe, expect, it } from 'vitest'
import { NEVER, Observable, Subject, firstValueFrom, lastValueFrom, toArray, timer, map } from 'rxjs'
import { DEFAULTS, createConnection, type InspectionEvent } from '../../lib/connection.ts'
import {
  CancelledError, ConnectionClosedError, FrameTooLargeError, InternalError, InvalidParamsError, McpError, ParseError, TimeoutError,
} from '../../lib/jsonrpc/errors.ts'
import { createMemoryPair } from '../../transports/memory.ts'
import { FakeTransport } from '../helpers/fake-transport.ts'
import { verifies } from '../helpers/verifies.ts'
import { collected } from '../helpers/collected.ts'
import { TestClock } from '../helpers/test-clock.ts'
import { shapeForRevision } from '../../lib/schema/shape.ts'
import { bareRequestInfo, type Inbound, type SendOptions, type Transport } from '../../lib/transport.ts'
import type { JsonRpcPayload } from '../../lib/jsonrpc/message.ts'

function pair() {
  const [a, b] = createMemoryPair()
  const caller = createConnection(a)
  const callee = createConnection(b)
  return { caller, callee, start: () => { caller.start(); callee.start() } }
}


describe('createConnection', () => {
  it('answers a request with the handler value', async () => {
    const { caller, callee, start } = pair()
    callee.setRequestHandler('sum', params => ({ sum: (params!.a as number) + (params!.b as number) }))
    start()
    const events = await lastValueFrom(caller.request('sum', { a: 1, b: 2 }).pipe(toArray()))
    expect(events).toEqual([{ type: 'result', result: { sum: 3 } }])
  })

  it('answers with a Promise handler and with an Observable handler (last value wins)', async () => {
    const { caller, callee, start } = pair()
    callee.setRequestHandler('promise', async () => ({ via: 'promise' }))
    callee.setRequestHandler('observable', () => timer(1).pipe(map(() => ({ via: 'observable' }))))
    start()
    expect(await firstValueFrom(caller.request('promise'))).toEqual({ type: 'result', result: { via: 'promise' } })
    expect(await firstValueFrom(caller.request('observable'))).toEqual({ type: 'result', result: { via: 'observable' } })
  })

  verifies('progress:token', 'emits progress for the request token before the result', async () => {
    const { caller, callee, start } = pair()
    callee.setRequestHandler('slow', async (_params, request) => {
      for (const step of [1, 2]) await callee.notify('notifications/progress', { progressToken: request.progressToken!, progress: step, total: 2 })
      return { done: true }
    })
    start()
    const events = await lastValueFrom(caller.request('slow').pipe(toArray()))
    expect(events).toEqual([
      { type: 'progress', progress: 1, total: 2, message: undefined },
      { type: 'progress', progress: 2, total: 2, message: undefined },
      { type: 'result', result: { done: true } },
    ])
  })

  verifies('cancellation:no-response', 'sends notifications/cancelled when unsubscribed early, aborts the handler, and sends no response', async () => {
    const [a, b] = createMemoryPair()
    const caller = createConnection(a)
    const sent: InspectionEvent[] = []
    const callee = createConnection(b, { inspect: event => sent.push(event) })
    let aborted: unknown
    let unsubscribed = false
    // The handler's start, its abort and its teardown, as events.
    let started!: () => void
    const isStarted = new Promise<void>(resolve => { started = resolve })
    let tornDown!: () => void
    const isTornDown = new Promise<void>(resolve => { tornDown = resolve })
    let abortHeard!: () => void
    const isAborted = new Promise<void>(resolve => { abortHeard = resolve })
    callee.setRequestHandler('forever', (_params, request) => {
      request.signal.addEventListener('abort', () => { aborted = request.signal.reason; abortHeard() })
      started()
      return new Observable(() => () => { unsubscribed = true; tornDown() })
    })
    caller.start(); callee.start()
    const subscription = caller.request('forever').subscribe()
    await isStarted
    subscription.unsubscribe()
    await Promise.all([isTornDown, isAborted])
    expect(unsubscribed).toBe(true)
    expect(aborted).toBeInstanceOf(CancelledError)
    expect(callee.incoming.size).toBe(0)
    expect(sent.filter(event => event.type === 'rxmcp.frame.out')).toEqual([])
  })

  verifies('cancellation:not-initialize', 'never cancels initialize on the wire', async () => {
    const transport = new FakeTransport()
    const connection = createConnection(transport)
    connection.start()
    const subscription = connection.request('initialize', {}, { progress: false }).subscribe()
    subscription.unsubscribe()
    expect(transport.sent).toHaveLength(1)
    expect(transport.sent[0]).toMatchObject({ method: 'initialize' })
  })

  it('ignores notifications/cancelled for an incoming initialize', async () => {
    const transport = new FakeTransport()
    const connection = createConnection(transport)
    let resolve!: (value: object) => void
    connection.setRequestHandler('initialize', () => new Promise(r => { resolve = r }))
    connection.start()
    transport.receive({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} })
    transport.receive({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } })
    resolve({ ok: true })
    expect(await transport.frames(1)).toEqual([{ jsonrpc: '2.0', id: 1, result: { ok: true } }])
  })

  it('times out with TimeoutError, pointing at the caller, and cancels on the wire', async () => {
    const transport = new FakeTransport()
    const connection = createConnection(transport)
    connection.start()
    const error = await lastValueFrom(connection.request('slow', {}, { timeout: 20, captureStack: true })).catch(e => e)
    expect(error).toBeInstanceOf(TimeoutError)
    expect(error.code).toBe('RXMCP_ERR_TIMEOUT')
    expect(error.message).toBe('slow timed out after 20 ms')
    expect(error.stack).toContain('connection.spec.ts')
    expect(transport.sent[1]).toEqual({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 0, reason: 'Request cancelled by the caller' } })
  })

  it('restarts the timeout on progress but not past maxTotalTimeout', async () => {
    const transport = new FakeTransport()
    const clock = new TestClock()
    const connection = createConnection(transport, { scheduler: clock })
    connection.start()
    const events: string[] = []
    let error: unknown
    connection.request('slow', {}, { timeout: 40, maxTotalTimeout: 150 }).subscribe({ next: event => events.push(event.type), error: caught => { error = caught } })
    // Progress every 15 ms (virtual): the 40 ms timeout never runs out, the 150 ms total does.
    for (let elapsed = 15; elapsed < 150; elapsed += 15) {
      clock.advance(15)
      transport.receive({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 0, progress: elapsed } })
      await Promise.resolve()
      expect(error).toBeUndefined()
    }
    clock.advance(15)
    expect(error).toBeInstanceOf(TimeoutError)
    expect((error as Error).message).toContain('maximum total time of 150 ms')
    expect(events.filter(type => type === 'progress').length).toBe(9)
  })

  it('fails with CancelledError when the signal aborts, and cancels on the wire', async () => {
    const transport = new FakeTransport()
    const connection = createConnection(transport)
    connection.start()
    const controller = new AbortController()
    const done = lastValueFrom(connection.request('slow', {}, { signal: controller.signal })).catch(e => e)
    controller.abort('user gave up')
    const error = await done
    expect(error).toBeInstanceOf(CancelledError)
    expect(transport.sent[1]).toEqual({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 0, reason: 'user gave up' } })
  })

  it('fails every pending request with ConnectionClosedError when the transport closes', async () => {
    const transport = new FakeTransport()
    const connection = createConnection(transport)
    connection.start()
    const first = lastValueFrom(connection.request('a')).catch(e => e)
    const second = lastValueFrom(connection.request('b')).catch(e => e)
    await transport.close()
    expect(await first).toBeInstanceOf(ConnectionClosedError)
    expect(await second).toBeInstanceOf(ConnectionClosedError)
    expect(connection.isClosed).toBe(true)
    const late = await lastValueFrom(connection.request('c')).catch(e => e)
    expect(late).toBeInstanceOf(ConnectionClosedError)
  })

  it('rebuilds error responses as McpError subclasses', async () => {
    const { caller, callee, start } = pair()
    callee.setRequestHandler('bad', () => { throw new InvalidParamsError('nope', { field: 'x' }) })
    start()
    const error = await lastValueFrom(caller.request('bad')).catch(e => e)
    expect(error).toBeInstanceOf(InvalidParamsError)
    expect(error.code).toBe(-32602)
    expect(error.message).toBe('nope')
    expect(error.data).toEqual({ field: 'x' })
  })

  it('answers a handler crash with -32603 and a generic message, and keeps serving', async () => {
    const { caller, callee, start } = pair()
    callee.setRequestHandler('crash', () => { throw new TypeError('secret detail') })
    callee.setRequestHandler('ok', () => ({ ok: true }))
    start()
    const error = await lastValueFrom(caller.request('crash')).catch(e => e)
    expect(error).toBeInstanceOf(InternalError)
    expect(error.message).toBe('Internal error')
    expect(await firstValueFrom(caller.request('ok'))).toEqual({ type: 'result', result: { ok: true } })
  })

  verifies('jsonrpc:method-not-found', 'answers an unknown method with -32601', async () => {
    const transport = new FakeTransport()
    createConnection(transport).start()
    transport.receive({ jsonrpc: '2.0', id: 'x', method: 'nope' })
    expect(await transport.frames(1)).toEqual([{ jsonrpc: '2.0', id: 'x', error: { code: -32601, message: 'Method not found: nope' } }])
  })

  verifies('jsonrpc:id-unique', 'refuses a request reusing an in-flight id and still answers the first', async () => {
    const transport = new FakeTransport()
    const connection = createConnection(transport)
    let resolve!: (value: object) => void
    connection.setRequestHandler('wait', () => new Promise(r => { resolve = r }))
    connection.start()
    transport.receive({ jsonrpc: '2.0', id: 7, method: 'wait' })
    transport.receive({ jsonrpc: '2.0', id: 7, method: 'wait' })
    resolve({ first: true })
    const sent = await transport.frames(2)
    expect(sent).toEqual([
      { jsonrpc: '2.0', id: 7, error: { code: -32600, message: 'Invalid Request: request id 7 is already in use' } },
      { jsonrpc: '2.0', id: 7, result: { first: true } },
    ])
  })

  it('drops a response to an unknown id and reports it to inspection', async () => {
    const transport = new FakeTransport()
    const events: InspectionEvent[] = []
    createConnection(transport, { inspect: event => events.push(event) }).start()
    transport.receive({ jsonrpc: '2.0', id: 99, result: {} })
    expect(await transport.afterPing()).toEqual([])
    expect(events).toContainEqual({ type: 'rxmcp.response.unknown', id: 99 })
  })

  verifies('jsonrpc:parse-error', 'answers an undecodable frame with -32700 and id null', async () => {
    const transport = new FakeTransport()
    createConnection(transport).start()
    transport.receiveInvalid({ type: 'invalid', error: new ParseError('Parse error: bad JSON') })
    expect(await transport.frames(1)).toEqual([{ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: bad JSON' } }])
  })

  verifies('jsonrpc:batch-2025-03-26-only', 'refuses batches unless allowed, and answers an allowed batch with one array', async () => {
    const refused = new FakeTransport()
    createConnection(refused).start()
    refused.receive([{ jsonrpc: '2.0', id: 1, method: 'ping' }])
    expect(await refused.frames(1)).toEqual([{ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: JSON-RPC batches are not supported in this protocol version' } }])

    const allowed = new FakeTransport()
    const connection = createConnection(allowed, { allowBatch: () => true })
    connection.setRequestHandler('later', async () => ({ later: true }))
    connection.start()
    allowed.receive([
      { jsonrpc: '2.0', id: 1, method: 'later' },
      { jsonrpc: '2.0', method: 'notifications/ignored' },
      { jsonrpc: '2.0', id: 2, method: 'ping' },
      { nope: true },
    ])
    const sent = await allowed.frames(1)
    expect(sent).toHaveLength(1)
    expect(sent[0]).toEqual([
      { jsonrpc: '2.0', id: 2, result: {} },
      { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: jsonrpc must be "2.0"' } },
      { jsonrpc: '2.0', id: 1, result: { later: true } },
    ])
  })

  it('delivers notifications on the bus and completes the bus on close', async () => {
    const transport = new FakeTransport()
    const connection = createConnection(transport)
    connection.start()
    const seen = lastValueFrom(connection.notifications('notifications/message').pipe(toArray()))
    transport.receive({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 1 } })
    transport.receive({ jsonrpc: '2.0', method: 'notifications/other' })
    await transport.close()
    expect(await seen).toEqual([{ level: 'info', data: 1 }])
  })

  it('refuses locally what the outgoing gate refuses, without touching the wire', async () => {
    const transport = new FakeTransport()
    const connection = createConnection(transport, { gateOutgoing: method => method === 'forbidden' ? new Error('not allowed') : undefined })
    connection.start()
    await expect(lastValueFrom(connection.request('forbidden'))).rejects.toThrow('not allowed')
    expect(transport.sent).toEqual([])
  })

  it('passes an McpError raised by the request gate to the requester', async () => {
    const transport = new FakeTransport()
    createConnection(transport, { gateRequest: () => new McpError(-32600, 'not yet') }).start()
    transport.receive({ jsonrpc: '2.0', id: 1, method: 'ping' })
    expect(await transport.frames(1)).toEqual([{ jsonrpc: '2.0', id: 1, error: { code: -32600, message: 'not yet' } }])
  })

  it('leaves a handler that never answers running until cancelled', async () => {
    const transport = new FakeTransport()
    const connection = createConnection(transport)
    connection.setRequestHandler('never', () => NEVER)
    connection.start()
    transport.receive({ jsonrpc: '2.0', id: 1, method: 'never' })
    expect(await transport.afterPing()).toEqual([])
    expect(connection.incoming.has(1)).toBe(true)
    transport.receive({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'bye' } })
    expect(connection.incoming.has(1)).toBe(false)
    expect(await transport.afterPing()).toEqual([])
  })
  it('answers a request id of 1e400 (Infinity once parsed) with -32600 and id null, and keeps serving', async () => {
    const transport = new FakeTransport()
    createConnection(transport).start()
    transport.receive(JSON.parse('{"jsonrpc":"2.0","id":1e400,"method":"ping"}'))
    transport.receive(JSON.parse('{"jsonrpc":"2.0","id":-1e400,"method":"ping"}'))
    transport.receive({ jsonrpc: '2.0', id: 2, method: 'ping' })
    expect(await transport.frames(3)).toEqual([
      { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: id must be a string or a number' } },
      { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: id must be a string or a number' } },
      { jsonrpc: '2.0', id: 2, result: {} },
    ])
  })

  it('keeps the in-flight request running, cancellable and answered once when its id is reused in a batch', async () => {
    const transport = new FakeTransport()
    const connection = createConnection(transport, { allowBatch: () => true })
    let resolve!: (value: object) => void
    connection.setRequestHandler('wait', () => new Promise(r => { resolve = r }))
    connection.start()
    transport.receive({ jsonrpc: '2.0', id: 7, method: 'wait' })
    transport.receive([{ jsonrpc: '2.0', id: 7, method: 'ping' }, { jsonrpc: '2.0', id: 8, method: 'ping' }])
    // The batch is answered at once, the in-flight request when its handler resolves.
    await transport.frames(1)
    expect(connection.incoming.get(7)?.method).toBe('wait')
    resolve({ first: true })
    expect(await transport.frames(2)).toEqual([
      [{ jsonrpc: '2.0', id: 7, error: { code: -32600, message: 'Invalid Request: request id 7 is already in use' } }, { jsonrpc: '2.0', id: 8, result: {} }],
      { jsonrpc: '2.0', id: 7, result: { first: true } },
    ])
  })

  it('answers a batch longer than maxBatchSize with one -32600 and runs none of it', async () => {
    const transport = new FakeTransport()
    let runs = 0
    const connection = createConnection(transport, { allowBatch: () => true, maxBatchSize: 3 })
    connection.setRequestHandler('count', () => ({ runs: ++runs }))
    connection.start()
    transport.receive(Array.from({ length: 4 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'count' })))
    transport.receive(Array.from({ length: 3 }, (_, i) => ({ jsonrpc: '2.0', id: 10 + i, method: 'count' })))
    const sent = await transport.frames(2)
    expect(sent[0]).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: a batch of 4 entries exceeds the limit of 3', data: { entries: 4, limit: 3 } } })
    expect(sent[1]).toHaveLength(3)
    expect(runs).toBe(3)
    expect(DEFAULTS.maxBatchSize).toBe(1000)
  })

  it('answers a million-entry batch with one error by default', async () => {
    const transport = new FakeTransport()
    const connection = createConnection(transport, { allowBatch: () => true })
    let runs = 0
    connection.setRequestHandler('ping', () => { runs++; return {} })
    connection.start()
    transport.receive(new Array(1_000_000).fill({ jsonrpc: '2.0', id: 1, method: 'ping' }))
    expect(await transport.frames(1)).toEqual([
      { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: a batch of 1000000 entries exceeds the limit of 1000', data: { entries: 1_000_000, limit: 1000 } } },
    ])
    expect(runs).toBe(0)
  })

  describe('a result the transport cannot encode', () => {
    const cyclic = () => { const value: Record<string, unknown> = { a: 1 }; value.self = value; return value }
    const cases: [string, () => unknown][] = [
      ['a cycle', () => ({ value: cyclic() })],
      ['a BigInt', () => ({ value: 10n })],
      ['a throwing toJSON', () => ({ value: { toJSON() { throw new Error('no') } } })],
      ['error data with a BigInt', () => { throw new McpError(-32000, 'custom', { n: 1n }) }],
    ]
    it.each(cases)('is answered with -32603 when it holds %s', async (_name, handler) => {
      const [a, b] = createMemoryPair({ serialize: true })
      const caller = createConnection(a)
      const events: InspectionEvent[] = []
      const callee = createConnection(b, { inspect: event => events.push(event) })
      callee.setRequestHandler('odd', handler)
      caller.start(); callee.start()
      const error = await lastValueFrom(caller.request('odd', undefined, { timeout: 0 })).catch(e => e)
      expect(error).toBeInstanceOf(InternalError)
      expect(error.message).toBe('Internal error: the result could not be serialized')
      expect(events).toContainEqual(expect.objectContaining({ type: 'rxmcp.handler.error', method: 'encode' }))
      expect(await firstValueFrom(caller.request('ping'))).toEqual({ type: 'result', result: {} })
    })

    it('becomes -32603 inside a batch while the other entries are answered', async () => {
      const sent: unknown[] = []
      const transport = new FakeTransport()
      // What goes on the wire, as JSON; then the fake records it, which `frames` waits on.
      const send = transport.send.bind(transport)
      transport.send = payload => { sent.push(JSON.parse(JSON.stringify(payload))); send(payload) }
      const connection = createConnection(transport, { allowBatch: () => true })
      connection.setRequestHandler('odd', () => ({ value: 1n }))
      connection.start()
      transport.receive([{ jsonrpc: '2.0', id: 1, method: 'odd' }, { jsonrpc: '2.0', id: 2, method: 'ping' }])
      await transport.frames(1)
      expect(sent).toEqual([[
        { jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'Internal error: the result could not be serialized' } },
        { jsonrpc: '2.0', id: 2, result: {} },
      ]])
    })
  })

  describe('a frame over the size limit', () => {
    it('fails the pending request at once when it was the response, naming the size and the limit', async () => {
      const transport = new FakeTransport()
      const connection = createConnection(transport)
      connection.start()
      const outcome = lastValueFrom(connection.request('tools/call', {}, { timeout: 0 })).catch(e => e)
      const id = (transport.sent[0] as { id: number }).id
      transport.receiveInvalid({ type: 'invalid', error: new FrameTooLargeError(4096, undefined, { size: 5000, id, kind: 'response' }) })
      const error = await outcome
      expect(error).toBeInstanceOf(FrameTooLargeError)
      expect(error.code).toBe('RXMCP_ERR_FRAME_TOO_LARGE')
      expect(error.message).toBe('Message of 5000 bytes exceeds the limit of 4096 bytes')
      expect(await transport.afterPing()).toHaveLength(1)
    })

    it('answers an oversized request with -32600 carrying its id', async () => {
      const transport = new FakeTransport()
      createConnection(transport).start()
      transport.receiveInvalid({ type: 'invalid', error: new FrameTooLargeError(4096, undefined, { size: 5000, id: 'big', kind: 'request' }) })
      transport.receiveInvalid({ type: 'invalid', error: new FrameTooLargeError(4096, undefined, { size: 6000 }) })
      expect(await transport.frames(2)).toEqual([
        { jsonrpc: '2.0', id: 'big', error: { code: -32600, message: 'Invalid Request: Message of 5000 bytes exceeds the limit of 4096 bytes', data: { size: 5000, limit: 4096 } } },
        { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: Message of 6000 bytes exceeds the limit of 4096 bytes' } },
      ])
    })

    it('drops an oversized response nobody waits for', async () => {
      const transport = new FakeTransport()
      const events: InspectionEvent[] = []
      createConnection(transport, { inspect: event => events.push(event) }).start()
      transport.receiveInvalid({ type: 'invalid', error: new FrameTooLargeError(10, undefined, { size: 20, id: 3, kind: 'response' }) })
      expect(await transport.afterPing()).toEqual([])
      expect(events).toContainEqual({ type: 'rxmcp.response.unknown', id: 3 })
    })
  })
})

describe('createConnection: shapeOutgoing', () => {
  it('shapes the requests, results and notifications it sends, per negotiated revision, and only those', async () => {
    const [a, b] = createMemoryPair()
    // The revision the session negotiated, read at each send (as a session does).
    let version = '2025-11-25'
    const server = createConnection(a, { shapeOutgoing: (kind, method, payload) => shapeForRevision(kind, method, payload, version) })
    const client = createConnection(b)
    const seen: unknown[] = []
    client.setRequestHandler('sampling/createMessage', params => { seen.push(params); return { role: 'assistant', content: { type: 'text', text: '' }, model: 'm' } })
    server.setRequestHandler('tools/list', () => ({ tools: [{ name: 'a', inputSchema: { type: 'object' }, icons: [{ src: 'x' }], execution: {} }] }))
    const progress = collected<unknown>()
    client.notifications('notifications/progress').subscribe(params => progress.push(params))
    server.start(); client.start()
    const sampling = { messages: [], maxTokens: 1, tools: [] }
    version = '2025-06-18'
    await lastValueFrom(server.request('sampling/createMessage', sampling, { progress: false }))
    await server.notify('notifications/progress', { progressToken: 1, progress: 1, message: 'm' })
    version = '2024-11-05'
    expect(await lastValueFrom(client.request('tools/list'))).toEqual({ type: 'result', result: { tools: [{ name: 'a', inputSchema: { type: 'object' } }] } })
    await server.notify('notifications/progress', { progressToken: 1, progress: 2, message: 'm' })
    version = '2025-11-25'
    await lastValueFrom(server.request('sampling/createMessage', sampling, { progress: false }))
    await progress.when(items => items.length === 2)
    expect(seen).toEqual([{ messages: [], maxTokens: 1 }, sampling])
    expect(progress.items).toEqual([{ progressToken: 1, progress: 1, message: 'm' }, { progressToken: 1, progress: 2 }])
  })

  it('sends everything as it is without the option', async () => {
    const { caller, callee, start } = pair()
    const tool = { name: 'a', inputSchema: { type: 'object' }, icons: [{ src: 'x' }] }
    callee.setRequestHandler('tools/list', () => ({ tools: [tool] }))
    start()
    expect(await lastValueFrom(caller.request('tools/list'))).toEqual({ type: 'result', result: { tools: [tool] } })
  })
})

describe('createConnection: what goes with each message (SendOptions)', () => {
  /** A transport that records each send with its options, and plays frames from the peer. */
  function recordingTransport() {
    const inbound = new Subject<Inbound>()
    const sends: { payload: JsonRpcPayload; options: SendOptions | undefined; argumentCount: number }[] = []
    const transport: Transport = {
      inbound,
      send(payload, ...rest: [SendOptions?]) { sends.push({ payload, options: rest[0], argumentCount: 1 + rest.length }) },
      close: async () => inbound.complete(),
    }
    return { transport, inbound, sends }
  }

  it('passes no options when there is nothing to tell, then one shared object per protocol version', async () => {
    const { transport, sends } = recordingTransport()
    let version: string | undefined
    const connection = createConnection(transport, { protocolVersion: () => version })
    connection.start()
    await connection.notify('notifications/one')
    version = '2025-11-25'
    await connection.notify('notifications/two')
    await connection.notify('notifications/three')
    version = '2025-06-18'
    await connection.notify('notifications/four')
    expect(sends.map(send => [send.argumentCount, send.options])).toEqual([
      [1, undefined], [2, { protocolVersion: '2025-11-25' }], [2, { protocolVersion: '2025-11-25' }], [2, { protocolVersion: '2025-06-18' }],
    ])
    expect(sends[2]!.options).toBe(sends[1]!.options)
  })

  it('passes a request\'s headers and the version with its message only, and the related request with an answer', async () => {
    const { transport, inbound, sends } = recordingTransport()
    const connection = createConnection(transport, { protocolVersion: () => '2025-11-25' })
    connection.setRequestHandler('ping', () => ({}))
    connection.start()
    const headers = { 'mcp-param-region': 'eu' }
    const subscription = connection.request('tools/call', { name: 'route' }, { headers, progress: false }).subscribe()
    inbound.next({ type: 'message', message: { jsonrpc: '2.0', id: 'p1', method: 'ping' } })
    subscription.unsubscribe()
    expect(sends.map(send => send.options)).toEqual([
      { protocolVersion: '2025-11-25', headers },
      { relatedRequestId: 'p1', protocolVersion: '2025-11-25' },
      // The cancellation of the call is a message of its own: no headers.
      { protocolVersion: '2025-11-25' },
    ])
    expect(sends[2]!.payload).toMatchObject({ method: 'notifications/cancelled' })
  })

  it('gives the result what the transport told of the frame that carried it (requestInfo), and nothing when it told nothing', async () => {
    const { transport, inbound } = recordingTransport()
    const connection = createConnection(transport)
    connection.start()
    const requestInfo = bareRequestInfo('streamable-http')
    const told = lastValueFrom(connection.request('one', undefined, { progress: false }))
    inbound.next({ type: 'message', message: { jsonrpc: '2.0', id: 0, result: { n: 1 } }, requestInfo })
    const silent = lastValueFrom(connection.request('two', undefined, { progress: false }))
    inbound.next({ type: 'message', message: { jsonrpc: '2.0', id: 1, result: { n: 2 } } })
    expect(await told).toStrictEqual({ type: 'result', result: { n: 1 }, requestInfo })
    expect(await silent).toStrictEqual({ type: 'result', result: { n: 2 } })
  })
})

describe('an input that ends before the output (Transport.answersAfterEndMs)', () => {
  const call = (id: number, method: string) => ({ jsonrpc: '2.0', id, method })

  it('answers the requests in flight, then closes, and fails its own requests at once', async () => {
    const transport = new FakeTransport()
    transport.answersAfterEndMs = 10_000
    const clock = new TestClock()
    const events: InspectionEvent[] = []
    const connection = createConnection(transport, { scheduler: clock, inspect: event => events.push(event) })
    let answer!: (value: { done: boolean }) => void
    connection.setRequestHandler('slow', () => new Promise(resolve => { answer = resolve }))
    connection.start()
    transport.receive(call(1, 'slow'))
    const asked = firstValueFrom(connection.request('roots/list', undefined, { timeout: 0 })).catch(error => error)
    transport.end()
    expect(await asked).toBeInstanceOf(ConnectionClosedError)
    expect(connection.isClosed).toBe(false)
    expect(events).toContainEqual({ type: 'rxmcp.ending', inFlight: 1 })
    // Nothing more can be asked of a peer that reads no more.
    await expect(firstValueFrom(connection.request('ping'))).rejects.toBeInstanceOf(ConnectionClosedError)
    answer({ done: true })
    const sent = await transport.frames(2)
    expect(sent[1]).toEqual({ jsonrpc: '2.0', id: 1, result: { done: true } })
    expect(connection.isClosed).toBe(false)
    // One turn later (after an answer held back behind its progress), with nothing left, it closes.
    clock.advance(0)
    expect(connection.isClosed).toBe(true)
  })

  it('stops what still runs when the grace is over, unanswered', async () => {
    const transport = new FakeTransport()
    transport.answersAfterEndMs = 5_000
    const clock = new TestClock()
    const connection = createConnection(transport, { scheduler: clock })
    const aborted = new Promise<unknown>(resolve => connection.setRequestHandler('hang', (_params, request) => {
      request.signal.addEventListener('abort', () => resolve(request.signal.reason))
      return NEVER
    }))
    connection.start()
    transport.receive(call(1, 'hang'))
    transport.end()
    expect(await clock.nextWait(5_000)).toBe(5_000)
    clock.advance(4_999)
    expect(connection.isClosed).toBe(false)
    clock.advance(1)
    expect(connection.isClosed).toBe(true)
    expect(await aborted).toBeInstanceOf(ConnectionClosedError)
    expect(transport.sent).toEqual([])
  })

  it('closes at once when nothing is in flight, or when the transport answers nothing after its end', async () => {
    for (const answersAfterEndMs of [10_000, undefined]) {
      const transport = new FakeTransport()
      transport.answersAfterEndMs = answersAfterEndMs
      const connection = createConnection(transport)
      connection.setRequestHandler('hang', () => NEVER)
      connection.start()
      if (answersAfterEndMs === undefined) transport.receive(call(1, 'hang'))
      transport.end()
      expect(connection.isClosed).toBe(true)
      await connection.closed
    }
  })
})
