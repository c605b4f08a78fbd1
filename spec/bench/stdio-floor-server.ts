// The floor of the stdio benchmark: no MCP library, the least work that answers the raw driver.
// Parses each line, answers initialize and tools/call echo, one write per chunk read. It shows what
// the pipes, the wake-ups and JSON cost on this machine, so the rxmcp and official figures can be
// read against it.
process.stdin.setEncoding('utf8')
// The unfinished last line of what stdin gave so far.
let rest = ''
process.stdin.on('data', (text: string) => {
  // A long line comes in many chunks: look for its end in the new text only (linear, not quadratic).
  if (!text.includes('\n')) { rest += text; return }
  const buffer = rest + text
  let out = ''
  let start = 0
  let end: number
  while ((end = buffer.indexOf('\n', start)) >= 0) {
    const message = JSON.parse(buffer.slice(start, end))
    start = end + 1
    if (message.id === undefined) continue
    const result = message.method === 'initialize'
      ? { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'floor', version: '1' } }
      : { content: [{ type: 'text', text: message.params.arguments.text }] }
    out += JSON.stringify({ jsonrpc: '2.0', id: message.id, result }) + '\n'
  }
  rest = buffer.slice(start)
  if (out !== '') process.stdout.write(out)
})
