import { InvalidParamsError } from './jsonrpc/errors.ts'
import type { JsonObject } from './jsonrpc/message.ts'

/**
 * Opaque pagination cursors: the position in a list, sealed so that a client cannot forge one by
 * accident. A cursor names the list it belongs to, so a tools cursor handed to prompts/list is
 * refused. Any cursor that does not decode is answered with -32602, as MCP requires.
 */
export function encodeCursor(list: string, offset: number): string {
  return toBase64Url(`${list}:${offset}`)
}

/**
 * The offset a cursor stands for. `undefined` means the first page.
 * @throws InvalidParamsError for a cursor this server did not make for `list`.
 */
export function decodeCursor(list: string, cursor: unknown): number {
  if (cursor === undefined || cursor === null) return 0
  if (typeof cursor !== 'string' || cursor.length > 200) throw badCursor()
  let text: string
  try { text = fromBase64Url(cursor) } catch { throw badCursor() }
  const colon = text.lastIndexOf(':')
  if (colon < 0 || text.slice(0, colon) !== list) throw badCursor()
  const digits = text.slice(colon + 1)
  if (!/^[0-9]{1,9}$/.test(digits)) throw badCursor()
  return Number(digits)
}

/**
 * One page of `items` from a cursor, with the cursor of the next page when there is one.
 * @throws InvalidParamsError for a bad cursor.
 */
export function pageOf<T>(list: string, items: readonly T[], cursor: unknown, pageSize: number): { items: T[]; nextCursor?: string } {
  const offset = decodeCursor(list, cursor)
  if (offset > items.length) throw badCursor()
  const end = offset + pageSize
  const page = items.slice(offset, end)
  return end < items.length ? { items: page, nextCursor: encodeCursor(list, end) } : { items: page }
}

function badCursor(): InvalidParamsError {
  return new InvalidParamsError('Invalid params: invalid cursor')
}

function toBase64Url(text: string): string {
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

function fromBase64Url(text: string): string {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) throw new Error('not base64url')
  return atob(text.replace(/-/g, '+').replace(/_/g, '/'))
}

/** A list result with its `nextCursor` when there is one (a last page carries none). */
export function withCursor<R extends JsonObject>(result: R, nextCursor: string | undefined): R {
  if (nextCursor !== undefined) (result as JsonObject).nextCursor = nextCursor
  return result
}
