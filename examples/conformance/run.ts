/**
 * `npm run conformance`: the official conformance suites against rxmcp, counted in scenarios.
 *
 * Two releases of `@modelcontextprotocol/conformance` run, each pinned:
 *
 *   0.1.16          server: every scenario (`--suite all`, legacy era)
 *                   client: initialize, tools_call, elicitation-sep1034-client-defaults, sse-retry, and
 *                     the 22 auth/* scenarios (STABLE_AUTH_SCENARIOS)
 *   0.2.0-alpha.12  server, legacy: `--suite all --spec-version 2025-11-25` (its legacy scenarios differ
 *                     from 0.1.16's: server-session-lifecycle, and a wire-schema check on every message)
 *                   server, modern: `--suite all --spec-version 2026-07-28` (stateless, MRTR, headers, ...)
 *                   client: the scenarios in ALPHA_CLIENT_SCENARIOS (the 33 auth/* ones included), at their default wire version, and
 *                     the ones that exist in both eras once more at 2026-07-28
 *
 *                   server, extensions: the `io.modelcontextprotocol/tasks` scenarios (`tasks-*`,
 *                     TASKS_SERVER_SCENARIOS) and the `io.modelcontextprotocol/skills` ones
 *                     (`sep-2640-*`, SKILLS_SERVER_SCENARIOS), one `--scenario` at a time, each
 *                     set against a conformance server with its fixtures (task-fixtures.ts,
 *                     skill-fixtures.ts); the version filters above leave extension scenarios out
 *                   client, extensions: the skills client scenarios (SKILLS_CLIENT_SCENARIOS)
 *
 * The three server suites and the two sets of extension scenarios run at the same time, each
 * against its own conformance server on its own loopback port (they take seconds, and their
 * timing-sensitive scenarios pass the same way alone or together). Client scenarios run two at a time, except `sse-retry`, which measures reconnection
 * delays and runs alone.
 *
 * A scenario fails on a failed check, on a warning, and (client scenarios) when the client exits
 * with a code other than 0 or times out. Verdicts come from the `checks.json` each CLI writes per
 * scenario (`--output-dir`), cross-checked with the summary it prints. The run ends with one line
 * `conformance: N passed, M failed` over every scenario of both releases, and exit code 1 when M > 0.
 * The CLIs need Node >= 22: one Node 24 is fetched through npx and reused for every run.
 */
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createConformanceServer } from './server.ts'
import { registerTaskFixtures } from './task-fixtures.ts'
import { registerSkillFixtures } from './skill-fixtures.ts'
import type { McpServer } from '../../actors/server.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))
const require = createRequire(import.meta.url)
const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url))
const CLIENT_COMMAND = `${tsx} examples/conformance/client.ts`

/** One pinned release of the conformance CLI. */
interface Release { label: string; cli: string }
const STABLE: Release = { label: '0.1.16', cli: require.resolve('@modelcontextprotocol/conformance/dist/index.js') }
const ALPHA: Release = { label: '0.2.0-alpha.12', cli: require.resolve('conformance-next/dist/index.js') }

