/**
 * The cost of the structure pre-scan (`exceededBound`, lib/codec/structure.ts) beside JSON.parse,
 * on the messages it runs on: `npx tsx spec/bench/structure-bench.ts`. CPU time (process.cpuUsage),
 * best of 7 rounds per case, so other processes on the machine count as little as they can.
 */
import { STRUCTURE_DEFAULTS, exceededBound } from '../../lib/codec/structure.ts'

const { maxDepth, maxMembers } = STRUCTURE_DEFAULTS

/** ns of CPU per call of `run` over `iterations` calls. */
function cpuNs(run: () => unknown, iterations: number): number {
  const start = process.cpuUsage()
  for (let i = 0; i < iterations; i++) run()
  const spent = process.cpuUsage(start)
  return (spent.user + spent.system) * 1000 / iterations
}

function measure(name: string, text: string, iterations: number): void {
  const scan = () => exceededBound(text, maxDepth, maxMembers)
  const parse = () => JSON.parse(text)
  for (let i = 0; i < Math.min(iterations, 200); i++) { scan(); parse() }
  let best = { scan: Infinity, parse: Infinity }
  for (let round = 0; round < 7; round++) {
    best = { scan: Math.min(best.scan, cpuNs(scan, iterations)), parse: Math.min(best.parse, cpuNs(parse, iterations)) }
  }
  const bytes = Buffer.byteLength(text)
  console.log(`${name.padEnd(30)} ${String(bytes).padStart(9)} B | scan ${best.scan.toFixed(0).padStart(9)} ns ${(best.scan / bytes).toFixed(3)} ns/B | JSON.parse ${best.parse.toFixed(0).padStart(9)} ns ${(best.parse / bytes).toFixed(3)} ns/B | scan/parse ${(100 * best.scan / best.parse).toFixed(1)}%`)
}

const META = { progressToken: 'p-17', 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} }, sampling: {}, roots: { listChanged: true } }, 'io.modelcontextprotocol/clientInfo': { name: 'rxmcp-client', version: '1.2.3' } }
const request = (query: string) => JSON.stringify({ jsonrpc: '2.0', id: 17, method: 'tools/call', params: { name: 'search_docs', arguments: { query, limit: 10, filters: { lang: 'en', tags: ['mcp', 'http', 'auth'] } }, _meta: META } })
const base = request('').length
const tools = (count: number) => JSON.stringify({ jsonrpc: '2.0', id: 2, result: { tools: Array.from({ length: count }, (_, i) => ({ name: `tool_${i}`, description: `Does thing number ${i}`, inputSchema: { type: 'object', properties: { a: { type: 'string', description: 'first' }, b: { type: 'integer', minimum: 0 } }, required: ['a'] } })) } })

const users = { users: Array.from({ length: 20 }, (_, i) => ({ id: i, name: `user${i}`, email: `u${i}@example.com`, roles: ['a', 'b'] })) }
const rows = { rows: Array.from({ length: 60_000 }, (_, i) => ({ id: i, name: `n${i}`, tags: ['x', 'y'] })) }
const textResult = (text: string) => JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text }] } })

measure('echo request (short: skipped)', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } }), 200_000)
measure('1 KiB tools/call request', request('q'.repeat(1024 - base)), 100_000)
measure('1.2 KiB tools/list result', tools(6), 100_000)
measure('3.2 KiB JSON-in-text result', textResult(JSON.stringify(users, null, 2)), 50_000)
measure('10 MiB text result', textResult('lorem ipsum dolor sit amet '.repeat(388_000)), 10)
measure('3 MiB JSON-in-text result', textResult(JSON.stringify(rows)), 10)
measure('1.2 MB tools/list (6k tools)', tools(6_000), 10)
