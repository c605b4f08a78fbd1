/**
 * The "before" side of a before/after pair: `BENCH_BEFORE=<git revision>` checks that revision out
 * once into `<tmpdir>/rxmcp-bench-before/<commit>` (a detached worktree sharing this checkout's
 * node_modules; outside the repository, so the test runner and the layout checks never see it),
 * and the stdio server runs then alternate the everything server of that tree with this one's, in
 * the same rounds, so a change is read against the tree it changed and not against a number from
 * another day.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** The checkout of `BENCH_BEFORE` (a revision of the repository at `root`), made if missing; undefined when BENCH_BEFORE is unset. */
export function beforeTree(root: string): { readonly dir: string; readonly commit: string } | undefined {
  const revision = process.env.BENCH_BEFORE?.trim()
  if (revision === undefined || revision === '') return undefined
  const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim()
  const commit = git('rev-parse', '--verify', `${revision}^{commit}`)
  const parent = join(tmpdir(), 'rxmcp-bench-before')
  const dir = join(parent, commit.slice(0, 12))
  if (!existsSync(`${dir}/package.json`)) {
    mkdirSync(parent, { recursive: true })
    git('worktree', 'prune')
    git('worktree', 'add', '--detach', '--force', dir, commit)
  }
  if (!existsSync(`${dir}/node_modules`)) symlinkSync(`${root}node_modules`, `${dir}/node_modules`, 'dir')
  return { dir, commit }
}
