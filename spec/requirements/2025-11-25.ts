import { revision } from './types.ts'

/**
 * Every MUST, MUST NOT, REQUIRED and SHALL of the MCP 2025-11-25 specification pages (basic,
 * lifecycle, transports, authorization, utilities, server and client features, and the schema
 * reference where it adds one), with the tests that verify each. Sentences that say the same thing
 * twice on a page (a summary list and its items) are one requirement; the older ids (from before
 * this list was complete) are kept for `verifies()`.
 */
const { must, outOfScope } = revision('2025-11-25')

// Test files, as references start (`<file> > <describe> > `).
const BAD = 'spec/bad-input.spec.ts > bad input > '
const CODEC = 'spec/lib/codec/json-lines.spec.ts > jsonLines > '
/** Each JSON Schema case runs on both validators (compiled and interpreted), so each is named for both. */
const SCHEMA = 'spec/lib/json-schema.spec.ts > compileSchema > '
const bothValidators = (name: string) => [`${SCHEMA}compiled > ${name}`, `${SCHEMA}interpreted > ${name}`]
const LAZY = 'spec/actors/lazy-schema.spec.ts > createServer (JSON Schema compiled lazily) > '
const SERVER = 'spec/actors/server.spec.ts > createServer > '
const SHAPE = 'spec/lib/schema/shape.spec.ts > '
const HTTP = 'spec/transports/streamable-http.spec.ts > streamableHttp > '
const HARD = 'spec/transports/http-hardening.spec.ts > '
const HTTP_CLIENT = 'spec/transports/http-client.spec.ts > streamableHttpClient > '
const INTEROP_HTTP = 'spec/interop/http.spec.ts > '
const OFFICIAL_CLIENT = 'spec/interop/official-client.spec.ts > the official SDK client against the rxmcp everything server > '
const OFFICIAL_SERVER = 'spec/interop/official-server.spec.ts > the rxmcp client against an official SDK McpServer > '
const OFFICIAL_TASKS = 'spec/interop/official-client-tasks.spec.ts > the official SDK v1.32 client\'s experimental tasks against an rxmcp server over Streamable HTTP > '
const OFFICIAL_SERVER_TASKS = 'spec/interop/official-server-tasks.spec.ts > the rxmcp client calling tools as tasks on an official SDK v1.32 server (stdio) > '
const TASKS = 'spec/actors/server-tasks.spec.ts > tasks, legacy era (MCP 2025-11-25) > '
const TASK = 'spec/actors/tasks.spec.ts > '
const CLIENT_TASKS = 'spec/actors/client-tasks.spec.ts > '
const TASK_SUPPORT = 'spec/actors/client-task-support.spec.ts > issue 20: callToolAsTask ignores the tool\'s execution.taskSupport > '
const AUTH_SERVER = 'spec/auth/server.spec.ts > '
const AUTH_CLIENT = 'spec/auth/client.spec.ts > '
const OIDC = 'spec/auth/oidc-provider.spec.ts > our client and server with oidc-provider > '
const CONNECTION = 'spec/lib/connection.spec.ts > createConnection > '
const NEW_BASE = 'spec/requirements/base.spec.ts > '
const NEW_CLIENT = 'spec/requirements/client.spec.ts > '
const NEW_HTTP_CLIENT = 'spec/requirements/http-client.spec.ts > MCP 2025-11-25 Streamable HTTP (client) > '

const AUTH_BEST_PRACTICE = 'an umbrella over OAuth 2.1; the parts an SDK can check are listed as their own requirements'
const UI = 'binds the user interface of the host application; rxmcp hands the request to the application\'s handler and renders nothing'
const CONTENT = 'binds the content the server application supplies; rxmcp sends it as given'

