/**
 * Issue 23: the everything contract (spec/helpers/everything-contract.ts) over the node:http
 * listener, the baseline every other place the server runs is held to.
 */
import { afterAll, beforeAll } from 'vitest'
import { createEverythingServer } from '../../examples/everything/everything.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { describeEverythingContract } from '../helpers/everything-contract.ts'

const server = createEverythingServer()
const http = streamableHttp()
beforeAll(async () => { await server.listen(http) })
afterAll(async () => { await server.close() })

describeEverythingContract('over the node:http listener', () => new URL(http.url!))
