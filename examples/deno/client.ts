// rxmcp's client on Deno, against any everything server (this directory's server.ts, or Node's).
//   deno run -A examples/deno/client.ts http://127.0.0.1:3000/mcp
// Connects once per era (legacy: an initialized session; modern: MCP 2026-07-28, stateless), lists
// the tools across pages, calls echo, follows long_running's progress, answers the server's
// sampling and elicitation, and prints what it saw as one JSON line on stdout.
import { lastValueFrom, toArray } from 'rxjs'
import { connect } from '../../actors/client.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'

const url = Deno.args[0]
if (url === undefined) {
  console.error('usage: deno run -A examples/deno/client.ts <url>')
  Deno.exit(2)
}

/** What one era's session did, for the caller to check. */
async function run(era: 'legacy' | 'modern') {
  // The prompts the server's sampling requests carried: proof that the handler, not a default, answered.
  const asked: string[] = []
  const client = await connect(streamableHttpClient(url!), { name: 'rxmcp-on-deno', version: Deno.version.deno }, {
    era,
    sampling: params => {
      const content = Array.isArray(params.messages[0]?.content) ? params.messages[0]!.content[0] : params.messages[0]?.content
      asked.push(content?.type === 'text' ? content.text : '')
      return { role: 'assistant', model: 'deno-model', content: { type: 'text', text: 'forty-two' } }
    },
    elicitation: { form: () => ({ action: 'accept', content: { name: 'Deno', age: 6, color: 'red', extras: ['tea'] } }) },
  })
  try {
    const tools = await lastValueFrom(client.tools().pipe(toArray()))
    const echo = await client.callTool('echo', { text: `hi from ${era}` })
    const progress: number[] = []
    const long = await client.callTool('long_running', { steps: 3, ms: 1 }, { onProgress: event => progress.push(event.progress) })
    const sample = await client.callTool('sample', { prompt: 'meaning?' })
    const elicit = await client.callTool('elicit', {})
    return {
      era: client.era,
      server: client.state.serverInfo?.name,
      tools: tools.map(tool => tool.name),
      echo: textOf(echo.content),
      progress,
      longRunning: textOf(long.content),
      asked,
      sample: textOf(sample.content),
      elicit: elicit.structuredContent,
    }
  } finally {
    await client.close()
  }
}

function textOf(content: readonly { type: string; text?: string }[]): string | undefined {
  return content[0]?.type === 'text' ? content[0].text : undefined
}

const summary = { deno: Deno.version.deno, legacy: await run('legacy'), modern: await run('modern') }
console.log(JSON.stringify(summary))
