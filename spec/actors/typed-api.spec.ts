import { describe, expect, it } from 'vitest'
import { firstValueFrom, interval, last, lastValueFrom, map, take, tap, toArray } from 'rxjs'
import * as z from 'zod'
import { createServer, type McpServer } from '../../actors/server.ts'
import { connectInMemory } from '../../testing.ts'
import { resultOf } from '../../lib/operators/progress.ts'
import { InvalidParamsError } from '../../lib/jsonrpc/errors.ts'
import type { StandardSchemaV1 } from '../../lib/standard-schema.ts'
import { verifies } from '../helpers/verifies.ts'

function quietServer(): McpServer {
  return createServer({ name: 'typed', version: '1.0.0' }, { reportUnhandledError: () => {} })
}

/** A Standard Schema made by hand, as a library without a JSON Schema converter would give. */
function evenSchema(): StandardSchemaV1<{ n: number }, { n: number; half: number }> {
  return {
    '~standard': {
      version: 1,
      vendor: 'hand-made',
      validate: value => {
        const n = (value as { n?: unknown }).n
        if (typeof n !== 'number') return { issues: [{ message: 'expected a number', path: [{ key: 'n' }] }] }
        if (n % 2 !== 0) return { issues: [{ message: 'must be even', path: ['n'] }] }
        return { value: { n, half: n / 2 } }
      },
    },
  }
}

const EVEN_JSON_SCHEMA = { type: 'object' as const, properties: { n: { type: 'integer', multipleOf: 2 } }, required: ['n'] }

