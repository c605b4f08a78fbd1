import { expect, it } from 'vitest'
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { connect } from '../../actors/client.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { freeLoopbackPort } from '../../examples/cluster/spawn-nginx.ts'

/** The one-command deployment (`npm run cluster`): redis-server, three instances, nginx; stopped by SIGTERM. */
it('npm run cluster starts Redis, three instances and nginx, serves a session through them, and stops cleanly', async () => {
  const port = await freeLoopbackPort()
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/cluster/run.ts', '--instances', '3', '--port', String(port)], { stdio: ['ignore', 'pipe', 'inherit'] })
  const exited = new Promise<number | null>(resolve => child.once('exit', code => resolve(code)))
  process.once('exit', () => child.kill('SIGKILL'))
  try {
    await serveThrough(await readyUrl(), port)
  } finally {
    // SIGTERM lets it stop what it started (Redis, the instances, nginx) before it exits.
    child.kill('SIGTERM')
  }
  expect(await exited).toBe(0)

  function readyUrl(): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no ready line in 60 s')), 60_000)
      createInterface({ input: child.stdout! }).on('line', line => {
        const match = /^rxmcp cluster: (\S+)/.exec(line)
        if (match !== null) { clearTimeout(timer); resolve(match[1]!) }
      })
      void exited.then(code => { clearTimeout(timer); reject(new Error(`exited (${code}) before it was ready`)) })
    })
  }
}, 90_000)

async function serveThrough(url: string, port: number): Promise<void> {
  expect(url).toBe(`http://127.0.0.1:${port}/mcp`)
  const client = await connect(streamableHttpClient(url), { name: 'example', version: '1' }, { era: 'legacy' })
  try {
    for (let i = 0; i < 6; i++) expect((await client.callTool('echo', { text: `call ${i}` })).content).toEqual([{ type: 'text', text: `call ${i}` }])
    const progress: number[] = []
    await client.callTool('long_running', { steps: 3, ms: 5 }, { onProgress: event => progress.push(event.progress) })
    expect(progress).toEqual([1, 2, 3])
  } finally {
    await client.close()
  }
}
