import { afterEach, describe, expect, it } from 'vitest'
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startMockModel } from '../host/mock-model.ts'

/**
 * `rxmcp chat` in a real terminal: tmux runs it (the mock model server speaking the OpenAI API,
 * the everything example as the one server), the test types as a user would and reads the screen:
 * the prompt, the model's tool call, the consent question, the progress bar, the result, the answer.
 */
const root = fileURLToPath(new URL('../..', import.meta.url))
const socket = `rxmcp-test-${process.pid}`
const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' })
const screen = () => tmux('capture-pane', '-p', '-J', '-S', '-200', '-t', 'chat')

const cleanup: (() => Promise<void>)[] = []
afterEach(async () => { for (const close of cleanup.splice(0).reverse()) await close() })

/** Waits for `text` on the screen, checking every 100 ms, at most `ms`. */
async function see(text: string | RegExp, ms = 30_000): Promise<string> {
  const end = Date.now() + ms
  for (;;) {
    const shown = screen()
    if (typeof text === 'string' ? shown.includes(text) : text.test(shown)) return shown
    if (Date.now() > end) throw new Error(`never saw ${String(text)} on the screen:\n${shown}`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
}

describe('rxmcp chat in a terminal (tmux)', () => {
  it('shows the tool call, asks for consent, shows progress and the result, and answers', async () => {
    const model = await startMockModel([
      { text: 'Let me count. ', toolCalls: [{ name: 'example__long_running', arguments: { steps: 3, ms: 30 } }] },
      { toolCalls: [{ name: 'example__add', arguments: { a: 2, b: 3 } }] },
      { text: 'Counted, and the sum is 5.' },
    ])
    cleanup.push(() => model.close())
    const scratch = await mkdtemp(join(tmpdir(), 'rxmcp-chat-'))
    cleanup.push(() => rm(scratch, { recursive: true, force: true }))
    const config = join(scratch, 'mcp.json')
    await writeFile(config, JSON.stringify({ mcpServers: { example: { command: process.execPath, args: ['--import', 'tsx', join(root, 'examples/everything/server.ts')] } } }))
    const command = `cd ${root} && OPENAI_API_KEY=test-key ${process.execPath} --import tsx bin/rxmcp.ts chat --config ${config} --model openai:gpt-test --base-url ${model.openaiUrl}`
    tmux('new-session', '-d', '-s', 'chat', '-x', '160', '-y', '50', command)
    cleanup.push(async () => { spawnSync('tmux', ['-L', socket, 'kill-server']) })

    await see('Type a message, /tools, or /exit.')
    expect(screen()).toContain('example: ready')
    tmux('send-keys', '-t', 'chat', 'Count to three, then add 2 and 3', 'Enter')
    await see('Call example__long_running {"steps":3,"ms":30}? [y]es / [n]o / [a]lways:')
    tmux('send-keys', '-t', 'chat', 'y', 'Enter')
    await see(/← example__long_running: .*3 steps/)
    await see('Call example__add {"a":2,"b":3}?')
    tmux('send-keys', '-t', 'chat', 'y', 'Enter')
    const shown = await see('Counted, and the sum is 5.')
    expect(shown).toContain('Let me count.')
    expect(shown).toContain('→ example__long_running')
    expect(shown).toMatch(/100%/)
    expect(shown).toMatch(/← example__add: .*5/)
    // What the model was sent back: the add result, as a tool message.
    const lastRequest = model.requests.at(-1)!.body.messages as { role: string; content: string }[]
    expect(lastRequest.filter(message => message.role === 'tool').at(-1)!.content).toContain('5')
    tmux('send-keys', '-t', 'chat', '/exit', 'Enter')
    const end = Date.now() + 15_000
    while (spawnSync('tmux', ['-L', socket, 'has-session', '-t', 'chat']).status === 0) {
      if (Date.now() > end) throw new Error(`rxmcp chat did not exit:\n${screen()}`)
      await new Promise(resolve => setTimeout(resolve, 100))
    }
  }, 90_000)
})
