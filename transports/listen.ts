import type { Server } from 'node:http'

/**
 * Binds a node:http server to `host:port` and resolves with the port it got (`port` 0 picks a
 * free one), or rejects with the bind error (EADDRINUSE, say). The HTTP and WebSocket listeners
 * share it.
 */
export function listenOn(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      const address = server.address()
      resolve(typeof address === 'object' && address !== null ? address.port : port)
    })
  })
}

/** The URL form of a host: IPv6 addresses in brackets. */
export function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host
}

/** Drops every open connection of a node:http server and resolves once it has stopped listening. */
export async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections()
  await new Promise<void>(resolve => server.close(() => resolve()))
}
