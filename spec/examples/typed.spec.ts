import { describe, expect, it } from 'vitest'
import { createTypedServer } from '../../examples/typed/typed.ts'
import { connectInMemory } from '../../testing.ts'

describe('createTypedServer', () => {
  it('lists the JSON Schemas zod derives and validates with zod', async () => {
    await using pair = await connectInMemory(createTypedServer())
    const { tools } = await pair.client.listTools()
    expect(tools.map(tool => [tool.name, tool.inputSchema.required])).toEqual([['divide', ['a', 'b']], ['register', ['user']]])
    expect(tools[0]!.outputSchema).toEqual({ type: 'object', properties: { quotient: { type: 'number' } }, required: ['quotient'], additionalProperties: false })
    expect(await pair.client.callTool('divide', { a: 1, b: 8 })).toEqual({ content: [{ type: 'text', text: '0.13' }], structuredContent: { quotient: 0.13 } })
    expect(await pair.client.callTool('divide', { a: 1, b: 0 })).toEqual({ content: [{ type: 'text', text: 'Invalid arguments for tool divide: /b: must not be zero' }], isError: true })
    expect(await pair.client.callTool('register', { user: 'root' })).toEqual({ content: [{ type: 'text', text: 'Invalid arguments for tool register: /user: is reserved' }], isError: true })
    expect(await pair.client.callTool('register', { user: 'ada' })).toEqual({ content: [{ type: 'text', text: 'registered ada' }] })
  })

  it('lists prompt arguments from the schema and turns them into numbers', async () => {
    await using pair = await connectInMemory(createTypedServer())
    expect((await pair.client.listPrompts()).prompts[0]!.arguments).toEqual([
      { name: 'text', description: 'What to summarize', required: true },
      { name: 'words', description: 'At most this many words', required: false },
    ])
    const result = await pair.client.getPrompt('summarize', { text: 'abc', words: '3' })
    expect(result.messages[0]!.content).toEqual({ type: 'text', text: 'Summarize in at most 3 words:\n\nabc' })
    await expect(pair.client.getPrompt('summarize', { text: 'abc', words: 'many' })).rejects.toMatchObject({ code: -32602 })
  })
})
