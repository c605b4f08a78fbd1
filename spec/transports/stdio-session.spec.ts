import { describe, expect, it } from 'vitest'
import { firstValueFrom } from 'rxjs'
import { fileURLToPath } from 'node:url'
import { connect } from '../../actors/client.ts'
import { stdioClient } from '../../transports/stdio.ts'
import { ConnectionClosedError, TransportError } from '../../lib/jsonrpc/errors.ts'
import { verifies } from '../helpers/verifies.ts'

const tinyServer = fileURLToPath(new URL('../fixtures/tiny-server.ts', import.meta.url))
const spawnTiny = () => stdioClient({ command: process.execPath, args: ['--import', 'tsx', tinyServer], stderr: 'pipe', shutdownGraceMs: 500 })

describe('stdioClient with an rxmcp server child', () => {
  verifies('stdio:stdout-protocol-only', 'talks to a real child process, whose logs go to stderr only', async () => {
    const transport = spawnTiny()
    const stderr = firstValueFrom(transport.stderr)
    const client = await connect(transport, { name: 'test', version: '1' })
    expect(client.serverInfo).toEqual({ name: 'tiny', version: '1.0.0' })
    expect(await client.callTool('echo', { text: 'over a pipe' })).toEqual({ content: [{ type: 'text', text: 'over a pipe' }] })
    expect(await stderr).toContain('tiny server ready')
    await client.close()
    expect(await transport.exited).toMatchObject({ code: 0 })
  }, 20_000)

  it('fails every pending request at once when the child dies', async () => {
    const transport = spawnTiny()
    const client = await connect(transport, { name: 'test', version: '1' })
    const hanging = [client.callTool('hang'), client.callTool('hang')].map(call => call.catch(error => error))
    await client.callTool('exit')
    const errors = await Promise.all(hanging)
    for (const error of errors) {
      expect(error).toBeInstanceOf(ConnectionClosedError)
      expect(error.message).toContain('code 3')
    }
    await expect(client.callTool('echo', { text: 'x' })).rejects.toBeInstanceOf(ConnectionClosedError)
  }, 20_000)

  it('reports a command that cannot start as a TransportError', async () => {
    const error = await connect(stdioClient({ command: 'rxmcp-no-such-command' }), { name: 'test', version: '1' }).catch(e => e)
    expect(error).toBeInstanceOf(ConnectionClosedError)
    expect(error.cause).toBeInstanceOf(TransportError)
  })
})
