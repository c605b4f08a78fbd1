// What `npm start` runs: spawns the everything server over stdio and walks through rxmcp's client.
import { fileURLToPath } from 'node:url'
import { lastValueFrom, toArray } from 'rxjs'
import { connect } from '../actors/client.ts'
import { stdioClient } from '../transports/stdio.ts'
import { CancelledError } from '../lib/jsonrpc/errors.ts'
import { progressBar } from '../bin/progress-bar.ts'

const serverPath = fileURLToPath(new URL('./everything/server.ts', import.meta.url))
const out = (line = '') => process.stdout.write(line + '\n')

const transport = stdioClient({ command: process.execPath, args: ['--import', 'tsx', serverPath], stderr: 'inherit' })
const client = await connect(transport, { name: 'rxmcp-demo', version: '0.1.0' }, {
  // The server's `sample` tool asks this client's "model"; a real host would call an LLM here.
  sampling: params => {
    const first = params.messages[0]?.content
    const prompt = first !== undefined && !Array.isArray(first) && first.type === 'text' ? first.text : ''
    return { role: 'assistant', model: 'demo-model', content: { type: 'text', text: `You asked: "${prompt}"` } }
  },
  elicitation: { form: () => ({ action: 'accept', content: { name: 'Ada' } }) },
  roots: [{ uri: `file://${process.cwd()}`, name: 'here' }],
})

out(`Connected to ${client.serverInfo.title ?? client.serverInfo.name} ${client.serverInfo.version} (protocol ${client.protocolVersion})`)
out(client.instructions ?? '')

// Every list is paginated (page size 5); these Observables walk the cursors lazily.
const tools = await lastValueFrom(client.tools().pipe(toArray()))
const resources = await lastValueFrom(client.resources().pipe(toArray()))
const templates = await lastValueFrom(client.resourceTemplates().pipe(toArray()))
const prompts = await lastValueFrom(client.prompts().pipe(toArray()))
out(`\nTools (${tools.length}): ${tools.map(tool => tool.name).join(', ')}`)
out(`Resources (${resources.length}): ${resources.map(resource => resource.uri).join(', ')}`)
out(`Templates (${templates.length}): ${templates.map(template => template.uriTemplate).join(', ')}`)
out(`Prompts (${prompts.length}): ${prompts.map(prompt => prompt.name).join(', ')}`)

out('\necho -> ' + JSON.stringify(await client.callTool('echo', { text: 'hello, rxmcp' })))
out('add  -> ' + JSON.stringify((await client.callTool('add', { a: 2, b: 40 })).structuredContent))

out('\nlong_running with live progress:')
const bar = progressBar(process.stdout)
await client.callTool('long_running', { steps: 10, ms: 80 }, { onProgress: event => bar.update(event.progress, event.total, event.message) })
bar.done('long_running finished')

const readme = await client.readResource('everything://readme')
out('\nresources/read everything://readme ->\n' + ('text' in readme.contents[0]! ? readme.contents[0].text : ''))
const item = await client.readResource('everything://items/42')
out('resources/read everything://items/42 -> ' + ('text' in item.contents[0]! ? item.contents[0].text : ''))

const prompt = await client.getPrompt('code_review', { language: 'typescript', code: 'const x: number = 1' })
out('\nprompts/get code_review -> ' + JSON.stringify(prompt.messages[0]?.content))
const completion = await client.complete({ ref: { type: 'ref/prompt', name: 'code_review' }, argument: { name: 'language', value: 'j' } })
out('completion of language "j" -> ' + completion.completion.values.join(', '))

out('\nsample -> ' + JSON.stringify((await client.callTool('sample', { prompt: 'What is MCP?' })).content[0]))

out('\nCancelling a long call after 300 ms:')
const controller = new AbortController()
setTimeout(() => controller.abort(), 300)
try {
  await client.callTool('long_running', { steps: 100, ms: 100 }, { signal: controller.signal })
  out('  (it finished before the abort?)')
} catch (error) {
  if (!(error instanceof CancelledError)) throw error
  out(`  ${error.name} (${error.code}): the server got notifications/cancelled and stopped`)
}
out('echo after cancel -> ' + JSON.stringify(await client.callTool('echo', { text: 'still alive' })))

await client.close()
out('\nClosed. Bye.')
