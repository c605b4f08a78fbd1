/**
 * The lean driver of the stdio server comparison: it spawns a server, performs initialize and
 * notifications/initialized by writing JSON lines itself, and sends tools/call requests, parsing
 * the responses by hand. It is the same code for every server, so its cost is identical for both.
 *
 * Requests written in one tick go out in one `write` (as any pipelining client does), and each
 * response is checked (the echo must come back) so a server that answers with errors cannot look fast.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { within } from './procs.ts'

/** Called once per request with the parsed response, or with an error. */
type Waiter = (error: Error | undefined, message: RawResponse | undefined) => void

/** The part of a JSON-RPC response the driver looks at. */
export interface RawResponse {
  id: number
  result?: { content?: { type: string; text?: string }[]; isError?: boolean; [key: string]: unknown }
  error?: { code: number; message: string }
}

export class RawDriver {
  readonly child: ChildProcess
  /** Requests sent and not answered yet, by id. */
  readonly #waiting = new Map<number, Waiter>()
  #nextId = 1
  /** The unfinished last line of what stdout gave so far. */
  #rest = ''
  /** Lines waiting for the end of this tick, to go out in one write. */
  #outgoing = ''
  #isFlushScheduled = false
  /** Set when the child exits: every waiter fails, and nothing more is sent. */
  #exitError: Error | undefined
  readonly exited: Promise<void>

  constructor(command: string, args: readonly string[], cwd: string) {
    this.child = spawn(command, args, { cwd, stdio: ['pipe', 'pipe', 'inherit'] })
    this.child.stdin!.on('error', () => {})
    this.child.stdout!.setEncoding('utf8')
    this.child.stdout!.on('data', (text: string) => this.#read(text))
    this.exited = new Promise(resolve => {
      const onGone = (reason: string) => {
        this.#exitError ??= new Error(`server ${reason}`)
        for (const waiter of this.#waiting.values()) waiter(this.#exitError, undefined)
        this.#waiting.clear()
        resolve()
      }
      this.child.once('exit', (code, signal) => onGone(`exited (${signal ?? `code ${code}`})`))
      this.child.once('error', error => onGone(`failed to start: ${error.message}`))
    })
  }

  #read(text: string): void {
    const buffer = this.#rest.length === 0 ? text : this.#rest + text
    let start = 0
    let end: number
    while ((end = buffer.indexOf('\n', start)) >= 0) {
      if (end > start) this.#line(buffer.slice(start, end))
      start = end + 1
    }
    this.#rest = start === buffer.length ? '' : buffer.slice(start)
  }

  #line(line: string): void {
    const message = JSON.parse(line) as RawResponse & { method?: string }
    // Notifications (and requests from the server, which this workload never causes) have a method.
    if (message.method !== undefined || typeof message.id !== 'number') return
    const waiter = this.#waiting.get(message.id)
    if (waiter === undefined) return
    this.#waiting.delete(message.id)
    waiter(undefined, message)
  }

  /** Sends one request (`params` as an object or as JSON text); `onResponse` gets the response (or the exit error). */
  send(method: string, params: object | string, onResponse: Waiter): void {
    if (this.#exitError !== undefined) { onResponse(this.#exitError, undefined); return }
    const id = this.#nextId++
    this.#waiting.set(id, onResponse)
    this.#write(`{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(method)},"params":${typeof params === 'string' ? params : JSON.stringify(params)}}\n`)
  }

  /** `send` as a Promise of the response; rejects on a JSON-RPC error. */
  request(method: string, params: object): Promise<RawResponse> {
    return new Promise((resolve, reject) => this.send(method, params, (error, message) => {
      if (error !== undefined) reject(error)
      else if (message!.error !== undefined) reject(new Error(`${method} failed: ${message!.error.code} ${message!.error.message}`))
      else resolve(message!)
    }))
  }

  #write(line: string): void {
    this.#outgoing += line
    if (this.#isFlushScheduled) return
    this.#isFlushScheduled = true
    queueMicrotask(() => {
      this.#isFlushScheduled = false
      const text = this.#outgoing
      this.#outgoing = ''
      if (this.#exitError === undefined) this.child.stdin!.write(text)
    })
  }

  /** The MCP handshake: initialize, then notifications/initialized. */
  async start(timeoutMs = 20_000): Promise<void> {
    await within(this.request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'rxmcp-bench', version: '1' } }),
      timeoutMs, 'the server did not answer initialize')
    this.#write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
  }

  /** Ends stdin (a clean shutdown for both servers), then SIGKILLs the child if it lingers. */
  async stop(graceMs = 3_000): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return
    this.child.stdin!.end()
    try {
      await within(this.exited, graceMs, 'lingering')
    } catch {
      this.child.kill('SIGKILL')
      await this.exited
    }
  }
}
