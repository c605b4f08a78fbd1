/**
 * The few Deno APIs the programs in this directory use, declared for the project's tsc, which
 * checks them with Node's types. Deno never reads this file (nothing imports it): it has its own
 * complete types, and `deno run` does not type-check anyway.
 */
declare namespace Deno {
  /** The script's arguments. */
  const args: string[]
  const version: { deno: string }
  function exit(code?: number): never
  function addSignalListener(signal: 'SIGINT' | 'SIGTERM', handler: () => void): void
  interface NetAddr { transport: 'tcp' | 'udp'; hostname: string; port: number }
  /** Deno.serve's second argument to the handler: it fits rxmcp's `WebRequestInit` (`remoteAddr`). */
  interface ServeHandlerInfo { remoteAddr: NetAddr; completed: Promise<void> }
  interface HttpServer { readonly addr: NetAddr; readonly finished: Promise<void>; shutdown(): Promise<void> }
  interface ServeOptions { hostname?: string; port?: number; onListen?: (addr: NetAddr) => void }
  function serve(options: ServeOptions, handler: (request: Request, info: ServeHandlerInfo) => Response | Promise<Response>): HttpServer
}
