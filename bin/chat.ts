/**
 * `rxmcp chat --config mcp.json --model <provider:model> [--base-url URL]`: a terminal chat over the
 * host's tools. The model streams its answer; each tool call is shown, asked about (yes, no, or
 * always for that tool), run with a progress bar, and its result summarized; sampling requests
 * from servers are asked about the same way. `/tools` lists the tools, `/exit` (or Ctrl-D) ends.
 *
 * Providers: `anthropic:<model>` (ANTHROPIC_API_KEY), `openai:<model>` (OPENAI_API_KEY; with
 * --base-url any OpenAI-compatible server, the key optional).
 */
import { createInterface, type Interface } from 'node:readline/promises'
import { firstValueFrom, filter } from '../lib/rx.ts'
import { createHost, type ConsentAnswer, type ConsentRequest } from '../host/host.ts'
import { anthropicModel, openaiModel, type ModelAdapter } from '../host/model.ts'
import { converse } from '../host/conversation.ts'
import type { ModelMessage } from '../lib/llm/messages.ts'
import { loadConfig } from './host.ts'
import { redactExpansions } from '../lib/host-config.ts'
import { progressBar } from './progress-bar.ts'

/** Flags of `rxmcp chat`. */
export interface ChatFlags {
  config: string
  model: string
  baseUrl?: string
  system?: string
}

/** The adapter `provider:model` names. */
export function modelFor(spec: string, baseUrl: string | undefined): ModelAdapter {
  const colon = spec.indexOf(':')
  const provider = colon < 0 ? '' : spec.slice(0, colon)
  const model = spec.slice(colon + 1)
  if (provider === 'anthropic') {
    const apiKey = process.env.ANTHROPIC_API_KEY
    if (apiKey === undefined) throw new Error('anthropic models need ANTHROPIC_API_KEY')
    return anthropicModel({ apiKey, model, ...(baseUrl === undefined ? {} : { baseUrl }) })
  }
  if (provider === 'openai') {
    const apiKey = process.env.OPENAI_API_KEY
    if (apiKey === undefined && baseUrl === undefined) throw new Error('openai models need OPENAI_API_KEY (or --base-url for a compatible server)')
    return openaiModel({ apiKey, model, ...(baseUrl === undefined ? {} : { baseUrl }) })
  }
  throw new Error(`--model is provider:model, with provider anthropic or openai (got ${JSON.stringify(spec)})`)
}

/** Runs the chat until /exit or the end of input. */
export async function chat(flags: ChatFlags): Promise<number> {
  const model = modelFor(flags.model, flags.baseUrl)
  const terminal = createInterface({ input: process.stdin, output: process.stdout, terminal: process.stdin.isTTY === true })
  const always = new Set<string>()
  const ask = async (question: string, key: string): Promise<ConsentAnswer> => {
    if (always.has(key)) return 'allow-always'
    const answer = (await terminal.question(`${question} [y]es / [n]o / [a]lways: `)).trim().toLowerCase()
    if (answer.startsWith('a')) { always.add(key); return 'allow-always' }
    return answer.startsWith('y') ? 'allow-once' : 'deny'
  }
  const config = loadConfig(flags.config)
  const host = createHost(config, {
    model,
    // Tool calls are asked about by the conversation (below); sampling and elicitation here.
    consent: (request: ConsentRequest) => request.kind === 'tool' ? 'allow-once'
      : ask(`${request.server} asks the model (sampling): ${summary(request.kind === 'sampling' ? request.params.messages : request.params)}. Allow?`, `${request.kind}:${request.server}`),
  })
  const out = (text: string) => process.stdout.write(text)
  try {
    const states = await firstValueFrom(host.states.pipe(filter(states => [...states.values()].every(state => state.status === 'ready' || state.status === 'failed'))))
    // A failure's reason may repeat a `${VAR}` value (a command line, a URL): shown as `${VAR}`.
    for (const [name, state] of states) out(`${name}: ${state.status}${state.status === 'failed' ? ` (${redactExpansions(state.reason, config)})` : ''}\n`)
    out(`${host.currentTools().length} tools. Type a message, /tools, or /exit.\n`)
    let history: ModelMessage[] = []
    for (;;) {
      const line = await nextLine(terminal)
      if (line === undefined || line.trim() === '/exit') break
      if (line.trim() === '') continue
      if (line.trim() === '/tools') { for (const tool of host.currentTools()) out(`  ${tool.name}\n`); continue }
      const bar = progressBar(process.stdout)
      let hasProgress = false
      await new Promise<void>(resolve => {
        converse(host, model, {
          prompt: line, history, system: flags.system,
          approveToolCall: async call => (await ask(`\nCall ${call.name} ${JSON.stringify(call.arguments)}?`, `tool:${call.name}`)) === 'deny' ? 'deny' : 'allow',
        }).subscribe({
          next: event => {
            if (event.type === 'text') out(event.delta)
            else if (event.type === 'tool-call') out(`\n→ ${event.name} ${JSON.stringify(event.arguments)}\n`)
            else if (event.type === 'tool-progress') { hasProgress = true; bar.update(event.progress, event.total, event.message) }
            else if (event.type === 'tool-result') {
              if (hasProgress) { bar.done(); hasProgress = false }
              out(`← ${event.name}${event.isError ? ' (error)' : ''}: ${summary(event.result.content)}\n`)
            } else if (event.type === 'max-rounds') out(`\n(stopped after ${event.rounds} rounds)\n`)
            else if (event.type === 'done') { history = event.history; out('\n') }
          },
          error: error => { out(`\nerror: ${(error as Error).message}\n`); resolve() },
          complete: resolve,
        })
      })
    }
    return 0
  } finally {
    terminal.close()
    await host.close()
  }
}

/** The next line, or undefined at the end of input. */
function nextLine(terminal: Interface): Promise<string | undefined> {
  return new Promise(resolve => {
    const onClose = () => resolve(undefined)
    terminal.once('close', onClose)
    terminal.question('> ').then(line => { terminal.off('close', onClose); resolve(line) }, () => resolve(undefined))
  })
}

/** One line about some content, at most 120 characters. */
function summary(value: unknown): string {
  const text = Array.isArray(value)
    ? value.map(item => (item as { text?: string; content?: { text?: string } }).text ?? (item as { content?: { text?: string } }).content?.text ?? `[${(item as { type?: string }).type ?? 'item'}]`).join(' ')
    : JSON.stringify(value)
  const line = text.replace(/\s+/g, ' ')
  return line.length > 120 ? `${line.slice(0, 117)}...` : line
}
