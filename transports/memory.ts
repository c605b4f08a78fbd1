/**
 * The in-process memory pair, public at `rxmcp/transports/memory` as before: it lives in
 * lib/memory-pair.ts (pure, no I/O), so actors (a server mounting another) can make one too.
 */
export { createMemoryPair } from '../lib/memory-pair.ts'
export type { MemoryPairOptions, MemoryTransport } from '../lib/memory-pair.ts'
