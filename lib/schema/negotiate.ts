import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from './types.ts'

/**
 * The version a server answers to initialize: the client's version when the server supports it,
 * otherwise the server's latest (MCP lifecycle: "the server MUST respond with another protocol
 * version it supports ... SHOULD be the latest").
 */
export function negotiateVersion(requested: unknown, supported: readonly string[] = SUPPORTED_PROTOCOL_VERSIONS): string {
  return typeof requested === 'string' && supported.includes(requested) ? requested : (supported[0] ?? LATEST_PROTOCOL_VERSION)
}

/** True when a client supporting `supported` can continue with the version the server chose. */
export function isVersionAccepted(chosen: unknown, supported: readonly string[] = SUPPORTED_PROTOCOL_VERSIONS): chosen is string {
  return typeof chosen === 'string' && supported.includes(chosen)
}

/**
 * Features whose legality depends on the negotiated revision. Revisions are ISO dates, so they
 * compare as strings.
 */
export const Feature = {
  /** JSON-RPC batches: 2025-03-26 only (added then, removed in 2025-06-18). */
  batch: (version: string) => version === '2025-03-26',
  /** completion/complete and the completions capability: since 2025-03-26. */
  completions: (version: string) => version >= '2025-03-26',
  /** structuredContent, outputSchema, elicitation/create, resource_link: since 2025-06-18. */
  structuredContent: (version: string) => version >= '2025-06-18',
  elicitation: (version: string) => version >= '2025-06-18',
  /** URL elicitation, sampling with tools, tasks, icons: since 2025-11-25. */
  urlElicitation: (version: string) => version >= '2025-11-25',
  samplingTools: (version: string) => version >= '2025-11-25',
} as const
