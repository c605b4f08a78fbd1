import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))
const depcruise = join(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs')
const config = join(root, '.dependency-cruiser.cjs')

/** Runs dependency-cruiser with the project's rules over `targets` in `cwd`: exit code and output. */
function cruise(cwd: string, targets: string[], extra: string[] = []): Promise<{ code: number; output: string }> {
  return new Promise(resolve => {
    execFile(process.execPath, [depcruise, ...targets, '--config', config, '--output-type', 'err', ...extra], { cwd, timeout: 120_000 },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, output: stdout + stderr }))
  })
}

describe('issue 21: import rules (DESIGN.md, Layout), checked by dependency-cruiser', () => {
  let fixture: string

  beforeAll(async () => {
    fixture = await mkdtemp(join(tmpdir(), 'rxmcp-import-rules-'))
    const files: Record<string, string> = {
      'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', allowImportingTsExtensions: true, noEmit: true } }),
      // An upward import: lib/ knows the protocol and may not reach into the actors.
      'lib/codec.ts': "import { actor } from '../actors/actor.ts'\nexport const codec = actor\n",
      'actors/actor.ts': "export const actor = 1\n",
      // A transport reaching into the actors, and an actor into a transport.
      'transports/pipe.ts': "import { actor } from '../actors/actor.ts'\nexport const pipe = actor\n",
      'actors/uses-pipe.ts': "import { pipe } from '../transports/pipe.ts'\nexport const usesPipe = pipe\n",
      // A cycle made only of type imports still counts.
      'lib/left.ts': "import type { Right } from './right.ts'\nexport interface Left { right?: Right }\n",
      'lib/right.ts': "import type { Left } from './left.ts'\nexport interface Right { left?: Left }\n",
      // Allowed: downward imports.
      'auth/verify.ts': "import type { Left } from '../lib/left.ts'\nexport type Verified = Left\n",
      'host/host.ts': "import { pipe } from '../transports/pipe.ts'\nimport { actor } from '../actors/actor.ts'\nexport const host = [pipe, actor]\n",
    }
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(fixture, path)), { recursive: true })
      await writeFile(join(fixture, path), text)
    }
  })

  afterAll(async () => { await rm(fixture, { recursive: true, force: true }) })

  it('fails on an upward import and on a cycle of type-only imports, and passes the downward ones', async () => {
    const { code, output } = await cruise(fixture, ['lib', 'actors', 'transports', 'auth', 'host'])
    expect(code).not.toBe(0)
    expect(output).toMatch(/lib-imports-only-lib: lib\/codec\.ts → actors\/actor\.ts/)
    expect(output).toMatch(/transports-imports-only-lib-and-transports: transports\/pipe\.ts → actors\/actor\.ts/)
    expect(output).toMatch(/actors-imports-only-lib-and-actors: actors\/uses-pipe\.ts → transports\/pipe\.ts/)
    expect(output).toMatch(/no-cycle: lib\/(left|right)\.ts/)
    expect(output).not.toMatch(/auth\/verify\.ts →|host\/host\.ts →/)
  }, 120_000)

  it('the tree keeps them: no upward import and no cycle anywhere, with nothing ignored', async () => {
    const { code, output } = await cruise(root, ['lib', 'actors', 'transports', 'auth', 'host', 'entries', 'bin', 'index.ts', 'browser.ts', 'testing.ts'])
    expect(output).toMatch(/no dependency violations found/)
    expect(code).toBe(0)
  }, 120_000)
})
