import { describe, expect, it } from 'vitest'
import {
  createAnthropicStreamAssembler, fromAnthropicToolUse, toAnthropicMessages, toAnthropicSchema, toAnthropicToolResult, toAnthropicTools,
} from '../../lib/llm/anthropic.ts'
import {
  createOpenAiStreamAssembler, fromOpenAiToolCall, openaiRequestBody, toOpenAiMessages, toOpenAiSchema, toOpenAiToolMessage, toOpenAiTools,
} from '../../lib/llm/openai.ts'
import { parseToolCall, resultParts, type ModelEvent, type ModelMessage } from '../../lib/llm/messages.ts'
import { samplingRequest, samplingResult } from '../../lib/llm/sampling.ts'
import { ModelErrorCode, ModelStreamError, parseRetryAfter, redact } from '../../lib/llm/errors.ts'
import { createSseParser } from '../../lib/codec/sse.ts'
import type { CallToolResult, Tool } from '../../lib/schema/types.ts'

const weather: Tool = {
  name: 'weather',
  description: 'The weather in a city',
  inputSchema: {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: { city: { $ref: '#/$defs/city' } },
    required: ['city'],
    $defs: { city: { type: 'string' } },
  },
}
const bare = { name: 'ping', inputSchema: undefined } as unknown as Tool
const tools = [{ name: 'srv__weather', tool: weather }, { name: 'srv__ping', tool: bare }]

const PNG = 'iVBORw0KGgo='
const mixed: CallToolResult = {
  content: [
    { type: 'text', text: 'hello' },
    { type: 'image', data: PNG, mimeType: 'image/png' },
    { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
    { type: 'resource', resource: { uri: 'file:///a.txt', mimeType: 'text/plain', text: 'file text' } },
    { type: 'resource', resource: { uri: 'file:///b.png', mimeType: 'image/png', blob: PNG } },
    { type: 'resource', resource: { uri: 'file:///c.bin', mimeType: 'application/octet-stream', blob: 'AAAAAAAA' } },
    { type: 'resource_link', uri: 'file:///d.md', name: 'd.md', mimeType: 'text/markdown' },
  ],
}

describe('toOpenAiSchema', () => {
  it.each([
    ['a missing schema', undefined, { type: 'object', properties: {} }],
    ['a schema without properties', { type: 'object' }, { type: 'object', properties: {} }],
    ['a schema with another type', { type: 'string' }, { type: 'object', properties: {} }],
    ['$schema and $id', { $schema: 'x', $id: 'y', type: 'object', properties: { a: { type: 'number' } } }, { type: 'object', properties: { a: { type: 'number' } } }],
  ])('gives an object schema for %s', (_, schema, expected) => {
    expect(toOpenAiSchema(schema as Record<string, unknown> | undefined)).toEqual(expected)
  })

  it('keeps $defs and $ref intact', () => {
    const out = toOpenAiSchema(weather.inputSchema)
    expect(out.$defs).toEqual({ city: { type: 'string' } })
    expect(out.properties).toEqual({ city: { $ref: '#/$defs/city' } })
    expect(out).not.toHaveProperty('$schema')
  })
})

describe('toOpenAiTools', () => {
  it('gives function tools under the namespaced names', () => {
    expect(toOpenAiTools(tools)).toEqual([
      { type: 'function', function: { name: 'srv__weather', description: 'The weather in a city', parameters: toOpenAiSchema(weather.inputSchema) } },
      { type: 'function', function: { name: 'srv__ping', parameters: { type: 'object', properties: {} } } },
    ])
  })
})

describe('toAnthropicTools', () => {
  it('gives input_schema of type object, $defs kept', () => {
    const [first, second] = toAnthropicTools(tools)
    expect(first).toEqual({ name: 'srv__weather', description: 'The weather in a city', input_schema: weather.inputSchema })
    expect(second).toEqual({ name: 'srv__ping', input_schema: { type: 'object' } })
    expect(toAnthropicSchema({ properties: {} })).toEqual({ type: 'object', properties: {} })
  })
})

describe('resultParts', () => {
  it('flattens every content type to text and images', () => {
    expect(resultParts(mixed)).toEqual([
      { type: 'text', text: 'hello' },
      { type: 'image', data: PNG, mimeType: 'image/png' },
      { type: 'text', text: '[audio audio/wav, 3 bytes, not shown]' },
      { type: 'text', text: '[resource file:///a.txt (text/plain)]\nfile text' },
      { type: 'image', data: PNG, mimeType: 'image/png' },
      { type: 'text', text: '[resource file:///c.bin (application/octet-stream), 6 bytes of binary data, not shown]' },
      { type: 'text', text: '[resource link file:///d.md: d.md, text/markdown]' },
    ])
  })

  it('adds structuredContent as JSON only when there is no text', () => {
    expect(resultParts({ content: [], structuredContent: { temp: 21 } })).toEqual([{ type: 'text', text: '{"temp":21}' }])
    expect(resultParts({ content: [{ type: 'text', text: '21 degrees' }], structuredContent: { temp: 21 } })).toEqual([{ type: 'text', text: '21 degrees' }])
  })
})

describe('toAnthropicToolResult', () => {
  it('gives text and image blocks', () => {
    const block = toAnthropicToolResult('toolu_1', mixed)
    expect(block.tool_use_id).toBe('toolu_1')
    expect(block).not.toHaveProperty('is_error')
    expect(block.content.map(b => b.type)).toEqual(['text', 'image', 'text', 'text', 'image', 'text', 'text'])
    expect(block.content[1]).toEqual({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } })
  })

  it('sets is_error', () => {
    expect(toAnthropicToolResult('t', { content: [{ type: 'text', text: 'boom' }], isError: true }))
      .toEqual({ type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: 'boom' }], is_error: true })
  })

  it('gives structuredContent as text when there is none', () => {
    expect(toAnthropicToolResult('t', { content: [], structuredContent: { a: 1 } }).content).toEqual([{ type: 'text', text: '{"a":1}' }])
  })
})

