/**
 * The validator part of `npm run bench` (`BENCH_ONLY=validator`), also runnable alone:
 * `npx tsx spec/bench/validator-bench.ts`. What one JSON Schema validation costs with each of
 * rxmcp's validators, compiled (ajv) and interpreted (@cfworker/json-schema), on the schemas a
 * server checks per call, and what compiling a schema costs; then a whole `tools/call` of the
 * everything server's `add` (input and output checked) with each, client and server in this
 * process over a memory pair, to read the validation against the rest of a call. CPU time
 * (process.cpuUsage), best of 7 rounds per case.
 */
import { pathToFileURL } from 'node:url'
import { compileSchema as compileCompiled } from '../../lib/json-schema.ts'
import { compileSchema as compileInterpreted } from '../../lib/json-schema-interpreted.ts'
import { connectInMemory } from '../../testing.ts'
import { createEverythingServer } from '../../examples/everything/everything.ts'

/** One case: ns of CPU per operation with each validator. */
export interface ValidatorBenchRow { name: string; compiledNs: number; interpretedNs: number }

/** The everything server's `add` tool: the typical small tool input. */
const ADD = { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] }

/** A search tool's input: nested object, enum, bounded array, integer range, a date format, no extra keys. */
const SEARCH = {
  type: 'object',
  properties: {
    query: { type: 'string', minLength: 1, maxLength: 500 },
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
    filters: {
      type: 'object',
      properties: {
        lang: { enum: ['en', 'de', 'fr', 'ja'] },
        tags: { type: 'array', items: { type: 'string', maxLength: 32 }, maxItems: 10 },
        since: { type: 'string', format: 'date' },
      },
      additionalProperties: false,
    },
  },
  required: ['query'],
  additionalProperties: false,
}
const SEARCH_ARGS = { query: 'json schema without eval', limit: 20, filters: { lang: 'en', tags: ['mcp', 'edge', 'workers'], since: '2025-11-25' } }

/** The everything server's elicitation form. */
const FORM = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Name', minLength: 1 },
    age: { type: 'integer', title: 'Age', minimum: 0, default: 30 },
    color: { type: 'string', title: 'Colour', oneOf: [{ const: 'red', title: 'Red' }, { const: 'green', title: 'Green' }], default: 'green' },
    extras: { type: 'array', title: 'Extras', items: { type: 'string', enum: ['tea', 'coffee'] }, default: ['tea'] },
  },
  required: ['name'],
}

/** ns of CPU per call of `run` over `iterations` calls. */
function cpuNs(run: () => unknown, iterations: number): number {
  const start = process.cpuUsage()
  for (let i = 0; i < iterations; i++) run()
  const spent = process.cpuUsage(start)
  return (spent.user + spent.system) * 1000 / iterations
}

/** The best of 7 rounds of each side, after a warmup of both. */
function measure(name: string, compiled: () => unknown, interpreted: () => unknown, iterations: number): ValidatorBenchRow {
  for (let i = 0; i < Math.min(iterations, 2_000); i++) { compiled(); interpreted() }
  let best = { compiledNs: Infinity, interpretedNs: Infinity }
  for (let round = 0; round < 7; round++) {
    best = { compiledNs: Math.min(best.compiledNs, cpuNs(compiled, iterations)), interpretedNs: Math.min(best.interpretedNs, cpuNs(interpreted, iterations)) }
  }
  return { name, ...best }
}

/** A validation per call of each side: `value` against `schema`, compiled once. */
function validation(name: string, schema: object, value: unknown, iterations = 50_000): ValidatorBenchRow {
  const compiled = compileCompiled(schema)
  const interpreted = compileInterpreted(schema)
  if (compiled(value).valid !== interpreted(value).valid) throw new Error(`${name}: the validators disagree`)
  return measure(name, () => compiled(value), () => interpreted(value), iterations)
}

/** ns of CPU per `tools/call` of `add` (both sides in this process), best of 7 rounds, with the server's validator `choice`. */
async function callCost(choice: 'compiled' | 'interpreted', calls: number): Promise<number> {
  await using pair = await connectInMemory(createEverythingServer({ jsonSchemaValidator: choice }))
  const call = () => pair.client.callTool('add', { a: 20, b: 22 })
  for (let i = 0; i < 500; i++) await call()
  let best = Infinity
  for (let round = 0; round < 7; round++) {
    const start = process.cpuUsage()
    for (let i = 0; i < calls; i++) await call()
    const spent = process.cpuUsage(start)
    best = Math.min(best, (spent.user + spent.system) * 1000 / calls)
  }
  return best
}

/** Runs every case; resolves with the rows (ns per operation). */
export async function runValidatorBench(): Promise<ValidatorBenchRow[]> {
  return [
    { name: 'tools/call add (memory, both sides)', compiledNs: await callCost('compiled', 3_000), interpretedNs: await callCost('interpreted', 3_000) },
    validation('add {a, b}: valid', ADD, { a: 20, b: 22 }),
    validation('add {a}: invalid (message built)', ADD, { a: 20 }),
    validation('search (nested, enum, date): valid', SEARCH, SEARCH_ARGS),
    validation('elicitation form: valid', FORM, { name: 'Grace', age: 36, color: 'red', extras: ['tea'] }),
    // A fresh copy each time: compiling the same object again is a cache hit.
    measure('compile search schema', () => compileCompiled(structuredClone(SEARCH)), () => compileInterpreted(structuredClone(SEARCH)), 300),
  ]
}

/** The rows as lines: each side's ns and the interpreted/compiled ratio. */
export function formatValidatorRows(rows: readonly ValidatorBenchRow[]): string[] {
  return rows.map(row => `  ${row.name.padEnd(36)} compiled ${row.compiledNs.toFixed(0).padStart(8)} ns  interpreted ${row.interpretedNs.toFixed(0).padStart(8)} ns  interpreted/compiled ${(row.interpretedNs / row.compiledNs).toFixed(2)}x`)
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  console.log('JSON Schema validation per call (CPU, best of 7 rounds)')
  for (const line of formatValidatorRows(await runValidatorBench())) console.log(line)
}
