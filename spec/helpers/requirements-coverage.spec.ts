import { describe, expect, it } from 'vitest'
import { assessCoverage, countByRevision, formatCoverage, referenceFile, testKey, type ObservedRun, type TestState } from './requirements-coverage.ts'
import type { Requirement } from '../requirements.ts'
import { requirements } from '../requirements.ts'

const FILE = 'spec/a.spec.ts'
const url = 'https://modelcontextprotocol.io/specification/2025-11-25/basic'

/** A run of FILE (and of `extraFiles`) whose tests are `tests`, by full name. */
function run(tests: Record<string, TestState>, extraFiles: string[] = [], names: Record<string, string> = {}): ObservedRun {
  return {
    files: new Set([FILE, ...extraFiles]),
    brokenFiles: new Set(),
    tests: new Map(Object.entries(tests).map(([fullName, state]) => {
      const name = names[fullName] ?? fullName.split(' > ').at(-1)!
      // As verifies() does: a test named `[id] ...` by it carries the id in its metadata.
      const requirement = /^\[([a-z-]+:[^\]\s]+)\] /.exec(name)?.[1]
      return [testKey(FILE, fullName), { name, state, ...requirement === undefined ? {} : { requirement } }]
    })),
    fileExists: path => path === FILE || path === 'spec/b.spec.ts' || extraFiles.includes(path),
  }
}

const list: Record<string, Requirement> = {
  'a:covered': { revision: '2025-11-25', url, binds: 'server', text: 'A MUST', tests: [`${FILE} > suite > passes`] },
  'a:failing': { revision: '2025-11-25', url, binds: 'server', text: 'B MUST', tests: [`${FILE} > suite > passes`, `${FILE} > suite > fails`] },
  'a:untested': { revision: '2026-07-28', url, binds: 'client', text: 'C MUST NOT' },
  'a:elsewhere': { revision: '2026-07-28', url, binds: 'client', text: 'D MUST', scope: 'n/a', reason: 'binds the authorization server' },
}

describe('assessCoverage', () => {
  it('covers a requirement whose tests all passed, and not one with a test that did not pass or with none', () => {
    const report = assessCoverage(list, run({ 'suite > passes': 'passed', 'suite > fails': 'failed' }))
    expect(Object.fromEntries(report.standings)).toEqual({
      'a:covered': { status: 'covered', tests: [`${FILE} > suite > passes`] },
      'a:failing': { status: 'uncovered', reason: 'a test did not pass', tests: [`${FILE} > suite > passes`, `${FILE} > suite > fails`] },
      'a:untested': { status: 'uncovered', reason: 'no test', tests: [] },
      'a:elsewhere': { status: 'n/a' },
    })
    expect(report.broken).toEqual([])
    expect(report.isPartial).toBe(false)
  })

  it('counts a verifies() test for its id, and breaks on an id the list does not have', () => {
    const report = assessCoverage(list, run({ 'suite > passes': 'passed', 'suite > fails': 'passed', 'suite > [a:untested] does it': 'passed', 'suite > [a:nowhere] does it': 'passed' }))
    expect(report.standings.get('a:untested')).toEqual({ status: 'covered', tests: [`${FILE} > suite > [a:untested] does it`] })
    expect(report.broken).toEqual([`${FILE} > suite > [a:nowhere] does it: verifies() names the unknown requirement "a:nowhere"`])
  })

  it('breaks on a reference to a test or a file that does not exist, or that is not a reference at all', () => {
    const broken = assessCoverage({
      'x:renamed': { revision: '2025-11-25', url, binds: 'server', text: 'E', tests: [`${FILE} > suite > was renamed`] },
      'x:gone': { revision: '2025-11-25', url, binds: 'server', text: 'F', tests: ['spec/gone.spec.ts > suite > test'] },
      'x:bare': { revision: '2025-11-25', url, binds: 'server', text: 'G', tests: ['just a test name'] },
      'x:both': { revision: '2025-11-25', url, binds: 'server', text: 'H', scope: 'n/a', reason: 'r', tests: [`${FILE} > suite > passes`] },
    }, run({ 'suite > passes': 'passed' })).broken
    expect(broken).toEqual([
      `x:renamed: "${FILE} > suite > was renamed" names no test of that file`,
      'x:gone: "spec/gone.spec.ts > suite > test" names a file that does not exist',
      'x:bare: "just a test name" is not "spec/<path>.spec.ts > <suite> > <test>"',
      'x:both: a requirement marked n/a names tests; drop one or the other',
    ])
  })

  it('judges nothing in a file that did not run (a filtered run), and says the run is partial', () => {
    const report = assessCoverage({ 'y:other': { revision: '2025-11-25', url, binds: 'server', text: 'I', tests: ['spec/b.spec.ts > suite > test'] } }, run({}))
    expect(report.standings.get('y:other')).toEqual({ status: 'unknown' })
    expect(report.broken).toEqual([])
    expect(report.isPartial).toBe(true)
    expect(formatCoverage(list, report)).toBe(' Requirements: partial run (some referenced spec files did not run), coverage not judged.')
  })
})

