// Headless Chromium for the browser tests, driven over the DevTools protocol with `ws`.
// Debian's `chromium` package provides it (apt-get install -y chromium); no browser is downloaded.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { WebSocket } from 'ws'

/** A page in a running headless Chromium. */
export interface HeadlessPage {
  /** Evaluates an expression in the page and resolves with its value (awaited if it is a Promise). */
  evaluate<T>(expression: string): Promise<T>
  /**
   * Evaluates `expression` in the first nested frame where `match` is truthy, out-of-process
   * frames (sandboxed, other origins) included: in their main world, or in an isolated world (the
   * DOM, not the globals) for a frame in the page's own process.
   */
  evaluateInFrame<T>(match: string, expression: string): Promise<T>
  /** Polls `expression` until it is truthy; rejects after `timeoutMs` with what the page logged. */
  waitFor<T>(expression: string, timeoutMs: number): Promise<T>
  /** A PNG of the page's viewport (set by `openPage`'s `viewport`, else the browser's default). */
  screenshot(): Promise<Buffer>
  /** Console messages and uncaught exceptions of the page, for failure messages. */
  readonly log: readonly string[]
  /** Ends the browser (its whole process group) and removes its profile directory. */
  close(): Promise<void>
}

const FLAGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage', '--remote-debugging-port=0',
  '--remote-debugging-address=127.0.0.1',
]

/** The Chromium binary: $CHROMIUM, else `chromium` on the PATH; throws with how to install it when missing. */
export function findChromium(): string {
  const candidate = process.env.CHROMIUM ?? 'chromium'
  const probe = spawnSync(candidate, ['--version'], { encoding: 'utf8', timeout: 60_000 })
  if (probe.error !== undefined || probe.status !== 0) {
    throw new Error(`Chromium is missing (${candidate} --version failed: ${probe.error?.message ?? probe.stderr}). Install it: apt-get install -y chromium`)
  }
  return candidate
}

