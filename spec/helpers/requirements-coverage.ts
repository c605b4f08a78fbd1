import type { Requirement } from '../requirements.ts'

/** How one test ended, as vitest reports it. */
export type TestState = 'passed' | 'failed' | 'skipped' | 'pending'

/** What a finished vitest run saw: the spec files it ran and the state of every test in them. */
export interface ObservedRun {
  /** Paths of the spec files that ran, relative to the repository root (`spec/lib/connection.spec.ts`). */
  readonly files: ReadonlySet<string>
  /** Spec files that ran but failed to load: their tests are unknown, so references into them are not judged. */
  readonly brokenFiles: ReadonlySet<string>
  /**
   * Every test that ran, keyed by {@link testKey}, with its name, its state and, for a `verifies()`
   * test, the requirement id it carries in its metadata (a name that merely starts with `[...]`,
   * as an `it.each` case may, names no requirement).
   */
  readonly tests: ReadonlyMap<string, { readonly name: string; readonly state: TestState; readonly requirement?: string }>
  /** Whether a referenced file exists at all (a path to a file nobody has is a broken reference, run or not). */
  readonly fileExists: (path: string) => boolean
}

/** A requirement's standing after a run. */
export type Standing =
  | { readonly status: 'covered'; readonly tests: readonly string[] }
  | { readonly status: 'uncovered'; readonly reason: 'no test' | 'a test did not pass'; readonly tests: readonly string[] }
  | { readonly status: 'n/a' }
  /** A test it names sits in a spec file that failed to load (or, in a filtered run, did not run). */
  | { readonly status: 'unknown' }

/** The result of checking the requirement list against a run. */
export interface CoverageReport {
  /** The standing of each requirement, by id, in the list's order. */
  readonly standings: ReadonlyMap<string, Standing>
  /**
   * Problems that fail the run: a reference to a test or file that does not exist, a malformed
   * reference, or a `verifies()` id the list does not have. Each is a sentence naming the id.
   */
  readonly broken: readonly string[]
  /** True when some referenced file did not run (a filtered run): coverage is then not judged. */
  readonly isPartial: boolean
}

/** The key of a test in references and in {@link ObservedRun.tests}: `<file> > <suite> > ... > <test>`. */
export function testKey(file: string, fullName: string): string {
  return `${file} > ${fullName}`
}

/** The file part of a test reference (`spec/x.spec.ts > Suite > test` gives `spec/x.spec.ts`), or undefined when it has none. */
export function referenceFile(reference: string): string | undefined {
  const at = reference.indexOf(' > ')
  const file = at === -1 ? '' : reference.slice(0, at)
  return /^spec\/.+\.spec\.ts$/.test(file) ? file : undefined
}

/**
 * Checks the requirement list against a finished run: every reference must name an existing test,
 * and a requirement is covered when it has at least one test (referenced, or a `verifies()` test
 * naming it) and every one of them passed. Pure: the caller reports and sets the exit code.
 */