describe('toOpenAiToolMessage', () => {
  it('gives a tool message with text content, images as notes', () => {
    const message = toOpenAiToolMessage('call_1', { content: [{ type: 'text', text: 'a' }, { type: 'image', data: PNG, mimeType: 'image/png' }] })
    expect(message).toEqual({ role: 'tool', tool_call_id: 'call_1', content: 'a\n\n[image image/png, not shown: this API takes only text in tool results]' })
  })

  it.each([
    ['an error', { content: [{ type: 'text', text: 'boom' }], isError: true }, 'Error: boom'],
    ['structuredContent only', { content: [], structuredContent: { a: [1, 2] } }, '{"a":[1,2]}'],
    ['an empty result', { content: [] }, '(no output)'],
    ['an embedded text resource', { content: [{ type: 'resource', resource: { uri: 'mem://x', text: 'X' } }] }, '[resource mem://x]\nX'],
  ])('maps %s', (_, result, content) => {
    expect(toOpenAiToolMessage('c', result as CallToolResult)).toMatchObject({ content })
  })
})

describe('parseToolCall', () => {
  it.each([
    ['an object', '{"city":"Oslo"}', { arguments: { city: 'Oslo' } }],
    ['empty text', '', { arguments: {} }],
    ['bad JSON', '{"city":', { arguments: {}, rawArguments: '{"city":', invalidArguments: expect.stringContaining('not valid JSON') }],
    ['an array', '[1]', { arguments: {}, rawArguments: '[1]', invalidArguments: 'arguments are not a JSON object' }],
  ])('parses %s', (_, json, expected) => {
    expect(parseToolCall('id', 'n', json)).toEqual({ type: 'tool-call', id: 'id', name: 'n', ...expected })
  })

  it('maps OpenAI and Anthropic tool calls', () => {
    expect(fromOpenAiToolCall({ id: 'c', function: { name: 'n', arguments: 'nope' } }).invalidArguments).toMatch(/not valid JSON/)
    expect(fromAnthropicToolUse({ id: 't', name: 'n', input: { a: 1 } })).toEqual({ type: 'tool-call', id: 't', name: 'n', arguments: { a: 1 } })
    expect(fromAnthropicToolUse({ id: 't', name: 'n', input: 'x' }).invalidArguments).toBeDefined()
  })
})