/** The authorization scenarios of 0.1.16, run with oauthFetch (auth/client.ts) as the client's fetch. */
const STABLE_AUTH_SCENARIOS = [
  'auth/metadata-default', 'auth/metadata-var1', 'auth/metadata-var2', 'auth/metadata-var3', 'auth/basic-cimd',
  'auth/scope-from-www-authenticate', 'auth/scope-from-scopes-supported', 'auth/scope-omitted-when-undefined',
  'auth/scope-step-up', 'auth/scope-retry-limit', 'auth/token-endpoint-auth-basic', 'auth/token-endpoint-auth-post',
  'auth/token-endpoint-auth-none', 'auth/pre-registration', 'auth/2025-03-26-oauth-metadata-backcompat',
  'auth/2025-03-26-oauth-endpoint-fallback', 'auth/resource-mismatch', 'auth/offline-access-scope',
  'auth/offline-access-not-supported', 'auth/client-credentials-jwt', 'auth/client-credentials-basic',
  'auth/cross-app-access-complete-flow',
]
/** The authorization scenarios of 0.2.0-alpha.12: 0.1.16's (SEP-990 renamed) and the 2026-07-28 and extension ones. */
const ALPHA_AUTH_SCENARIOS = [
  ...STABLE_AUTH_SCENARIOS.filter(scenario => scenario !== 'auth/cross-app-access-complete-flow'),
  'auth/authorization-server-migration', 'auth/iss-supported', 'auth/iss-not-advertised', 'auth/iss-supported-missing',
  'auth/iss-wrong-issuer', 'auth/iss-unexpected', 'auth/iss-normalized', 'auth/metadata-issuer-mismatch',
  'auth/enterprise-managed-authorization', 'auth/dpop', 'auth/dpop-nonce', 'auth/wif-jwt-bearer',
]
const STABLE_CLIENT_SCENARIOS = ['initialize', 'tools_call', 'elicitation-sep1034-client-defaults', 'sse-retry', ...STABLE_AUTH_SCENARIOS]
const ALPHA_CLIENT_SCENARIOS = [
  'initialize', 'tools_call', 'elicitation-sep1034-client-defaults', 'sse-retry', 'request-metadata',
  'sep-2322-client-request-state', 'http-standard-headers', 'http-custom-headers', 'http-invalid-tool-headers',
  'json-schema-ref-no-deref', 'json-schema-2020-12-preservation', ...ALPHA_AUTH_SCENARIOS,
]
/** Alpha client scenarios that exist in both eras: their default wire is 2025-11-25, so they run at 2026-07-28 too. */
const ALPHA_CLIENT_SCENARIOS_MODERN = [
  'tools_call', 'json-schema-2020-12-preservation',
  // Auth scenarios of both eras (the 2026-07-28-only ones already run at that version).
  'auth/metadata-default', 'auth/metadata-var1', 'auth/metadata-var2', 'auth/metadata-var3', 'auth/basic-cimd',
  'auth/scope-from-www-authenticate', 'auth/scope-from-scopes-supported', 'auth/scope-omitted-when-undefined',
  'auth/scope-step-up', 'auth/scope-retry-limit', 'auth/token-endpoint-auth-basic', 'auth/token-endpoint-auth-post',
  'auth/token-endpoint-auth-none', 'auth/pre-registration',
]
/** Client scenarios that time reconnection delays: they run with nothing else beside them. */
const RUNS_ALONE = new Set(['sse-retry'])
/** How long one CLI run may take before it is killed (a server suite runs about 40 scenarios). */
const CLI_TIMEOUT_MS = 10 * 60_000
/** Failing checks printed per failed scenario. */
const MESSAGES_PER_SCENARIO = 3

/** One scenario's verdict. */
interface Verdict { suite: string; scenario: string; isPassed: boolean; problems: string[] }

/** One check as the CLIs write it to checks.json. */
interface Check { id: string; name?: string; description?: string; status: string; errorMessage?: string }

// ---------------------------------------------------------------------------------------------
// Running the CLI
// ---------------------------------------------------------------------------------------------

/**
 * The command that runs a Node >= 22 script: the Node 24 binary npx fetched (asked once, then
 * reused, which saves an npx resolution per run), or npx itself if that binary cannot be found.
 */
const node24: readonly string[] = (() => {
  try {
    const path = execFileSync('npx', ['-y', '-p', 'node@24', 'node', '-p', 'process.execPath'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5 * 60_000 }).trim().split('\n').pop()!
    if (existsSync(path)) return [path]
  } catch {
    // Fall through to npx per run.
  }
  return ['npx', '-y', '-p', 'node@24', 'node']
})()

/** The tasks extension's server scenarios (0.2.0-alpha.12). */
const TASKS_SERVER_SCENARIOS = [
  'tasks-lifecycle', 'tasks-capability-negotiation', 'tasks-wire-fields', 'tasks-request-state-removal', 'tasks-mrtr-input',
  'tasks-request-headers', 'tasks-dispatch-and-envelope', 'tasks-status-notifications', 'tasks-required-task-error', 'tasks-mrtr-composition',
]

