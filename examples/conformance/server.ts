/**
 * The server the official conformance suite drives (`npm run conformance`): the tools, resources
 * and prompts its server scenarios ask for, over Streamable HTTP.
 *
 *   npx tsx examples/conformance/server.ts [port]     (prints the endpoint URL on stdout)
 */
import { createServer, type McpServer } from '../../actors/server.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import type { ElicitResult } from '../../lib/schema/types.ts'

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=='
const WAV = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA='
const EMPTY = { type: 'object' as const, properties: {} }

const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] })
const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))

/** Builds the conformance server. */
export function createConformanceServer(): McpServer {
  const server = createServer({ name: 'rxmcp-conformance-server', version: '0.1.0' }, {
    capabilities: { tools: { listChanged: true }, resources: { subscribe: true, listChanged: true }, prompts: { listChanged: true }, completions: {}, logging: {} },
  })

  server.tool('test_simple_text', { description: 'Answers with one text block', inputSchema: EMPTY },
    () => text('This is a simple text response for testing.'))
  server.tool('test_image_content', { description: 'Answers with an image', inputSchema: EMPTY },
    () => ({ content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] }))
  server.tool('test_audio_content', { description: 'Answers with audio', inputSchema: EMPTY },
    () => ({ content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }] }))
  server.tool('test_embedded_resource', { description: 'Answers with an embedded resource', inputSchema: EMPTY },
    () => ({ content: [{ type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' } }] }))
  server.tool('test_multiple_content_types', { description: 'Answers with text, an image and a resource', inputSchema: EMPTY }, () => ({
    content: [
      { type: 'text', text: 'Multiple content types test:' },
      { type: 'image', data: PNG, mimeType: 'image/png' },
      { type: 'resource', resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: JSON.stringify({ test: 'data', value: 123 }) } },
    ],
  }))
  server.tool('test_tool_with_logging', { description: 'Logs three messages while it runs', inputSchema: EMPTY }, async (_args, ctx) => {
    for (const [index, message] of ['Tool execution started', 'Tool processing data', 'Tool execution completed'].entries()) {
      if (index > 0) await sleep(50)
      ctx.log('info', message)
    }
    return text('Tool with logging executed successfully')
  })
  server.tool('test_tool_with_progress', { description: 'Reports progress 0, 50, 100', inputSchema: EMPTY }, async (_args, ctx) => {
    for (const step of [0, 50, 100]) {
      if (step > 0) await sleep(50)
      ctx.progress(step, 100, `Completed step ${step} of 100`)
    }
    return text(String(ctx.progressToken ?? 0))
  })
  server.tool('test_error_handling', { description: 'Always fails', inputSchema: EMPTY }, () => {
    throw new Error('This tool intentionally returns an error for testing')
  })
  server.tool('test_reconnection', { description: 'Closes its SSE stream mid-call; the answer arrives after the client reconnects (SEP-1699)', inputSchema: EMPTY }, async (_args, ctx) => {
    ctx.closeStream()
    await sleep(100)
    return text('Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure.')
  })
  server.tool('test_sampling', {
    description: 'Asks the client for a completion',
    inputSchema: { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] },
  }, async ({ prompt }, ctx) => {
    const result = await ctx.sample({ messages: [{ role: 'user', content: { type: 'text', text: String(prompt) } }], maxTokens: 100 })
    const content = Array.isArray(result.content) ? result.content[0] : result.content
    return text(`LLM response: ${content?.type === 'text' ? content.text : 'No response'}`)
  })
  const elicitationText = (prefix: string, result: ElicitResult) => text(`${prefix}: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`)
  server.tool('test_elicitation', {
    description: 'Asks the user for a response',
    inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
  }, async ({ message }, ctx) => elicitationText('User response', await ctx.elicit({
    message: String(message),
    requestedSchema: { type: 'object', properties: { response: { type: 'string', description: "User's response" } }, required: ['response'] },
  })))
  server.tool('test_elicitation_sep1034_defaults', { description: 'Elicitation with defaults (SEP-1034)', inputSchema: EMPTY }, async (_args, ctx) =>
    elicitationText('Elicitation completed', await ctx.elicit({
      message: 'Please review and update the form fields with defaults',
      requestedSchema: {
        type: 'object',
        properties: {
          name: { type: 'string', description: 'User name', default: 'John Doe' },
          age: { type: 'integer', description: 'User age', default: 30 },
          score: { type: 'number', description: 'User score', default: 95.5 },
          status: { type: 'string', description: 'User status', enum: ['active', 'inactive', 'pending'], default: 'active' },
          verified: { type: 'boolean', description: 'Verification status', default: true },
        },
        required: [],
      },
    })))
  server.tool('test_elicitation_sep1330_enums', { description: 'Elicitation with every enum form (SEP-1330)', inputSchema: EMPTY }, async (_args, ctx) =>
    elicitationText('Elicitation completed', await ctx.elicit({
      message: 'Please select options from the enum fields',
      requestedSchema: {
        type: 'object',
        properties: {
          untitledSingle: { type: 'string', description: 'Select one option', enum: ['option1', 'option2', 'option3'] },
          titledSingle: { type: 'string', description: 'Select one option with titles', oneOf: [{ const: 'value1', title: 'First Option' }, { const: 'value2', title: 'Second Option' }, { const: 'value3', title: 'Third Option' }] },
          legacyEnum: { type: 'string', description: 'Select one option (legacy)', enum: ['opt1', 'opt2', 'opt3'], enumNames: ['Option One', 'Option Two', 'Option Three'] },
          untitledMulti: { type: 'array', description: 'Select multiple options', minItems: 1, maxItems: 3, items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
          titledMulti: { type: 'array', description: 'Select multiple options with titles', minItems: 1, maxItems: 3, items: { anyOf: [{ const: 'value1', title: 'First Choice' }, { const: 'value2', title: 'Second Choice' }, { const: 'value3', title: 'Third Choice' }] } },
        },
        required: [],
      },
    })))
  server.tool('json_schema_2020_12_tool', {
    description: 'Tool with JSON Schema 2020-12 features (SEP-1613)',
    inputSchema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: { address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
      properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
      additionalProperties: false,
    },
  }, args => text(`JSON Schema 2020-12 tool called with: ${JSON.stringify(args)}`))

  server.resource('test://static-text', { name: 'static-text', title: 'Static Text Resource', description: 'A static text resource for testing', mimeType: 'text/plain' },
    () => 'This is the content of the static text resource.')
  server.resource('test://static-binary', { name: 'static-binary', title: 'Static Binary Resource', description: 'A static binary resource (image) for testing', mimeType: 'image/png' },
    uri => ({ uri, mimeType: 'image/png', blob: PNG }))
  server.resource('test://watched-resource', { name: 'watched-resource', title: 'Watched Resource', description: 'A resource clients subscribe to', mimeType: 'text/plain' },
    () => 'Watched resource content')
  server.resourceTemplate('test://template/{id}/data', {
    name: 'template', title: 'Resource Template', description: 'A resource template with parameter substitution', mimeType: 'application/json',
    complete: { id: value => ['123', '456', '789'].filter(id => id.startsWith(value)) },
  }, (uri, { id }) => ({ contents: [{ uri, mimeType: 'application/json', text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) }] }))

  server.prompt('test_simple_prompt', { title: 'Simple Test Prompt', description: 'A simple prompt without arguments' },
    () => ({ messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }] }))
  server.prompt('test_prompt_with_arguments', {
    title: 'Prompt With Arguments', description: 'A prompt with required arguments',
    arguments: [{ name: 'arg1', description: 'First test argument', required: true }, { name: 'arg2', description: 'Second test argument', required: true }],
    complete: { arg1: value => ['paris', 'park', 'party'].filter(word => word.startsWith(value)) },
  }, ({ arg1, arg2 }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` } }] }))
  server.prompt('test_prompt_with_embedded_resource', {
    title: 'Prompt With Embedded Resource', description: 'A prompt that includes an embedded resource',
    arguments: [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true }],
  }, ({ resourceUri }) => ({
    messages: [
      { role: 'user', content: { type: 'resource', resource: { uri: resourceUri!, mimeType: 'text/plain', text: 'Embedded resource content for testing.' } } },
      { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
    ],
  }))
  server.prompt('test_prompt_with_image', { title: 'Prompt With Image', description: 'A prompt that includes image content' }, () => ({
    messages: [
      { role: 'user', content: { type: 'image', data: PNG, mimeType: 'image/png' } },
      { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
    ],
  }))
  return server
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const port = Number(process.argv[2] ?? process.env.PORT ?? 0)
  const http = streamableHttp({ port })
  await createConformanceServer().listen(http)
  process.stdout.write(`${http.url}\n`)
}
