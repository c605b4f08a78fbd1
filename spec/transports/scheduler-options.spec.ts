import { afterEach, describe, expect, it } from 'vitest'
import { createServer as createNodeServer, type Server } from 'node:http'
import { mkdtemp, mkdir, rename, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { stdioClient } from '../../transports/stdio.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { skillsDirectory, type SkillFolder } from '../../transports/skills-directory.ts'
import { TestClock } from '../helpers/test-clock.ts'
import { collected } from '../helpers/collected.ts'

/**
 * Issue 22, item 4: every transport that waits takes its time from its `scheduler` option only. On
 * a virtual clock nothing of it happens until the test moves the clock, and then it happens at once.
 */

const cleanups: Array<() => Promise<unknown> | unknown> = []
afterEach(async () => { for (const cleanup of cleanups.splice(0).reverse()) await cleanup() })

describe('stdioClient: scheduler', () => {
  it('waits shutdownGraceMs on the scheduler after closing stdin, then sends SIGTERM', async () => {
    const clock = new TestClock()
    // A child that outlives the end of its stdin (an interval holds it), and dies of SIGTERM.
    const transport = stdioClient({ command: process.execPath, args: ['-e', 'process.stdin.resume(); setInterval(() => {}, 1000)'], stderr: 'ignore', shutdownGraceMs: 5_000, scheduler: clock })
    transport.inbound.subscribe({ error: () => {} })
    const closed = transport.close()
    // stdin closed: the grace period is a wait on the clock, and the child is still there.
    expect(await clock.nextWait(5_000)).toBe(5_000)
    clock.advance(4_999)
    expect(transport.pid).toBeDefined()
    clock.advance(1)
    await closed
    expect(await transport.exited).toEqual({ code: null, signal: 'SIGTERM' })
  })
})

describe('streamableHttpClient: scheduler', () => {
  it('gives the DELETE of close() 2 s on the scheduler, then lets go of a server that never answers it', async () => {
    const deletes = collected<string>()
    const node: Server = createNodeServer((req, res) => {
      if (req.method === 'DELETE') { deletes.push(String(req.headers['mcp-session-id'])); return }
      let body = ''
      req.on('data', chunk => { body += chunk })
      req.on('end', () => {
        const message = JSON.parse(body) as { id?: number; method: string }
        if (message.method !== 'initialize') { res.writeHead(202).end(); return }
        res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'held' })
        res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 's', version: '1' } } }))
      })
    })
    await new Promise<void>(resolve => node.listen(0, '127.0.0.1', resolve))
    cleanups.push(() => new Promise(resolve => { node.closeAllConnections(); node.close(resolve) }))
    const clock = new TestClock()
    const transport = streamableHttpClient(`http://127.0.0.1:${(node.address() as AddressInfo).port}/mcp`, { scheduler: clock, openStandaloneStream: false })
    transport.inbound.subscribe({ error: () => {} })
    await transport.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } } })
    let isClosed = false
    const closed = transport.close().then(() => { isClosed = true })
    await deletes.when(items => items.length === 1)
    expect(deletes.items).toEqual(['held'])
    expect(await clock.nextWait(2000)).toBe(2000)
    expect(isClosed).toBe(false)
    clock.advance(2000)
    await closed
  })
})

describe('skillsDirectory: scheduler', () => {
  it('reads the folders again debounceMs after a change, on the scheduler', async () => {
    const root = await mkdtemp(join(tmpdir(), 'rxmcp-skills-'))
    cleanups.push(() => rm(root, { recursive: true, force: true }))
    await mkdir(join(root, 'one'))
    await writeFile(join(root, 'one', 'SKILL.md'), '# one\n')
    const clock = new TestClock()
    const reads = collected<SkillFolder[]>()
    const watching = skillsDirectory(root, { watch: true, debounceMs: 250, scheduler: clock }).subscribe(skills => reads.push(skills))
    cleanups.push(() => watching.unsubscribe())
    await reads.when(items => items.length === 1)
    expect(reads.items[0]!.map(skill => skill.name)).toEqual(['one'])
    // The new skill comes whole, in one rename, so any read after the change sees all of it.
    const staging = await mkdtemp(join(tmpdir(), 'rxmcp-skill-'))
    cleanups.push(() => rm(staging, { recursive: true, force: true }))
    await writeFile(join(staging, 'SKILL.md'), '# two\n')
    await rename(staging, join(root, 'two'))
    // The change arms the debounce on the clock; nothing is read until it has passed.
    expect(await clock.nextWait(250)).toBe(250)
    expect(reads.items).toHaveLength(1)
    clock.advance(250)
    await reads.when(items => items.some(skills => skills.length === 2))
    expect(reads.items.at(-1)!.map(skill => skill.name)).toEqual(['one', 'two'])
  })
})
