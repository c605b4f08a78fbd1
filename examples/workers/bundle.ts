/**
 * Bundles a Worker module for workerd with esbuild: ESM for the browser platform (a Worker has
 * `fetch`, Web Crypto and web streams, and no `node:`), minified, split into modules so that what
 * loads lazily stays out of the main one. ajv, the JSON Schema compiler, is left out: it compiles
 * validators with `new Function`, which Workers refuse, so it must never be bundled.
 */
import { build, type Metafile } from 'esbuild'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'

/** One module of the bundle: its name (relative to the bundle's directory) and its code. */
export interface WorkerModule {
  readonly name: string
  readonly code: string
}

/** A bundled Worker: its modules (the main one first) and esbuild's metafile. */
export interface WorkerBundle {
  readonly modules: readonly WorkerModule[]
  readonly metafile: Metafile
}

/** Packages kept out of every Worker bundle (see the module's comment). */
export const EXCLUDED_PACKAGES = ['ajv', 'ajv/*'] as const

/** The repository's root: esbuild resolves the example's imports (rxjs, the sources) from it. */
const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/**
 * Bundles `entry` (a path from the repository's root, or absolute) in memory.
 * @example
 * const { modules } = await bundleWorker('examples/workers/worker.ts')
 */
export async function bundleWorker(entry: string): Promise<WorkerBundle> {
  const result = await build({
    entryPoints: { worker: entry }, absWorkingDir: ROOT, outdir: 'out',
    bundle: true, format: 'esm', platform: 'browser', target: 'es2022',
    // What Cloudflare's own tooling asks packages for (a package may ship a build for workerd), and
    // rxjs's ES2015 build: its default is ES5 with tslib's helpers, 4 KB more minified.
    conditions: ['workerd', 'worker', 'browser', 'es2015'],
    minify: true, splitting: true, write: false, metafile: true, logLevel: 'silent',
    external: [...EXCLUDED_PACKAGES],
  })
  const outDir = `${ROOT}out/`
  const modules = result.outputFiles.map(file => ({ name: file.path.slice(outDir.length), code: file.text }))
  // workerd runs the first module of its list: the entry's.
  modules.sort((a, b) => Number(b.name === 'worker.js') - Number(a.name === 'worker.js'))
  return { modules, metafile: result.metafile }
}

/** What a bundle weighs, deployed: in all, per module, and by what went into it. */
export interface BundleSize {
  /** Bytes of every module, minified. */
  readonly minified: number
  /** Bytes of every module, each gzipped (zlib's default level), summed: what the upload limit counts. */
  readonly gzipped: number
  readonly modules: readonly { readonly name: string; readonly minified: number; readonly gzipped: number }[]
  /**
   * Minified bytes by origin, heaviest first: a package (`rxjs`), or a folder of the sources
   * (`actors/server`, `transports`).
   */
  readonly contributors: readonly { readonly origin: string; readonly bytes: number }[]
  /** Minified bytes by source file, heaviest first. */
  readonly files: readonly { readonly file: string; readonly bytes: number }[]
}

/** The package an input belongs to (whatever `node_modules` it was found in), or its source folder. */
function originOf(input: string): string {
  const at = input.lastIndexOf('node_modules/')
  if (at >= 0) {
    const parts = input.slice(at + 'node_modules/'.length).split('/')
    return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!
  }
  const slash = input.lastIndexOf('/')
  return slash < 0 ? '.' : input.slice(0, slash)
}

/** A file's name as the report shows it: from the package or the repository's root. */
function fileOf(input: string): string {
  const at = input.lastIndexOf('node_modules/')
  return at >= 0 ? input.slice(at) : input
}

/**
 * Weighs a bundle (see {@link BundleSize}).
 * @example
 * const size = sizeOf(await bundleWorker('examples/workers/one-tool.ts'))
 * console.log(size.gzipped, size.contributors.slice(0, 5))
 */
export function sizeOf(bundle: WorkerBundle): BundleSize {
  const modules = bundle.modules.map(module => ({ name: module.name, minified: byteLength(module.code), gzipped: gzipSync(module.code).byteLength }))
  const byOrigin = new Map<string, number>()
  const byFile = new Map<string, number>()
  for (const output of Object.values(bundle.metafile.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      byOrigin.set(originOf(input), (byOrigin.get(originOf(input)) ?? 0) + bytesInOutput)
      byFile.set(fileOf(input), (byFile.get(fileOf(input)) ?? 0) + bytesInOutput)
    }
  }
  const heaviest = <K extends string>(map: Map<string, number>, key: K) =>
    [...map].sort((a, b) => b[1] - a[1]).map(([name, bytes]) => ({ [key]: name, bytes }) as { [P in K]: string } & { bytes: number })
  return {
    minified: modules.reduce((sum, module) => sum + module.minified, 0),
    gzipped: modules.reduce((sum, module) => sum + module.gzipped, 0),
    modules,
    contributors: heaviest(byOrigin, 'origin'),
    files: heaviest(byFile, 'file'),
  }
}

const byteLength = (text: string) => new TextEncoder().encode(text).byteLength