/** The skills extension's server scenarios (0.2.0-alpha.12). */
const SKILLS_SERVER_SCENARIOS = ['sep-2640-skills-enumeration', 'sep-2640-skills-manifest', 'sep-2640-skills-directory']
/** The skills extension's client scenarios: listing reads nothing, and a tampered skill is refused. */
const SKILLS_CLIENT_SCENARIOS = ['sep-2640-client-no-prefetch', 'sep-2640-client-verify-digest', 'sep-2640-client-verify-size', 'sep-2640-client-verify-frontmatter']

/** Runs a conformance CLI; resolves with everything it printed, ANSI colours removed. */
function runCli(release: Release, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(node24[0]!, [...node24.slice(1), release.cli, ...args], {
      cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
    })
    let output = ''
    child.stdout.on('data', chunk => { output += chunk })
    child.stderr.on('data', chunk => { output += chunk })
    const timer = setTimeout(() => { output += `\n(conformance CLI killed after ${CLI_TIMEOUT_MS / 60_000} minutes)\n`; child.kill('SIGKILL') }, CLI_TIMEOUT_MS)
    child.on('error', reject)
    child.on('close', () => { clearTimeout(timer); resolve(output.replace(/\x1b\[[0-9;]*m/g, '')) })
  })
}

/**
 * The checks of every scenario a CLI run saved under `dir`: one folder per scenario, named
 * `[server-]<scenario>-<ISO time with - for : and .>`, holding checks.json (absent when the
 * scenario crashed before its checks were written). A scenario name with a slash
 * (`auth/metadata-default`) is saved one folder deeper (`auth/metadata-default-<time>`).
 */
function savedChecks(dir: string, prefix: string, parent = ''): Map<string, Check[] | undefined> {
  const saved = new Map<string, Check[] | undefined>()
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const match = /^(.+)-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z$/.exec(entry.name)
    if (match === null) {
      if (entry.isDirectory() && parent === '') for (const [name, checks] of savedChecks(join(dir, entry.name), prefix, `${entry.name}/`)) saved.set(name, checks)
      continue
    }
    const name = `${parent}${match[1]!}`
    if (!name.startsWith(prefix)) continue
    const file = join(dir, entry.name, 'checks.json')
    saved.set(name.slice(prefix.length), existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) as Check[] : undefined)
  }
  return saved
}

/** What is wrong with a scenario's checks: each failure and warning, briefly. */
function problemsOf(checks: readonly Check[]): string[] {
  return checks.filter(check => check.status === 'FAILURE' || check.status === 'WARNING').map(check => {
    const text = (check.errorMessage ?? check.description ?? '').replace(/\s+/g, ' ').trim()
    return `${check.status === 'WARNING' ? 'warning' : 'failed'} ${check.id}${text === '' ? '' : `: ${text.length > 240 ? `${text.slice(0, 240)}…` : text}`}`
  })
}

// ---------------------------------------------------------------------------------------------
// Server suites
// ---------------------------------------------------------------------------------------------

/**
 * Runs one server suite against a fresh conformance server on its own loopback port. The summary
 * (`✓ name: 1 passed, 0 failed`) names every scenario that ran; checks.json adds warnings and messages.
 */
