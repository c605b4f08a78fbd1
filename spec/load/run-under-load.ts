/**
 * Runs vitest beside two CPU-hog processes, to prove the suite is green on a loaded machine (the
 * official SDK client, for one, dispatches notifications a turn late, which only shows under load).
 *
 *   npx tsx spec/load/run-under-load.ts                       # the whole suite
 *   npx tsx spec/load/run-under-load.ts spec/bad-input.spec.ts spec/interop/official-client.spec.ts
 *
 * Arguments go to `vitest run` as they are. Environment:
 *   LOAD_HOGS         busy-loop processes beside the run (default 2)
 *   LOAD_MAX_SECONDS  the hogs' own time limit, whatever happens to this process (default 1200)
 *
 * The hogs are bounded three ways: they exit when this process disconnects from them (it ends,
 * normally or not), when their time limit passes, and this process kills them when vitest exits.
 * The exit code is vitest's.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../..', import.meta.url))
const hogCount = Math.max(0, Number(process.env.LOAD_HOGS ?? 2))
const maxSeconds = Math.max(1, Number(process.env.LOAD_MAX_SECONDS ?? 1200))

/**
 * A hog: spins for 50 ms, yields a turn (so it notices its parent leaving), spins again, until its
 * deadline. The IPC channel is how it knows: `process.connected` turns false when the parent goes.
 */
const HOG = `
const deadline = Date.now() + ${maxSeconds * 1000}
process.on('disconnect', () => process.exit(0))
function spin() {
  const until = Date.now() + 50
  while (Date.now() < until) {}
  if (Date.now() < deadline && process.connected) setImmediate(spin)
  else process.exit(0)
}
spin()
`

const hogs: ChildProcess[] = []
for (let i = 0; i < hogCount; i++) {
  hogs.push(spawn(process.execPath, ['-e', HOG], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }))
}
const stopHogs = () => { for (const hog of hogs) if (hog.exitCode === null && hog.signalCode === null) hog.kill('SIGKILL') }
process.on('exit', stopHogs)
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, () => { stopHogs(); process.exit(130) })

console.error(`run-under-load: ${hogCount} busy-loop processes (pids ${hogs.map(hog => hog.pid).join(', ')}), at most ${maxSeconds} s`)
const vitest = spawn(process.execPath, [fileURLToPath(new URL('../../node_modules/vitest/vitest.mjs', import.meta.url)), 'run', ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' })
vitest.on('exit', (code, signal) => {
  stopHogs()
  process.exit(code ?? (signal !== null ? 1 : 0))
})
