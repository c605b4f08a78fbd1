// The typed example server over stdio:
//   npx tsx examples/typed/server.ts
import { stdio } from '../../transports/stdio.ts'
import { createTypedServer } from './typed.ts'

const session = await createTypedServer().listen(stdio())
await session.closed
