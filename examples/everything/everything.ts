/**
 * The everything server: one of each MCP feature, for demos, interop tests and benchmarks.
 * `server.ts` beside this file serves it over stdio; tests build it in-process.
 */
import { interval, last, map, take, tap } from 'rxjs'
import { createServer, type McpServer, type ServerOptions } from '../../actors/server.ts'
import type { LoggingLevel } from '../../lib/schema/types.ts'

/** A 1×1 transparent PNG, base64. */
export const PIXEL_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='
/** A tiny WAV header with no samples, base64. */
export const SILENT_WAV = 'UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA='

const ICON = { src: `data:image/png;base64,${PIXEL_PNG}`, mimeType: 'image/png', sizes: ['1x1'] }
const LANGUAGES = ['typescript', 'javascript', 'python', 'rust', 'go', 'java', 'kotlin', 'swift', 'ruby', 'elixir']
const ITEM_IDS = Array.from({ length: 120 }, (_, i) => String(i + 1))

/** Options of {@link createEverythingServer}. */
export interface EverythingOptions extends ServerOptions {}

/**
 * Builds the everything server (not yet listening).
 * @example
 * await createEverythingServer().listen(stdio())
 */
export function createEverythingServer(options: EverythingOptions = {}): McpServer {
  const server = createServer(
    { name: 'rxmcp-everything', title: 'rxmcp everything', version: '0.1.0', icons: [ICON] },
    { pageSize: 5, instructions: 'A server with one of every MCP feature. Try the echo and long_running tools.', ...options },
  )

  // ---- tools ----

  // The benchmark tool: synchronous, one result object, nothing else.
  server.tool('echo', {
    title: 'Echo',
    description: 'Returns the text it is given',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    icons: [ICON],
  }, args => ({ content: [{ type: 'text', text: args.text as string }] }))

  server.tool('add', {
    title: 'Add',
    description: 'Adds two numbers',
    inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
    outputSchema: { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] },
    annotations: { readOnlyHint: true },
  }, ({ a, b }) => {
    const sum = (a as number) + (b as number)
    return { content: [{ type: 'text', text: String(sum) }], structuredContent: { sum } }
  })

  // An Observable handler: progress each step; a cancellation unsubscribes the interval.
  server.tool('long_running', {
    title: 'Long running',
    description: 'Counts steps, reporting progress; cancellable',
    inputSchema: {
      type: 'object',
      properties: { steps: { type: 'integer', minimum: 1, maximum: 10_000, default: 5 }, ms: { type: 'integer', minimum: 0, maximum: 60_000, default: 100 } },
    },
  }, (args, ctx) => {
    const steps = (args.steps as number | undefined) ?? 5
    const ms = (args.ms as number | undefined) ?? 100
    return interval(ms).pipe(
      take(steps),
      tap(i => ctx.progress(i + 1, steps, `step ${i + 1} of ${steps}`)),
      last(),
      map(() => ({ content: [{ type: 'text' as const, text: `Finished ${steps} steps` }] })),
    )
  })

  server.tool('sample', {
    title: 'Sample',
    description: 'Asks the client model to answer a prompt (sampling/createMessage)',
    inputSchema: { type: 'object', properties: { prompt: { type: 'string' }, maxTokens: { type: 'integer', default: 100 } }, required: ['prompt'] },
  }, async (args, ctx) => {
    const result = await ctx.sample({
      messages: [{ role: 'user', content: { type: 'text', text: args.prompt as string } }],
      maxTokens: (args.maxTokens as number | undefined) ?? 100,
    })
    const content = Array.isArray(result.content) ? result.content[0] : result.content
    const text = content?.type === 'text' ? content.text : JSON.stringify(result.content)
    return { content: [{ type: 'text', text: `${result.model}: ${text}` }] }
  })

  server.tool('elicit', {
    title: 'Elicit',
    description: 'Asks the user for their name, age and favourite colours (elicitation/create)',
    inputSchema: { type: 'object', properties: {} },
    outputSchema: { type: 'object', properties: { action: { type: 'string' }, content: { type: 'object' } }, required: ['action'] },
  }, async (_args, ctx) => {
    const answer = await ctx.elicit({
      message: 'Tell me about yourself',
      requestedSchema: {
        type: 'object',
        properties: {
          name: { type: 'string', title: 'Name', minLength: 1 },
          age: { type: 'integer', title: 'Age', minimum: 0, default: 30 },
          color: { type: 'string', title: 'Colour', oneOf: [{ const: 'red', title: 'Red' }, { const: 'green', title: 'Green' }], default: 'green' },
          extras: { type: 'array', title: 'Extras', items: { type: 'string', enum: ['tea', 'coffee'] }, default: ['tea'] },
        },
        required: ['name'],
      },
    })
    const structuredContent = answer.content === undefined ? { action: answer.action } : { action: answer.action, content: answer.content }
    return { content: [{ type: 'text', text: JSON.stringify(structuredContent) }], structuredContent }
  })

  server.tool('roots', {
    title: 'Roots',
    description: 'Lists the client roots (roots/list)',
    inputSchema: { type: 'object', properties: {} },
  }, async (_args, ctx) => {
    const { roots } = await ctx.listRoots()
    return { content: [{ type: 'text', text: JSON.stringify(roots) }] }
  })

  server.tool('log', {
    title: 'Log',
    description: 'Sends a log message at the given level',
    inputSchema: {
      type: 'object',
      properties: { level: { enum: ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] }, message: { type: 'string' } },
      required: ['level', 'message'],
    },
  }, ({ level, message }, ctx) => {
    ctx.log(level as LoggingLevel, message, 'everything')
    return { content: [{ type: 'text', text: `logged at ${level}` }] }
  })

  server.tool('fail', { title: 'Fail', description: 'Always fails', inputSchema: { type: 'object', properties: {} } }, () => {
    throw new Error('This tool always fails')
  })

  server.tool('content_types', {
    title: 'Content types',
    description: 'Returns one block of every content type',
    inputSchema: { type: 'object', properties: {} },
    annotations: { readOnlyHint: true },
  }, () => ({
    content: [
      { type: 'text', text: 'text block' },
      { type: 'image', data: PIXEL_PNG, mimeType: 'image/png' },
      { type: 'audio', data: SILENT_WAV, mimeType: 'audio/wav' },
      { type: 'resource_link', uri: 'everything://readme', name: 'readme', mimeType: 'text/markdown' },
      { type: 'resource', resource: { uri: 'everything://static/1', mimeType: 'text/plain', text: 'Static resource 1' } },
    ],
  }))

  server.tool('touch', {
    title: 'Touch',
    description: 'Marks a resource as updated (notifications/resources/updated to subscribers)',
    inputSchema: { type: 'object', properties: { uri: { type: 'string' } }, required: ['uri'] },
  }, ({ uri }) => {
    server.notifyResourceUpdated(uri as string)
    return { content: [{ type: 'text', text: `touched ${uri}` }] }
  })

  // ---- resources ----

  server.resource('everything://readme', { name: 'readme', title: 'Read me', mimeType: 'text/markdown', icons: [ICON] },
    () => '# rxmcp everything\n\nOne of every MCP feature.\n')
  server.resource('everything://logo', { name: 'logo', title: 'Logo', mimeType: 'image/png' },
    uri => ({ uri, mimeType: 'image/png', blob: PIXEL_PNG }))
  for (let n = 1; n <= 6; n++) {
    server.resource(`everything://static/${n}`, { name: `static-${n}`, mimeType: 'text/plain', annotations: { priority: n / 10 } },
      () => `Static resource ${n}`)
  }
  server.resourceTemplate('everything://items/{id}', {
    name: 'item',
    title: 'Item by id',
    mimeType: 'application/json',
    complete: { id: value => ITEM_IDS.filter(id => id.startsWith(value)) },
  }, (uri, { id }) => ({ contents: [{ uri, mimeType: 'application/json', text: JSON.stringify({ id, name: `Item ${id}` }) }] }))
  server.resourceTemplate('everything://files/{+path}', { name: 'file', title: 'File by path', mimeType: 'text/plain' },
    (_uri, { path }) => `Contents of ${path}`)

  // ---- prompts ----

  server.prompt('greeting', {
    title: 'Greeting',
    description: 'Greets someone by name',
    arguments: [{ name: 'name', description: 'Who to greet', required: true }],
    complete: { name: value => ['Ada', 'Alan', 'Grace', 'Barbara'].filter(name => name.toLowerCase().startsWith(value.toLowerCase())) },
  }, ({ name }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Say hello to ${name}` } }] }))
  server.prompt('code_review', {
    title: 'Code review',
    description: 'Asks for a review of some code',
    arguments: [{ name: 'language', required: true }, { name: 'code', required: true }],
    complete: { language: value => LANGUAGES.filter(language => language.startsWith(value)) },
  }, ({ language, code }) => ({
    description: `Review of ${language} code`,
    messages: [{ role: 'user', content: { type: 'text', text: `Please review this ${language} code:\n\n${code}` } }],
  }))
  server.prompt('resources', { title: 'With resources', description: 'A prompt that embeds a resource and an image' }, () => ({
    messages: [
      { role: 'user', content: { type: 'resource', resource: { uri: 'everything://readme', mimeType: 'text/markdown', text: '# rxmcp everything' } } },
      { role: 'user', content: { type: 'image', data: PIXEL_PNG, mimeType: 'image/png' } },
      { role: 'assistant', content: { type: 'text', text: 'I see a readme and a pixel.' } },
    ],
  }))
  for (let n = 1; n <= 4; n++) {
    server.prompt(`simple_${n}`, { description: `Simple prompt ${n}` }, () => ({ messages: [{ role: 'user', content: { type: 'text', text: `Simple prompt ${n}` } }] }))
  }

  return server
}
