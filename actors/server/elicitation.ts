/**
 * The server's check of what comes back from `elicitation/create`, in either era (a live
 * response in the legacy era, an MRTR input response in the modern one, or a task's answer).
 * The answer is the client's input like any other, and what it says is the user's: a handler
 * that asked for `{ age: integer }` must never receive `{ age: "not-a-number" }`.
 */
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { ElicitationContentError } from '../../lib/jsonrpc/errors.ts'
import { isJsonObject } from '../../lib/jsonrpc/guards.ts'
import { jsonSchemaSource, type JsonSchemaCompiler, type JsonSchemaSource } from '../../lib/validator.ts'
import type { ElicitParams, ElicitResult } from '../../lib/schema/types.ts'

const ACTIONS: ReadonlySet<unknown> = new Set(['accept', 'decline', 'cancel'])

/**
 * The answer to `params` as the handler may see it, or an {@link ElicitationContentError}:
 *
 * - the answer is an object whose `action` is `accept`, `decline` or `cancel`;
 * - an accepted form elicitation (no `mode`, or `form`) has `content` that is an object matching
 *   the `requestedSchema` (validated with the server's JSON Schema validator, `jsonSchema`, loaded
 *   on the first check);
 * - content reaches the handler only there: a decline, a cancel, or a URL-mode accept comes without
 *   it (MCP: `content` is "only present when action is accept and mode was form"), so nothing
 *   unchecked slips through beside an answer that is not an accept.
 *
 * `key` names the input request in the error (modern era). A `requestedSchema` the validator
 * refuses (the handler's own mistake) rejects with its TypeError. `jsonSchema` is the server's
 * validator; only URL elicitations, which carry no schema, are asked without it (then the default
 * choice would serve).
 */
export function checkElicitResult(params: ElicitParams, answer: unknown, jsonSchema: JsonSchemaSource | undefined, key?: string): Promise<ElicitResult> {
  if (!isJsonObject(answer) || !ACTIONS.has(answer.action)) {
    return Promise.reject(new ElicitationContentError(`Invalid params: ${where(key)} has no valid action (accept, decline or cancel)`, withKey(key, { errors: [{ path: '/action', message: 'must be accept, decline or cancel' }] })))
  }
  const isForm = params.mode === undefined || params.mode === 'form'
  if (answer.action !== 'accept' || !isForm) {
    if (answer.content === undefined) return Promise.resolve(answer as unknown as ElicitResult)
    const { content: _dropped, ...rest } = answer
    return Promise.resolve(rest as unknown as ElicitResult)
  }
  const schema = (params as { requestedSchema?: unknown }).requestedSchema
  if (!isJsonObject(schema)) return Promise.resolve(answer as unknown as ElicitResult)
  const source = jsonSchema ?? jsonSchemaSource()
  const compiler = source.loaded()
  return (compiler !== undefined ? Promise.resolve(compiler) : source.load()).then(loaded => checkContent(loaded, schema, answer, key))
}

/** The accepted answer when its content matches `schema`; throws ElicitationContentError otherwise. */
function checkContent(compiler: JsonSchemaCompiler, schema: JsonObject, answer: JsonObject, key: string | undefined): ElicitResult {
  const content = answer.content
  if (!isJsonObject(content)) {
    throw new ElicitationContentError(`Invalid params: ${where(key)} accepts with no content object`, withKey(key, { errors: [{ path: '', message: 'content must be an object' }] }))
  }
  // The schema is the server's own (trusted); the content is the client's (validated).
  const verdict = compiler.compileSchema(schema)(content)
  if (verdict.valid) return answer as unknown as ElicitResult
  throw new ElicitationContentError(
    `Invalid params: ${where(key)} accepts content that does not match its requestedSchema: ${verdict.message}`,
    withKey(key, { errors: verdict.errors.map(({ path, message }) => ({ path, message })) }),
  )
}

function where(key: string | undefined): string {
  return key === undefined ? 'the elicitation/create result' : `inputResponses.${key}`
}

function withKey(key: string | undefined, data: JsonObject): JsonObject {
  return key === undefined ? data : { key, ...data }
}