async function serverSuite(suite: string, release: Release, filter: string[]): Promise<Verdict[]> {
  const server = createConformanceServer()
  const http = streamableHttp({ port: 0 })
  await server.listen(http)
  const dir = mkdtempSync(join(tmpdir(), 'rxmcp-conformance-'))
  try {
    const output = await runCli(release, ['server', '--url', http.url!, '--suite', 'all', ...filter, '--output-dir', dir])
    const saved = savedChecks(dir, 'server-')
    const verdicts: Verdict[] = []
    for (const match of output.matchAll(/^[✓✗]\s+(\S+):\s+(\d+) passed, (\d+) failed/gm)) {
      const scenario = match[1]!
      const checks = saved.get(scenario)
      const problems = checks === undefined ? [`no checks.json (the scenario did not finish; ${match[3]} failed in the summary)`] : problemsOf(checks)
      if (checks !== undefined && match[3] !== '0' && !problems.some(problem => problem.startsWith('failed'))) problems.push(`${match[3]} failed in the summary`)
      verdicts.push({ suite, scenario, isPassed: problems.length === 0, problems })
    }
    if (verdicts.length === 0) verdicts.push({ suite, scenario: '(suite)', isPassed: false, problems: [`no scenario results; the CLI printed:\n${output.slice(-2000)}`] })
    return verdicts
  } finally {
    rmSync(dir, { recursive: true, force: true })
    await server.close()
  }
}

/**
 * Runs server scenarios one `--scenario` at a time (extension scenarios: no `--suite` selects
 * them) against one fresh server from `make`. A scenario passes with a checks.json and no failure
 * or warning in it.
 */
