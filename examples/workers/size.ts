// What a Worker built on rxmcp weighs, bundled as serve.ts bundles it:
//   npx tsx examples/workers/size.ts                          the one-tool Worker (one-tool.ts)
//   npx tsx examples/workers/size.ts examples/workers/worker.ts
// Prints the minified and gzipped size of each module and in all, then what weighs most.
import { bundleWorker, sizeOf } from './bundle.ts'

/** How many origins and files the report lists. */
const TOP = 15

const entry = process.argv[2] ?? 'examples/workers/one-tool.ts'
const size = sizeOf(await bundleWorker(entry))
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`
const lines = [`${entry}: ${kb(size.minified)} minified, ${kb(size.gzipped)} gzipped`]
for (const module of size.modules) lines.push(`  ${module.name}: ${kb(module.minified)} minified, ${kb(module.gzipped)} gzipped`)
lines.push('heaviest origins (minified):')
for (const { origin, bytes } of size.contributors.slice(0, TOP)) lines.push(`  ${kb(bytes).padStart(9)}  ${origin}`)
lines.push('heaviest files (minified):')
for (const { file, bytes } of size.files.slice(0, TOP)) lines.push(`  ${kb(bytes).padStart(9)}  ${file}`)
process.stdout.write(`${lines.join('\n')}\n`)