export function assessCoverage(requirements: Readonly<Record<string, Requirement>>, run: ObservedRun): CoverageReport {
  const broken: string[] = []
  // The verifies() tests of each id, collected once from the run.
  const verifying = new Map<string, string[]>()
  for (const [key, test] of run.tests) {
    const id = test.requirement
    if (id === undefined) continue
    if (!Object.hasOwn(requirements, id)) broken.push(`${key}: verifies() names the unknown requirement "${id}"`)
    else verifying.set(id, [...verifying.get(id) ?? [], key])
  }
  let isPartial = false
  const standings = new Map<string, Standing>()
  for (const [id, requirement] of Object.entries(requirements)) {
    const references = requirement.tests ?? []
    if (requirement.scope === 'n/a' && references.length > 0) broken.push(`${id}: a requirement marked n/a names tests; drop one or the other`)
    let isKnown = true
    for (const reference of references) {
      const file = referenceFile(reference)
      if (file === undefined) { broken.push(`${id}: "${reference}" is not "spec/<path>.spec.ts > <suite> > <test>"`); continue }
      if (!run.fileExists(file)) { broken.push(`${id}: "${reference}" names a file that does not exist`); continue }
      if (!run.files.has(file) || run.brokenFiles.has(file)) { isKnown = false; if (!run.files.has(file)) isPartial = true; continue }
      if (!run.tests.has(reference)) broken.push(`${id}: "${reference}" names no test of that file`)
    }
    if (requirement.scope === 'n/a') { standings.set(id, { status: 'n/a' }); continue }
    if (!isKnown) { standings.set(id, { status: 'unknown' }); continue }
    const tests = [...references.filter(reference => run.tests.has(reference)), ...verifying.get(id) ?? []]
    if (tests.length === 0) standings.set(id, { status: 'uncovered', reason: 'no test', tests })
    else if (tests.some(key => run.tests.get(key)!.state !== 'passed')) standings.set(id, { status: 'uncovered', reason: 'a test did not pass', tests })
    else standings.set(id, { status: 'covered', tests })
  }
  return { standings, broken, isPartial }
}

/** Counts per revision: requirements, covered, uncovered, out of scope. */
export interface RevisionCount { readonly total: number; readonly covered: number; readonly uncovered: number; readonly notApplicable: number }

/** Tallies a report per revision, in the order revisions first appear in the list. */
export function countByRevision(requirements: Readonly<Record<string, Requirement>>, report: CoverageReport): Map<string, RevisionCount> {
  const counts = new Map<string, { total: number; covered: number; uncovered: number; notApplicable: number }>()
  for (const [id, requirement] of Object.entries(requirements)) {
    const count = counts.get(requirement.revision) ?? { total: 0, covered: 0, uncovered: 0, notApplicable: 0 }
    counts.set(requirement.revision, count)
    count.total++
    const status = report.standings.get(id)?.status
    if (status === 'covered') count.covered++
    else if (status === 'n/a') count.notApplicable++
    else count.uncovered++
  }
  return counts
}

/**
 * The text printed after a run: the counts per revision, then every uncovered requirement with its
 * sentence (grouped by revision), then the broken references. A partial run prints only a note and
 * what is broken, so running one file does not list hundreds of requirements.
 */
export function formatCoverage(requirements: Readonly<Record<string, Requirement>>, report: CoverageReport): string {
  const lines: string[] = []
  if (report.isPartial) {
    lines.push(' Requirements: partial run (some referenced spec files did not run), coverage not judged.')
  } else {
    lines.push(' Requirements of the MCP specification (spec/requirements.ts): MUST, MUST NOT, REQUIRED, SHALL')
    for (const [revision, count] of countByRevision(requirements, report)) {
      const inScope = count.total - count.notApplicable
      lines.push(`   ${revision}  ${count.total} requirements: covered ${count.covered} of ${inScope} in scope, uncovered ${count.uncovered}, out of an SDK's scope ${count.notApplicable}`)
    }
    let revision = ''
    for (const [id, standing] of report.standings) {
      if (standing.status !== 'uncovered' && standing.status !== 'unknown') continue
      const requirement = requirements[id]!
      if (requirement.revision !== revision) {
        revision = requirement.revision
        lines.push('', ` Uncovered (${revision}):`)
      }
      const why = standing.status === 'unknown' ? ' [a spec file it names failed to load]' : standing.reason === 'no test' ? '' : ` [${standing.reason}]`
      lines.push(`   ${id}${why}: ${requirement.text} (${requirement.url.replace(/^https:\/\/modelcontextprotocol\.io\/specification\//, '')})`)
    }
  }
  if (report.broken.length > 0) {
    lines.push('', ` Requirements: ${report.broken.length} broken reference(s), failing the run:`)
    for (const problem of report.broken) lines.push(`   ${problem}`)
  }
  return lines.join('\n')
}
