/**
 * The MUSTs of the MCP specification that tests verify, by id. A test names the requirement it
 * checks with `verifies(id, ...)`; an id not listed here fails the run, so the list and the tests
 * cannot drift apart.
 */
const BASE = 'https://modelcontextprotocol.io/specification/2025-11-25'

export const requirements = {
  'jsonrpc:parse-error': { url: `${BASE}/basic`, behaviour: 'Invalid JSON is answered with -32700 and id null' },
  'jsonrpc:invalid-request': { url: `${BASE}/basic`, behaviour: 'A value that is not a JSON-RPC message is answered with -32600' },
  'jsonrpc:id-not-null': { url: `${BASE}/basic#requests`, behaviour: 'Request ids MUST NOT be null' },
  'jsonrpc:id-unique': { url: `${BASE}/basic#requests`, behaviour: 'A request id MUST NOT be reused in a session' },
  'jsonrpc:method-not-found': { url: `${BASE}/basic`, behaviour: 'An unknown method is answered with -32601' },
  'jsonrpc:batch-2025-03-26-only': { url: 'https://modelcontextprotocol.io/specification/2025-03-26/basic#batching', behaviour: 'Batches are accepted only in a 2025-03-26 session' },
  'lifecycle:initialize-first': { url: `${BASE}/basic/lifecycle#initialization`, behaviour: 'Only ping may precede initialize' },
  'lifecycle:initialized-once': { url: `${BASE}/basic/lifecycle#initialization`, behaviour: 'A second initialize is refused' },
  'lifecycle:version-negotiation': { url: `${BASE}/basic/lifecycle#version-negotiation`, behaviour: 'The server answers the client version if supported, else its latest' },
  'lifecycle:client-rejects-version': { url: `${BASE}/basic/lifecycle#version-negotiation`, behaviour: 'A client that does not support the server version disconnects' },
  'lifecycle:capabilities': { url: `${BASE}/basic/lifecycle#capability-negotiation`, behaviour: 'Both parties respect negotiated capabilities' },
  'cancellation:no-response': { url: `${BASE}/basic/utilities/cancellation`, behaviour: 'A cancelled request gets no response' },
  'cancellation:not-initialize': { url: `${BASE}/basic/utilities/cancellation`, behaviour: 'The initialize request MUST NOT be cancelled' },
  'progress:token': { url: `${BASE}/basic/utilities/progress`, behaviour: 'Progress notifications carry the request progressToken' },
  'tools:unknown-tool': { url: `${BASE}/server/tools#error-handling`, behaviour: 'An unknown tool is a protocol error -32602' },
  'tools:input-validation': { url: `${BASE}/server/tools#error-handling`, behaviour: 'Input validation failures are tool results with isError' },
  'tools:output-schema': { url: `${BASE}/server/tools#output-schema`, behaviour: 'structuredContent MUST conform to the outputSchema' },
  'tools:list-changed': { url: `${BASE}/server/tools#list-changed-notification`, behaviour: 'notifications/tools/list_changed when the tool set changes' },
  'resources:not-found': { url: `${BASE}/server/resources#error-handling`, behaviour: 'An unknown resource is answered with -32002' },
  'resources:subscribe': { url: `${BASE}/server/resources#subscriptions`, behaviour: 'Subscribers get notifications/resources/updated' },
  'prompts:required-arguments': { url: `${BASE}/server/prompts#error-handling`, behaviour: 'Missing required arguments are -32602' },
  'completion:max-100': { url: `${BASE}/server/utilities/completion`, behaviour: 'At most 100 completion values per response' },
  'logging:level-filter': { url: `${BASE}/server/utilities/logging`, behaviour: 'Messages below the set level are not sent' },
  'pagination:bad-cursor': { url: `${BASE}/server/utilities/pagination#error-handling`, behaviour: 'An invalid cursor is answered with -32602' },
  'elicitation:form-defaults': { url: `${BASE}/client/elicitation`, behaviour: 'Form answers carry the schema defaults for fields left out' },
  'stdio:stdout-protocol-only': { url: `${BASE}/basic/transports#stdio`, behaviour: 'The server MUST NOT write anything to stdout that is not an MCP message' },
} as const

export type RequirementId = keyof typeof requirements
