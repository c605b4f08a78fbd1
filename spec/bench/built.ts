/**
 * The bench's servers run as the JavaScript a user's build makes of them, not through the tsx
 * loader: tsx compiles with esbuild's `keepNames`, which wraps every function made at run time in a
 * call that defines its name (a closure per request pays for it), and no published build does that.
 * `serverArgs(['--import', 'tsx', file, ...args], cwd)` bundles `file` of the tree at `cwd` once
 * (its own sources bundled, npm packages left to the tree's node_modules; into `.bench/built/` of
 * that tree) and answers `[bundle, ...args]`. Every side of a comparison (rxmcp, the floor,
 * the official SDK, fastmcp, the BENCH_BEFORE tree) is built the same way.
 * `BENCH_LOADER=tsx` keeps the loader (what the bench did before, and what `npx tsx server.ts` costs).
 */
import { buildSync } from 'esbuild'
import { join } from 'node:path'

const useTsx = process.env.BENCH_LOADER === 'tsx'
const made = new Map<string, string>()

/** The node arguments that run a server: a `--import tsx` source replaced by its bundle. */
export function serverArgs(args: readonly string[], cwd: string): string[] {
  if (useTsx || args[0] !== '--import' || args[1] !== 'tsx' || args[2] === undefined) return [...args]
  return [bundle(args[2], cwd), ...args.slice(3)]
}

function bundle(file: string, cwd: string): string {
  const source = join(cwd, file)
  let out = made.get(source)
  if (out === undefined) {
    out = join(cwd, '.bench', 'built', file.replace(/\.ts$/, '.mjs'))
    buildSync({ entryPoints: [source], outfile: out, bundle: true, packages: 'external', platform: 'node', format: 'esm', target: 'esnext', logLevel: 'error' })
    made.set(source, out)
  }
  return out
}