describe('McpServer.tool with a Standard Schema', () => {
  it('sends the JSON Schema derived from a zod schema in tools/list', async () => {
    const server = quietServer()
    server.tool('add', {
      description: 'Adds',
      inputSchema: z.object({ a: z.number().describe('first'), b: z.number().default(0) }),
    }, ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }))
    await using pair = await connectInMemory(server)
    const [tool] = await lastValueFrom(pair.client.tools().pipe(toArray()))
    expect(tool).toEqual({
      name: 'add',
      description: 'Adds',
      inputSchema: { type: 'object', properties: { a: { type: 'number', description: 'first' }, b: { type: 'number', default: 0 } }, required: ['a'] },
    })
  })

  it('calls the handler with the arguments the schema gave back', async () => {
    const server = quietServer()
    server.tool('add', { inputSchema: z.object({ a: z.number(), b: z.number().default(10), label: z.string().transform(s => s.toUpperCase()) }) },
      ({ a, b, label }) => ({ content: [{ type: 'text', text: `${label}=${a + b}` }] }))
    await using pair = await connectInMemory(server)
    expect(await pair.client.callTool('add', { a: 1, label: 'sum' })).toEqual({ content: [{ type: 'text', text: 'SUM=11' }] })
    expect(await pair.client.callTool('add', { a: 1, b: 2, label: 'x' })).toEqual({ content: [{ type: 'text', text: 'X=3' }] })
  })

  verifies('tools:input-validation', 'reports arguments the schema refuses as a tool result with isError, naming each issue and its path', async () => {
    const server = quietServer()
    let calls = 0
    server.tool('add', { inputSchema: z.object({ a: z.number(), nested: z.object({ b: z.string() }) }) }, () => {
      calls++
      return { content: [] }
    })
    server.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
      ({ text }) => ({ content: [{ type: 'text', text: String(text) }] }))
    await using pair = await connectInMemory(server)
    expect(await pair.client.callTool('add', { a: 'one', nested: { b: 2 } })).toEqual({
      content: [{ type: 'text', text: 'Invalid arguments for tool add: /a: Invalid input: expected number, received string; /nested/b: Invalid input: expected string, received number' }],
      isError: true,
    })
    // The JSON Schema path answers in the same shape.
    expect(await pair.client.callTool('echo', { text: 5 })).toEqual({ content: [{ type: 'text', text: 'Invalid arguments for tool echo: /text: must be string' }], isError: true })
    expect(calls).toBe(0)
  })

  it('waits for an async validator, and keeps the progress and result of an Observable handler', async () => {
    const server = quietServer()
    const taken = new Set(['alice'])
    const schema = z.object({ user: z.string(), steps: z.number().int() })
      .refine(async value => !taken.has(value.user), { message: 'is taken', path: ['user'] })
    server.tool('register', { inputSchema: schema }, ({ user, steps }, ctx) =>
      interval(1).pipe(take(steps), tap(i => ctx.progress(i + 1, steps)), last(), map(() => ({ content: [{ type: 'text' as const, text: `hello ${user}` }] }))))
    await using pair = await connectInMemory(server)
    const progress: number[] = []
    expect(await pair.client.callTool('register', { user: 'bob', steps: 3 }, { onProgress: event => progress.push(event.progress) }))
      .toEqual({ content: [{ type: 'text', text: 'hello bob' }] })
    expect(progress).toEqual([1, 2, 3])
    expect(await pair.client.callTool('register', { user: 'alice', steps: 1 }))
      .toEqual({ content: [{ type: 'text', text: 'Invalid arguments for tool register: /user: is taken' }], isError: true })
  })

  it('turns a validator that throws into an isError result', async () => {
    const server = quietServer()
    server.tool('fragile', { inputSchema: z.object({ a: z.string() }).refine(() => { throw new Error('validator broke') }) }, () => ({ content: [] }))
    // Hand-made: zod's own async refinements leave a rejection of their first, synchronous attempt unhandled.
    const rejecting: StandardSchemaV1<{ a: string }> = {
      '~standard': { version: 1, vendor: 'hand-made', validate: () => Promise.reject(new Error('async validator broke')) },
    }
    server.tool('fragile-async', { inputSchema: rejecting, inputJsonSchema: { type: 'object' } }, () => ({ content: [] }))
    await using pair = await connectInMemory(server)
    expect(await pair.client.callTool('fragile', { a: 'x' })).toEqual({ content: [{ type: 'text', text: 'validator broke' }], isError: true })
    expect(await pair.client.callTool('fragile-async', { a: 'x' })).toEqual({ content: [{ type: 'text', text: 'async validator broke' }], isError: true })
  })

  it('takes a hand-made Standard Schema with the JSON Schema given beside it', async () => {
    const server = quietServer()
    server.tool('halve', { inputSchema: evenSchema(), inputJsonSchema: EVEN_JSON_SCHEMA },
      ({ n, half }) => ({ content: [{ type: 'text', text: `${n}/2=${half}` }] }))
    await using pair = await connectInMemory(server)
    expect((await pair.client.listTools()).tools[0]!.inputSchema).toEqual(EVEN_JSON_SCHEMA)
    expect(await pair.client.callTool('halve', { n: 8 })).toEqual({ content: [{ type: 'text', text: '8/2=4' }] })
    expect(await pair.client.callTool('halve', { n: 3 })).toEqual({ content: [{ type: 'text', text: 'Invalid arguments for tool halve: /n: must be even' }], isError: true })
    expect(await pair.client.callTool('halve', {})).toEqual({ content: [{ type: 'text', text: 'Invalid arguments for tool halve: /n: expected a number' }], isError: true })
  })

  it('prefers the JSON Schema given beside a schema over its own conversion', async () => {
    const server = quietServer()
    const given = { type: 'object' as const, properties: { a: { type: 'number', minimum: 0 } } }
    server.tool('t', { inputSchema: z.object({ a: z.number() }), inputJsonSchema: given }, () => ({ content: [] }))
    await using pair = await connectInMemory(server)
    expect((await pair.client.listTools()).tools[0]!.inputSchema).toEqual(given)
  })

  it('throws at registration, naming the tool, when a Standard Schema has no JSON Schema', () => {
    const server = quietServer()
    expect(() => server.tool('halve', { inputSchema: evenSchema() }, () => ({ content: [] })))
      .toThrow(new TypeError('Tool "halve": the hand-made schema of inputSchema has no JSON Schema converter; pass its JSON Schema as inputJsonSchema'))
    // Nothing was registered: the name is still free.
    expect(() => server.tool('halve', { inputSchema: evenSchema(), inputJsonSchema: EVEN_JSON_SCHEMA }, () => ({ content: [] }))).not.toThrow()
  })

  it('throws at registration when the converter fails or the schema is not of an object', () => {
    const server = quietServer()
    expect(() => server.tool('when', { inputSchema: z.object({ at: z.date() }) }, () => ({ content: [] })))
      .toThrow(/^Tool "when": the zod schema of inputSchema cannot be converted to JSON Schema \(.+\); pass its JSON Schema as inputJsonSchema$/)
    // @ts-expect-error a tool's arguments are an object
    expect(() => server.tool('text', { inputSchema: z.string() }, () => ({ content: [] }))).toThrow(new TypeError('Tool "text": inputSchema must have type "object"'))
    expect(() => server.tool('stray', { inputSchema: { type: 'object' }, inputJsonSchema: { type: 'object' } }, () => ({ content: [] })))
      .toThrow(new TypeError('Tool "stray": inputJsonSchema goes with a Standard Schema inputSchema'))
  })

  it('swaps the schema on update', async () => {
    const server = quietServer()
    const registration = server.tool('t', { inputSchema: z.object({ a: z.number() }) }, args => ({ content: [{ type: 'text', text: JSON.stringify(args) }] }))
    await using pair = await connectInMemory(server)
    expect(await pair.client.callTool('t', { a: 1 })).toEqual({ content: [{ type: 'text', text: '{"a":1}' }] })
    registration.update({ inputSchema: z.object({ a: z.number().min(5) }) })
    expect((await pair.client.listTools()).tools[0]!.inputSchema).toEqual({ type: 'object', properties: { a: { type: 'number', minimum: 5 } }, required: ['a'] })
    expect(await pair.client.callTool('t', { a: 7 })).toEqual({ content: [{ type: 'text', text: '{"a":7}' }] })
    expect((await pair.client.callTool('t', { a: 1 })).isError).toBe(true)
  })
})