describe('assessCoverage on a file that failed to load', () => {
  it('judges its references neither broken nor covered, and lists the requirement as not covered', () => {
    const broken: ObservedRun = { ...run({}, ['spec/b.spec.ts']), brokenFiles: new Set(['spec/b.spec.ts']) }
    const requirements = { 'z:loading': { revision: '2025-11-25', url, binds: 'server', text: 'J MUST', tests: ['spec/b.spec.ts > suite > test'] } } as const satisfies Record<string, Requirement>
    const report = assessCoverage(requirements, broken)
    expect(report).toMatchObject({ broken: [], isPartial: false })
    expect(report.standings.get('z:loading')).toEqual({ status: 'unknown' })
    expect(formatCoverage(requirements, report).split('\n').at(-1)).toBe('   z:loading [a spec file it names failed to load]: J MUST (2025-11-25/basic)')
  })
})

describe('formatCoverage', () => {
  it('prints the counts per revision, then each uncovered requirement with its sentence', () => {
    const report = assessCoverage(list, run({ 'suite > passes': 'passed', 'suite > fails': 'failed' }))
    expect([...countByRevision(list, report)]).toEqual([
      ['2025-11-25', { total: 2, covered: 1, uncovered: 1, notApplicable: 0 }],
      ['2026-07-28', { total: 2, covered: 0, uncovered: 1, notApplicable: 1 }],
    ])
    expect(formatCoverage(list, report).split('\n')).toEqual([
      ' Requirements of the MCP specification (spec/requirements.ts): MUST, MUST NOT, REQUIRED, SHALL',
      '   2025-11-25  2 requirements: covered 1 of 2 in scope, uncovered 1, out of an SDK\'s scope 0',
      '   2026-07-28  2 requirements: covered 0 of 1 in scope, uncovered 1, out of an SDK\'s scope 1',
      '',
      ' Uncovered (2025-11-25):',
      '   a:failing [a test did not pass]: B MUST (2025-11-25/basic)',
      '',
      ' Uncovered (2026-07-28):',
      '   a:untested: C MUST NOT (2025-11-25/basic)',
    ])
  })
})

describe('reference helpers', () => {
  it('read the file of a reference', () => {
    expect(referenceFile('spec/lib/x.spec.ts > a > b')).toBe('spec/lib/x.spec.ts')
    expect(referenceFile('lib/x.ts > a')).toBeUndefined()
  })

  it('take a requirement id only from a test\'s metadata, not from a name that starts with brackets', () => {
    const tests = new Map([
      [testKey(FILE, 'suite > [::1] is loopback'), { name: '[::1] is loopback', state: 'passed' as const }],
      [testKey(FILE, 'suite > passes'), { name: 'passes', state: 'passed' as const, requirement: 'a:untested' }],
    ])
    const report = assessCoverage(list, { files: new Set([FILE]), brokenFiles: new Set(), tests, fileExists: path => path === FILE })
    expect(report.broken.filter(problem => problem.includes('verifies()'))).toEqual([])
    expect(report.standings.get('a:untested')).toEqual({ status: 'covered', tests: [`${FILE} > suite > passes`] })
  })
})

describe('spec/requirements.ts', () => {
  it('gives every requirement a page of its revision, a sentence, and a reason when out of scope', () => {
    for (const [id, requirement] of Object.entries(requirements)) {
      expect(requirement.url, id).toMatch(new RegExp(`^https://modelcontextprotocol\\.io/specification/${requirement.revision}/`))
      expect(requirement.text.length, id).toBeGreaterThan(10)
      expect(requirement.scope === 'n/a' ? typeof requirement.reason : 'no reason needed', id).toBe(requirement.scope === 'n/a' ? 'string' : 'no reason needed')
      if (requirement.revision === '2026-07-28') expect(id).toMatch(/@2026-07-28$/)
      else expect(id).not.toMatch(/@/)
    }
  })
})
