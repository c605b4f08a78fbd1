import { describe, expect, it } from 'vitest'
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { createEverythingServer } from '../../examples/everything/everything.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))
const server = ['--', process.execPath, '--import', 'tsx', 'examples/everything/server.ts']

function rxmcp(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise(resolve => {
    execFile(process.execPath, ['--import', 'tsx', 'bin/rxmcp.ts', ...args], { cwd: root, timeout: 20_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr })
    })
  })
}

describe('rxmcp', () => {
  it('inspects a server as JSON', async () => {
    const { code, stdout } = await rxmcp('inspect', '--json', ...server)
    expect(code).toBe(0)
    const report = JSON.parse(stdout)
    expect(report.serverInfo.name).toBe('rxmcp-everything')
    expect(report.tools).toHaveLength(10)
    expect(report.resources).toHaveLength(8)
    expect(report.resourceTemplates).toHaveLength(2)
    expect(report.prompts).toHaveLength(7)
  }, 30_000)

  it('calls a tool, printing the result on stdout and progress on stderr', async () => {
    const { code, stdout, stderr } = await rxmcp('call', 'long_running', '{"steps":2,"ms":5}', ...server)
    expect(code).toBe(0)
    expect(JSON.parse(stdout)).toEqual({ content: [{ type: 'text', text: 'Finished 2 steps' }] })
    expect(stderr).toContain('100%')
  }, 30_000)

  it('exits 1 for a tool result with isError and for an unknown tool', async () => {
    expect((await rxmcp('call', 'fail', ...server)).code).toBe(1)
    const unknown = await rxmcp('call', 'nope', '{}', ...server)
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain('-32602')
  }, 30_000)

  it('reaches a server at an http URL, Streamable HTTP or legacy SSE', async () => {
    const server = createEverythingServer()
    const http = streamableHttp()
    await server.listen(http)
    try {
      const streamable = await rxmcp('call', 'echo', '{"text":"over http"}', http.url!)
      expect(streamable.code).toBe(0)
      expect(JSON.parse(streamable.stdout)).toEqual({ content: [{ type: 'text', text: 'over http' }] })
      const legacy = await rxmcp('inspect', '--json', http.url!.replace('/mcp', '/sse'))
      expect(legacy.code).toBe(0)
      expect(JSON.parse(legacy.stdout).tools).toHaveLength(10)
    } finally {
      await server.close()
    }
  }, 30_000)

  it.each([
    [['bogus']],
    [['call', 'echo']],
    [['call', 'echo', 'not json', ...server]],
    [['inspect', '--wat', ...server]],
  ])('exits 2 with usage for %j', async args => {
    const { code, stderr } = await rxmcp(...args)
    expect(code).toBe(2)
    expect(stderr).toContain('Usage:')
  })
})
