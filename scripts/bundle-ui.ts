/**
 * Bundles the web inspector's page (`ui/main.tsx`, preact) with esbuild into one minified script,
 * `dist/ui/inspector.js`, which `rxmcp inspect --ui` serves (bin/inspect-ui.ts). Part of
 * `npm run build`; fails when the script is larger than {@link MAX_GZIPPED_BYTES} gzipped.
 * Run from sources, bin/inspect-ui.ts calls {@link buildInspectorBundle} itself.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { build } from 'esbuild'

const root = fileURLToPath(new URL('..', import.meta.url))

/** The budget of the whole UI (issue 28): 150 KB gzipped. */
export const MAX_GZIPPED_BYTES = 150 * 1024

/** The page's script, minified, with its styles inside (injected as a style element). */
export async function buildInspectorBundle(): Promise<string> {
  const result = await build({
    entryPoints: [join(root, 'ui', 'main.tsx')],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    loader: { '.css': 'text' },
    logLevel: 'silent',
  })
  return result.outputFiles[0]!.text
}

/** Gzipped size of a script, in bytes. */
export function gzippedSize(text: string): number {
  return gzipSync(Buffer.from(text), { level: 9 }).length
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = join(process.argv[2] ?? join(root, 'dist'), 'ui', 'inspector.js')
  const text = await buildInspectorBundle()
  const size = gzippedSize(text)
  if (size > MAX_GZIPPED_BYTES) throw new Error(`scripts/bundle-ui.ts: the inspector is ${size} bytes gzipped, over ${MAX_GZIPPED_BYTES}`)
  mkdirSync(dirname(out), { recursive: true })
  writeFileSync(out, text)
  process.stdout.write(`dist/ui/inspector.js: ${text.length} bytes, ${size} gzipped\n`)
}
