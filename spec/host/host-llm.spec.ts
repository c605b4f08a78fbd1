import { afterEach, describe, expect, it } from 'vitest'
import { filter, firstValueFrom, lastValueFrom, toArray } from 'rxjs'
import { createHost, type ConsentRequest, type Host, type HostOptions } from '../../host/host.ts'
import { anthropicModel, openaiModel } from '../../host/model.ts'
import { converse } from '../../host/conversation.ts'
import { parseHostConfig } from '../../lib/host-config.ts'
import { startMockModel } from './mock-model.ts'

/**
 * The host with a model: a server's sampling request goes through the consent hook to the model
 * (the mock model server speaking the Anthropic API), and a conversation drives a real server's
 * tools through the host (OpenAI API).
 */
const EXAMPLE = { command: process.execPath, args: ['--import', 'tsx', 'examples/everything/server.ts'] }
const cleanup: (() => Promise<void>)[] = []
afterEach(async () => { for (const close of cleanup.splice(0).reverse()) await close() })

async function readyHost(options: HostOptions): Promise<Host> {
  const host = createHost(parseHostConfig({ mcpServers: { example: EXAMPLE } }), options)
  cleanup.push(() => host.close())
  await firstValueFrom(host.tools.pipe(filter(tools => tools.some(tool => tool.name === 'example__sample'))))
  return host
}

describe('the host with a model', () => {
  it('sends a server\'s sampling request through consent to the model, and refuses it when the user denies', async () => {
    const model = await startMockModel([{ text: 'Four.' }])
    cleanup.push(() => model.close())
    const asked: ConsentRequest[] = []
    let answer: 'allow-once' | 'deny' = 'allow-once'
    const host = await readyHost({
      model: anthropicModel({ apiKey: 'test-key', model: 'claude-test', baseUrl: model.url }),
      consent: request => { asked.push(request); return request.kind === 'sampling' ? answer : 'allow-once' },
    })
    const result = await host.callTool('example__sample', { prompt: 'What is 2 + 2?' })
    expect(result.content).toEqual([{ type: 'text', text: 'claude-test: Four.' }])
    expect(asked.map(request => request.kind)).toEqual(['tool', 'sampling'])
    expect(asked[1]).toMatchObject({ kind: 'sampling', server: 'example', params: { messages: [{ role: 'user', content: { type: 'text', text: 'What is 2 + 2?' } }] } })
    expect(model.requests[0]!.body.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'What is 2 + 2?' }] }])
    answer = 'deny'
    const denied = await host.callTool('example__sample', { prompt: 'again' }).then(value => JSON.stringify(value), (error: Error) => error.message)
    expect(denied).toContain('denied by the user')
    expect(model.requests).toHaveLength(1)
  }, 60_000)

  it('runs a conversation over the host\'s real tools: the model\'s call reaches the server and its result goes back', async () => {
    const model = await startMockModel([
      { toolCalls: [{ name: 'example__add', arguments: { a: 2, b: 3 } }] },
      { text: 'The sum is 5.' },
    ])
    cleanup.push(() => model.close())
    const host = await readyHost({})
    const events = await lastValueFrom(converse(host, openaiModel({ apiKey: 'test-key', model: 'gpt-test', baseUrl: model.openaiUrl }), { prompt: 'Add 2 and 3' }).pipe(toArray()))
    expect(events.find(event => event.type === 'tool-result')).toMatchObject({ name: 'example__add', isError: false })
    const toolMessage = model.requests[1]!.body.messages.find((message: { role: string }) => message.role === 'tool')
    expect(toolMessage.content).toContain('5')
    expect(model.requests[0]!.body.tools.map((tool: { function: { name: string } }) => tool.function.name)).toContain('example__add')
    expect(events.at(-1)).toMatchObject({ type: 'done', stopReason: 'endTurn' })
  }, 60_000)
})
