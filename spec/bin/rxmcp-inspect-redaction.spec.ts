/**
 * Issue 20: `rxmcp inspect --config` printed the values of `${VAR}`s (secrets) that the command line,
 * a child's stderr or a URL repeated. The CLI runs as a child process with the secret in its
 * environment; nothing it prints may hold the secret.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../..', import.meta.url))
const SECRET = 'sk-live-5ecret-Value+9/x'

const cleanup: (() => Promise<unknown>)[] = []
afterEach(async () => { for (const step of cleanup.splice(0).reverse()) await step() })

function rxmcp(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise(resolve => {
    execFile(process.execPath, ['--import', 'tsx', 'bin/rxmcp.ts', ...args], { cwd: root, env, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr })
    })
  })
}

describe('issue 20: rxmcp inspect --json prints expanded ${VAR} secrets', { timeout: 90_000 }, () => {
  it('shows every expanded value as ${VAR}: in a command line, a child\'s stderr, its arguments and environment, a URL', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rxmcp-redact-'))
    cleanup.push(() => rm(dir, { recursive: true, force: true }))
    // A server that refuses every request: the client's error names the URL it asked.
    const web: Server = createServer((_, res) => res.writeHead(400).end())
    await new Promise<void>(resolve => web.listen(0, '127.0.0.1', resolve))
    cleanup.push(() => new Promise(resolve => web.close(resolve)))
    const port = (web.address() as { port: number }).port
    const config = join(dir, 'mcp.json')
    await writeFile(config, JSON.stringify({
      mcpServers: {
        missing: { command: '/nonexistent/${RXMCP_SECRET}/server' },
        talker: {
          command: process.execPath,
          args: ['-e', "console.error('args', process.argv[1], 'env', process.env.TOKEN); process.exit(3)", '${RXMCP_SECRET}'],
          env: { TOKEN: '${RXMCP_SECRET}' },
        },
        web: { url: `http://127.0.0.1:${port}/mcp?key=\${RXMCP_SECRET}`, headers: { Authorization: 'Bearer ${RXMCP_SECRET}' } },
      },
    }))
    const env = { ...process.env, RXMCP_SECRET: SECRET }
    for (const json of [['--json'], []]) {
      const { code, stdout, stderr } = await rxmcp(['inspect', '--config', config, '--wait-ms', '20000', ...json], env)
      expect(code).toBe(1)
      expect(stdout + stderr).not.toContain(SECRET)
      expect(stdout + stderr).not.toContain(encodeURIComponent(SECRET))
      if (json.length === 0) { expect(stdout).toContain('args ${RXMCP_SECRET} env ${RXMCP_SECRET}'); continue }
      const report = JSON.parse(stdout)
      expect(report.servers.missing).toMatchObject({ status: 'failed', reason: expect.stringContaining('/nonexistent/${RXMCP_SECRET}/server') })
      expect(report.servers.talker.stderr).toContain('args ${RXMCP_SECRET} env ${RXMCP_SECRET}')
      expect(report.servers.web).toMatchObject({ status: 'failed', reason: expect.stringContaining('/mcp?key=${RXMCP_SECRET}') })
    }
  })
})
