/**
 * The "before" side of a before/after pair: `BENCH_BEFORE=<git revision>` checks that revision out
 * once into `.bench/before/<commit>` (a detached worktree sharing this checkout's node_modules),
 * and the stdio server runs then alternate the everything server of that tree with this one's, in
 * the same rounds, so a change is read against the tree it changed and not against a number from
 * another day.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, symlinkSync } from 'node:fs'

/** The checkout of `BENCH_BEFORE` under `root`, made if missing; undefined when BENCH_BEFORE is unset. */
export function beforeTree(root: string): { readonly dir: string; readonly commit: string } | undefined {
  const revision = process.env.BENCH_BEFORE?.trim()
  if (revision === undefined || revision === '') return undefined
  const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim()
  const commit = git('rev-parse', '--verify', `${revision}^{commit}`)
  const dir = `${root}.bench/before/${commit.slice(0, 12)}`
  if (!existsSync(`${dir}/package.json`)) {
    mkdirSync(`${root}.bench/before`, { recursive: true })
    git('worktree', 'prune')
    git('worktree', 'add', '--detach', '--force', dir, commit)
  }
  if (!existsSync(`${dir}/node_modules`)) symlinkSync(`${root}node_modules`, `${dir}/node_modules`, 'dir')
  return { dir, commit }
}
