// A client of the typed example, with requests typed by method name:
//   npx tsx examples/typed/client.ts
import { lastValueFrom } from 'rxjs'
import { connect } from '../../actors/client.ts'
import { resultOf } from '../../lib/operators/progress.ts'
import { stdioClient } from '../../transports/stdio.ts'

const here = new URL('.', import.meta.url).pathname
const client = await connect(stdioClient({ command: process.execPath, args: ['--import', 'tsx', `${here}server.ts`] }), { name: 'typed-client', version: '1.0.0' })

// `tools/list` takes optional params and gives a ListToolsResult: `tools` is typed.
const { tools } = await lastValueFrom(client.request('tools/list').pipe(resultOf()))
for (const tool of tools) console.log(tool.name, JSON.stringify(tool.inputSchema))

// `tools/call` needs { name, arguments? } and gives a CallToolResult.
const divided = await lastValueFrom(client.request('tools/call', { name: 'divide', arguments: { a: 22, b: 7 } }).pipe(resultOf()))
console.log('divide:', divided.structuredContent)
console.log('divide by zero:', (await client.callTool('divide', { a: 1, b: 0 })).content)
console.log('register admin:', (await client.callTool('register', { user: 'admin' })).content)

const prompt = await lastValueFrom(client.request('prompts/get', { name: 'summarize', arguments: { text: 'RxJS all the way down.', words: '5' } }).pipe(resultOf()))
console.log('summarize:', prompt.messages[0]?.content)

await client.close()
