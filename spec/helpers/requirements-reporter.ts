import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { Reporter, TestModule, TestRunEndReason, Vitest } from 'vitest/node'
import { requirements } from '../requirements.ts'
import { assessCoverage, formatCoverage, testKey, type TestState } from './requirements-coverage.ts'

/**
 * A vitest reporter that checks `spec/requirements.ts` against the run it reports on, beside the
 * default reporter (see vitest.config.ts).
 *
 * At the end of `vitest run` it prints how many requirements of each revision are covered and lists
 * the uncovered ones with their sentence. A requirement is covered when every test it names (and
 * every `verifies()` test carrying its id) passed. A reference to a test or file that does not
 * exist fails the run (exit code 1), so the list and the tests cannot drift apart. It only ever
 * raises the exit code: a failing test still fails the run, and a passing run stays 0 unless a
 * reference is broken. An interrupted run is not judged.
 */
export class RequirementsReporter implements Reporter {
  /** The vitest instance, for its root and logger (set in onInit). */
  #vitest: Vitest | undefined

  onInit(vitest: Vitest): void {
    this.#vitest = vitest
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>, _errors: unknown, reason: TestRunEndReason): void {
    if (reason === 'interrupted' || this.#vitest === undefined) return
    const root = this.#vitest.config.root
    const files = new Set<string>()
    const brokenFiles = new Set<string>()
    const tests = new Map<string, { name: string; state: TestState; requirement?: string }>()
    for (const module of testModules) {
      const file = module.relativeModuleId.replaceAll('\\', '/')
      files.add(file)
      let count = 0
      for (const test of module.children.allTests()) {
        count++
        const requirement = (test.meta() as { requirement?: unknown }).requirement
        tests.set(testKey(file, test.fullName), { name: test.name, state: test.result().state, ...typeof requirement === 'string' ? { requirement } : {} })
      }
      if (count === 0 && module.state() === 'failed') brokenFiles.add(file)
    }
    const report = assessCoverage(requirements, { files, brokenFiles, tests, fileExists: path => existsSync(join(root, path)) })
    this.#vitest.logger.log(`\n${formatCoverage(requirements, report)}\n`)
    // Raise, never lower: vitest has already set 1 for failed tests.
    if (report.broken.length > 0) process.exitCode = 1
  }
}
