import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

/**
 * Issue 22, item 5: the suite waits on events and on virtual time, not on the wall clock. A real
 * sleep or a polling wait is allowed only where it waits on a real child process or a real network
 * peer that gives no event to wait on (a redis-server, nginx, Chromium, tmux, an official SDK peer
 * in a child process), and each one is listed below with its reason. This scan keeps the count
 * honest: a new one fails here until it is listed, and one converted fails here until its entry
 * goes down.
 *
 * What counts, line by line in spec/**\/*.ts (spec/bench/ and spec/fixtures/ left out, and this
 * file), each line at most once:
 *
 * - `timer-sleep`: a timer that resolves a promise, the shape of an awaited sleep:
 *   `setTimeout(resolve, …)`, `setTimeout(r, …)` (`resolve | res | r | done | wake | next`), or
 *   `setTimeout(() => resolve(), …)`. Loops that wait on a timer between their checks
 *   (`for (…; !check(); …) await new Promise(resolve => setTimeout(resolve, 10))`, the `until`
 *   helpers) count through the sleep inside them.
 * - `vi-wait`: `vi.waitFor(` and `vi.waitUntil(`: vitest's re-check on a timer.
 * - `interval-poll`: a `setInterval(` whose callback (that line and the three after it) calls
 *   `resolve(`: a promise settled by re-checking on a timer.
 *
 * - `expect-poll`: `expect.poll(`: vitest's re-check of an assertion on a timer (every 50 ms).
 * - `turn-wait`: a promise settled by an event-loop turn, the shape of waiting for something to
 *   have happened by spinning turns: `new Promise(resolve => setImmediate(resolve))` (`resolve |
 *   res | r | done | wake | next`, or `() => resolve()`), and `await setImmediate(` of
 *   node:timers/promises. A `settle()` or `tick()` helper that spins turns counts once, at the line
 *   that makes its promise; its calls are not counted again.
 *
 * A bound on a wait (`setTimeout(() => reject(new Error('… within 10 s')))` raced against the
 * event) is no sleep and is not counted; nor is a `setImmediate` that settles no promise (a CPU
 * hog's `setImmediate(spin)`, a deferral of work).
 */

const root = fileURLToPath(new URL('../..', import.meta.url))
const SELF = 'spec/layout/sleeps.spec.ts'
const LEFT_OUT = ['spec/bench/', 'spec/fixtures/']

