/**
 * The {@link RequestInfo} a transport hands on with each message (`ctx.requestInfo`): the request
 * headers as the transport holds them, turned into web-standard `Headers` only when a handler
 * reads them, so that a request nobody asks about costs one small object and no copy.
 */
import type { RequestInfo } from '../lib/transport.ts'

/**
 * Request headers as a transport already holds them: node:http's `rawHeaders` (name, value, name,
 * value, … as received), a web `Headers`, or a record of lower-case names (a request forwarded
 * between instances).
 */
export type HeaderList = readonly string[] | Headers | Readonly<Record<string, string>>

/**
 * The request info of one transport request: `headers` is made from `list` on the first read
 * (and kept), `remoteAddress` is the client's address as the listener resolved it.
 * @example
 * requestInfo('streamable-http', req.rawHeaders, '203.0.113.7').headers?.get('x-api-key')
 */
export function requestInfo(transport: string, list: HeaderList, remoteAddress: string | undefined): RequestInfo {
  return new LazyRequestInfo(transport, list, remoteAddress)
}

class LazyRequestInfo implements RequestInfo {
  /** The source, until `headers` is first read (then dropped: the Headers hold it all). */
  #list: HeaderList | undefined
  /** Made on the first read of `headers`. */
  #headers: Headers | undefined = undefined

  constructor(readonly transport: string, list: HeaderList, readonly remoteAddress: string | undefined) {
    this.#list = list
  }

  get headers(): Headers {
    if (this.#headers === undefined) {
      this.#headers = toHeaders(this.#list!)
      this.#list = undefined
    }
    return this.#headers
  }
}

/**
 * A fresh `Headers` holding every header of `list`. A header `Headers` refuses (a value with a
 * byte node:http lets through but the Fetch standard does not) is left out rather than thrown.
 */
export function toHeaders(list: HeaderList): Headers {
  if (list instanceof Headers) return new Headers(list)
  const headers = new Headers()
  const add = (name: string, value: string) => {
    try { headers.append(name, value) } catch { /* not a header Fetch can hold */ }
  }
  if (Array.isArray(list)) {
    for (let i = 0; i + 1 < list.length; i += 2) add(list[i]!, list[i + 1]!)
  } else {
    for (const [name, value] of Object.entries(list as Readonly<Record<string, string>>)) add(name, value)
  }
  return headers
}