describe('McpServer.tool with a Standard Schema outputSchema', () => {
  function statsServer(): McpServer {
    const server = quietServer()
    server.tool('stats', {
      inputSchema: z.object({ values: z.array(z.number()) }),
      outputSchema: z.object({ mean: z.number(), count: z.number().int(), unit: z.string().default('none') }),
    }, ({ values }) => values.length === 0
      ? { content: [{ type: 'text', text: 'no values' }], isError: true }
      : { content: [], structuredContent: { mean: values.reduce((a, b) => a + b, 0) / values.length, count: values.length } })
    server.tool('wrong', { outputSchema: z.object({ count: z.number().int() }) },
      () => ({ content: [], structuredContent: { count: 1.5 } }))
    server.tool('streamed', { outputSchema: z.object({ done: z.boolean() }) }, (_args, ctx) =>
      interval(1).pipe(take(2), tap(i => ctx.progress(i + 1, 2)), last(), map(() => ({ content: [], structuredContent: { done: true } }))))
    return server
  }

  it('lists the JSON Schema of its output type and sends what it gives back', async () => {
    await using pair = await connectInMemory(statsServer())
    const { tools } = await pair.client.listTools()
    expect(tools[0]!.outputSchema).toEqual({
      type: 'object',
      properties: { mean: { type: 'number' }, count: { type: 'integer', minimum: expect.any(Number), maximum: expect.any(Number) }, unit: { type: 'string', default: 'none' } },
      required: ['mean', 'count', 'unit'], additionalProperties: false,
    })
    // The default is filled in before sending, so the client's own check against the listed schema passes.
    expect(await pair.client.callTool('stats', { values: [1, 2, 3] }))
      .toEqual({ content: [], structuredContent: { mean: 2, count: 3, unit: 'none' } })
    expect(await pair.client.callTool('stats', { values: [] })).toEqual({ content: [{ type: 'text', text: 'no values' }], isError: true })
    const progress: number[] = []
    expect(await pair.client.callTool('streamed', {}, { onProgress: event => progress.push(event.progress) }))
      .toEqual({ content: [], structuredContent: { done: true } })
    expect(progress).toEqual([1, 2])
  })

  verifies('tools:output-schema', 'fails the call with -32603 when structuredContent does not match', async () => {
    await using pair = await connectInMemory(statsServer())
    await expect(pair.client.callTool('wrong')).rejects.toMatchObject({
      code: -32603,
      message: 'Tool wrong returned structuredContent that does not match its outputSchema: /count: Invalid input: expected int, received number',
    })
  })

  it('waits for an async validator, with the JSON Schema given beside a hand-made schema', async () => {
    const server = quietServer()
    const positive: StandardSchemaV1<{ n: number }> = {
      '~standard': {
        version: 1,
        vendor: 'hand-made',
        validate: async value => (value as { n: number }).n > 0 ? { value: value as { n: number } } : { issues: [{ message: 'must be positive', path: ['n'] }] },
      },
    }
    const outputJsonSchema = { type: 'object' as const, properties: { n: { type: 'number', exclusiveMinimum: 0 } }, required: ['n'] }
    server.tool('echo-n', { inputSchema: z.object({ n: z.number() }), outputSchema: positive, outputJsonSchema },
      async ({ n }) => ({ content: [], structuredContent: { n } }))
    await using pair = await connectInMemory(server)
    expect((await pair.client.listTools()).tools[0]!.outputSchema).toEqual(outputJsonSchema)
    expect((await pair.client.callTool('echo-n', { n: 2 })).structuredContent).toEqual({ n: 2 })
    await expect(pair.client.callTool('echo-n', { n: -1 })).rejects.toMatchObject({ code: -32603, message: expect.stringContaining('/n: must be positive') })
    expect(() => server.tool('bare', { outputSchema: positive }, () => ({ content: [], structuredContent: { n: 1 } })))
      .toThrow(new TypeError('Tool "bare": the hand-made schema of outputSchema has no JSON Schema converter; pass its JSON Schema as outputJsonSchema'))
  })
})

