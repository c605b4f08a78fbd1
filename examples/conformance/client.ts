/**
 * The client the official conformance suite drives: `client.ts <server-url>`, with the scenario
 * in MCP_CONFORMANCE_SCENARIO. Exits 0 when the scenario's steps completed.
 */
import { lastValueFrom, toArray } from 'rxjs'
import { connect, type ClientOptions } from '../../actors/client.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'

const url = process.argv[2]
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? 'initialize'
if (url === undefined) {
  process.stderr.write('usage: client.ts <server-url>\n')
  process.exit(2)
}

const options: ClientOptions = {
  // SEP-1034: accept with nothing filled in; the client fills the schema's defaults.
  elicitation: { form: () => ({ action: 'accept', content: {} }) },
}

const client = await connect(streamableHttpClient(url), { name: 'rxmcp-conformance-client', version: '0.1.0' }, options)
try {
  // Only a server that declared tools is asked for them (the initialize scenario's server declares none).
  const tools = client.serverCapabilities.tools === undefined ? [] : await lastValueFrom(client.tools().pipe(toArray()))
  switch (scenario) {
    case 'tools_call':
      for (const tool of tools) if (tool.name === 'add_numbers') await client.callTool('add_numbers', { a: 5, b: 3 })
      break
    case 'elicitation-sep1034-client-defaults':
      await client.callTool('test_client_elicitation_defaults', {})
      break
    case 'sse-retry':
      await client.callTool('test_reconnection', {})
      break
  }
} finally {
  await client.close()
}
