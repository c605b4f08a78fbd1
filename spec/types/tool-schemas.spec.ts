import { describe, expectTypeOf, it } from 'vitest'
import * as z from 'zod'
import { createServer, type Registration, type ServerContext, type StructuredToolResult, type ToolDefinition, type ToolHandler, type ToolResultFor } from '../../actors/server.ts'
import type { CallToolResult } from '../../lib/schema/types.ts'
import type { InferInput, InferOutput, StandardSchemaV1 } from '../../lib/standard-schema.ts'
import type { InferJsonSchema } from '../../lib/schema/types.ts'

// Registration only: the handlers below are never called, so the assertions inside them are for tsc.
const server = createServer({ name: 'types', version: '1' })
const done = { content: [] }

describe('InferInput and InferOutput', () => {
  it('read the types a Standard Schema carries', () => {
    const schema = z.object({ n: z.string().transform(Number), flag: z.boolean().default(false) })
    expectTypeOf<InferInput<typeof schema>>().toEqualTypeOf<{ n: string; flag?: boolean | undefined }>()
    expectTypeOf<InferOutput<typeof schema>>().toEqualTypeOf<{ n: number; flag: boolean }>()
    expectTypeOf<InferOutput<StandardSchemaV1<string, Date>>>().toEqualTypeOf<Date>()
  })
})

describe('McpServer.tool', () => {
  it('takes a definition typed as ToolDefinition, whose schema kind is not known statically', () => {
    const definition: ToolDefinition = { description: 'kept in a variable', inputSchema: { type: 'object' } }
    server.tool('from-a-variable', definition, args => {
      expectTypeOf(args).toEqualTypeOf<Record<string, unknown>>()
      return done
    })
  })

  it('infers the arguments from a zod schema', () => {
    server.tool('add', { inputSchema: z.object({ a: z.number(), b: z.number() }) }, ({ a, b }, ctx) => {
      expectTypeOf(a).toEqualTypeOf<number>()
      expectTypeOf(b).toEqualTypeOf<number>()
      expectTypeOf(ctx).toEqualTypeOf<ServerContext>()
      return { content: [{ type: 'text', text: String(a + b) }] }
    })
  })

  it('gives the output type: defaults filled, transforms applied, optionals optional', () => {
    server.tool('shape', {
      inputSchema: z.object({ n: z.number().default(1), at: z.string().transform(s => new Date(s)), note: z.string().optional() }),
    }, args => {
      expectTypeOf(args).toEqualTypeOf<{ n: number; at: Date; note?: string | undefined }>()
      return done
    })
  })

  it('infers from any Standard Schema, with its JSON Schema given beside it', () => {
    const hand: StandardSchemaV1<{ id: string }, { id: string; seen: true }> = {
      '~standard': { version: 1, vendor: 'hand', validate: value => ({ value: { ...(value as { id: string }), seen: true as const } }) },
    }
    const registration = server.tool('hand', { inputSchema: hand, inputJsonSchema: { type: 'object', properties: { id: { type: 'string' } } } }, args => {
      expectTypeOf(args).toEqualTypeOf<{ id: string; seen: true }>()
      return done
    })
    expectTypeOf(registration).toEqualTypeOf<Registration<ToolDefinition<typeof hand>>>()
  })

  it('refuses a handler that misuses the inferred arguments, and schemas of non-objects', () => {
    // Never called: the last two would also throw at registration.
    const refused = () => {
      // @ts-expect-error `a` is a number, it has no toUpperCase
      server.tool('bad', { inputSchema: z.object({ a: z.number() }) }, ({ a }) => ({ content: [{ type: 'text', text: a.toUpperCase() }] }))
      // @ts-expect-error a tool's arguments are an object, not a string
      server.tool('text', { inputSchema: z.string() }, () => done)
      // @ts-expect-error inputJsonSchema must be a JSON Schema of an object
      server.tool('wire', { inputSchema: z.object({}), inputJsonSchema: { type: 'string' } }, () => done)
    }
    void refused
    // The arguments a handler is given: the schema's output type, so the first mistake above is one.
    expectTypeOf<Parameters<ToolHandler<InferOutput<z.ZodObject<{ a: z.ZodNumber }>>>>[0]>().toEqualTypeOf<{ a: number }>()
  })

  it('keeps the JSON Schema path as it was: a record, or the type the caller names', () => {
    server.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }, args => {
      expectTypeOf(args).toEqualTypeOf<Record<string, unknown>>()
      return done
    })
    server.tool<{ text: string }>('named', { inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }, ({ text }) => {
      expectTypeOf(text).toEqualTypeOf<string>()
      return done
    })
    server.tool('none', {}, args => {
      expectTypeOf(args).toEqualTypeOf<Record<string, unknown>>()
      return done
    })
  })
})

