/**
 * `npm run conformance`: the official conformance suite against rxmcp. Starts the conformance
 * server on a free loopback port, runs every server scenario (`--suite all`), then the client
 * scenarios one at a time, and ends with one line `N passed, M failed` counted in scenarios. A
 * scenario with a warning counts as failed. The suite's CLI needs Node >= 22, fetched from the registry.
 */
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { createConformanceServer } from './server.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))
const cli = createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/dist/index.js')
const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url))
const CLIENT_SCENARIOS = ['initialize', 'tools_call', 'elicitation-sep1034-client-defaults', 'sse-retry']

/** Runs the conformance CLI under Node 24; resolves with its output. */
function conformance(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('npx', ['-y', '-p', 'node@24', 'node', cli, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } })
    let output = ''
    child.stdout.on('data', chunk => { output += chunk })
    child.stderr.on('data', chunk => { output += chunk })
    const timer = setTimeout(() => child.kill('SIGKILL'), 10 * 60_000)
    child.on('error', reject)
    child.on('close', () => { clearTimeout(timer); resolve(output) })
  })
}

/** Scenario verdicts from the CLI's summary: `✓ name: 1 passed, 0 failed` lines, and warnings. */
function verdicts(output: string): Map<string, boolean> {
  const results = new Map<string, boolean>()
  const plain = output.replace(/\x1b\[[0-9;]*m/g, '')
  for (const match of plain.matchAll(/^[✓✗]\s+(\S+):\s+(\d+) passed, (\d+) failed(?:, (\d+) warnings?)?/gm)) {
    results.set(match[1]!, match[3] === '0' && (match[4] === undefined || match[4] === '0'))
  }
  return results
}

const server = createConformanceServer()
const http = streamableHttp({ port: 0 })
await server.listen(http)
const failed: string[] = []
let passed = 0
try {
  const serverOutput = await conformance(['server', '--url', http.url!, '--suite', 'all'])
  const serverResults = verdicts(serverOutput)
  // Warnings are printed per check; a scenario with any counts as failed here.
  const plain = serverOutput.replace(/\x1b\[[0-9;]*m/g, '')
  let current = ''
  for (const line of plain.split('\n')) {
    const scenario = /=== Running scenario: (\S+) ===/.exec(line)
    if (scenario) current = scenario[1]!
    else if (/\bWARNING\b/.test(line) && serverResults.has(current)) serverResults.set(current, false)
  }
  if (serverResults.size === 0) { process.stdout.write(serverOutput); failed.push('server suite (no results)') }
  for (const [name, ok] of serverResults) {
    if (ok) passed++
    else failed.push(`server:${name}`)
  }
  for (const scenario of CLIENT_SCENARIOS) {
    const output = await conformance(['client', '--command', `${tsx} examples/conformance/client.ts`, '--scenario', scenario])
    const plain = output.replace(/\x1b\[[0-9;]*m/g, '')
    const summary = /Passed:\s*(\d+)\/(\d+),\s*(\d+) failed(?:,\s*(\d+) warnings?)?/.exec(plain)
    const ok = summary !== null && summary[3] === '0' && (summary[4] === undefined || summary[4] === '0') && Number(summary[1]) > 0
    if (ok) passed++
    else { failed.push(`client:${scenario}`); process.stdout.write(plain.split('\n').filter(line => /FAIL|WARN|Error/i.test(line)).slice(0, 20).join('\n') + '\n') }
  }
} finally {
  await server.close()
}
if (failed.length > 0) process.stdout.write(`conformance failures: ${failed.join(', ')}\n`)
process.stdout.write(`conformance: ${passed} passed, ${failed.length} failed\n`)
process.exitCode = failed.length === 0 ? 0 : 1
