/**
 * What holds the heap a step of work leaves behind, by holder: two heap snapshots of this process
 * (node:v8 writeHeapSnapshot, gc'd first), and every object the second has that the first had not
 * (snapshot ids are stable within a process), its own size summed under a name for what holds it:
 * an object by its constructor, a closure and its context by the file that made it, an array or a
 * Map's table by the object and field that own it. For the memory row of `npm run bench`.
 */
import { readFileSync, rmSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { writeHeapSnapshot } from 'node:v8'

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } }
  nodes: number[]
  edges: number[]
  strings: string[]
  locations: number[]
}

/** One row: what holds it, how many objects per step, their bytes per step. */
export interface HeapHolder { holder: string; count: number; bytes: number }

/** The heap `step` leaves behind, per unit (`units`: the sessions it opened), by holder, largest first. */
export async function heapByHolder(gc: () => void, step: () => Promise<void>, units: number): Promise<{ total: number; holders: HeapHolder[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'rxmcp-heap-'))
  try {
    gc(); gc()
    const before = writeHeapSnapshot(join(dir, 'before.heapsnapshot'))
    await step()
    gc(); gc()
    // Both written before either is read: what reading one makes is not in the other.
    const after = writeHeapSnapshot(join(dir, 'after.heapsnapshot'))
    const old = nodeIds(JSON.parse(readFileSync(before, 'utf8')) as Snapshot)
    return holdersOfNew(JSON.parse(readFileSync(after, 'utf8')) as Snapshot, old, units)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

function nodeIds(snapshot: Snapshot): Set<number> {
  const fields = snapshot.snapshot.meta.node_fields
  const width = fields.length, idAt = fields.indexOf('id')
  const ids = new Set<number>()
  for (let i = 0; i < snapshot.nodes.length; i += width) ids.add(snapshot.nodes[i + idAt]!)
  return ids
}

function holdersOfNew(snapshot: Snapshot, old: Set<number>, units: number): { total: number; holders: HeapHolder[] } {
  const { meta } = snapshot.snapshot
  const { nodes, edges, strings } = snapshot
  const width = meta.node_fields.length, edgeWidth = meta.edge_fields.length
  const typeAt = meta.node_fields.indexOf('type'), nameAt = meta.node_fields.indexOf('name'), sizeAt = meta.node_fields.indexOf('self_size')
  const idAt = meta.node_fields.indexOf('id'), edgeCountAt = meta.node_fields.indexOf('edge_count')
  const edgeTypeAt = meta.edge_fields.indexOf('type'), edgeNameAt = meta.edge_fields.indexOf('name_or_index'), edgeToAt = meta.edge_fields.indexOf('to_node')
  const types = meta.node_types[0], edgeTypes = meta.edge_types[0]
  const count = nodes.length / width
  const firstEdge = new Int32Array(count + 1)
  for (let n = 0, e = 0; n < count; n++) { firstEdge[n] = e; e += nodes[n * width + edgeCountAt]! * edgeWidth }
  firstEdge[count] = edges.length
  const isNew = new Uint8Array(count)
  for (let n = 0; n < count; n++) if (!old.has(nodes[n * width + idAt]!)) isNew[n] = 1
  const type = (n: number) => types[nodes[n * width + typeAt]!]!
  const name = (n: number) => strings[nodes[n * width + nameAt]!]!
  const edgeName = (e: number) => {
    const kind = edgeTypes[edges[e + edgeTypeAt]!]!
    return kind === 'element' || kind === 'hidden' ? `[${edges[e + edgeNameAt]}]` : strings[edges[e + edgeNameAt]!]!
  }
  // The first retainer of each new node (a new one preferred: what the step made holds it).
  const retainer = new Int32Array(count).fill(-1), retainedAs = new Int32Array(count).fill(-1)
  for (let n = 0; n < count; n++) {
    for (let e = firstEdge[n]!; e < firstEdge[n + 1]!; e += edgeWidth) {
      const to = edges[e + edgeToAt]! / width
      if (!isNew[to] || edgeTypes[edges[e + edgeTypeAt]!] === 'weak') continue
      if (retainer[to] === -1 || (!isNew[retainer[to]!] && isNew[n])) { retainer[to] = n; retainedAs[to] = e }
    }
  }
  const edgeTo = (n: number, wanted: string) => {
    for (let e = firstEdge[n]!; e < firstEdge[n + 1]!; e += edgeWidth) if (edgeName(e) === wanted) return edges[e + edgeToAt]! / width
    return -1
  }
  const fileOf = (closure: number) => {
    const shared = edgeTo(closure, 'shared')
    const script = shared < 0 ? -1 : edgeTo(shared, 'script_or_debug_info')
    const file = script < 0 ? '' : name(script)
    return file.replace(/^.*\/node_modules\//, '').replace(/^file:\/\/.*?\/((actors|lib|transports|examples|spec)\/)/, '$1') || '?'
  }
  const ownerOf = (n: number): string => {
    const by = retainer[n]!
    if (by < 0) return '?'
    const holder = type(by) === 'closure' ? `closure (${fileOf(by)})` : name(by)
    return `${holder}.${edgeName(retainedAs[n]!)}`
  }
  const holderOf = (n: number): string => {
    const kind = type(n)
    switch (kind) {
      case 'closure': return `closure (${fileOf(n)})`
      case 'string': case 'concatenated string': case 'sliced string': return `string, in ${ownerOf(n)}`
      case 'code': case 'hidden': case 'object shape': case 'number': case 'synthetic': case 'native': return `(V8 and node internals: ${kind})`
      case 'array': return `array, ${ownerOf(n)}`
    }
    if (name(n) === 'system / Context') {
      const by = retainer[n]!
      return by >= 0 && type(by) === 'closure' ? `closure context (${fileOf(by)})` : 'closure context'
    }
    if (name(n) === 'Object' || name(n) === 'Array') return `${name(n)}, ${ownerOf(n)}`
    return name(n)
  }
  const rows = new Map<string, HeapHolder>()
  let total = 0
  for (let n = 0; n < count; n++) {
    if (!isNew[n]) continue
    const size = nodes[n * width + sizeAt]!
    total += size
    const holder = holderOf(n)
    const row = rows.get(holder) ?? { holder, count: 0, bytes: 0 }
    row.count++
    row.bytes += size
    rows.set(holder, row)
  }
  const holders = [...rows.values()].map(row => ({ holder: row.holder, count: row.count / units, bytes: row.bytes / units })).sort((a, b) => b.bytes - a.bytes)
  return { total: total / units, holders }
}
