import { filter, lastValueFrom, type SchedulerLike } from '../../lib/rx.ts'
import type { Connection } from '../../lib/connection.ts'
import type { RequestInfo } from '../../lib/transport.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import {
  ErrorCode, ForbiddenError, HttpStatusError, LocalErrorCode, McpError, ProtocolError, RateLimitedError, TimeoutError, UnsupportedVersionError,
} from '../../lib/jsonrpc/errors.ts'
import { isJsonObject } from '../../lib/jsonrpc/guards.ts'
import { isResultEvent, resultOf, type ResultEvent } from '../../lib/operators/progress.ts'
import { withTimeout } from '../../lib/operators/with-timeout.ts'
import { isVersionAccepted } from '../../lib/schema/negotiate.ts'
import { isModernVersion } from '../../lib/schema/modern.ts'
import type { ClientCapabilities, Implementation, InitializeResult } from '../../lib/schema/types.ts'
import type { ClientEra } from './api.ts'
import type { ClientStateSource } from './state.ts'
import { authorizationContextOf, type ResultCache } from './cache.ts'
import { InvalidResultError, NoCommonVersionError } from './errors.ts'
import { chooseVersion, isModernError, readDiscover, readResult, stampModernMeta, supportedOf } from './modern.ts'

/** What the handshake needs from the client. */
export interface HandshakeHost {
  /** The client actor's latest state, and its mailbox. */
  readonly state: ClientStateSource
  readonly info: Implementation
  readonly capabilities: ClientCapabilities
  readonly era: ClientEra
  /** Modern revisions spoken, newest first. */
  readonly modernVersions: readonly string[]
  /** Legacy revisions accepted from initialize. */
  readonly legacyVersions: readonly string[]
  /** How long the discover probe of `era: 'auto'` waits, in ms. */
  readonly probeTimeout: number
  /** Where the probe's timer runs (default: RxJS's async scheduler). */
  readonly scheduler?: SchedulerLike
  readonly cache: ResultCache | undefined
  /**
   * Told, once the modern era is settled, what the transport said of the frame that carried the
   * discover answer (its `requestInfo`; undefined when it said nothing).
   */
  settledOver(requestInfo: RequestInfo | undefined): void
}

/**
 * Starts a fresh connection in the era `host.era` asks for; rejects (the connection closed) when
 * that fails.
 *
 * ```
 *   legacy ------------------------------------------------------------> initialize
 *   modern -> server/discover --result with a common modern version--> operating (modern)
 *   auto   -> server/discover --result with a common modern version--> operating (modern)
 *                 |-- -32022 --> retry once with a version of data.supported (legacy only there: initialize)
 *                 |-- -32020 / -32021 --> fail (a modern server refused the request)
 *                 |-- a legacy sign: another JSON-RPC error, HTTP 400 / 404 / 405, no answer in time,
 *                 |   not a discover result --> initialize
 *                 '-- anything else: 401 / 403 (UnauthorizedError), another HTTP status (429, 5xx),
 *                     a failed or broken connection --> fail
 * ```
 */
export async function handshake(host: HandshakeHost, connection: Connection): Promise<void> {
  if (host.era === 'legacy') return initialize(host, connection)
  let isModern: boolean
  try {
    isModern = await discover(host, connection)
  } catch (error) {
    await connection.close()
    throw error
  }
  if (!isModern) return initialize(host, connection)
}

/**
 * The `server/discover` probe. Resolves true once the client is modern, false when a legacy
 * server answered (only with `era: 'auto'`); rejects otherwise.
 */