const history: ModelMessage[] = [
  { role: 'user', content: [{ type: 'text', text: 'Look' }, { type: 'image', data: PNG, mimeType: 'image/png' }] },
  { role: 'assistant', content: [{ type: 'tool-call', id: 'c1', name: 'srv__weather', arguments: { city: 'Oslo' } }] },
  { role: 'user', content: [{ type: 'tool-result', id: 'c1', name: 'srv__weather', result: { content: [{ type: 'text', text: 'rain' }] } }, { type: 'text', text: 'and?' }] },
  { role: 'assistant', content: [{ type: 'text', text: 'Rain.' }] },
]

describe('toOpenAiMessages', () => {
  it('puts the system prompt first, tool results as tool messages, images as data URLs', () => {
    expect(toOpenAiMessages(history, 'Be brief')).toEqual([
      { role: 'system', content: 'Be brief' },
      { role: 'user', content: [{ type: 'text', text: 'Look' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'srv__weather', arguments: '{"city":"Oslo"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'rain' },
      { role: 'user', content: 'and?' },
      { role: 'assistant', content: 'Rain.' },
    ])
  })

  it('sends bad arguments back as the model wrote them', () => {
    const call = parseToolCall('c', 'n', '{oops')
    const [message] = toOpenAiMessages([{ role: 'assistant', content: [call] }])
    expect(message).toMatchObject({ tool_calls: [{ function: { arguments: '{oops' } }] })
  })

  it('asks for usage and max_completion_tokens in the body', () => {
    expect(openaiRequestBody({ messages: [], maxTokens: 5 }, { model: 'm', stream: true })).toEqual({
      model: 'm', messages: [], max_completion_tokens: 5, stream: true, stream_options: { include_usage: true },
    })
    expect(openaiRequestBody({ messages: [] }, { model: 'm', maxTokens: 7, maxTokensField: 'max_tokens', stream: true, includeUsage: false }))
      .toEqual({ model: 'm', messages: [], max_tokens: 7, stream: true })
  })
})

describe('toAnthropicMessages', () => {
  it('maps tool calls to tool_use and results to tool_result blocks', () => {
    expect(toAnthropicMessages(history)).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Look' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'srv__weather', input: { city: 'Oslo' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: [{ type: 'text', text: 'rain' }] }, { type: 'text', text: 'and?' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Rain.' }] },
    ])
  })
})

/** Feeds SSE text to an assembler through the real parser, split into chunks of `size` characters. */
function assemble(text: string, assembler: { push: (e: any) => ModelEvent[] }, size: number): ModelEvent[] {
  const out: ModelEvent[] = []
  const parser = createSseParser(event => out.push(...assembler.push(event)))
  for (let i = 0; i < text.length; i += size) parser.write(text.slice(i, i + size))
  return out
}