export const requirements2025 = {
  // Base protocol (basic/)
  'base:protocol-and-lifecycle': must('both', 'basic', 'All implementations MUST support the base protocol and lifecycle management components', [
    `${OFFICIAL_CLIENT}negotiates and reads the server info`,
    `${OFFICIAL_SERVER}negotiates the latest version and reads the server info`,
  ]),
  'jsonrpc:json-rpc-2.0': must('both', 'basic#messages', 'All messages between MCP clients and servers MUST follow the JSON-RPC 2.0 specification', [
    `${BAD}answers wrong jsonrpc version as the spec requires and the session lives on`,
    `${BAD}answers missing jsonrpc as the spec requires and the session lives on`,
  ]),
  'jsonrpc:parse-error': must('both', 'basic#messages', 'Invalid JSON is answered with -32700 and id null (JSON-RPC 2.0, which messages MUST follow)', [
    `${BAD}answers invalid JSON as the spec requires and the session lives on`,
  ]),
  'jsonrpc:invalid-request': must('both', 'basic#messages', 'A value that is not a JSON-RPC message is answered with -32600 (JSON-RPC 2.0, which messages MUST follow)', [
    `${BAD}answers a JSON number as the spec requires and the session lives on`,
    `${BAD}answers result and error together as the spec requires and the session lives on`,
  ]),
  'jsonrpc:method-not-found': must('both', 'basic#messages', 'An unknown method is answered with -32601 (JSON-RPC 2.0, which messages MUST follow)', [
    `${BAD}answers an unknown method as the spec requires and the session lives on`,
  ]),
  'jsonrpc:id-string-or-integer': must('both', 'basic#requests', 'Requests MUST include a string or integer ID', [
    `${BAD}answers an object id as the spec requires and the session lives on`,
    `${BAD}answers an id of 1e400 (Infinity once parsed) as the spec requires and the session lives on`,
  ]),
  'jsonrpc:id-not-null': must('both', 'basic#requests', 'Unlike base JSON-RPC, the ID MUST NOT be null', [
    `${BAD}answers a null id as the spec requires and the session lives on`,
  ]),
  'jsonrpc:id-unique': must('both', 'basic#requests', 'The request ID MUST NOT have been previously used by the requestor within the same session (a reused in-flight id is refused)', [
    `${HARD}streamableHttp: every POST that carries requests ends > refuses a request id already in flight on the new POST without disturbing the first`,
  ]),
  'jsonrpc:result-response': must('both', 'basic#result-responses', 'Result responses MUST include the same ID as the request they correspond to, and a result field', [
    `${BAD}[lifecycle:initialize-first] answers ping before initialize`,
    `${NEW_BASE}MCP 2025-11-25 base protocol > answers every request of a burst with its own id`,
  ]),
  'jsonrpc:error-response': must('both', 'basic#error-responses', 'Error responses MUST include the same ID as the request (unless it could not be read) and an error field with an integer code and a message', [
    `${BAD}answers wrong jsonrpc version as the spec requires and the session lives on`,
    `${BAD}answers an unknown method as the spec requires and the session lives on`,
    `spec/transports/http-hardening-edges.spec.ts > streamableHttp: refusals answer the request they refuse > gives an unsupported-version refusal the id of the request it carried`,
  ]),
  'jsonrpc:notification-no-response': must('both', 'basic#notifications', 'The receiver of a notification MUST NOT send a response', [
    `${NEW_BASE}MCP 2025-11-25 base protocol > answers no notification, known or unknown`,
  ]),
  'jsonrpc:notification-no-id': must('both', 'basic#notifications', 'Notifications MUST NOT include an ID', [
    `${NEW_BASE}MCP 2025-11-25 base protocol > sends its notifications without an id`,
  ]),
  'jsonrpc:batch-2025-03-26-only': { ...must('both', 'basic', 'Batches are accepted only in a 2025-03-26 session (2025-03-26 allowed them; later revisions removed them)', [
    `${BAD}answers a batch outside 2025-03-26 as the spec requires and the session lives on`,
    `${BAD}accepts a batch in a 2025-03-26 session`,
  ]), revision: '2025-03-26', url: 'https://modelcontextprotocol.io/specification/2025-03-26/basic#batching' },
  'json-schema:2020-12': must('both', 'basic#schema-dialect', 'Implementations MUST support at least JSON Schema 2020-12, which applies to schemas without an explicit $schema field', [
    ...bothValidators(`reads a schema without $schema as 2020-12 (prefixItems, $defs, unevaluatedProperties)`),
    ...bothValidators(`rejects a draft-07 tuple \`items\` array when no $schema says draft-07`),
  ]),
  'json-schema:declared-dialect': must('both', 'basic#implementation-requirements', 'Clients and servers MUST validate schemas according to their declared or default dialect', [
    ...bothValidators(`honours a draft-06 $schema`),
    ...bothValidators(`honours a 2019-09 $schema`),
  ]),
  'json-schema:unsupported-dialect': must('both', 'basic#implementation-requirements', 'Implementations MUST handle unsupported dialects gracefully by returning an error indicating the dialect is not supported', [
    `${LAZY}refuses an unsupported dialect at registration, compiler or not`,
  ]),
  'json-schema:valid-schemas': must('both', 'basic#schema-validation', 'Schemas MUST be valid according to their declared or default dialect', [
    `${LAZY}refuses a bad schema at registration once the compiler is loaded`,
  ]),
  'meta:reserved-values': must('both', 'basic#_meta', 'Implementations MUST NOT make assumptions about values at the _meta keys MCP reserves'),
  'meta:key-names': must('both', 'basic#_meta', 'A _meta key prefix MUST be dot-separated labels (each starting with a letter, ending with a letter or digit) followed by a slash; a name MUST begin and end with an alphanumeric character unless empty'),
  'icons:mime-types': outOfScope('host UI', 'basic#icons', 'Clients that support rendering icons MUST support at least image/png and image/jpeg', 'rxmcp renders no icons; it passes icon metadata to the application'),
  'icons:untrusted': outOfScope('host UI', 'basic#icons', 'Consumers of icon metadata MUST take security precautions: treat icons as untrusted, allow only https: and data: URIs, and reject unsafe schemes (javascript:, file:, ftp:, ws:) and cross-origin redirects', 'rxmcp never fetches or renders an icon; the application that does is bound by it'),

  // Lifecycle (basic/lifecycle)
  'lifecycle:initialize-first': must('both', 'basic/lifecycle#initialization', 'The initialization phase MUST be the first interaction between client and server (only ping may come before initialize)', [
    `${BAD}answers a request before initialize as the spec requires and the session lives on`,
  ]),
  'lifecycle:client-initialize': must('client', 'basic/lifecycle#initialization', 'The client MUST initiate initialization with an initialize request carrying its protocol version, capabilities and implementation information', [
    `${SERVER}exposes the negotiated session to both sides`,
    `${OFFICIAL_SERVER}negotiates the latest version and reads the server info`,
  ]),
  'lifecycle:server-capabilities': must('server', 'basic/lifecycle#initialization', 'The server MUST respond to initialize with its own capabilities and information', [
    `${SERVER}exposes the negotiated session to both sides`,
    `${OFFICIAL_CLIENT}negotiates and reads the server info`,
  ]),
  'lifecycle:initialized-notification': must('client', 'basic/lifecycle#initialization', 'After successful initialization, the client MUST send an initialized notification', [
    // The server's session reaches `operating` only on notifications/initialized.
    `${SERVER}exposes the negotiated session to both sides`,
  ]),
  'lifecycle:initialized-once': must('server', 'basic/lifecycle#initialization', 'A second initialize on a session is refused (initialization happens once, first)'),
  'lifecycle:client-version': must('client', 'basic/lifecycle#version-negotiation', 'In the initialize request, the client MUST send a protocol version it supports', [
    `${OFFICIAL_SERVER}negotiates the latest version and reads the server info`,
  ]),
  'lifecycle:version-negotiation': must('server', 'basic/lifecycle#version-negotiation', 'The server MUST respond with the requested protocol version if it supports it, and otherwise with another version it supports'),
  'lifecycle:client-rejects-version': must('client', 'schema#initializeresult-protocolversion', 'If the client cannot support the version the server answered, it MUST disconnect'),
  'lifecycle:http-version-header': must('client', 'basic/transports#protocol-version-header', 'Over HTTP, the client MUST include the MCP-Protocol-Version header (the negotiated version) on every request after initialization', [
    `${HTTP_CLIENT}sends MCP-Protocol-Version and the session id in the legacy era, and DELETEs the session on close`,
  ]),
  'lifecycle:capabilities': must('both', 'basic/lifecycle#operation', 'Both parties MUST respect the negotiated protocol version and only use capabilities that were successfully negotiated', [
    `${SERVER}answers -32601 for a method whose capability the server does not offer`,
    `${SHAPE}a legacy session > answers a 2024-11-05 client without the fields later revisions added`,
  ]),

  // Transports (basic/transports)
  'transport:utf-8': must('both', 'basic/transports', 'JSON-RPC messages MUST be UTF-8 encoded', [
    `${BAD}answers invalid UTF-8 as the spec requires and the session lives on`,
    `${CODEC}reports invalid UTF-8 and invalid JSON as ParseError and goes on`,
  ]),
  'stdio:no-embedded-newlines': must('both', 'basic/transports#stdio', 'stdio messages are delimited by newlines and MUST NOT contain embedded newlines', [
    `${CODEC}encodes one payload as one line`,
  ]),
  'stdio:stdout-protocol-only': must('server', 'basic/transports#stdio', 'The server MUST NOT write anything to its stdout that is not a valid MCP message'),
  'stdio:stdin-protocol-only': must('client', 'basic/transports#stdio', 'The client MUST NOT write anything to the server\'s stdin that is not a valid MCP message'),
  'http:single-endpoint': must('server', 'basic/transports#streamable-http', 'The server MUST provide a single HTTP endpoint path that supports both POST and GET', [
    `${HTTP}answers notifications with 202, and requests with progress then the result`,
    `${HTTP}sends server-initiated messages on the standalone GET stream, several of which may be open`,
  ]),
  'http:origin': must('server', 'basic/transports#security-warning', 'Servers MUST validate the Origin header on all incoming connections, and answer an Origin that is present and invalid with 403 Forbidden', [
    `${HTTP}refuses a foreign Origin`,
    'spec/interop/http-abuse.spec.ts > the Streamable HTTP server under abuse > answers a forged session id 404 without echoing it, and a foreign Origin 403',
  ]),
  'http:client-post': must('client', 'basic/transports#sending-messages-to-the-server', 'Every JSON-RPC message the client sends MUST be a new HTTP POST to the MCP endpoint, with an Accept header listing application/json and text/event-stream', [
    `${INTEROP_HTTP}rxmcp HTTP clients against official SDK HTTP servers > runs tools, progress and sampling over Streamable HTTP`,
    `${NEW_HTTP_CLIENT}accepts JSON and SSE on every POST, each carrying one message, and only SSE on its GET`,
  ]),
  'http:post-single-message': must('client', 'basic/transports#sending-messages-to-the-server', 'The body of a POST MUST be a single JSON-RPC request, notification or response', [
    `${NEW_HTTP_CLIENT}accepts JSON and SSE on every POST, each carrying one message, and only SSE on its GET`,
  ]),
  'http:accepted-202': must('server', 'basic/transports#sending-messages-to-the-server', 'For an accepted response or notification, the server MUST return 202 Accepted with no body', [
    `${HTTP}answers notifications with 202, and requests with progress then the result`,
  ]),
  'http:refused-error-status': must('server', 'basic/transports#sending-messages-to-the-server', 'If the server cannot accept the input, it MUST return an HTTP error status code (e.g. 400)', [
    `${HTTP}checks Accept, Content-Type, body size and JSON`,
  ]),
  'http:json-or-sse': must('server', 'basic/transports#sending-messages-to-the-server', 'For a request, the server MUST answer with Content-Type text/event-stream (an SSE stream) or application/json (one JSON object)', [
    `${HTTP}answers with one JSON body in jsonResponse mode`,
    `${HTTP}mints an unguessable session id at initialize and answers on an SSE stream with a priming event`,
  ]),
  'http:client-json-and-sse': must('client', 'basic/transports#sending-messages-to-the-server', 'The client MUST support both JSON and SSE answers to a POST', [
    `${INTEROP_HTTP}rxmcp HTTP clients against official SDK HTTP servers > runs tools, progress and sampling over Streamable HTTP`,
    `${HTTP_CLIENT}bounds what a server sends > fails the request whose JSON answer passes maxMessageSize`,
  ]),
  'http:client-retry-field': must('client', 'basic/transports#sending-messages-to-the-server', 'The client MUST respect the SSE retry field, waiting that many milliseconds before reconnecting'),
  'http:get-accept': must('client', 'basic/transports#listening-for-messages-from-the-server', 'A client GET MUST include an Accept header listing text/event-stream', [
    `${NEW_HTTP_CLIENT}accepts JSON and SSE on every POST, each carrying one message, and only SSE on its GET`,
  ]),
  'http:get-sse-or-405': must('server', 'basic/transports#listening-for-messages-from-the-server', 'The server MUST answer a GET with text/event-stream, or with 405 Method Not Allowed when it offers no stream', [
    `${HTTP}sends server-initiated messages on the standalone GET stream, several of which may be open`,
    `${HTTP}serves each POST on its own in stateless mode, for the official client too`,
  ]),
  'http:get-no-responses': must('server', 'basic/transports#listening-for-messages-from-the-server', 'The server MUST NOT send a JSON-RPC response on the GET stream unless resuming a stream of an earlier request'),
  'http:no-broadcast': must('server', 'basic/transports#multiple-connections', 'The server MUST send each JSON-RPC message on only one of the connected streams, never broadcast it across several'),
  'http:event-id-unique': must('server', 'basic/transports#resumability-and-redelivery', 'SSE event IDs, when present, MUST be unique across all streams of the session', [
    `${HARD}streamableHttp under a hostile or slow peer > binds event ids to their session: another session cannot replay them, whatever the session ids share`,
  ]),
  'http:replay-own-stream': must('server', 'basic/transports#resumability-and-redelivery', 'The server MUST NOT replay messages that would have been delivered on a different stream', [
    `${HTTP}replays exactly the missed events of a stream after Last-Event-ID, then goes on live`,
  ]),
  'http:session-id-ascii': must('server', 'basic/transports#session-management', 'The session ID MUST only contain visible ASCII characters (0x21 to 0x7E)', [
    `${HTTP}mints an unguessable session id at initialize and answers on an SSE stream with a priming event`,
  ]),
  'http:client-session-id-secure': must('client', 'basic/transports#session-management', 'The client MUST handle the session ID in a secure manner'),
  'http:client-session-header': must('client', 'basic/transports#session-management', 'A client given an MCP-Session-Id at initialization MUST include it on all of its subsequent HTTP requests', [
    `${HTTP_CLIENT}sends MCP-Protocol-Version and the session id in the legacy era, and DELETEs the session on close`,
  ]),
  'http:terminated-session-404': must('server', 'basic/transports#session-management', 'After terminating a session, the server MUST answer requests carrying its ID with 404 Not Found', [
    `${HTTP}refuses an unknown session id`,
    `${HTTP}ends a session on DELETE`,
  ]),
  'http:client-404-reinitializes': must('client', 'basic/transports#session-management', 'A client that gets 404 for a request with an MCP-Session-Id MUST start a new session with a new initialize without a session ID', [
    `${HTTP_CLIENT}starts a new session transparently when the server forgets the old one`,
  ]),
  'http:bad-version-400': must('server', 'basic/transports#protocol-version-header', 'A request with an invalid or unsupported MCP-Protocol-Version MUST be answered with 400 Bad Request', [
    `${HTTP}refuses an unsupported MCP-Protocol-Version`,
  ]),
  'transport:custom': must('both', 'basic/transports#custom-transports', 'Custom transports MUST preserve the JSON-RPC message format and the lifecycle requirements', [
    'spec/transports/websocket.spec.ts > websocket > serves the official SDK WebSocketClientTransport unchanged (subprotocol mcp)',
  ]),

  // Cancellation, ping, progress (basic/utilities/)
  'cancellation:only-in-flight': must('both', 'basic/utilities/cancellation#behavior-requirements', 'Cancellation notifications MUST only reference requests previously issued in the same direction and believed to be in progress (requestId MUST name such a request)'),
  'cancellation:not-initialize': must('client', 'basic/utilities/cancellation#behavior-requirements', 'The initialize request MUST NOT be cancelled by clients', [
    `${CONNECTION}ignores notifications/cancelled for an incoming initialize`,
  ]),
  'cancellation:tasks-use-tasks-cancel': must('both', 'basic/utilities/cancellation#behavior-requirements', 'Task-augmented requests MUST be cancelled with tasks/cancel, not notifications/cancelled', [
    `${CLIENT_TASKS}client.callToolAsTask against an rxmcp server (legacy era) > does not cancel when unsubscribed; tasks.cancel does, and tasks.result then fails with TaskCancelledError`,
  ]),
  'cancellation:races': must('both', 'basic/utilities/cancellation#timing-considerations', 'Both parties MUST handle the race of a cancellation arriving after the request completed gracefully', [
    `${NEW_BASE}MCP 2025-11-25 base protocol > ignores a cancellation that arrives after the response`,
  ]),
  'cancellation:no-response': must('server', 'basic/utilities/cancellation#behavior-requirements', 'A cancelled request gets no response (receivers SHOULD stop and not answer; rxmcp does)'),
  'ping:empty-response': must('both', 'basic/utilities/ping#behavior-requirements', 'The receiver of a ping MUST respond promptly with an empty response', [
    `${BAD}[lifecycle:initialize-first] answers ping before initialize`,
  ]),
  'progress:token-type': must('both', 'basic/utilities/progress#progress-flow', 'Progress tokens MUST be a string or integer value, unique across all active requests', [
    `${NEW_CLIENT}MCP 2025-11-25 progress (client) > gives each request in flight its own string or integer progress token`,
  ]),
  'progress:increasing': must('both', 'basic/utilities/progress#progress-flow', 'The progress value MUST increase with each notification, even if the total is unknown'),
  'progress:token': must('both', 'basic/utilities/progress#behavior-requirements', 'Progress notifications MUST only reference tokens provided in an active request and associated with an in-progress operation'),
  'progress:task-token': must('both', 'basic/utilities/progress#behavior-requirements', 'For a task-augmented request, progress notifications MUST keep using its progressToken throughout the task\'s lifetime, after CreateTaskResult too', [
    `${TASKS}keeps the call's progress token inside the task, with the related-task _meta`,
  ]),
  'progress:task-stops': must('both', 'basic/utilities/progress#behavior-requirements', 'Progress notifications for a task MUST stop once it reaches a terminal status'),
  'progress:stops-after-completion': must('both', 'basic/utilities/progress#implementation-notes', 'Progress notifications MUST stop after completion', [
    `${NEW_BASE}MCP 2025-11-25 base protocol > sends no progress after the response, even when the handler reports some`,
  ]),

  // Tasks (basic/utilities/tasks)
  'tasks:capability': must('both', 'basic/utilities/tasks#capabilities', 'Servers and clients that support task-augmented requests MUST declare a tasks capability naming the request types they take as tasks', [
    `${TASKS}declares the tasks capability and each tool's taskSupport`,
    `${OFFICIAL_TASKS}sees the tasks capability and the tools' taskSupport`,
  ]),
  'tasks:client-needs-capability': must('client', 'basic/utilities/tasks#tool-level-negotiation', 'Without tasks.requests.tools.call in the server\'s capabilities, clients MUST NOT call its tools as tasks', [
    `${CLIENT_TASKS}client.callToolAsTask, refusals > refuses locally when a legacy server declared no tasks for tools/call`,
  ]),
  'tasks:client-forbidden': must('client', 'basic/utilities/tasks#tool-level-negotiation', 'Clients MUST NOT invoke a tool as a task when its execution.taskSupport is absent or "forbidden"', [
    `${TASK_SUPPORT}refuses to call as a task a listed tool whose taskSupport is "forbidden" or absent, with ToolTaskSupportError and nothing sent`,
    `${TASK_SUPPORT}sends a call of a tool it has not listed, or listed before the server said its tools changed, and the server answers -32601`,
  ]),
  'tasks:client-required': must('client', 'basic/utilities/tasks#tool-level-negotiation', 'Clients MUST invoke a tool as a task when its execution.taskSupport is "required"', [
    `${TASK_SUPPORT}refuses a plain call of a listed tool whose taskSupport is "required" (callTool and callTool$), with nothing sent, and runs it as a task`,
  ]),
  'tasks:required-32601': must('server', 'basic/utilities/tasks#tool-level-negotiation', 'Servers MUST answer -32601 to a plain call of a tool whose taskSupport is "required"', [
    `${TASKS}refuses a task for a forbidden tool and a plain call of a required one with -32601`,
    `${OFFICIAL_TASKS}refuses a task-less call of a tool that requires one with -32601`,
  ]),
  'tasks:streamable-http': must('both', 'basic/utilities/tasks#getting-tasks', 'Task requests and their streams MUST still comply with the Streamable HTTP transport', [
    `${OFFICIAL_TASKS}streams a task-augmented call: taskCreated, then the result`,
    `${TASKS}keeps tasks reachable across POSTs of a stateless HTTP server (no session to bind them to)`,
  ]),
  'tasks:status-optional': must('client', 'basic/utilities/tasks#task-status-notification', 'Requestors MUST NOT rely on receiving notifications/tasks/status', [
    `${OFFICIAL_SERVER_TASKS}follows a task from working to completed and ends with its result (tasks/get, then tasks/result)`,
  ]),
  'tasks:undeclared-normal': must('both', 'basic/utilities/tasks#task-support-and-handling', 'Receivers that do not declare the task capability for a request type MUST process such requests normally, ignoring task metadata'),
  'tasks:id': must('both', 'basic/utilities/tasks#task-id-requirements', 'Task IDs MUST be strings generated by the receiver, unique among all tasks it controls', [
    `${TASK}createMemoryTaskStore > makes unguessable base64url ids by default`,
  ]),
  'tasks:begin-working': must('both', 'basic/utilities/tasks#task-status-lifecycle', 'Tasks MUST begin in the working status', [
    `${TASK}createTask > starts in working with its defaults`,
    `${TASK}createMemoryTaskStore > creates a task in working, readable by its owner only`,
  ]),
  'tasks:valid-transitions': must('both', 'basic/utilities/tasks#task-status-lifecycle', 'Receivers MUST only move tasks along the valid paths (working to input_required or a terminal status, input_required back to working or to a terminal status)', [
    `${TASK}createMemoryTaskStore > refuses an illegal path between non-terminal statuses`,
  ]),
  'tasks:terminal-final': must('both', 'basic/utilities/tasks#task-status-lifecycle', 'Tasks in completed, failed or cancelled MUST NOT transition to any other status', [
    `${TASK}createTask > refuses and reports a message that would leave a terminal state, keeping the result`,
    `${TASK}createMemoryTaskStore > stores updates and keeps a terminal task final`,
  ]),
  'tasks:input-request-related': must('both', 'basic/utilities/tasks#input-required-status', 'A request the receiver sends for a task in input_required MUST carry the related-task metadata of that task (an elicitation shares the task ID of the tool call)', [
    `${TASKS}asks the client inside a task: input_required meanwhile, the related-task _meta on the request`,
  ]),
  'tasks:timestamps': must('both', 'basic/utilities/tasks#ttl-and-resource-management', 'Receivers MUST include ISO 8601 createdAt and lastUpdatedAt timestamps in all task responses', [
    `${TASK}taskToWire > uses the wire names and ISO 8601 times`,
  ]),
  'tasks:ttl': must('both', 'basic/utilities/tasks#ttl-and-resource-management', 'Receivers MUST include the actual ttl (or null for unlimited) in tasks/get responses', [
    `${TASK}taskToWire > gives ttl null for unlimited retention`,
  ]),
  'tasks:create-task-result': must('both', 'basic/utilities/tasks#result-retrieval', 'Receivers that accept a task-augmented request MUST answer with a CreateTaskResult', [
    `${TASKS}runs a task-augmented call as a task: CreateTaskResult at once, tasks/get, tasks/result waits, status notifications`,
  ]),
  'tasks:result-blocks': must('both', 'basic/utilities/tasks#result-retrieval', 'tasks/result for a working or input_required task MUST wait until the task reaches a terminal status', [
    `${TASKS}runs a task-augmented call as a task: CreateTaskResult at once, tasks/get, tasks/result waits, status notifications`,
  ]),
  'tasks:result-exact': must('both', 'basic/utilities/tasks#task-execution-errors', 'tasks/result for a terminal task MUST return exactly what the underlying request would have returned: its result, or the same JSON-RPC error', [
    `${TASKS}fails a task with the JSON-RPC error, and with a tool result that is an error`,
    `${OFFICIAL_TASKS}reports a failed tool result as a failed task, whose result is the tool's error result`,
  ]),
  'tasks:related-task-meta': must('both', 'basic/utilities/tasks#related-task-metadata', 'All requests, notifications and responses related to a task MUST carry io.modelcontextprotocol/related-task with its taskId in _meta, the tasks/result response included', [
    `${TASKS}keeps the call's progress token inside the task, with the related-task _meta`,
    `${TASKS}runs a task-augmented call as a task: CreateTaskResult at once, tasks/get, tasks/result waits, status notifications`,
  ]),
  'tasks:task-id-param': must('both', 'basic/utilities/tasks#associating-task-related-messages', 'For tasks/get, tasks/result and tasks/cancel, the taskId parameter MUST identify the task; receivers MUST ignore related-task metadata there'),
  'tasks:list-cursor': must('both', 'basic/utilities/tasks#task-listing', 'Receivers MUST include a nextCursor in tasks/list when more tasks are available', [
    `${TASK}createMemoryTaskStore > lists an owner's tasks a page at a time with opaque cursors`,
  ]),
  'tasks:list-opaque-cursor': must('client', 'basic/utilities/tasks#task-listing', 'Requestors MUST treat tasks/list cursors as opaque tokens'),
  'tasks:get-implies-list': must('both', 'basic/utilities/tasks#task-listing', 'A task retrievable with tasks/get for a requestor MUST be retrievable with tasks/list for that requestor', [
    `${TASKS}lists the session's own tasks a page at a time; another session finds none of them`,
  ]),
  'tasks:cancel': must('both', 'basic/utilities/tasks#task-cancellation', 'Receivers MUST reject tasks/cancel for a terminal task with -32602, MUST move a cancelled task to cancelled before answering, and the task MUST stay cancelled', [
    `${TASKS}cancels: the answer is the task, cancelled; the handler is aborted; a second cancel and tasks/result fail`,
    `${OFFICIAL_TASKS}cancels a running task: cancelled at once, the handler aborted, a second cancel refused`,
  ]),
  'tasks:protocol-errors': must('both', 'basic/utilities/tasks#protocol-errors', 'Receivers MUST answer an unknown taskId (tasks/get, tasks/result, tasks/cancel) and an invalid tasks/list cursor with -32602', [
    `${TASKS}lists the session's own tasks a page at a time; another session finds none of them`,
    `${TASK}createMemoryTaskStore > rejects an unknown cursor with invalid params`,
  ]),
  'tasks:bind-context': must('both', 'basic/utilities/tasks#task-isolation-and-access-control', 'When an authorization context is provided, receivers MUST bind tasks to it', [
    `${AUTH_SERVER}tasks belong to the principal > a task made by alice is hers in any exchange or session, and unknown to bob`,
  ]),
  'tasks:unguessable-ids': must('both', 'basic/utilities/tasks#task-isolation-and-access-control', 'Without context binding, receivers MUST generate cryptographically secure task IDs with enough entropy to prevent guessing', [
    `${TASK}createMemoryTaskStore > makes unguessable base64url ids by default`,
  ]),
  'tasks:other-context': must('both', 'basic/utilities/tasks#task-isolation-and-access-control', 'With context binding, receivers MUST reject tasks/get, tasks/result and tasks/cancel for tasks of another context, and tasks/list MUST only list the requestor\'s own tasks', [
    `${AUTH_SERVER}tasks belong to the principal > a task made by alice is hers in any exchange or session, and unknown to bob`,
    `${TASKS}lists the session's own tasks a page at a time; another session finds none of them`,
  ]),

  // Elicitation (client/elicitation)
  'elicitation:no-sensitive-form': outOfScope('application', 'client/elicitation#user-interaction-model', 'Servers MUST NOT use form mode to request sensitive information (passwords, API keys, access tokens, payment credentials), and MUST use URL mode for it', 'binds what the server application asks for; rxmcp cannot tell what is sensitive'),
  'elicitation:client-ui': outOfScope('host UI', 'client/elicitation#user-interaction-model', 'MCP clients MUST show which server asks, offer decline and cancel, let users review form answers, and show the target host of a URL', UI),
  'elicitation:capability': must('client', 'client/elicitation#capabilities', 'Clients that support elicitation MUST declare the elicitation capability during initialization, with at least one mode (form or url)', [
    `${SERVER}sends sampling, elicitation and roots requests to the client handlers`,
  ]),
  'elicitation:supported-modes': must('server', 'client/elicitation#capabilities', 'Servers MUST NOT send elicitation requests with modes the client does not support', [
    `${SERVER}refuses URL elicitation and sampling with tools when the client declared only the basic capability`,
  ]),
  'elicitation:request-params': must('server', 'client/elicitation#elicitation-requests', 'Every elicitation request MUST include a message; a form request MUST say mode "form" or omit it and include requestedSchema', [
    `${OFFICIAL_CLIENT}answers sampling, elicitation and roots requests from the server`,
  ]),
  'elicitation:form-defaults': must('client', 'client/elicitation#form-mode-elicitation-requests', 'Form answers carry the schema defaults for fields the user left out (requestedSchema defaults; rxmcp fills them so the server sees complete forms)'),
  'elicitation:default-form': must('client', 'client/elicitation#elicitation-requests', 'Clients MUST treat requests without a mode field as form mode', [
    `${NEW_CLIENT}MCP 2025-11-25 elicitation (client) > takes an elicitation request without a mode as form mode`,
  ]),
  'elicitation:url-params': must('server', 'client/elicitation#url-mode-elicitation-requests', 'URL mode requests MUST specify mode "url", a message, a valid url and an elicitationId'),
  'elicitation:complete-notification': must('server', 'client/elicitation#completion-notifications-for-url-mode-elicitation', 'notifications/elicitation/complete MUST only go to the client that got the elicitation, with its elicitationId', [
    `${SERVER}runs URL elicitation and tells the client when it completes`,
  ]),
  'elicitation:unknown-complete': must('client', 'client/elicitation#completion-notifications-for-url-mode-elicitation', 'Clients MUST ignore completion notifications for unknown or already completed elicitation IDs'),
  'elicitation:url-required-error-use': outOfScope('application', 'client/elicitation#url-elicitation-required-error', 'The server MUST NOT return URLElicitationRequiredError except when URL mode elicitation is required', 'binds when the server application raises the error; rxmcp only carries it'),
  'elicitation:url-required-error-data': must('server', 'client/elicitation#url-elicitation-required-error', 'URLElicitationRequiredError (-32042) MUST list the URL mode elicitations (each with an elicitationId) to complete before a retry'),
  'elicitation:state-per-user': outOfScope('application', 'client/elicitation#statefulness', 'Elicitation state MUST be bound to users, not session IDs alone, stored safely, with the user identified from MCP authorization where possible', 'binds the state a server application keeps between elicitation and completion; rxmcp keeps none of it'),
  'elicitation:no-self-authorization': outOfScope('application', 'client/elicitation#url-mode-elicitation-for-oauth-flows', 'Servers MUST NOT rely on URL mode elicitation to authorize users for themselves', 'binds how the application authorizes users (rxmcp\'s own authorization is OAuth 2.1, see auth:*)'),
  'elicitation:third-party-credentials': outOfScope('application', 'client/elicitation#understanding-the-distinction', 'Third-party credentials MUST NOT transit the MCP client; the server MUST NOT use the client\'s credentials for a third party nor send URL-obtained credentials to the client; the user MUST authorize the server directly', 'binds the server application\'s third-party flows'),
  'elicitation:server-errors': must('server', 'client/elicitation#error-handling', 'Servers MUST answer -32042 (URLElicitationRequiredError) when a request cannot proceed until a URL elicitation completes', [
    'spec/lib/jsonrpc/error-codes.spec.ts > issue 20: -32002 and -32042 are answered to modern-era requests > keeps -32042 for a legacy session, and an rxmcp client in the modern era completes the call through its URL elicitation handler',
  ]),
  'elicitation:client-undeclared-mode': must('client', 'client/elicitation#error-handling', 'Clients MUST answer an elicitation/create with a mode they did not declare with -32602', [
    `${NEW_CLIENT}MCP 2025-11-25 elicitation (client) > answers an elicitation in a mode it did not declare with -32602`,
  ]),
  'elicitation:bind-identity': must('server', 'client/elicitation#security-considerations', 'Servers MUST bind elicitation requests to the client and user identity'),
  'elicitation:show-requester': outOfScope('host UI', 'client/elicitation#security-considerations', 'Clients MUST clearly indicate which server is requesting information', UI),
  'elicitation:safe-url-content': outOfScope('application', 'client/elicitation#safe-url-handling', 'Servers MUST NOT put sensitive user information in an elicitation URL, nor a pre-authenticated URL', 'binds the URL the server application builds'),
  'elicitation:safe-url-handling': outOfScope('host UI', 'client/elicitation#safe-url-handling', 'Clients MUST handle elicitation URLs carefully: no pre-fetching, no opening without consent, the full URL shown, opened so neither client nor model can read the page', 'rxmcp never fetches or opens an elicitation URL; it hands it to the application, whose UI is bound by this'),
  'elicitation:verify-user': outOfScope('application', 'client/elicitation#phishing', 'Servers MUST NOT trust client-provided user identification, MUST verify that the user completing a URL elicitation is the one who started it, resiliently to a modified URL', 'binds the server application\'s web flow behind the URL'),

  // Roots (client/roots)
  'roots:capability': must('client', 'client/roots#capabilities', 'Clients that support roots MUST declare the roots capability during initialization', [
    `${SERVER}exposes the negotiated session to both sides`,
  ]),
  'roots:list-changed': must('client', 'client/roots#root-list-changes', 'When roots change, clients that declared listChanged MUST send notifications/roots/list_changed', [
    `${SERVER}tells the server when roots change`,
  ]),
  'roots:file-uri': must('client', 'client/roots#root', 'A root uri MUST be a file:// URI'),
  'roots:client-security': outOfScope('application', 'client/roots#security-considerations', 'Clients MUST only expose roots with appropriate permissions, validate root URIs against path traversal, control access and monitor root accessibility', 'binds which directories the application exposes; rxmcp sends the roots it is given (its host checks them against allowed roots)'),

  // Sampling (client/sampling)
  'sampling:tools-capability': must('client', 'client/sampling#tools-in-sampling', 'Clients MUST declare sampling.tools to receive tool-enabled sampling requests', [
    `${SERVER}passes sampling tools through when the client declares sampling.tools`,
  ]),
  'sampling:no-tools-without-capability': must('server', 'client/sampling#tools-in-sampling', 'Servers MUST NOT send tool-enabled sampling requests to clients that did not declare sampling.tools', [
    `${SERVER}refuses URL elicitation and sampling with tools when the client declared only the basic capability`,
  ]),
  'sampling:capability': must('client', 'client/sampling#capabilities', 'Clients that support sampling MUST declare the sampling capability during initialization', [
    `${SERVER}sends sampling, elicitation and roots requests to the client handlers`,
  ]),
  'sampling:tool-results-only': must('both', 'client/sampling#tool-result-messages', 'A user message that contains tool results MUST contain only tool results'),
  'sampling:tool-use-balanced': must('both', 'client/sampling#tool-use-and-result-balance', 'Every assistant message with tool uses MUST be followed by a user message of only tool results, one per tool use with a matching toolUseId, before any other message'),
  'sampling:tool-choice': outOfScope('model', 'client/sampling#tool-choice-modes', 'With toolChoice "required" the model MUST use at least one tool; with "none" it MUST NOT use any', 'binds the model the host runs; rxmcp passes toolChoice to it'),
  'sampling:sensitive-data': outOfScope('application', 'client/sampling#security-considerations', 'Both parties MUST handle sensitive data appropriately', 'binds what the applications put in and do with sampling messages'),
  'sampling:undeclared-tools-error': must('client', 'schema#createmessagerequestparams-tools', 'The client MUST return an error when tools or toolChoice is given but it did not declare sampling.tools', [
    `${NEW_CLIENT}issue 20: the client samples with tools it never declared (sampling.tools) > answers a sampling request with tools it did not declare sampling.tools for with -32602, and runs no sampling`,
  ]),
  'sampling:model-hints-order': outOfScope('host UI', 'schema#modelpreferences-hints', 'When several model hints are given, the client MUST evaluate them in order', 'binds the host\'s model selection; rxmcp passes the hints to the application'),
  'elicitation:id-opaque': must('client', 'schema#elicitrequesturlparams-elicitationid', 'The client MUST treat an elicitationId as an opaque value'),

  // Prompts, resources, tools (server/)
  'prompts:capability': must('server', 'server/prompts#capabilities', 'Servers that support prompts MUST declare the prompts capability', [
    `${SERVER}exposes the negotiated session to both sides`,
  ]),
  'prompts:content-encoding': outOfScope('application', 'server/prompts#image-content', 'Image and audio data in prompts MUST be base64 with a valid MIME type; embedded resources MUST carry a URI, a MIME type and text or base64 blob', CONTENT),
  'prompts:validate': must('both', 'server/prompts#security', 'Implementations MUST carefully validate all prompt inputs and outputs', [
    'spec/actors/typed-api.spec.ts > McpServer.prompt with a Standard Schema > [prompts:required-arguments] answers -32602 for arguments the schema refuses or a missing required one',
  ]),
  'prompts:required-arguments': must('server', 'server/prompts#error-handling', 'Missing required prompt arguments are answered with -32602'),
  'resources:capability': must('server', 'server/resources#capabilities', 'Servers that support resources MUST declare the resources capability', [
    `${SERVER}exposes the negotiated session to both sides`,
  ]),
  'resources:uri-schemes': outOfScope('application', 'server/resources#custom-uri-schemes', 'Custom URI schemes MUST follow RFC 3986', 'binds the URIs the server application registers'),
  'resources:validate-uris': must('server', 'server/resources#security-considerations', 'Servers MUST validate all resource URIs', [
    `${SERVER}[resources:not-found] answers an unknown resource with -32002`,
  ]),
  'resources:binary-encoding': must('server', 'server/resources#security-considerations', 'Binary resource data MUST be properly encoded (rxmcp encodes what it reads itself, skill files, as base64; other blobs come from the application)', [
    'spec/actors/skills.spec.ts > serveSkills over a directory, and client.skills > loads a skill when asked: SKILL.md verified, supporting files read and verified on demand, binary ones too',
  ]),
  'resources:not-found': must('server', 'server/resources#error-handling', 'An unknown resource is answered with -32002'),
  'resources:subscribe': must('server', 'server/resources#subscriptions', 'Subscribers get notifications/resources/updated'),
  'tools:capability': must('server', 'server/tools#capabilities', 'Servers that support tools MUST declare the tools capability', [
    `${SERVER}exposes the negotiated session to both sides`,
  ]),
  'tools:input-schema': must('server', 'server/tools#tool', 'A tool\'s inputSchema MUST be a valid JSON Schema object (not null)', [
    'spec/actors/typed-api.spec.ts > McpServer.tool with a Standard Schema > throws at registration when the converter fails or the schema is not of an object',
  ]),
  'tools:annotations-untrusted': outOfScope('host UI', 'server/tools#tool', 'Clients MUST consider tool annotations untrusted unless they come from trusted servers', 'binds decisions the host takes on annotations; rxmcp passes them on and decides nothing by them'),
  'tools:output-schema': must('server', 'server/tools#output-schema', 'With an outputSchema, servers MUST provide structured results that conform to it'),
  'tools:server-security': must('server', 'server/tools#security-considerations', 'Servers MUST validate tool inputs, control access, rate limit tool calls and sanitize outputs (rxmcp\'s part: input validation, and the permissions and rateLimit middleware)', [
    'spec/actors/middleware.spec.ts > permissions > lists only what a principal may use, and answers a hidden target as a missing one',
    'spec/actors/middleware.spec.ts > rateLimit > spends a token per request per principal, refills over time, and answers -31029 with retryAfterMs when spent',
  ]),
  'tools:unknown-tool': must('server', 'server/tools#error-handling', 'An unknown tool is a protocol error -32602'),
  'tools:input-validation': must('server', 'server/tools#error-handling', 'Input validation failures are tool results with isError'),
  'tools:list-changed': must('server', 'server/tools#list-changed-notification', 'notifications/tools/list_changed when the tool set changes'),

  // Utilities (server/utilities/)
  'completion:capability': must('server', 'server/utilities/completion#capabilities', 'Servers that support completions MUST declare the completions capability', [
    `${SERVER}exposes the negotiated session to both sides`,
  ]),
  'completion:security': outOfScope('application', 'server/utilities/completion#security', 'Implementations MUST validate completion inputs, rate limit, control access to sensitive suggestions and prevent information disclosure', 'binds which suggestions the application offers; rxmcp\'s rateLimit and permissions middleware apply to completion/complete as to any method'),
  'completion:max-100': must('server', 'server/utilities/completion', 'At most 100 completion values per response'),
  'logging:capability': must('server', 'server/utilities/logging#capabilities', 'Servers that emit log message notifications MUST declare the logging capability', [
    `${SERVER}exposes the negotiated session to both sides`,
  ]),
  'logging:no-secrets': outOfScope('application', 'server/utilities/logging#security', 'Log messages MUST NOT contain credentials, personal information or internal details that could aid attacks', 'binds what the application logs'),
  'logging:level-filter': must('server', 'server/utilities/logging', 'Messages below the set level are not sent'),
  'pagination:client-page-size': must('client', 'server/utilities/pagination#pagination-model', 'Clients MUST NOT assume a fixed page size', [
    'spec/lib/operators/paginate.spec.ts > paginate > emits the items of every page in order and completes after the last page',
  ]),
  'pagination:client-opaque-cursors': must('client', 'server/utilities/pagination#implementation-guidelines', 'Clients MUST treat cursors as opaque tokens: no assumptions about their format, no parsing or changing them, no keeping them across sessions', [
    `${OFFICIAL_SERVER}lists everything (the official McpServer sends one page)`,
    'spec/interop/server-everything.spec.ts > the rxmcp client against @modelcontextprotocol/server-everything > lists tools, resources, templates and prompts across pages',
  ]),
  'pagination:bad-cursor': must('server', 'server/utilities/pagination#error-handling', 'An invalid cursor is answered with -32602'),

  // Authorization (basic/authorization)
  'auth:alternative-transports': must('both', 'basic/authorization#protocol-requirements', 'Implementations over alternative transports MUST follow established security best practices for their protocol (rxmcp: the WebSocket listener authenticates like HTTP)', [
    `${AUTH_SERVER}bearerAuth on the WebSocket listener > refuses an upgrade without a valid token with the challenge, and gives the socket's requests the principal`,
  ]),
  'auth:as-oauth-2.1': outOfScope('authorization server', 'basic/authorization#overview', 'Authorization servers MUST implement OAuth 2.1 for confidential and public clients, and offer RFC 8414 metadata or OpenID Connect Discovery', 'binds the authorization server, which rxmcp is not'),
  'auth:prm': must('server', 'basic/authorization#authorization-server-location', 'MCP servers MUST implement OAuth 2.0 Protected Resource Metadata (RFC 9728), whose authorization_servers field names at least one authorization server', [
    `${AUTH_SERVER}bearerAuth on the Streamable HTTP listener > serves the Protected Resource Metadata at the path-based and root well-known URLs`,
  ]),
  'auth:prm-discovery': must('server', 'basic/authorization#protected-resource-metadata-discovery-requirements', 'MCP servers MUST make their metadata discoverable: resource_metadata in the WWW-Authenticate header of a 401, or the well-known URI', [
    `${AUTH_SERVER}bearerAuth on the Streamable HTTP listener > answers a request without a token 401 with a challenge naming the metadata and the required scopes`,
  ]),
  'auth:client-prm': must('client', 'basic/authorization#protected-resource-metadata-discovery-requirements', 'Clients MUST use Protected Resource Metadata: the URL from WWW-Authenticate when present, else the well-known URIs in order (path-based, then root)', [
    `${AUTH_CLIENT}oauthFetch > discovery > reads the Protected Resource Metadata named by the WWW-Authenticate header, before any well-known URL`,
    `${AUTH_CLIENT}oauthFetch > discovery > falls back to the well-known PRM URLs when the one in the header fails`,
    `${AUTH_CLIENT}oauthFetch > discovery > tries the path-based PRM URL, then the root one`,
  ]),
  'auth:client-challenge-scopes': must('client', 'basic/authorization#protected-resource-metadata-discovery-requirements', 'Clients MUST treat the scopes in the challenge as authoritative, assuming no set relationship with scopes_supported', [
    `${AUTH_CLIENT}oauthFetch > registration and the authorization code grant > asks for the challenge scope`,
  ]),
  'auth:client-401': must('client', 'basic/authorization#protected-resource-metadata-discovery-requirements', 'Clients MUST parse WWW-Authenticate headers and respond appropriately to 401 responses', [
    `${AUTH_CLIENT}oauthFetch > discovery > reads the Protected Resource Metadata named by the WWW-Authenticate header, before any well-known URL`,
    `${AUTH_CLIENT}parseChallenges > gives nothing for no header`,
  ]),
  'auth:client-as-metadata': must('client', 'basic/authorization#authorization-server-metadata-discovery', 'Clients MUST support both RFC 8414 and OpenID Connect discovery, trying the well-known endpoints in the given priority order (with and without a path in the issuer)', [
    `${AUTH_CLIENT}oauthFetch > discovery > tries oauth-authorization-server, then openid-configuration, for an issuer without a path`,
    `${AUTH_CLIENT}oauthFetch > discovery > finds metadata for an issuer with a path in the MCP order (oidc-appended)`,
  ]),
  'auth:cimd-client': must('client', 'basic/authorization#implementation-requirements', 'Clients using Client ID Metadata Documents MUST host them at an https URL with a path, with client_id, client_name and redirect_uris, the client_id equal to the URL', [
    `${AUTH_CLIENT}oauthFetch > registration and the authorization code grant > uses a client ID metadata document URL as client_id where the server supports them`,
    `${AUTH_CLIENT}oauthFetch > registration and the authorization code grant > refuses a client metadata URL that is not https at once`,
  ]),
  'auth:cimd-as': outOfScope('authorization server', 'basic/authorization#implementation-requirements', 'Authorization servers MUST validate a fetched metadata document (client_id equal to its URL, redirect URIs, structure)', 'binds the authorization server'),
  'auth:resource-parameter': must('client', 'basic/authorization#resource-parameter-implementation', 'Clients MUST send the RFC 8707 resource parameter (the canonical URI of the MCP server) in both authorization and token requests, whether or not the authorization server supports it', [
    `${AUTH_CLIENT}oauthFetch > registration and the authorization code grant > registers dynamically, then sends PKCE S256 and the resource in both the authorization and the token request`,
    `${AUTH_CLIENT}oauthFetch > client credentials > gets a token with the client credentials grant and the resource`,
  ]),
  'auth:bearer-every-request': must('client', 'basic/authorization#token-requirements', 'Clients MUST send the token in the Authorization header of every HTTP request to the server', [
    `${AUTH_CLIENT}oauthFetch with streamableHttpClient > connects and calls a tool through an authorizing front (legacy era)`,
    `${AUTH_CLIENT}oauthFetch with streamableHttpClient > connects and calls a tool through an authorizing front (modern era)`,
  ]),
  'auth:no-token-in-query': must('client', 'basic/authorization#token-requirements', 'Access tokens MUST NOT be included in the URI query string'),
  'auth:validate-tokens': must('server', 'basic/authorization#token-handling', 'Servers MUST validate access tokens (OAuth 2.1 section 5.2), including that they were issued for this server as audience, before processing a request', [
    `${AUTH_SERVER}bearerAuth on the Streamable HTTP listener > refuses expired, wrong-audience, wrong-issuer, unsigned, alg-none, tampered and malformed tokens with 401 invalid_token, echoing none of them`,
    `${OIDC}discovers, registers, authorizes through the login and consent forms, calls, refreshes, and is refused on the wrong audience`,
  ]),
  'auth:invalid-token-401': must('server', 'basic/authorization#token-handling', 'Invalid or expired tokens MUST receive a 401 response (OAuth 2.1 section 5.3)', [
    `${AUTH_SERVER}bearerAuth on the Streamable HTTP listener > refuses expired, wrong-audience, wrong-issuer, unsigned, alg-none, tampered and malformed tokens with 401 invalid_token, echoing none of them`,
  ]),
  'auth:client-own-as-tokens': must('client', 'basic/authorization#token-handling', 'Clients MUST NOT send the server tokens other than those issued by its authorization server'),
  'auth:own-tokens-only': must('server', 'basic/authorization#token-handling', 'Servers MUST only accept tokens valid for their own resources, and MUST NOT accept or pass on any other', [
    `${AUTH_SERVER}bearerAuth on the Streamable HTTP listener > refuses expired, wrong-audience, wrong-issuer, unsigned, alg-none, tampered and malformed tokens with 401 invalid_token, echoing none of them`,
  ]),
  'auth:error-statuses': must('server', 'basic/authorization#error-handling', 'Servers MUST answer authorization errors with the right status: 401, 403 (insufficient scope), 400', [
    `${AUTH_SERVER}bearerAuth on the Streamable HTTP listener > answers a request without a token 401 with a challenge naming the metadata and the required scopes`,
    `${AUTH_SERVER}bearerAuth on the Streamable HTTP listener > answers 403 insufficient_scope naming the scopes an operation needs, and serves it once the token has them (step-up)`,
  ]),
  'auth:oauth-security': outOfScope('both', 'basic/authorization#security-considerations', 'Implementations MUST follow the OAuth 2.1 security best practices (section 7) and communication security (section 1.5)', AUTH_BEST_PRACTICE),
  'auth:token-storage': must('client', 'basic/authorization#token-theft', 'Clients and servers MUST store tokens securely (rxmcp: the client\'s token file is 0600)', [
    `${AUTH_CLIENT}fileTokenStore > creates the file with mode 0600 and reads back what it wrote`,
    `${AUTH_CLIENT}fileTokenStore > narrows an existing file to 0600 on write`,
  ]),
  'auth:as-security': outOfScope('authorization server', 'basic/authorization#communication-security', 'Authorization servers MUST rotate public clients\' refresh tokens, serve every endpoint over HTTPS, include code_challenge_methods_supported in OIDC metadata, validate exact redirect URIs, avoid open redirects, weigh CIMD security and show the redirect host', 'binds the authorization server'),
  'auth:redirect-uris': must('client', 'basic/authorization#communication-security', 'Redirect URIs MUST be localhost or https, and registered with the authorization server'),
  'auth:pkce': must('client', 'basic/authorization#authorization-code-protection', 'Clients MUST use PKCE with S256 when technically capable', [
    `${AUTH_CLIENT}oauthFetch > registration and the authorization code grant > registers dynamically, then sends PKCE S256 and the resource in both the authorization and the token request`,
  ]),
  'auth:pkce-support': must('client', 'basic/authorization#authorization-code-protection', 'Clients MUST verify PKCE support in the metadata (code_challenge_methods_supported) and refuse to proceed without it'),
  'auth:proxy-consent': outOfScope('application', 'basic/authorization#confused-deputy-problem', 'MCP proxy servers using static client IDs MUST obtain user consent for each dynamically registered client before forwarding to third-party authorization servers', 'binds proxies that broker third-party OAuth; rxmcp\'s gateway does not'),
  'auth:no-passthrough': must('server', 'basic/authorization#access-token-privilege-restriction', 'The MCP server MUST NOT pass through the token it received from the client'),
} as const