async function discover(host: HandshakeHost, connection: Connection): Promise<boolean> {
  const canFallBack = host.era === 'auto'
  const ours = host.modernVersions
  let version = ours[0]
  if (version === undefined) {
    if (canFallBack) return false
    throw new NoCommonVersionError([], ours)
  }
  /** Set after a -32022: the version it named is tried once. */
  let hasRetried = false
  /** The authorization context the probe goes out in: its result is cached for that one alone. */
  const context = host.cache === undefined ? undefined : await authorizationContextOf(connection)
  for (;;) {
    const params = stampModernMeta(undefined, { version, capabilities: host.capabilities, info: host.info })
    let answer: ResultEvent<JsonObject>
    try {
      // The result event, not only the result: its requestInfo is the transport's word on the answer.
      const request = connection.request<JsonObject>('server/discover', params, { progress: false }).pipe(filter(isResultEvent))
      // The probe's own clock (on the client's scheduler): past it, a silent server is taken as legacy
      // (MCP stdio backward compatibility); timing out unsubscribes, which cancels the probe on the wire.
      answer = await lastValueFrom(canFallBack ? request.pipe(withTimeout({ each: host.probeTimeout, scheduler: host.scheduler })) : request)
    } catch (error) {
      if (error instanceof McpError && error.code === ErrorCode.UnsupportedProtocolVersion) {
        // MCP versioning: a modern server; use a version of its `supported` list, never fall back blindly.
        const supported = supportedOf(error)
        const next = chooseVersion(supported, ours)
        if (next !== undefined && !hasRetried) { version = next; hasRetried = true; continue }
        if (next === undefined && canFallBack && supported.some(theirs => isVersionAccepted(theirs, host.legacyVersions))) return false
        throw new NoCommonVersionError(supported, [...ours, ...(canFallBack ? host.legacyVersions : [])], { cause: error })
      }
      if (isModernError(error)) throw error
      if (canFallBack && isLegacySign(error)) return false
      throw error
    }
    const result = answer.result
    const outcome = readResult('server/discover', result)
    const description = outcome.kind === 'complete' ? readDiscover(result) : undefined
    if (description === undefined) {
      if (canFallBack) return false
      throw outcome.kind === 'invalid' ? outcome.error : new InvalidResultError('server/discover', 'the result has no supportedVersions list')
    }
    const chosen = description.supportedVersions.includes(version) ? version : chooseVersion(description.supportedVersions, ours)
    if (chosen === undefined) {
      if (canFallBack && description.supportedVersions.some(theirs => isVersionAccepted(theirs, host.legacyVersions))) return false
      throw new NoCommonVersionError(description.supportedVersions, ours)
    }
    if (chosen === version && host.cache !== undefined && await authorizationContextOf(connection) === context) host.cache.set('server/discover', undefined, result, context!)
    host.settledOver(answer.requestInfo)
    host.state.send({ type: 'discovered', version: chosen, description })
    return true
  }
}

/** HTTP statuses an older server answers a request it does not know with (Streamable HTTP before 2026-07-28, or HTTP+SSE). */
const LEGACY_HTTP_STATUSES: ReadonlySet<number> = new Set([400, 404, 405])

/**
 * Whether the probe's failure says the server speaks the legacy era. MCP 2026-07-28 backward
 * compatibility: a JSON-RPC error that is not a modern one, an HTTP 400 without a modern error body
 * (and the 404 / 405 of a server without Streamable HTTP POST), or no answer at all (stdio: a
 * legacy server may ignore the probe). Nothing else is: a refusal for want of authorization
 * (`UnauthorizedError`, 401 / 403, or rxmcp's ForbiddenError) is the same refusal in either era
 * and would only be met again by `initialize`, as would a rate limit (429, RateLimitedError), a
 * server error or a connection that failed; those fail the handshake at once.
 */
function isLegacySign(error: unknown): boolean {
  // A refusal of who asks or how often (rxmcp's -31003, -31029) is not a server that does not know the method.
  if (error instanceof McpError) return !(error instanceof ForbiddenError || error instanceof RateLimitedError)
  if (error instanceof TimeoutError) return true
  return error instanceof HttpStatusError && error.code !== LocalErrorCode.Unauthorized && LEGACY_HTTP_STATUSES.has(error.status)
}

/** The legacy handshake on a fresh connection; closes it and rejects when the handshake fails. */
async function initialize(host: HandshakeHost, connection: Connection): Promise<void> {
  const supported = host.legacyVersions
  const asked = host.state.current.protocolVersion
  const params = { protocolVersion: isModernVersion(asked) ? supported[0] : asked, capabilities: host.capabilities, clientInfo: host.info } as unknown as JsonObject
  const request = lastValueFrom(connection.request<InitializeResult & JsonObject>('initialize', params, { progress: false }).pipe(resultOf()))
  host.state.send({ type: 'initialize' })
  let result: InitializeResult
  try {
    result = await request
  } catch (error) {
    await connection.close()
    throw error
  }
  if (!isVersionAccepted(result.protocolVersion, supported)) {
    // MCP lifecycle: a client that does not support the server's version SHOULD disconnect.
    await connection.close()
    throw new UnsupportedVersionError(String(result.protocolVersion), supported)
  }
  if (!isJsonObject(result.serverInfo)) {
    await connection.close()
    throw new ProtocolError('The initialize result has no serverInfo')
  }
  // From here on the connection passes the negotiated version with each message (see the client's
  // ConnectionOptions.protocolVersion): notifications/initialized is the first to carry it.
  host.state.send({ type: 'initialized', result })
  await connection.notify('notifications/initialized')
}
