// A server whose tools and prompts are typed by zod 4 schemas (any Standard Schema library works).
// The handlers' arguments are inferred, tools/list carries the JSON Schema zod derives, and
// validation is zod's own. rxmcp does not depend on zod: the schema brings its validator.
import * as z from 'zod'
import { createServer, type McpServer } from '../../actors/server.ts'

/** Builds the typed example server. */
export function createTypedServer(): McpServer {
  const server = createServer({ name: 'typed-example', version: '1.0.0' })

  // `a` and `b` are numbers, `precision` has its default filled in; `structuredContent` must be
  // what the outputSchema accepts (checked before it is sent).
  server.tool('divide', {
    description: 'Divides a by b',
    inputSchema: z.object({
      a: z.number().describe('Dividend'),
      b: z.number().refine(b => b !== 0, 'must not be zero').describe('Divisor'),
      precision: z.number().int().min(0).max(10).default(2),
    }),
    outputSchema: z.object({ quotient: z.number() }),
  }, ({ a, b, precision }) => {
    const quotient = Number((a / b).toFixed(precision))
    return { content: [{ type: 'text', text: String(quotient) }], structuredContent: { quotient } }
  })

  // Async validation: the handler runs only once the (slow) check passed.
  const reserved = new Set(['admin', 'root'])
  server.tool('register', {
    description: 'Registers a user name',
    inputSchema: z.object({ user: z.string().min(2) })
      .refine(async ({ user }) => !reserved.has(user), { message: 'is reserved', path: ['user'] }),
  }, ({ user }) => ({ content: [{ type: 'text', text: `registered ${user}` }] }))

  // Prompt arguments are strings on the wire; the schema may turn them into other types.
  server.prompt('summarize', {
    description: 'Summarize a text',
    argumentsSchema: z.object({
      text: z.string().describe('What to summarize'),
      words: z.string().regex(/^\d+$/, 'must be a whole number').transform(Number).optional().describe('At most this many words'),
    }),
  }, ({ text, words = 50 }) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `Summarize in at most ${words} words:\n\n${text}` } }],
  }))

  return server
}
