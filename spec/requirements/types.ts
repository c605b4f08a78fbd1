/** The specification revisions the requirement list draws from. */
export type Revision = '2025-03-26' | '2025-11-25' | '2026-07-28'

/**
 * Who a requirement binds. `server` and `client` are the MCP roles an SDK implements (`both` binds
 * each side); the others sit outside an SDK: the authorization server, the application built on the
 * SDK (what it asks users, what its content says), the host's user interface, the model a host
 * runs, and HTTP intermediaries.
 */
export type Party = 'server' | 'client' | 'both' | 'authorization server' | 'application' | 'host UI' | 'model' | 'intermediary'

/** One normative statement (MUST, MUST NOT, REQUIRED, SHALL) of a specification page. */
export interface Requirement {
  readonly revision: Revision
  /** The page and the anchor of the section that states it. */
  readonly url: string
  readonly binds: Party
  /** The normative sentence, summarised where it runs long. */
  readonly text: string
  /**
   * The tests that verify it, as `spec/<path>.spec.ts > <describe> > ... > <test>` (vitest's full
   * name after the file). A reference to a test that does not exist fails the run. A `verifies()`
   * test naming the id counts too, without being listed here.
   */
  readonly tests?: readonly string[]
  /** `'n/a'`: out of an SDK's scope (see `reason`); counted apart, never as uncovered. */
  readonly scope?: 'n/a'
  /** Why a requirement is out of scope: who it binds instead, and what rxmcp does about it if anything. */
  readonly reason?: string
}

/**
 * The two ways to write a requirement of one revision: `must` for one an SDK answers for (with the
 * tests that verify it, if any), `outOfScope` for one that binds somebody else.
 */
export function revision(name: Revision) {
  const url = (path: string) => `https://modelcontextprotocol.io/specification/${name}/${path}`
  return {
    must: (binds: Party, path: string, text: string, tests: readonly string[] = []): Requirement =>
      ({ revision: name, url: url(path), binds, text, ...tests.length > 0 ? { tests } : {} }),
    outOfScope: (binds: Party, path: string, text: string, reason: string): Requirement =>
      ({ revision: name, url: url(path), binds, text, scope: 'n/a', reason }),
  }
}
