import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { rootsProblem } from '../../lib/schema/input-requests.ts'

/*
 * What both the MRTR rounds (modern.ts) and a task's input requests (task-context.ts) check of an
 * answer the client gave, and the capability object an input request needs: a leaf both import.
 */

/** The result shapes each input method must answer with, checked before a handler sees them. */
export const ANSWER_CHECKS: Readonly<Record<string, (answer: JsonObject) => boolean>> = {
  'elicitation/create': answer => answer.action === 'accept' || answer.action === 'decline' || answer.action === 'cancel',
  'sampling/createMessage': answer => typeof answer.role === 'string' && answer.content !== undefined,
  // MCP roots: every root's uri is a file:// URI; a handler never sees another.
  'roots/list': answer => rootsProblem(answer.roots) === undefined,
}

/** The capability object that names `path` (`['elicitation', 'url']` -> `{ elicitation: { url: {} } }`). */
export function capabilityObject(path: readonly string[]): JsonObject {
  const root: JsonObject = {}
  let node = root
  for (const key of path) {
    const next: JsonObject = {}
    node[key] = next
    node = next
  }
  return root
}
