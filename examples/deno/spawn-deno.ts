/**
 * Runs this directory's Deno programs from Node, as the interop spec does: the native binary of the
 * `deno` npm package, a DENO_DIR the caller chooses (a fresh temporary one makes every run what a
 * clean clone sees), no update check, and nothing remote (`--cached-only --no-remote`: a module
 * that would have to be downloaded fails the start instead).
 */
import { execFile, spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { ownChild } from '../owned-child.ts'

/** Bound on waiting for the server's listening line: a cold DENO_DIR transpiles rxmcp's sources first (about 1 s here). */
const START_TIMEOUT_MS = 60_000
/** Bound on waiting for a clean exit after SIGTERM. */
const STOP_TIMEOUT_MS = 5_000
/** Bound on a whole client run (start, both eras, exit). */
const CLIENT_TIMEOUT_MS = 60_000

/**
 * The deno executable of the `deno` npm package. Asked of the package itself rather than taken from
 * node_modules/.bin, which is a Node wrapper when the package's install script did not run (`npm ci
 * --ignore-scripts`), and a wrapper would not pass a SIGTERM on to Deno.
 */
export function denoBinary(): string {
  const install = createRequire(import.meta.url)('deno/install_api.cjs') as { runInstall(): string }
  return install.runInstall()
}

/** How {@link spawnDenoServer} and {@link runDenoClient} start Deno. */
export interface DenoRunOptions {
  /** Deno's cache (transpiled modules, V8 code cache). Default: Deno's own (`~/.cache/deno`). */
  denoDir?: string
}

/** The environment of a Deno child: no update check, no prompt, no colour in what it prints. */
function denoEnv(options: DenoRunOptions): NodeJS.ProcessEnv {
  return {
    ...process.env, DENO_NO_UPDATE_CHECK: '1', DENO_NO_PROMPT: '1', NO_COLOR: '1',
    ...(options.denoDir === undefined ? {} : { DENO_DIR: options.denoDir }),
  }
}

/** `deno run` of one of this directory's scripts, with everything remote refused. */
function runArgs(script: string, args: readonly string[]): string[] {
  return ['run', '-A', '--cached-only', '--no-remote', fileURLToPath(new URL(script, import.meta.url)), ...args]
}

/** A running examples/deno/server.ts. */
export interface SpawnedDenoServer {
  /** Its MCP endpoint, `http://127.0.0.1:<port>/mcp`. */
  readonly url: URL
  readonly pid: number
  /** Every line it wrote to stderr so far (its listening line, Deno's warnings). */
  readonly stderr: readonly string[]
  /** Resolves with its exit code (or signal) when it exits. */
  readonly exited: Promise<number | string>
  /** SIGTERM (it closes its sessions and exits 0), SIGKILL after 5 s; resolves once it has exited. */
  stop(): Promise<void>
}

/**
 * Starts `deno run examples/deno/server.ts <port>` (port 0: the system picks a free one, read back
 * from the listening line) and resolves once it listens (bounded: 60 s), or rejects with its stderr
 * if it exits first. It is killed when this process exits, if not stopped before.
 * @example
 * const deno = await spawnDenoServer({ denoDir: await mkdtemp(join(tmpdir(), 'deno-')) })
 * console.log(deno.url.href)
 * await deno.stop()
 */
export async function spawnDenoServer(options: DenoRunOptions & { port?: number } = {}): Promise<SpawnedDenoServer> {
  const child = spawn(denoBinary(), runArgs('server.ts', [String(options.port ?? 0)]), { env: denoEnv(options), stdio: ['ignore', 'ignore', 'pipe'] })
  const { exited, stop } = ownChild(child, STOP_TIMEOUT_MS)
  const stderr: string[] = []
  const listening = new Promise<URL>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`deno printed no listening line within ${START_TIMEOUT_MS} ms:\n${stderr.join('\n')}`)), START_TIMEOUT_MS)
    createInterface({ input: child.stderr! }).on('line', line => {
      stderr.push(line)
      const match = /listening at (http:\/\/\S+\/mcp)/.exec(line)
      if (match !== null) { clearTimeout(timer); resolve(new URL(match[1]!)) }
    })
    void exited.then(code => { clearTimeout(timer); reject(new Error(`deno exited (${code}) before it listened:\n${stderr.join('\n')}`)) })
  })
  try {
    return { url: await listening, pid: child.pid!, stderr, exited, stop }
  } catch (error) {
    await stop()
    throw error
  }
}

/**
 * Runs `deno run examples/deno/client.ts <url>` to its end (bounded: 60 s) and resolves with the
 * JSON summary it prints; rejects with its stderr when it fails or does not exit in time.
 */
export function runDenoClient(url: URL | string, options: DenoRunOptions = {}): Promise<unknown> {
  return new Promise((resolve, reject) => {
    execFile(denoBinary(), runArgs('client.ts', [String(url)]), { env: denoEnv(options), timeout: CLIENT_TIMEOUT_MS, killSignal: 'SIGKILL' }, (error, stdout, stderr) => {
      if (error !== null) return reject(new Error(`deno client failed (${error.code ?? error.signal}):\n${stderr}`, { cause: error }))
      try {
        resolve(JSON.parse(stdout))
      } catch (cause) {
        reject(new Error(`deno client printed no JSON:\n${stdout}\n${stderr}`, { cause }))
      }
    })
  })
}