/** Starts headless Chromium on a fresh profile and opens `url` in it, with the console recorded from the start. */
export async function openPage(url: string, options: { startTimeoutMs?: number; viewport?: { width: number; height: number } } = {}): Promise<HeadlessPage> {
  const binary = findChromium()
  const profile = await mkdtemp(join(tmpdir(), 'rxmcp-chromium-'))
  // Its own process group, so closing ends the renderer and helper processes too.
  const child = spawn(binary, [...FLAGS, `--user-data-dir=${profile}`, 'about:blank'], { detached: true, stdio: ['ignore', 'ignore', 'pipe'] })
  const cleanup = async () => {
    await stopGroup(child)
    await rm(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 })
  }
  try {
    const browserEndpoint = await devToolsEndpoint(child, options.startTimeoutMs ?? 60_000)
    const port = new URL(browserEndpoint).port
    const target = await pageTarget(port, options.startTimeoutMs ?? 60_000)
    const cdp = await CdpSession.open(target)
    const log: string[] = []
    cdp.on('Runtime.consoleAPICalled', (params: { type: string; args: { value?: unknown; description?: string }[] }) => {
      log.push(`console.${params.type}: ${params.args.map(arg => arg.value ?? arg.description).join(' ')}`)
    })
    cdp.on('Runtime.exceptionThrown', (params: { exceptionDetails: { text: string; exception?: { description?: string } } }) => {
      log.push(`exception: ${params.exceptionDetails.exception?.description ?? params.exceptionDetails.text}`)
    })
    await cdp.call('Runtime.enable')
    await cdp.call('Page.enable')
    if (options.viewport !== undefined) await cdp.call('Emulation.setDeviceMetricsOverride', { ...options.viewport, deviceScaleFactor: 1, mobile: false })
    await cdp.call('Page.navigate', { url })
    const evaluate = async <T>(expression: string): Promise<T> => {
      const reply = await cdp.call('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true }) as {
        result: { value?: T }; exceptionDetails?: { text: string; exception?: { description?: string } }
      }
      if (reply.exceptionDetails !== undefined) throw new Error(`In the page: ${reply.exceptionDetails.exception?.description ?? reply.exceptionDetails.text}`)
      return reply.result.value as T
    }
    /** DevTools sessions of the page's out-of-process frames (sandboxed and cross-site iframes), by target id. */
    const frameSessions = new Map<string, string>()
    const evaluateIn = async <T>(sessionId: string | undefined, expression: string, contextId?: number): Promise<T> => {
      const reply = await cdp.call('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true, ...(contextId === undefined ? {} : { contextId }) }, sessionId) as {
        result: { value?: T }; exceptionDetails?: { text: string; exception?: { description?: string } }
      }
      if (reply.exceptionDetails !== undefined) throw new Error(`In the frame: ${reply.exceptionDetails.exception?.description ?? reply.exceptionDetails.text}`)
      return reply.result.value as T
    }
    const evaluateInFrame = async <T>(match: string, expression: string): Promise<T> => {
      // Out-of-process frames are targets of their own: attach to each (flat sessions).
      const { targetInfos } = await cdp.call('Target.getTargets') as { targetInfos: { targetId: string; type: string }[] }
      const sessions: (string | undefined)[] = [undefined]
      for (const { targetId } of targetInfos.filter(target => target.type === 'iframe')) {
        let sessionId = frameSessions.get(targetId)
        if (sessionId === undefined) {
          sessionId = (await cdp.call('Target.attachToTarget', { targetId, flatten: true }) as { sessionId: string }).sessionId
          frameSessions.set(targetId, sessionId)
        }
        // A target's own frame: its main world.
        if (await evaluateIn<unknown>(sessionId, match).catch(() => false)) return evaluateIn<T>(sessionId, expression)
        sessions.push(sessionId)
      }
      // Frames inside the page's or a target's process: an isolated world of each (their DOM, not their globals).
      type FrameTree = { frame: { id: string }; childFrames?: FrameTree[] }
      let count = 0
      for (const sessionId of sessions) {
        const frames: string[] = []
        const walk = (tree: FrameTree) => { for (const child of tree.childFrames ?? []) { frames.push(child.frame.id); walk(child) } }
        walk((await cdp.call('Page.getFrameTree', {}, sessionId) as { frameTree: FrameTree }).frameTree)
        count += frames.length
        for (const frameId of frames) {
          const world = await cdp.call('Page.createIsolatedWorld', { frameId, worldName: 'rxmcp-test' }, sessionId) as { executionContextId: number }
          if (await evaluateIn<unknown>(sessionId, match, world.executionContextId).catch(() => false)) return evaluateIn<T>(sessionId, expression, world.executionContextId)
        }
      }
      throw new Error(`No frame where ${match} (targets: ${JSON.stringify(targetInfos.map(target => target.type))}, in-process frames: ${count})`)
    }
    return {
      log,
      evaluate,
      evaluateInFrame,
      async waitFor<T>(expression: string, timeoutMs: number): Promise<T> {
        const deadline = Date.now() + timeoutMs
        for (;;) {
          const value = await evaluate<T>(expression).catch(() => undefined)
          if (value) return value
          if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${expression}; page log:\n${log.join('\n')}`)
          await new Promise(resolve => setTimeout(resolve, 200))
        }
      },
      async screenshot() {
        const { data } = await cdp.call('Page.captureScreenshot', { format: 'png' }) as { data: string }
        return Buffer.from(data, 'base64')
      },
      async close() {
        cdp.close()
        await cleanup()
      },
    }
  } catch (error) {
    await cleanup()
    throw error
  }
}

/** Reads "DevTools listening on ws://..." from Chromium's stderr. */
function devToolsEndpoint(child: ChildProcess, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let stderr = ''
    const timer = setTimeout(() => fail(new Error(`Chromium did not open DevTools within ${timeoutMs} ms:\n${stderr.slice(-2000)}`)), timeoutMs)
    const onData = (chunk: Buffer) => {
      stderr += chunk.toString()
      const match = /DevTools listening on (ws:\/\/\S+)/.exec(stderr)
      if (match !== null) { done(); resolve(match[1]!) }
    }
    const onExit = (code: number | null) => fail(new Error(`Chromium exited (${code}) before DevTools was up:\n${stderr.slice(-2000)}`))
    const done = () => {
      clearTimeout(timer)
      child.stderr!.off('data', onData)
      child.off('exit', onExit)
      // Keep draining stderr so Chromium never blocks writing to it.
      child.stderr!.resume()
    }
    const fail = (error: Error) => { done(); reject(error) }
    child.stderr!.on('data', onData)
    child.once('exit', onExit)
  })
}

/** The DevTools WebSocket URL of the first page target (the about:blank tab). */
async function pageTarget(port: string, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const targets = await fetch(`http://127.0.0.1:${port}/json/list`).then(response => response.json() as Promise<{ type: string; webSocketDebuggerUrl: string }[]>).catch(() => [])
    const page = targets.find(target => target.type === 'page')
    if (page !== undefined) return page.webSocketDebuggerUrl
    if (Date.now() > deadline) throw new Error(`Chromium showed no page target within ${timeoutMs} ms`)
    await new Promise(resolve => setTimeout(resolve, 200))
  }
}

/**
 * SIGTERM to a detached child's process group (the browser's, an inspector's), SIGKILL if it has
 * not exited within 10 s, and SIGKILL again for helpers of the group that outlived it.
 */
export async function stopGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return
  const exited = new Promise<void>(resolve => child.once('exit', () => resolve()))
  const signal = (name: NodeJS.Signals) => { try { process.kill(-child.pid!, name) } catch { /* already gone */ } }
  signal('SIGTERM')
  const timer = setTimeout(() => signal('SIGKILL'), 10_000)
  await exited
  clearTimeout(timer)
  // Helpers of the group that outlived the browser process.
  signal('SIGKILL')
}

/** One DevTools protocol session: calls by id, events by method. */
class CdpSession {
  /** Calls waiting for their reply, by id. */
  readonly #pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>()
  readonly #listeners = new Map<string, (params: never) => void>()
  #nextId = 1

  private constructor(readonly socket: WebSocket) {
    socket.on('message', data => {
      const message = JSON.parse(String(data)) as { id?: number; result?: unknown; error?: { message: string }; method?: string; params?: unknown }
      if (message.id !== undefined) {
        const pending = this.#pending.get(message.id)
        this.#pending.delete(message.id)
        if (message.error !== undefined) pending?.reject(new Error(`CDP: ${message.error.message}`))
        else pending?.resolve(message.result)
      } else if (message.method !== undefined) {
        this.#listeners.get(message.method)?.(message.params as never)
      }
    })
    socket.on('close', () => {
      for (const pending of this.#pending.values()) pending.reject(new Error('CDP: the DevTools socket closed'))
      this.#pending.clear()
    })
  }

  static async open(url: string): Promise<CdpSession> {
    const socket = new WebSocket(url, { perMessageDeflate: false })
    await new Promise<void>((resolve, reject) => { socket.once('open', () => resolve()); socket.once('error', reject) })
    return new CdpSession(socket)
  }

  on<P>(method: string, listener: (params: P) => void): void { this.#listeners.set(method, listener as (params: never) => void) }

  /** Calls `method`, on the session of an attached target when `sessionId` is given (flat mode). */
  call(method: string, params: object = {}, sessionId?: string): Promise<unknown> {
    const id = this.#nextId++
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject })
      this.socket.send(JSON.stringify(sessionId === undefined ? { id, method, params } : { id, method, params, sessionId }))
    })
  }

  close(): void { this.socket.close() }
}