async function serverScenarios(suite: string, release: Release, scenarios: readonly string[], make: () => McpServer | Promise<McpServer>): Promise<Verdict[]> {
  const server = await make()
  const http = streamableHttp({ port: 0 })
  await server.listen(http)
  const verdicts: Verdict[] = []
  try {
    for (const scenario of scenarios) {
      const dir = mkdtempSync(join(tmpdir(), 'rxmcp-conformance-'))
      try {
        const output = await runCli(release, ['server', '--url', http.url!, '--scenario', scenario, '--output-dir', dir])
        const checks = savedChecks(dir, 'server-').get(scenario)
        const problems = checks === undefined ? [`no checks.json (the scenario did not finish):\n${output.slice(-1000)}`] : problemsOf(checks)
        verdicts.push({ suite, scenario, isPassed: problems.length === 0, problems })
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }
    return verdicts
  } finally {
    await server.close()
  }
}

/** The conformance server with the skills extension's fixtures. */
async function skillsServer(): Promise<McpServer> {
  const server = createConformanceServer()
  await registerSkillFixtures(server)
  return server
}

/** The conformance server with the tasks extension's fixtures. */
function tasksServer(): McpServer {
  const server = createConformanceServer()
  registerTaskFixtures(server)
  return server
}

// ---------------------------------------------------------------------------------------------
// Client scenarios
// ---------------------------------------------------------------------------------------------

/** One client scenario to run: `version` pins the wire version (`--spec-version`), else the scenario's default. */
interface ClientRun { suite: string; release: Release; scenario: string; version?: string }

/**
 * Runs one client scenario with examples/conformance/client.ts. Both CLIs print `Client exited
 * with code N` and `Client timed out after N ms` for the client process; 0.1.16 does not count
 * either against the scenario, so they are checked here (for every scenario, also the alpha's
 * http-invalid-tool-headers, whose CLI would forgive a non-zero exit).
 */
async function clientScenario(run: ClientRun): Promise<Verdict> {
  const name = run.version === undefined ? run.scenario : `${run.scenario}@${run.version}`
  const dir = mkdtempSync(join(tmpdir(), 'rxmcp-conformance-'))
  try {
    const output = await runCli(run.release, ['client', '--command', CLIENT_COMMAND, '--scenario', run.scenario,
      ...(run.version === undefined ? [] : ['--spec-version', run.version]), '--output-dir', dir])
    // What happened to the client process goes first: it explains the failed checks after it.
    const problems: string[] = []
    const exit = /Client exited with code (-?\d+)/.exec(output)
    if (exit !== null) problems.push(`client exited with code ${exit[1]}`)
    const timeout = /Client timed out after (\d+)ms/.exec(output)
    if (timeout !== null) problems.push(`client timed out after ${timeout[1]} ms`)
    if (/SKIPPED: scenario/.test(output)) problems.push('skipped by the CLI (not applicable at that version)')
    const checks = savedChecks(dir, '').get(run.scenario)
    if (checks === undefined) problems.push('no checks.json (the scenario did not run)')
    else {
      if (!checks.some(check => check.status === 'SUCCESS')) problems.push('no check passed')
      problems.push(...problemsOf(checks))
    }
    return { suite: run.suite, scenario: name, isPassed: problems.length === 0, problems }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Runs client scenarios two at a time; the ones in RUNS_ALONE afterwards, one by one. */
async function clientScenarios(runs: ClientRun[]): Promise<Verdict[]> {
  const shared = runs.filter(run => !RUNS_ALONE.has(run.scenario))
  const alone = runs.filter(run => RUNS_ALONE.has(run.scenario))
  const verdicts = new Map<ClientRun, Verdict>()
  let next = 0
  const worker = async () => {
    while (next < shared.length) {
      const run = shared[next++]!
      verdicts.set(run, await clientScenario(run))
    }
  }
  await Promise.all([worker(), worker()])
  for (const run of alone) verdicts.set(run, await clientScenario(run))
  return runs.map(run => verdicts.get(run)!)
}

// ---------------------------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------------------------

const SUITES = {
  stableServer: `${STABLE.label} server`,
  alphaLegacy: `${ALPHA.label} server legacy (2025-11-25)`,
  alphaModern: `${ALPHA.label} server modern (2026-07-28)`,
  alphaTasks: `${ALPHA.label} server tasks extension`,
  alphaSkills: `${ALPHA.label} server skills extension`,
  stableClient: `${STABLE.label} client`,
  alphaClient: `${ALPHA.label} client`,
}

const started = performance.now()
const serverVerdicts = (await Promise.all([
  serverSuite(SUITES.stableServer, STABLE, []),
  serverSuite(SUITES.alphaLegacy, ALPHA, ['--spec-version', '2025-11-25']),
  serverSuite(SUITES.alphaModern, ALPHA, ['--spec-version', '2026-07-28']),
  serverScenarios(SUITES.alphaTasks, ALPHA, TASKS_SERVER_SCENARIOS, tasksServer),
  serverScenarios(SUITES.alphaSkills, ALPHA, SKILLS_SERVER_SCENARIOS, skillsServer),
])).flat()
const clientVerdicts = await clientScenarios([
  ...STABLE_CLIENT_SCENARIOS.map(scenario => ({ suite: SUITES.stableClient, release: STABLE, scenario })),
  ...ALPHA_CLIENT_SCENARIOS.map(scenario => ({ suite: SUITES.alphaClient, release: ALPHA, scenario })),
  ...ALPHA_CLIENT_SCENARIOS_MODERN.map(scenario => ({ suite: SUITES.alphaClient, release: ALPHA, scenario, version: '2026-07-28' })),
  ...SKILLS_CLIENT_SCENARIOS.map(scenario => ({ suite: SUITES.alphaClient, release: ALPHA, scenario })),
])
const verdicts = [...serverVerdicts, ...clientVerdicts]

for (const suite of Object.values(SUITES)) {
  const mine = verdicts.filter(verdict => verdict.suite === suite)
  const failed = mine.filter(verdict => !verdict.isPassed)
  process.stdout.write(`conformance ${suite}: ${mine.length - failed.length} passed, ${failed.length} failed\n`)
  for (const verdict of failed) {
    process.stdout.write(`  ✗ ${verdict.scenario}\n`)
    for (const problem of verdict.problems.slice(0, MESSAGES_PER_SCENARIO)) process.stdout.write(`      ${problem}\n`)
    if (verdict.problems.length > MESSAGES_PER_SCENARIO) process.stdout.write(`      (${verdict.problems.length - MESSAGES_PER_SCENARIO} more)\n`)
  }
}
const failedCount = verdicts.filter(verdict => !verdict.isPassed).length
process.stdout.write(`conformance took ${((performance.now() - started) / 1000).toFixed(0)} s\n`)
process.stdout.write(`conformance: ${verdicts.length - failedCount} passed, ${failedCount} failed\n`)
process.exitCode = failedCount === 0 ? 0 : 1
