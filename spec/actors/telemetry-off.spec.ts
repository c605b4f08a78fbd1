import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { connect } from '../../actors/client.ts'
import { stdioClient } from '../../transports/stdio.ts'

/**
 * Issue 25: telemetry off loads nothing of OpenTelemetry. A stdio server runs in a child with a
 * module hook (node:module `register`, a resolve hook in the loader thread) that writes every URL
 * the child resolves to a file; the test reads which modules were loaded by the time a tools/call
 * was answered. The same server with telemetry on loads them, so the check can fail. (The built
 * package is checked the same way in spec/package/package.spec.ts, and its chunks there too.)
 */
const root = fileURLToPath(new URL('../..', import.meta.url))
const TINY = join(root, 'spec/fixtures/tiny-server.ts')
const EVERYTHING = join(root, 'examples/everything/server.ts')
/** The everything server with telemetry on (a real SDK, nothing exported): the bench's. */
const EVERYTHING_TELEMETRY = join(root, 'spec/bench/rxmcp-telemetry-server.ts')
const OTEL = /\/node_modules\/@opentelemetry\//
const TELEMETRY_MODULE = /\/actors\/telemetry\.ts$/m

let scratch: string
let record: string
let runs = 0

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'rxmcp-telemetry-off-'))
  await writeFile(join(scratch, 'hooks.mjs'), [
    "import { appendFileSync } from 'node:fs'",
    'let log',
    'export function initialize(data) { log = data.log }',
    'export async function resolve(specifier, context, next) {',
    '  const resolved = await next(specifier, context)',
    "  appendFileSync(log, resolved.url + '\\n')",
    '  return resolved',
    '}',
  ].join('\n'))
  // The log's path comes through the environment; each run names its own.
  await writeFile(join(scratch, 'record.mjs'), [
    "import { register } from 'node:module'",
    "register('./hooks.mjs', import.meta.url, { data: { log: process.env.RXMCP_MODULE_LOG } })",
  ].join('\n'))
  record = pathToFileURL(join(scratch, 'record.mjs')).href
})

afterAll(async () => {
  if (scratch !== undefined) await rm(scratch, { recursive: true, force: true })
})

/** Runs `file` over stdio (through tsx), initializes, calls `echo`, closes; answers the URLs it resolved. */
async function loadedBy(file: string, env: Record<string, string> = {}): Promise<string> {
  const log = join(scratch, `modules-${++runs}.log`)
  await writeFile(log, '')
  const transport = stdioClient({ command: process.execPath, args: ['--import', 'tsx', '--import', record, file], cwd: root, env: { ...env, RXMCP_MODULE_LOG: log }, stderr: 'ignore' })
  const client = await connect(transport, { name: 'probe', version: '1' }, { era: 'legacy' })
  try {
    const result = await client.callTool('echo', { text: 'hi' })
    expect(JSON.stringify(result.content)).toContain('hi')
  } finally {
    await client.close()
  }
  return readFile(log, 'utf8')
}

describe('issue 25: a server without telemetry loads nothing of OpenTelemetry', () => {
  it('the tiny stdio server: neither @opentelemetry/* nor actors/telemetry.ts; with telemetry: true, both', async () => {
    const off = await loadedBy(TINY)
    // The hook saw the server's own modules: an empty log would prove nothing.
    expect(off).toMatch(/\/spec\/fixtures\/tiny-server\.ts$/m)
    expect(off).toMatch(/\/actors\/server\.ts$/m)
    expect(off).not.toMatch(OTEL)
    expect(off).not.toMatch(TELEMETRY_MODULE)
    const on = await loadedBy(TINY, { TINY_TELEMETRY: '1' })
    expect(on).toMatch(TELEMETRY_MODULE)
    expect(on).toMatch(/\/node_modules\/@opentelemetry\/api\//)
  }, 60_000)

  it('the everything example over stdio: none of them; the same server with telemetry on loads actors/telemetry.ts', async () => {
    const off = await loadedBy(EVERYTHING)
    expect(off).toMatch(/\/examples\/everything\/everything\.ts$/m)
    expect(off).not.toMatch(OTEL)
    expect(off).not.toMatch(TELEMETRY_MODULE)
    const on = await loadedBy(EVERYTHING_TELEMETRY)
    expect(on).toMatch(/\/examples\/everything\/everything\.ts$/m)
    expect(on).toMatch(TELEMETRY_MODULE)
  }, 60_000)
})