/** The patterns, one test of a line (with the lines after it, for `interval-poll`). */
const PATTERNS: Record<string, (line: string, after: string) => boolean> = {
  'timer-sleep': line => /setTimeout\(\s*(?:(?:resolve|res|r|done|wake|next)\s*[,)]|\(\)\s*=>\s*(?:resolve|res|r|done|wake|next)\(\s*\))/.test(line),
  'vi-wait': line => /\bvi\.(?:waitFor|waitUntil)\(/.test(line),
  'interval-poll': (line, after) => /\bsetInterval\(/.test(line) && /\bresolve\(/.test(after),
  'expect-poll': line => /\bexpect\.poll\(/.test(line),
  'turn-wait': line => /\bawait\s+setImmediate\(/.test(line)
    || (/\bnew Promise\b/.test(line) && /setImmediate\(\s*(?:(?:resolve|res|r|done|wake|next)\s*[,)]|\(\)\s*=>\s*(?:resolve|res|r|done|wake|next)\(\s*\))/.test(line)),
}

/**
 * Every file allowed real sleeps or polling waits: how many lines match, and what real process or
 * peer they wait on.
 */
const ALLOWED: Record<string, { count: number; reason: string }> = {
  'spec/actors/client-modern-helpers.ts': { count: 1, reason: 'NOT CONVERTED (in-process, deadline): `settle()` spins five turns for a memory pair\'s frames; its 26 uses in client-modern-*.spec.ts each want the event they wait for (a request the fake server received, a listen event)' },
  'spec/auth/client-security.spec.ts': { count: 1, reason: 'an absence under fake timers: a stalled real HTTP peer (a node:http server that sent half a body) must not have failed oauthFetch 1 ms before its requestTimeoutMs; one turn lets the socket\'s I/O callbacks run, and nothing signals that an outcome did not come' },
  'spec/auth/loopback.spec.ts': { count: 1, reason: 'an absence under fake timers: the loopback redirect listener (a real HTTP server a fetch just called) must not have settled 1 ms before its timeoutMs; one turn lets its I/O callbacks run, and nothing signals that an outcome did not come' },
  'spec/bin/rxmcp-exposure.spec.ts': { count: 1, reason: 'a real `rxmcp gateway` child process, which starts its own child MCP server: tools/list through it until the child\'s tools are aggregated, which the gateway tells its client no sooner' },
  'spec/bin/chat-tmux.spec.ts': { count: 2, reason: 'a tmux session running `rxmcp chat`: its screen is read with `tmux capture-pane` until a text shows, and `tmux has-session` until it exits; tmux tells no one when either happens' },
  'spec/browser/inspector-apps.spec.ts': { count: 1, reason: 'Chromium: the MCP App\'s frame is a separate process whose target appears when Chromium makes it; the DevTools protocol is asked again until that frame exists (bounded), nothing announces it to the page' },
  'spec/cluster/drain.spec.ts': { count: 1, reason: 'one turn after drain() starts with healthGraceMs 0: the listener refuses new sessions from the next turn on, and the test asserts the first POST after it is refused (no event marks the switch)' },
  'spec/cluster/registry-sync.spec.ts': { count: 1, reason: 'two servers on a real redis-server: a runtime change reaches the other instance through Redis pub/sub, which tells no one when the other side applied it; polled every 10 ms, bounded at 10 s' },
  'spec/browser/chromium.ts': { count: 2, reason: 'Chromium over DevTools: a page expression re-evaluated until it holds (the page runs on its own), and /json/list until the first page target exists' },
  'spec/cluster/idle-sessions.spec.ts': { count: 2, reason: 'redis-server and three listeners sweeping on real time with a skewed clock: 10,000 sessions ending and their keys leaving Redis (dbSize, HGET), which Redis reports to no one' },
  'spec/cluster/redis-cluster.spec.ts': { count: 1, reason: 'the recovery after redis-server restarts is measured by calls retried through nginx' },
  'spec/cluster/scale-out-matrix.ts': { count: 4, reason: 'nginx writes a request to its access log after it has answered (three log reads re-checked), and redis-server (or a Redis Cluster) drops a legacy session\'s record (EXISTS re-checked)' },
  'spec/helpers/nginx.spec.ts': { count: 1, reason: 'nginx writes its access log after the response: the log file is read again until it holds the requests' },
  'spec/interop/bridge-hardening.spec.ts': { count: 2, reason: 'a bridge child\'s grandchild (not our child: no exit event) and a SIGTERMed bridge\'s process group, checked with kill(pid, 0) until they are gone' },
  'spec/interop/fixtures/official-http-server.ts': { count: 1, reason: 'the official SDK peer in a child process: its `slow` tool takes 10 ms a step, the work a cancellation or progress test needs in flight' },
  'spec/interop/fixtures/official-server.ts': { count: 1, reason: 'the official SDK peer in a child process: its `slow` tool takes `ms` a step, the work a cancellation or progress test needs in flight' },
  'spec/transports/http-client-resume.spec.ts': { count: 1, reason: 'inside a handler: the listener opens the request\'s answer stream (an SSE response to a real HTTP client) in the turn after it hands the request on, and the handler context offers no event for it (a production change: left for the transports work)' },
  'spec/transports/http-client-signals.spec.ts': { count: 1, reason: 'an absence: Node emits a MaxListenersExceededWarning for the HTTP client\'s AbortSignals on a later tick (process.emitWarning), and nothing signals that none came' },
  'spec/transports/http-hardening.spec.ts': { count: 3, reason: 'undici\'s keep-alive sockets (fetch\'s pool, the real network peer) let go of their last response on their own schedule: gc() and re-check; and twice, 1 MiB notifications paced one a turn to a real TCP peer that stopped reading, sampling the server\'s writableLength while the kernel\'s socket buffers fill (no event tells the peak)' },
  'spec/transports/stdio-session.spec.ts': { count: 1, reason: 'no wait: 100 requests written one a turn, as a pipe delivers a client\'s writes, so the reader meets them one by one and its backpressure (the paused input) is what the test reads' },
  'spec/helpers/redis-topologies.ts': { count: 1, reason: 'issue 27: `until` re-checks what redis-server, redis-cli, redis-sentinel and a Redis Cluster report to no one (PING answered, cluster_state:ok, a replica in sync, a replica promoted, a Sentinel naming the new primary, calls retried through nginx after a failover, nginx\'s access log)' },
  'spec/transports/redis-stores-suite.ts': { count: 2, reason: 'redis-server expires a task\'s key on its own clock (PX), and a new instance\'s SUBSCRIBE is confirmed by redis-server with nothing to await: the update is published again until it is heard' },
  'spec/transports/websocket.spec.ts': { count: 2, reason: 'the server\'s send queue to a real TCP peer that stopped reading, sampled while the kernel\'s socket buffers fill: nothing signals the peak' },
}

/** Every .ts file under spec/, as a path from the repository root with forward slashes. */
function specFiles(dir = join(root, 'spec')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap(entry => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return specFiles(path)
    return entry.name.endsWith('.ts') ? [relative(root, path).split(sep).join('/')] : []
  })
}

/** The lines of `file` that match a pattern: `line: pattern`. */
function matchesIn(file: string): string[] {
  const lines = readFileSync(join(root, file), 'utf8').split('\n')
  return lines.flatMap((line, index) => {
    const after = lines.slice(index, index + 4).join('\n')
    const names = Object.entries(PATTERNS).filter(([, test]) => test(line, after)).map(([name]) => name)
    return names.length === 0 ? [] : [`${index + 1}: ${names.join(', ')}`]
  })
}

describe('issue 22: real sleeps and polling waits in spec/', () => {
  const found = Object.fromEntries(specFiles()
    .filter(file => file !== SELF && !LEFT_OUT.some(prefix => file.startsWith(prefix)))
    .map(file => [file, matchesIn(file)] as const)
    .filter(([, lines]) => lines.length > 0))

  it('has each one in the allowlist, with the count the file has now', () => {
    const counts = Object.fromEntries(Object.entries(found).map(([file, lines]) => [file, lines.length]))
    const allowed = Object.fromEntries(Object.entries(ALLOWED).map(([file, entry]) => [file, entry.count]))
    // On failure: a new sleep wants an event or virtual time instead, else an entry with its reason;
    // a converted one wants its entry lowered (or removed). `found` says where each is.
    expect(counts, JSON.stringify(found, null, 2)).toEqual(allowed)
  })

  it('gives every entry a reason', () => {
    for (const [file, { reason }] of Object.entries(ALLOWED)) expect(reason.length, file).toBeGreaterThan(20)
  })

  it.each([
    ['await new Promise(resolve => setTimeout(resolve, 10))', 'timer-sleep'],
    ['await new Promise(r => setTimeout(r, 50))', 'timer-sleep'],
    ['const timer = setTimeout(() => resolve(), 20)', 'timer-sleep'],
    ['await vi.waitFor(() => expect(x).toBe(1))', 'vi-wait'],
    ['await vi.waitUntil(() => ready)', 'vi-wait'],
    ['await expect.poll(() => events.length).toBe(1)', 'expect-poll'],
    ['await new Promise(resolve => setImmediate(resolve))', 'turn-wait'],
    ['for (let i = 0; i < turns; i++) await new Promise(r => setImmediate(r))', 'turn-wait'],
    ['const tick = () => new Promise<void>(resolve => setImmediate(() => resolve()))', 'turn-wait'],
    ["await setImmediate()", 'turn-wait'],
  ])('counts %s as %s', (line, pattern) => {
    expect(PATTERNS[pattern]!(line, line)).toBe(true)
  })

  it('counts an interval that settles a promise, and leaves bounds and turns that settle nothing alone', () => {
    expect(PATTERNS['interval-poll']!('const timer = setInterval(() => {', 'const timer = setInterval(() => {\n  if (done()) { clearInterval(timer); resolve(value) }\n}, 50)')).toBe(true)
    const ignored = [
      "const late = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error('late')), 10_000) })",
      'if (Date.now() < deadline) setImmediate(spin)',
      'const held = setInterval(() => {}, 60_000)',
    ]
    for (const line of ignored) expect(Object.values(PATTERNS).some(test => test(line, line)), line).toBe(false)
  })
})
