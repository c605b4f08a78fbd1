/**
 * `WWW-Authenticate` (RFC 9110 §11.6.1), read: pure, for the HTTP client transports (a typed 401)
 * and the OAuth client (`rxmcp/auth/client`) alike.
 */

/** One challenge of a `WWW-Authenticate` header (RFC 9110 §11.6.1): its scheme and parameters. */
export interface Challenge {
  /** The scheme, lower-cased (`bearer`, `dpop`). */
  scheme: string
  /** The auth-params, names lower-cased, quoted values unescaped (`resource_metadata`, `scope`, `error`). */
  params: Record<string, string>
}

/**
 * The challenges of a `WWW-Authenticate` header, in order; an empty list for none.
 *
 * Parses `Bearer error="insufficient_scope", scope="a b", resource_metadata="https://…", DPoP
 * algs="ES256"`: a token not followed by `=` starts a new challenge. token68 values are ignored.
 * The header's length is the HTTP stack's to bound; the pattern is sticky, so the work is linear in it.
 */
export function parseChallenges(header: string | null | undefined): Challenge[] {
  if (header === null || header === undefined) return []
  const challenges: Challenge[] = []
  // A scheme, or a name=value pair (quoted string or token); commas and spaces between.
  const pattern = /\s*,?\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)(?:\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,"]*)))?/gy
  let match: RegExpExecArray | null
  let current: Challenge | undefined
  while ((match = pattern.exec(header)) !== null && match[0] !== '') {
    const [, name, quoted, token] = match
    if (quoted === undefined && token === undefined) {
      current = { scheme: name!.toLowerCase(), params: {} }
      challenges.push(current)
    } else if (current !== undefined) {
      current.params[name!.toLowerCase()] = quoted !== undefined ? quoted.replace(/\\(.)/g, '$1') : token!
    }
  }
  return challenges
}

/** The first challenge of a scheme that MCP tokens use (Bearer or DPoP), else the first one. */
export function authChallenge(header: string | null | undefined): Challenge | undefined {
  const challenges = parseChallenges(header)
  return challenges.find(challenge => challenge.scheme === 'bearer' || challenge.scheme === 'dpop') ?? challenges[0]
}
