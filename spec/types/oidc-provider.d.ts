/** oidc-provider ships no types; the tests use a small part of it (spec/auth/oidc.ts). */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http'
  interface Client { grantTypeAllowed(grant: string): boolean }
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>)
    callback(): (req: IncomingMessage, res: ServerResponse) => void
    on(event: string, listener: (...args: unknown[]) => void): this
  }
  export type { Client }
}