describe('McpServer.tool with an as-const JSON Schema', () => {
  it('sends and checks it as any JSON Schema', async () => {
    const server = quietServer()
    const schema = { type: 'object', properties: { text: { type: 'string' }, times: { type: 'integer' } }, required: ['text'] } as const
    server.tool('repeat', { inputSchema: schema }, ({ text, times }) => ({ content: [{ type: 'text', text: text.repeat(times ?? 1) }] }))
    await using pair = await connectInMemory(server)
    expect((await pair.client.listTools()).tools[0]!.inputSchema).toEqual(schema)
    expect(await pair.client.callTool('repeat', { text: 'ab', times: 2 })).toEqual({ content: [{ type: 'text', text: 'abab' }] })
    expect(await pair.client.callTool('repeat', { times: 2 })).toEqual({ content: [{ type: 'text', text: 'Invalid arguments for tool repeat: must have required property \'text\'' }], isError: true })
  })
})

describe('McpServer.prompt with a Standard Schema', () => {
  function promptServer(): McpServer {
    const server = quietServer()
    server.prompt('review', {
      description: 'Code review',
      argumentsSchema: z.object({
        code: z.string().describe('The code'),
        language: z.enum(['ts', 'py']).optional(),
        depth: z.string().regex(/^\d+$/).transform(Number).optional(),
      }),
    }, ({ code, language, depth }) => ({
      messages: [{ role: 'user', content: { type: 'text', text: `${language ?? 'any'}:${depth ?? 1}:${code}` } }],
    }))
    return server
  }

  it('lists the arguments read off the schema', async () => {
    await using pair = await connectInMemory(promptServer())
    expect((await pair.client.listPrompts()).prompts).toEqual([{
      name: 'review',
      description: 'Code review',
      arguments: [
        { name: 'code', description: 'The code', required: true },
        { name: 'language', required: false },
        { name: 'depth', required: false },
      ],
    }])
  })

  it('gives the handler the arguments the schema gave back', async () => {
    await using pair = await connectInMemory(promptServer())
    const result = await pair.client.getPrompt('review', { code: 'x = 1', language: 'py', depth: '3' })
    expect(result.messages).toEqual([{ role: 'user', content: { type: 'text', text: 'py:3:x = 1' } }])
  })

  verifies('prompts:required-arguments', 'answers -32602 for arguments the schema refuses or a missing required one', async () => {
    await using pair = await connectInMemory(promptServer())
    const refused = await pair.client.getPrompt('review', { code: 'x', language: 'rust' }).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(InvalidParamsError)
    expect(refused).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/^Invalid params: invalid arguments for prompt review: \/language: /),
      data: { issues: [{ path: '/language', message: expect.any(String) }] },
    })
    const missing = await pair.client.getPrompt('review', {}).catch((error: unknown) => error)
    expect(missing).toMatchObject({ code: -32602, message: 'Invalid params: missing required argument "code" of prompt review' })
  })

  it('waits for an async validator', async () => {
    const server = quietServer()
    server.prompt('greet', { argumentsSchema: z.object({ name: z.string() }).refine(async value => value.name !== 'nobody', { message: 'is nobody', path: ['name'] }) },
      ({ name }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `hi ${name}` } }] }))
    await using pair = await connectInMemory(server)
    expect((await pair.client.getPrompt('greet', { name: 'ann' })).messages[0]!.content).toEqual({ type: 'text', text: 'hi ann' })
    await expect(pair.client.getPrompt('greet', { name: 'nobody' })).rejects.toMatchObject({ code: -32602, message: 'Invalid params: invalid arguments for prompt greet: /name: is nobody' })
  })

  it('takes a hand-made schema with its JSON Schema, or hand-written arguments', async () => {
    const server = quietServer()
    const schema: StandardSchemaV1<{ topic: string }> = {
      '~standard': { version: 1, vendor: 'hand-made', validate: value => ({ value: value as { topic: string } }) },
    }
    server.prompt('explain', {
      argumentsSchema: schema,
      argumentsJsonSchema: { type: 'object', properties: { topic: { type: 'string', title: 'Topic' } }, required: ['topic'] },
    }, ({ topic }) => ({ messages: [{ role: 'user', content: { type: 'text', text: topic } }] }))
    server.prompt('summarize', { argumentsSchema: schema, arguments: [{ name: 'topic', description: 'What about', required: true }] },
      ({ topic }) => ({ messages: [{ role: 'user', content: { type: 'text', text: topic } }] }))
    expect(() => server.prompt('bare', { argumentsSchema: schema }, () => ({ messages: [] })))
      .toThrow(new TypeError('Prompt "bare": the hand-made schema of argumentsSchema has no JSON Schema converter; pass its JSON Schema as argumentsJsonSchema'))
    await using pair = await connectInMemory(server)
    expect((await pair.client.listPrompts()).prompts).toEqual([
      { name: 'explain', arguments: [{ name: 'topic', title: 'Topic', required: true }] },
      { name: 'summarize', arguments: [{ name: 'topic', description: 'What about', required: true }] },
    ])
    expect((await pair.client.getPrompt('explain', { topic: 'rx' })).messages[0]!.content).toEqual({ type: 'text', text: 'rx' })
  })
})

describe('typed request, notify and notifications', () => {
  it('carries typed requests and notifications both ways', async () => {
    const server = quietServer()
    server.tool('add', { inputSchema: z.object({ a: z.number(), b: z.number() }) }, ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }))
    await using pair = await connectInMemory(server, { roots: [{ uri: 'file:///work', name: 'work' }] })
    const result = await lastValueFrom(pair.client.request('tools/call', { name: 'add', arguments: { a: 2, b: 3 } }).pipe(resultOf()))
    expect(result.content).toEqual([{ type: 'text', text: '5' }])
    const roots = await lastValueFrom(pair.session.request('roots/list').pipe(resultOf()))
    expect(roots.roots).toEqual([{ uri: 'file:///work', name: 'work' }])
    const heard = firstValueFrom(pair.session.notifications('notifications/roots/list_changed'))
    await pair.client.notify('notifications/roots/list_changed')
    expect(await heard).toEqual({})
    const updated = firstValueFrom(pair.client.notifications('notifications/resources/updated'))
    pair.session.notify('notifications/resources/updated', { uri: 'file:///work/a' })
    expect((await updated).uri).toBe('file:///work/a')
  })
})
