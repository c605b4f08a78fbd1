/**
 * Issue 25: when `rxmcp gateway` and `rxmcp bridge` start the OpenTelemetry SDK (bin/otel.ts): the
 * standard variables that ask for it, and the refusals that come before anything is served.
 */
import { describe, expect, it } from 'vitest'
import { execFile, spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { isTelemetryAsked, OTEL_MISSING } from '../../bin/otel.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))

function rxmcp(imports: string[], args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise(resolve => {
    execFile(process.execPath, [...imports.flatMap(module => ['--import', module]), 'bin/rxmcp.ts', ...args], { cwd: root, env: { ...process.env, ...env }, timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr })
    })
  })
}

describe('bin/otel.ts', () => {
  it.each([
    [{}, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }, true],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' }, true],
    [{ OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://127.0.0.1:4318/v1/metrics' }, true],
    [{ OTEL_TRACES_EXPORTER: 'console' }, true],
    [{ OTEL_METRICS_EXPORTER: 'otlp' }, true],
    [{ OTEL_TRACES_EXPORTER: 'none', OTEL_METRICS_EXPORTER: 'none' }, false],
    [{ OTEL_TRACES_EXPORTER: ' none , otlp' }, true],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: '' }, false],
    [{ OTEL_SERVICE_NAME: 'gateway' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'false' }, true],
  ])('asks for telemetry with %j: %s', (env, expected) => {
    expect(isTelemetryAsked(env)).toBe(expected)
  })

  it('rxmcp gateway without @opentelemetry/sdk-node installed exits 1 with one line saying what to install', async () => {
    const run = await rxmcp(['tsx', './spec/fixtures/without-otel-sdk.mjs'], ['gateway', '--config', 'no-such.json', '--port', '0'], { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' })
    expect(run.code).toBe(1)
    expect(run.stderr).toBe(`rxmcp: ${OTEL_MISSING}\n`)
  }, 60_000)

  it('the same command without the OTEL variables does not look for the SDK', async () => {
    const run = await rxmcp(['tsx', './spec/fixtures/without-otel-sdk.mjs'], ['gateway', '--config', 'no-such.json', '--port', '0'], { OTEL_EXPORTER_OTLP_ENDPOINT: '' })
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(/^rxmcp: cannot read no-such\.json/)
  }, 60_000)

  it('a stdio gateway refuses the console exporter, which would print over the protocol', async () => {
    const run = await rxmcp(['tsx'], ['gateway', '--config', 'no-such.json'], { OTEL_TRACES_EXPORTER: 'console' })
    expect(run.code).toBe(1)
    expect(run.stderr).toBe('rxmcp: OTEL_TRACES_EXPORTER=console would print on stdout, which carries the protocol here: export over OTLP instead\n')
    expect(run.stdout).toBe('')
  }, 60_000)

  it('a stdio gateway with OTEL_LOG_LEVEL=debug logs the SDK on stderr: stdout carries only the protocol', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'rxmcp-otel-'))
    try {
      const config = join(directory, 'mcp.json')
      await writeFile(config, JSON.stringify({ mcpServers: {} }))
      const child = spawn(process.execPath, ['--import', 'tsx', 'bin/rxmcp.ts', 'gateway', '--config', config], {
        cwd: root, stdio: ['pipe', 'pipe', 'pipe'],
        env: { ...process.env, OTEL_LOG_LEVEL: 'debug', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_SERVICE_NAME: 'stdio-gateway' },
      })
      let stdout = ''
      let stderr = ''
      child.stderr.on('data', chunk => { stderr += chunk })
      const exited = new Promise<number | null>(resolve => child.once('exit', code => resolve(code)))
      const answered = new Promise<void>(resolve => child.stdout.on('data', chunk => { stdout += chunk; if (stdout.includes('"id":1')) resolve() }))
      child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }) + '\n')
      await answered
      child.stdin.end()
      expect(await exited).toBe(0)
      const lines = stdout.split('\n').filter(line => line !== '')
      for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow()
      expect(JSON.parse(lines[0]!)).toMatchObject({ id: 1, result: { serverInfo: { name: 'rxmcp-gateway' } } })
      // The SDK did log, at debug: there.
      expect(stderr).toMatch(/OTEL_LOGS_EXPORTER is empty/)
    } finally {
      await rm(directory, { recursive: true, force: true })
    }
  }, 60_000)
})
