/**
 * Where the Streamable HTTP server spends its time: the everything server over HTTP under
 * `node --cpu-prof`, 16 legacy sessions with 64 echo calls in flight (or modern-era POSTs), then
 * the summary of profile.ts.
 *
 *   npx tsx spec/bench/profile-http.ts [legacy|modern] [seconds=5] [node|web|floor]
 *
 * `web` profiles the web handler (rxmcp/web) behind @hono/node-server (web-http-server.ts) instead
 * of the node:http listener; `floor` the no-library server (http-floor-server.ts), to read the others against.
 */
import { spawn } from 'node:child_process'
import { mkdirSync, readdirSync, statSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { openSession, post } from './http-bench.ts'
import { modernEchoParams, postModern } from './modern-bench.ts'
import { installCleanup, within } from './procs.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))
const profileDir = `${root}.bench/profiles`
const [era = 'legacy', secondsText = '5', server = 'node'] = process.argv.slice(2)
const seconds = Number(secondsText)
mkdirSync(profileDir, { recursive: true })
// A run that fails part way kills its server too (a profiled server left behind keeps sampling).
installCleanup()
const started = Date.now()
const serverFile = server === 'web' ? ['spec/bench/web-http-server.ts', '0'] : server === 'floor' ? ['spec/bench/http-floor-server.ts', '0'] : ['examples/everything/server.ts', '--http', '0']
// Through tsx, so the summary can say which module each function is of (the bench runs a bundle,
// built.ts; tsx adds the cost of naming closures, `__name` and `set natives` in the summary).
const child = spawn(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, '--cpu-prof-interval=100', '--import', 'tsx', ...serverFile],
  { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
const url = new URL(await within(new Promise<string>(resolve => {
  let seen = ''
  const onData = (chunk: Buffer) => { seen += chunk; const match = /(http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(seen); if (match) resolve(match[1]!) }
  child.stdout!.on('data', onData)
  child.stderr!.on('data', onData)
}), 20_000, 'no URL'))
const sessions = era === 'legacy' ? await Promise.all(Array.from({ length: 16 }, () => openSession(url))) : []
const legacyParams = JSON.stringify({ name: 'echo', arguments: { text: 'hello' } })
const modernParams = modernEchoParams('hello')
let calls = 0
let id = 0
let isRunning = true
async function lane(index: number): Promise<void> {
  while (isRunning) {
    if (era === 'legacy') {
      const answer = await post(url, `{"jsonrpc":"2.0","id":${++id},"method":"tools/call","params":${legacyParams}}`, sessions[index % 16])
      if (answer.status !== 200) throw new Error(`status ${answer.status}: ${answer.text}`)
    } else {
      // The modern era's headers (MCP-Method, MCP-Name, the 2026-07-28 version) with the `_meta`.
      const answer = await postModern(url, ++id, 'tools/call', modernParams, 'echo')
      if (answer.error !== undefined) throw new Error(`tools/call failed: ${JSON.stringify(answer.error)}`)
    }
    calls++
  }
}
setTimeout(() => { isRunning = false }, seconds * 1000)
await Promise.all(Array.from({ length: 64 }, (_, index) => lane(index)))
console.log(`${era} http: ${calls} calls in ${seconds} s (${(calls / seconds).toFixed(0)} calls/s under the profiler)`)
child.kill('SIGINT')
await new Promise(resolve => child.once('exit', resolve))
const profile = readdirSync(profileDir).filter(name => name.endsWith('.cpuprofile')).map(name => `${profileDir}/${name}`)
  
  // tsx's loader thread writes a profile of its own: the main thread's is the largest.
  .filter(path => statSync(path).mtimeMs >= started).sort((a, b) => statSync(b).size - statSync(a).size)[0]
if (profile === undefined) throw new Error('no profile written')
const summary = spawn(process.execPath, ['--import', 'tsx', 'spec/bench/profile.ts', 'summarize', profile], { cwd: root, stdio: 'inherit' })
await new Promise(resolve => summary.once('exit', resolve))