const sse = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`

describe('createAnthropicStreamAssembler', () => {
  const stream = [
    sse({ type: 'message_start', message: { model: 'claude-x', usage: { input_tokens: 7 } } }),
    sse({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    sse({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi ' } }),
    sse({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'there' } }),
    sse({ type: 'content_block_stop', index: 0 }),
    sse({ type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'srv__weather', input: {} } }),
    sse({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"city":' } }),
    sse({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '"Oslo"}' } }),
    sse({ type: 'content_block_stop', index: 1 }),
    sse({ type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 3 } }),
    sse({ type: 'message_stop' }),
  ].join('')

  it.each([1, 7, 64, 100_000])('assembles text, tool calls and the message from chunks of %i characters', size => {
    const assembler = createAnthropicStreamAssembler()
    const call = { type: 'tool-call', id: 'toolu_1', name: 'srv__weather', arguments: { city: 'Oslo' } }
    expect(assemble(stream, assembler, size)).toEqual([
      { type: 'text', delta: 'Hi ' },
      { type: 'text', delta: 'there' },
      { type: 'tool-call', call },
      { type: 'message', message: { role: 'assistant', content: [{ type: 'text', text: 'Hi there' }, call] }, stopReason: 'toolUse', rawStopReason: 'tool_use', model: 'claude-x', usage: { inputTokens: 7, outputTokens: 3 } },
    ])
    expect(assembler.isDone).toBe(true)
  })

  it('fails with a ModelStreamError on an error event', () => {
    const assembler = createAnthropicStreamAssembler()
    const fail = () => assembler.push({ data: JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }) })
    expect(fail).toThrow(ModelStreamError)
    expect(fail).toThrow('anthropic stream: overloaded_error: Overloaded')
  })
})

describe('createOpenAiStreamAssembler', () => {
  const chunk = (delta: unknown, finish_reason: string | null = null) => sse({ model: 'gpt-x', choices: [{ index: 0, delta, finish_reason }] })
  const stream = [
    chunk({ role: 'assistant', content: 'On it' }),
    chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'srv__weather', arguments: '' } }] }),
    chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'srv__ping', arguments: '' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city"' } }] }),
    chunk({ tool_calls: [{ index: 1, function: { arguments: '{bad' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: ':"Oslo"}' } }] }),
    chunk({}, 'tool_calls'),
    sse({ model: 'gpt-x', choices: [], usage: { prompt_tokens: 4, completion_tokens: 2 } }),
    'data: [DONE]\n\n',
  ].join('')

  it.each([1, 13, 100_000])('assembles interleaved tool-call fragments by index from chunks of %i characters', size => {
    const events = assemble(stream, createOpenAiStreamAssembler(), size)
    expect(events.map(event => event.type)).toEqual(['text', 'tool-call', 'tool-call', 'message'])
    const message = events.at(-1) as Extract<ModelEvent, { type: 'message' }>
    expect(message.message.content[1]).toEqual({ type: 'tool-call', id: 'call_a', name: 'srv__weather', arguments: { city: 'Oslo' } })
    expect(message.message.content[2]).toMatchObject({ id: 'call_b', name: 'srv__ping', arguments: {}, rawArguments: '{bad', invalidArguments: expect.any(String) })
    expect(message).toMatchObject({ stopReason: 'toolUse', model: 'gpt-x', usage: { inputTokens: 4, outputTokens: 2 } })
  })

  it('ends a stream without [DONE] after a finish reason, and fails one without', () => {
    const assembler = createOpenAiStreamAssembler()
    assemble(chunk({ content: 'x' }, 'stop'), assembler, 100)
    expect(assembler.end()).toMatchObject([{ type: 'message', stopReason: 'endTurn' }])
    const cut = createOpenAiStreamAssembler()
    assemble(chunk({ content: 'x' }), cut, 100)
    expect(() => cut.end()).toThrow(expect.objectContaining({ code: ModelErrorCode.Stream }))
  })
})

describe('samplingRequest', () => {
  it('maps messages, system prompt, limits and stop sequences', () => {
    const request = samplingRequest({
      messages: [{ role: 'user', content: { type: 'text', text: 'Hi' } }, { role: 'assistant', content: [{ type: 'text', text: 'Yo' }] }, { role: 'user', content: { type: 'image', data: PNG, mimeType: 'image/png' } }],
      systemPrompt: 'Be kind',
      maxTokens: 9000,
      temperature: 0.2,
      stopSequences: ['END'],
    }, { maxTokensLimit: 1000, systemPrompt: 'Host rules' })
    expect(request).toEqual({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Yo' }] },
        { role: 'user', content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] },
      ],
      system: 'Host rules\n\nBe kind',
      maxTokens: 1000,
      temperature: 0.2,
      stopSequences: ['END'],
    })
  })
})

describe('samplingResult', () => {
  it.each([
    ['endTurn', undefined, 'endTurn'],
    ['maxTokens', undefined, 'maxTokens'],
    ['stopSequence', undefined, 'stopSequence'],
    ['other', 'pause_turn', 'pause_turn'],
  ] as const)('maps stop reason %s', (stopReason, rawStopReason, expected) => {
    expect(samplingResult({ type: 'message', message: { role: 'assistant', content: [{ type: 'text', text: 'ok' }] }, stopReason, rawStopReason, model: 'm', usage: {} }))
      .toEqual({ role: 'assistant', content: { type: 'text', text: 'ok' }, model: 'm', stopReason: expected })
  })
})

describe('redact', () => {
  it('removes the key from text', () => {
    expect(redact('bad key sk-123456 given', 'sk-123456')).toBe('bad key [redacted] given')
  })
})

describe('parseRetryAfter', () => {
  it.each([
    ['7', 7000],
    ['0.5', 500],
    ['Thu, 26 Nov 2026 10:00:10 GMT', 10_000],
    ['soon', undefined],
    [null, undefined],
  ])('reads %s', (value, expected) => {
    expect(parseRetryAfter(value, Date.parse('Thu, 26 Nov 2026 10:00:00 GMT'))).toBe(expected)
  })
})
