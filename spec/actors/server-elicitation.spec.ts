import { afterEach, describe, expect, it } from 'vitest'
import { createServer, type McpServer } from '../../actors/server.ts'
import { connect, type McpClient } from '../../actors/client.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { ElicitationContentError, ErrorCode, InvalidParamsError } from '../../lib/jsonrpc/errors.ts'
import type { ElicitParams, ElicitResult } from '../../lib/schema/types.ts'

const AGE: ElicitParams = {
  mode: 'form', message: 'How old are you?',
  requestedSchema: { type: 'object', properties: { age: { type: 'integer', minimum: 0 }, name: { type: 'string' } }, required: ['age'] },
}
const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] })

let mcp: McpServer | undefined
let clients: McpClient[] = []
afterEach(async () => {
  for (const client of clients) await client.close()
  clients = []
  await mcp?.close()
  mcp = undefined
})

/**
 * A server over real HTTP whose `age` tool elicits an integer age: `strict` lets ctx.elicit's
 * rejection fail the call, `caught` records what ctx.elicit resolved or rejected with.
 */
async function start() {
  const server = createServer({ name: 'ages', version: '1' })
  mcp = server
  /** What each run of `caught` got from ctx.elicit: the answer, or the error. */
  const seen: Array<ElicitResult | Error> = []
  server.tool('strict', {}, async (_args, ctx) => {
    const answer = await ctx.elicit(AGE)
    return text(`age ${JSON.stringify(answer.content?.age)} (${answer.action})`)
  })
  server.tool('caught', {}, async (_args, ctx) => {
    try {
      seen.push(await ctx.elicit(AGE))
    } catch (error) {
      seen.push(error as Error)
    }
    return text('done')
  })
  server.tool('retrying', {}, async (_args, ctx) => {
    // Asks again under the same key after a refused answer: the client is asked again.
    for (let attempt = 1; ; attempt++) {
      try {
        const answer = await ctx.elicit(AGE, { key: 'age' })
        return text(`age ${JSON.stringify(answer.content?.age)}`)
      } catch (error) {
        if (!(error instanceof ElicitationContentError) || attempt === 3) throw error
      }
    }
  })
  const http = streamableHttp({ port: 0 })
  await server.listen(http)
  return { url: http.url!, seen }
}

/** A real client over HTTP in `era` whose user answers every form with `answer`. */
async function clientAnswering(url: string, era: 'legacy' | 'modern', answer: ElicitResult): Promise<McpClient> {
  const client = await connect(streamableHttpClient(url), { name: 'form-filler', version: '1' }, { era, elicitation: { form: () => answer } })
  clients.push(client)
  expect(client.era).toBe(era)
  return client
}

describe('issue 20: the server does not check an accepted elicitation\'s content against its requestedSchema', () => {
  describe.each(['legacy', 'modern'] as const)('%s era, over HTTP with a real client', era => {
    it('rejects ctx.elicit with ElicitationContentError when the accepted content does not match', async () => {
      const { url, seen } = await start()
      const client = await clientAnswering(url, era, { action: 'accept', content: { age: 'not-a-number' } })
      expect(await client.callTool('caught')).toEqual(text('done'))
      expect(seen).toHaveLength(1)
      const error = seen[0] as ElicitationContentError
      expect(error).toBeInstanceOf(ElicitationContentError)
      expect(error).toBeInstanceOf(InvalidParamsError)
      expect(error.code).toBe(ErrorCode.InvalidParams)
      expect(error.message).toContain('does not match its requestedSchema: /age: must be integer')
      expect(error.data).toMatchObject({ errors: [{ path: '/age', message: 'must be integer' }] })
    })

    it('fails the call with -32602 when the handler lets the rejection through, and the session serves on', async () => {
      const { url } = await start()
      const client = await clientAnswering(url, era, { action: 'accept', content: { name: 'Ada' } })
      const error = await client.callTool('strict').then(() => undefined, (caught: unknown) => caught)
      expect(error).toBeInstanceOf(InvalidParamsError)
      expect(error).toMatchObject({ code: ErrorCode.InvalidParams, message: expect.stringContaining("must have required property 'age'") })
      expect(await client.callTool('caught')).toEqual(text('done'))
    })

    it('asks the client again when the handler catches the error and asks under the same key', async () => {
      const { url } = await start()
      const answers = [{ action: 'accept', content: { age: 'not-a-number' } }, { action: 'accept', content: { age: 41 } }] as ElicitResult[]
      let asked = 0
      const client = await connect(streamableHttpClient(url), { name: 'form-filler', version: '1' }, { era, elicitation: { form: () => answers[asked++]! } })
      clients.push(client)
      expect(await client.callTool('retrying')).toEqual(text('age 41'))
      expect(asked).toBe(2)
    })

    it('hands matching content through, and no content with a decline', async () => {
      const { url, seen } = await start()
      const good = await clientAnswering(url, era, { action: 'accept', content: { age: 36, name: 'Ada' } })
      expect(await good.callTool('strict')).toEqual(text('age 36 (accept)'))
      const declining = await clientAnswering(url, era, { action: 'decline', content: { age: 'junk' } } as unknown as ElicitResult)
      expect(await declining.callTool('caught')).toEqual(text('done'))
      expect(seen).toEqual([{ action: 'decline' }])
    })
  })
})
