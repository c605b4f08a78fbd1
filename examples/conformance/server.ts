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
    requestedSchema: {
      type: 'object',
      properties: { username: { type: 'string', description: "User's response" }, email: { type: 'string', description: "User's email address" } },
      required: ['username', 'email'],
    },
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
    description: 'Tool with JSON Schema 2020-12 features (SEP-1613, SEP-2106)',
    inputSchema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: { address: { $anchor: 'addressDef', type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
      properties: {
        name: { type: 'string' }, address: { $ref: '#/$defs/address' },
        contactMethod: { type: 'string', enum: ['phone', 'email'] }, phone: { type: 'string' }, email: { type: 'string' },
      },
      allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
      if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
      then: { required: ['phone'] },
      else: { required: ['email'] },
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
  addModernTools(server)
  return server
}

/** The tools, prompt and hooks of the 2026-07-28 scenarios (conformance 0.2.0-alpha.12). */
function addModernTools(server: McpServer): void {
  const nameSchema = (key: string) => ({ type: 'object' as const, properties: { [key]: { type: 'string' as const } }, required: [key] })
  // Diagnostic tools of server-stateless.
  server.tool('test_missing_capability', { description: 'Needs sampling, so a client that did not declare it gets -32021', inputSchema: EMPTY }, async (_args, ctx) => {
    const result = await ctx.sample({ messages: [{ role: 'user', content: { type: 'text', text: 'ping' } }], maxTokens: 10 })
    return text(`sampled: ${JSON.stringify(result.content)}`)
  })
  server.tool('test_streaming_elicitation', { description: 'Asks for input; in the modern era that is an input_required result, never a request on the stream', inputSchema: EMPTY }, async (_args, ctx) => {
    ctx.progress(0, 1, 'asking')
    const answer = await ctx.elicit({ message: 'Anything to add?', requestedSchema: nameSchema('note') })
    return text(`answer: ${answer.action}`)
  })
  server.tool('test_logging_tool', { description: 'Logs at every level; only requests that ask for a level get them', inputSchema: EMPTY }, async (_args, ctx) => {
    for (const level of ['debug', 'info', 'warning', 'error'] as const) ctx.log(level, `a ${level} message`)
    return text('logged')
  })
  let changes = 0
  server.tool('test_trigger_tool_change', { description: 'Adds a tool, so listeners hear tools/list_changed', inputSchema: EMPTY }, () => {
    server.tool(`test_added_tool_${++changes}`, { description: 'Added by test_trigger_tool_change', inputSchema: EMPTY }, () => text('added'))
    return text('tool added')
  })
  server.tool('test_trigger_prompt_change', { description: 'Adds a prompt, so listeners hear prompts/list_changed', inputSchema: EMPTY }, () => {
    server.prompt(`test_added_prompt_${++changes}`, { description: 'Added by test_trigger_prompt_change' }, () => ({ messages: [{ role: 'user', content: { type: 'text', text: 'added' } }] }))
    return text('prompt added')
  })

  // MRTR (SEP-2322): one handler per scenario, written as if the answers were live.
  server.tool('test_input_required_result_elicitation', { description: 'Asks for a name', inputSchema: EMPTY }, async (_args, ctx) => {
    const answer = await ctx.elicit({ message: 'What is your name?', requestedSchema: nameSchema('name') }, { key: 'user_name' })
    return text(`Hello, ${String(answer.content?.name ?? 'stranger')}!`)
  })
  server.tool('test_input_required_result_sampling', { description: 'Asks the model a question', inputSchema: EMPTY }, async (_args, ctx) => {
    const answer = await ctx.sample({ messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }], maxTokens: 100 }, { key: 'capital_question' })
    const content = Array.isArray(answer.content) ? answer.content[0] : answer.content
    return text(`The model said: ${content?.type === 'text' ? content.text : JSON.stringify(content)}`)
  })
  server.tool('test_input_required_result_list_roots', { description: 'Asks for the roots', inputSchema: EMPTY }, async (_args, ctx) => {
    const { roots } = await ctx.listRoots({ key: 'client_roots' })
    return text(`Roots: ${roots.map(root => root.uri).join(', ') || '(none)'}`)
  })
  server.tool('test_input_required_result_request_state', { description: 'Carries its own state across the round', inputSchema: EMPTY }, async (_args, ctx) => {
    if (ctx.requestState === undefined) ctx.setRequestState({ step: 'confirm' })
    const carried = ctx.requestState as { step?: string } | undefined
    const answer = await ctx.elicit({ message: 'Please confirm', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } }, { key: 'confirm' })
    return text(carried?.step === 'confirm' ? `state-ok: confirmed=${String(answer.content?.ok)}` : 'state missing')
  })
  server.tool('test_input_required_result_multiple_inputs', { description: 'Asks for three inputs at once', inputSchema: EMPTY }, async (_args, ctx) => {
    const [name, greeting, roots] = await Promise.all([
      ctx.elicit({ message: 'What is your name?', requestedSchema: nameSchema('name') }, { key: 'user_name' }),
      ctx.sample({ messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }], maxTokens: 50 }, { key: 'greeting' }),
      ctx.listRoots({ key: 'client_roots' }),
    ])
    return text(`name=${String(name.content?.name)}, greeting=${JSON.stringify(greeting.content)}, roots=${roots.roots.length}`)
  })
  server.tool('test_input_required_result_multi_round', { description: 'Asks two questions, one round each', inputSchema: EMPTY }, async (_args, ctx) => {
    const name = await ctx.elicit({ message: 'Step 1: What is your name?', requestedSchema: nameSchema('name') }, { key: 'step1' })
    const color = await ctx.elicit({ message: 'Step 2: What is your favorite color?', requestedSchema: nameSchema('color') }, { key: 'step2' })
    return text(`${String(name.content?.name)} likes ${String(color.content?.color)}`)
  })
  server.tool('test_input_required_result_tampered_state', { description: 'Round state is sealed; a changed one is refused', inputSchema: EMPTY }, async (_args, ctx) => {
    const answer = await ctx.elicit({ message: 'Please confirm', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } }, { key: 'confirm' })
    return text(`confirmed=${String(answer.content?.ok)}`)
  })
  server.tool('test_input_required_result_capabilities', { description: 'Asks only for what the client declared', inputSchema: EMPTY }, async (_args, ctx) => {
    const asks: Promise<unknown>[] = []
    if (ctx.clientCapabilities.elicitation) asks.push(ctx.elicit({ message: 'What is your name?', requestedSchema: nameSchema('name') }, { key: 'user_name' }))
    if (ctx.clientCapabilities.sampling) asks.push(ctx.sample({ messages: [{ role: 'user', content: { type: 'text', text: 'Say hi' } }], maxTokens: 20 }, { key: 'greeting' }))
    await Promise.all(asks)
    return text(`answered ${asks.length}`)
  })
  server.prompt('test_input_required_result_prompt', { description: 'A prompt that needs context from the user' }, async (_args, ctx) => {
    const answer = await ctx.elicit({ message: 'What context should the prompt use?', requestedSchema: nameSchema('context') }, { key: 'user_context' })
    return { messages: [{ role: 'user', content: { type: 'text', text: `Use this context: ${String(answer.content?.context)}` } }] }
  })

  // SEP-2243: a tool whose arguments are mirrored into Mcp-Param-* headers.
  server.tool('test_custom_headers', {
    description: 'Mirrors region and priority into Mcp-Param headers',
    inputSchema: {
      type: 'object',
      properties: {
        region: { type: 'string', 'x-mcp-header': 'Region' },
        priority: { type: 'integer', 'x-mcp-header': 'Priority' },
        query: { type: 'string' },
      },
      required: ['region', 'query'],
    },
  }, args => text(`region=${String(args.region)}`))
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const port = Number(process.argv[2] ?? process.env.PORT ?? 0)
  const http = streamableHttp({ port })
  await createConformanceServer().listen(http)
  process.stdout.write(`${http.url}\n`)
}
