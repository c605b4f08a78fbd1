// The everything server over stdio: `npx tsx examples/everything/server.ts`.
// stdout carries only protocol; anything for people goes to stderr.
import { stdio } from '../../transports/stdio.ts'
import { createEverythingServer } from './everything.ts'

const session = await createEverythingServer().listen(stdio())
await session.closed