describe('McpServer.tool with a Standard Schema outputSchema', () => {
  it('types structuredContent by the schema input, and lets failures go without it', () => {
    const output = z.object({ mean: z.number(), unit: z.string().default('none') })
    server.tool('stats', {
      inputSchema: z.object({ values: z.array(z.number()) }),
      outputSchema: output,
    }, ({ values }) => values.length === 0
      ? { content: [], isError: true }
      : { content: [], structuredContent: { mean: values[0]! } })
    server.tool('json-in', { inputSchema: { type: 'object' }, outputSchema: z.object({ ok: z.boolean() }) }, async () => ({ content: [], structuredContent: { ok: true } }))
    // What such a handler may return: the schema's input type (a default may be left out), or a failure.
    type Stats = ToolResultFor<typeof output>
    expectTypeOf<Stats>().toEqualTypeOf<StructuredToolResult<{ mean: number; unit?: string | undefined }>>()
    expectTypeOf<{ content: []; structuredContent: { mean: number } }>().toExtend<Stats>()
    expectTypeOf<{ content: []; isError: true }>().toExtend<Stats>()
    expectTypeOf<{ content: []; structuredContent: { mean: string } }>().not.toExtend<Stats>()
    expectTypeOf<{ content: [] }>().not.toExtend<Stats>()
    // The same two mistakes at registration. Never called (tsc checks it: `npm test` runs
    // `tsc --noEmit -p .` over spec/, and an unused @ts-expect-error is an error there).
    const refused = () => {
      // @ts-expect-error `mean` must be a number
      server.tool('bad-mean', { outputSchema: z.object({ mean: z.number() }) }, () => ({ content: [], structuredContent: { mean: 'high' } }))
      // @ts-expect-error a successful result needs structuredContent
      server.tool('no-structure', { inputSchema: z.object({}), outputSchema: z.object({ mean: z.number() }) }, () => ({ content: [] }))
    }
    void refused
  })

  it('leaves results untyped with a JSON Schema outputSchema or none', () => {
    const jsonOutput = { type: 'object', properties: { n: { type: 'number' } } } as const
    expectTypeOf<ToolResultFor<typeof jsonOutput>>().toEqualTypeOf<CallToolResult>()
    // `never` is what TypeScript infers for a definition without outputSchema.
    expectTypeOf<ToolResultFor<never>>().toEqualTypeOf<CallToolResult>()
    expectTypeOf<{ content: [] }>().toExtend<ToolResultFor<typeof jsonOutput>>()
    const plain = server.tool('plain', { outputSchema: jsonOutput }, () => ({ content: [] }))
    expectTypeOf(plain).toEqualTypeOf<Registration<ToolDefinition>>()
    // A handler may answer with a Promise of any result.
    expectTypeOf<() => Promise<CallToolResult>>().toExtend<ToolHandler>()
    const wait = server.tool('wait', {}, () => Promise.resolve({ content: [] }))
    expectTypeOf(wait).toEqualTypeOf<Registration<ToolDefinition>>()
  })
})

describe('InferJsonSchema', () => {
  it('types the arguments of an as-const JSON Schema', () => {
    const schema = {
      type: 'object',
      properties: {
        text: { type: 'string' },
        count: { type: 'integer' },
        unit: { type: 'string', enum: ['C', 'F'] },
        tags: { type: 'array', items: { type: 'string' } },
        where: { type: 'object', properties: { lat: { type: 'number' }, lon: { type: 'number' } }, required: ['lat', 'lon'] },
        note: { type: ['string', 'null'] },
        kind: { type: 'string', const: 'x' },
      },
      required: ['text', 'unit'],
    } as const
    expectTypeOf<InferJsonSchema<typeof schema>>().toEqualTypeOf<{
      text: string
      unit: 'C' | 'F'
      count?: number
      tags?: string[]
      where?: { lat: number; lon: number }
      note?: string | null
      kind?: 'x'
    }>()
  })

  it('gives Record<string, unknown> for a schema it cannot read as literal types', () => {
    const inline: { type: 'object'; properties: { text: { type: string } }; required: string[] } = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }
    expectTypeOf<InferJsonSchema<typeof inline>>().toEqualTypeOf<Record<string, unknown>>()
    const withRef = { type: 'object', properties: { unit: { $ref: '#/$defs/unit' } } } as const
    expectTypeOf<InferJsonSchema<typeof withRef>>().toEqualTypeOf<Record<string, unknown>>()
    expectTypeOf<InferJsonSchema<{ type: 'object' }>>().toEqualTypeOf<Record<string, unknown>>()
  })
})

describe('McpServer.tool with a JSON Schema', () => {
  it('types the handler from an as-const schema', () => {
    const schema = { type: 'object', properties: { text: { type: 'string' }, times: { type: 'integer' } }, required: ['text'] } as const
    server.tool('repeat', { inputSchema: schema }, args => {
      expectTypeOf(args).toEqualTypeOf<{ text: string; times?: number }>()
      return { content: [{ type: 'text', text: args.text.repeat(args.times ?? 1) }] }
    })
  })
})

describe('McpServer.prompt', () => {
  it('infers the arguments from argumentsSchema', () => {
    server.prompt('review', { argumentsSchema: z.object({ code: z.string(), depth: z.string().transform(Number).optional() }) }, args => {
      expectTypeOf(args).toEqualTypeOf<{ code: string; depth?: number | undefined }>()
      return { messages: [] }
    })
  })

  it('keeps string arguments without a schema', () => {
    server.prompt('plain', { arguments: [{ name: 'city' }] }, args => {
      expectTypeOf(args).toEqualTypeOf<Record<string, string>>()
      return { messages: [] }
    })
  })
})
