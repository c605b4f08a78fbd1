import { expect } from 'vitest'
import { TestClock } from './test-clock.ts'

/** What the Streamable HTTP hardening specs (http-hardening*.spec.ts) share: raw requests and a virtual clock. */

export const ACCEPT = 'application/json, text/event-stream'

export const init = (protocolVersion = '2025-11-25') => ({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 'hardening', version: '1' } } })

export function post(url: string, body: unknown, headers: Record<string, string> = {}, signal: AbortSignal = AbortSignal.timeout(10_000)) {
  return fetch(url, { method: 'POST', signal, headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) })
}

/** Initializes a session at `url` (initialize, then notifications/initialized) and gives its id. */
export async function initialized(url: string, protocolVersion = '2025-11-25'): Promise<string> {
  const response = await post(url, init(protocolVersion))
  expect(response.status).toBe(200)
  const session = response.headers.get('mcp-session-id')!
  await response.text()
  const headers = { 'mcp-session-id': session, 'mcp-protocol-version': protocolVersion }
  expect((await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers)).status).toBe(202)
  return session
}

/** A virtual clock for a listener's `scheduler`, and a way to move it. */
export function virtualClock() {
  const clock = new TestClock()
  return { clock, advance: (ms: number) => clock.advance(ms) }
}
