/**
 * The page's way to the inspector's local server (bin/inspect-ui.ts): `post(op, body)` for a
 * client call, `events(onEvent)` for the event stream. The token comes from the page's body.
 */

/** The token the server put into the page (data-token), sent with every request. */
const token = document.body.dataset.token ?? new URLSearchParams(location.search).get('token') ?? ''

/** An event of the stream (see UiEvent in bin/inspect-ui.ts). */
export type UiEvent = { type: string; t: number; [key: string]: any }

/** A failure the server reported for a call (an MCP error or a local one). */
export class CallError extends Error {
  constructor(message: string, readonly code: unknown, readonly data: unknown) { super(message) }
}

/** Runs one operation of the server's API and resolves with its answer; rejects with a CallError. */
export async function post<T = any>(op: string, body: object = {}): Promise<T> {
  const response = await fetch(`/api/${op}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-rxmcp-token': token },
    body: JSON.stringify(body),
  })
  if (!response.ok) throw new CallError(`${response.status} ${await response.text()}`, response.status, null)
  const answer = await response.json()
  if (answer !== null && typeof answer === 'object' && 'error' in answer && answer.error !== undefined && Object.keys(answer).length === 1) {
    throw new CallError(answer.error.message, answer.error.code, answer.error.data)
  }
  return answer as T
}

/** Follows the event stream (history first); returns what stops it. */
export function events(onEvent: (event: UiEvent) => void, onStatus: (isOpen: boolean) => void): () => void {
  const source = new EventSource(`/events?token=${encodeURIComponent(token)}`)
  source.onmessage = message => onEvent(JSON.parse(message.data) as UiEvent)
  source.onopen = () => onStatus(true)
  source.onerror = () => onStatus(false)
  return () => source.close()
}
