import { readFile } from 'node:fs/promises'
import { spawnNginx } from '../../examples/cluster/spawn-nginx.ts'

/** One request as nginx logged it (examples/cluster/nginx-config.ts writes the format). */
export interface NginxAccess {
  method: string
  uri: string
  /** The instance that answered; `a, b` when `a` was tried first and refused. */
  upstream: string
  status: number
  /** The request's Mcp-Session-Id ('' when it had none). */
  sessionId: string
}

/** A real nginx (Debian's package) balancing round-robin across `upstreams`, for a test file. */
export interface TestNginx {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string
  readonly port: number
  /** Every request logged so far, oldest first. nginx logs a request as it finishes, so poll for one just answered. */
  accessLog(): Promise<NginxAccess[]>
  /** Balances over `upstreams` from now on (nginx reloaded); resolves once new connections get them. */
  reload(upstreams: string[]): Promise<void>
  /** SIGTERM, SIGKILL after 5 s, then removes its directory. */
  stop(): Promise<void>
}

/**
 * Starts nginx on a free loopback port in front of `upstreams` ('host:port') with the cluster
 * example's configuration, and waits until it accepts connections (bounded: 10 s). It is killed
 * when the test process exits, if not stopped before.
 */
export async function startNginx(options: { upstreams: string[] }): Promise<TestNginx> {
  const nginx = await spawnNginx({ upstreams: options.upstreams })
  return {
    url: nginx.url,
    port: nginx.port,
    accessLog: async () => {
      const text = await readFile(nginx.accessLogPath, 'utf8').catch(() => '')
      return text.split('\n').filter(line => line !== '').map(line => JSON.parse(line) as NginxAccess)
    },
    reload: nginx.reload,
    stop: nginx.stop,
  }
}
