import { describe, expect, it } from 'vitest'
import { VirtualTimeScheduler } from 'rxjs'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { createEverythingServer } from '../../examples/everything/everything.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { openSession, startBareListener } from '../bench/http-bench.ts'
import { sessionsEnded } from '../helpers/sessions-ended.ts'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void
const heap = () => { gc(); gc(); return process.memoryUsage().heapUsed }

const INIT = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'abuser', version: '1' } } })
const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }

describe('the Streamable HTTP server under abuse', () => {
  it('frees 1,000 abandoned sessions after the idle TTL, memory back near its start', async () => {
    const server = createEverythingServer()
    // A virtual clock: no session expires while 1,000 are opened on a loaded machine.
    const clock = new VirtualTimeScheduler(undefined, 0)
    // Every session comes from 127.0.0.1: one client, allowed them all.
    const http = streamableHttp({ sessionIdleTimeout: 3000, scheduler: clock, maxSessionsPerClient: Infinity })
    await server.listen(http)
    try {
      const before = heap()
      for (let batch = 0; batch < 10; batch++) {
        await Promise.all(Array.from({ length: 100 }, async () => {
          const response = await fetch(http.url!, { method: 'POST', headers, body: INIT })
          await response.text()
        }))
      }
      expect(http.sessionCount).toBe(1000)
      expect(server.sessions.size).toBe(1000)
      const during = heap()
      clock.maxFrames = clock.now() + 5000
      clock.flush()
      expect(http.sessionCount).toBe(0)
      // The server lets go of each session once its connection has closed.
      await sessionsEnded(server)
      expect(server.sessions.size).toBe(0)
      const after = heap()
      // Sessions cost memory while alive and give it back once freed.
      expect(during - before).toBeGreaterThan(after - before)
      expect(after - before).toBeLessThan(8 * 1024 * 1024)
    } finally {
      await server.close()
    }
  }, 30_000)

  it('holds under 2 KiB of heap per idle session in the listener itself', async () => {
    // The listener alone: a bare reader answers initialize, so only the transport's share is measured.
    const { http, close } = await startBareListener()
    try {
      // node:http with a keep-alive agent as the client (fetch keeps more of its own per request).
      const url = new URL(http.url!)
      const open = () => openSession(url)
      await Promise.all(Array.from({ length: 50 }, open))
      const before = heap()
      for (let batch = 0; batch < 20; batch++) await Promise.all(Array.from({ length: 50 }, open))
      const perSession = (heap() - before) / 1000
      console.log(`listener heap per idle session: ${(perSession / 1024).toFixed(2)} KiB`)
      expect(http.sessionCount).toBe(1050)
      expect(perSession).toBeLessThan(2 * 1024)
    } finally {
      await close()
    }
  }, 30_000)

  it('answers a forged session id 404 without echoing it, and a foreign Origin 403', async () => {
    const server = createEverythingServer()
    const http = streamableHttp()
    await server.listen(http)
    try {
      const forged = await fetch(http.url!, { method: 'POST', headers: { ...headers, 'mcp-session-id': 'AAAAforgedAAAA' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) })
      expect(forged.status).toBe(404)
      expect(await forged.text()).not.toContain('forged')
      const foreign = await fetch(http.url!, { method: 'POST', headers: { ...headers, origin: 'http://evil.example.com' }, body: INIT })
      expect(foreign.status).toBe(403)
      expect(http.sessionCount).toBe(0)
    } finally {
      await server.close()
    }
  })
})
