import { revision } from './types.ts'

/**
 * Every MUST, MUST NOT, REQUIRED and SHALL of the MCP 2026-07-28 specification pages (basic,
 * versioning, patterns, transports, authorization, server and client features, caching, and the
 * schema reference where it adds one), with the tests that verify each. Ids end in `@2026-07-28`;
 * a sentence restated on several pages (the `_meta` rule on every feature page, x-mcp-header on the
 * transport and tools pages, resultType on every result) is one requirement.
 */
const { must, outOfScope } = revision('2026-07-28')

// Test files, as references start (`<file> > <describe> > `).
const MODERN = 'spec/actors/server-modern.spec.ts > createServer (MCP 2026-07-28): '
const HTTP_MODERN = 'spec/transports/streamable-http-modern.spec.ts > streamableHttp (MCP 2026-07-28) > '
const HTTP = 'spec/transports/streamable-http.spec.ts > streamableHttp > '
const CLIENT_MODERN = 'spec/actors/client-modern-mrtr.spec.ts > modern requests > '
const CLIENT_ROUNDS = 'spec/actors/client-modern-mrtr.spec.ts > modern requests: the input_required loop > '
const CLIENT_HTTP = 'spec/transports/http-client-modern.spec.ts > streamableHttpClient in the modern era > '
const LISTEN = 'spec/actors/client-modern-listen.spec.ts > listen (modern era) > '
const CACHE = 'spec/actors/client-modern-cache.spec.ts > the client cache (virtual time) > '
const ERA = 'spec/actors/client-modern-era.spec.ts > '
const OWN_HTTP = 'spec/actors/client-modern-own-server.spec.ts > the rxmcp client against the rxmcp server over Streamable HTTP (modern era) > '
const OWN_MEMORY = 'spec/actors/client-modern-own-server.spec.ts > the rxmcp client against the rxmcp server over a memory pair (modern era) > '
const V2_SERVER = 'spec/interop/sdk-v2-server.spec.ts > the official SDK v2 client (modern, pinned 2026-07-28) against the rxmcp server over Streamable HTTP > '
const V2_SERVER_STDIO = 'spec/interop/sdk-v2-server.spec.ts > the official SDK v2 client (modern, pinned 2026-07-28) against the rxmcp server over stdio > '
const V2_CLIENT = 'spec/interop/sdk-v2-client.spec.ts > the rxmcp client (auto era) against the official SDK v2 server over Streamable HTTP > '
const TASKS = 'spec/actors/server-tasks.spec.ts > tasks, modern era (io.modelcontextprotocol/tasks) > '
const CONNECTION = 'spec/lib/connection.spec.ts > createConnection > '
const CODEC = 'spec/lib/codec/json-lines.spec.ts > jsonLines > '
/** Each JSON Schema case runs on both validators (compiled and interpreted), so each is named for both. */
const SCHEMA = 'spec/lib/json-schema.spec.ts > compileSchema > '
const bothValidators = (name: string) => [`${SCHEMA}compiled > ${name}`, `${SCHEMA}interpreted > ${name}`]
const LAZY = 'spec/actors/lazy-schema.spec.ts > createServer (JSON Schema compiled lazily) > '
const AUTH_SERVER = 'spec/auth/server.spec.ts > '
const AUTH_CLIENT = 'spec/auth/client.spec.ts > '
const OIDC = 'spec/auth/oidc-provider.spec.ts > our client and server with oidc-provider > '
const NEW = 'spec/requirements/'
const TEARDOWN = 'spec/actors/server-listen-teardown.spec.ts > issue 20: a server ends a listen stream without notifications/cancelled > '
const ERROR_CODES = 'spec/lib/jsonrpc/error-codes.spec.ts > issue 20: rxmcp emits error codes from the JSON-RPC reserved range > '
const RETIRED = 'spec/lib/jsonrpc/error-codes.spec.ts > issue 20: -32002 and -32042 are answered to modern-era requests > '

const AUTH_BEST_PRACTICE = 'an umbrella over OAuth 2.1 and the security considerations page; the parts an SDK can check are listed as their own requirements'
const UI = 'binds the user interface of the host application; rxmcp hands the request to the application\'s handler and renders nothing'
const CONTENT = 'binds the content the server application supplies; rxmcp sends it as given'
const DISCOVER = `${MODERN}server/discover > answers server/discover without initialize: versions, capabilities, instructions, identity, default cache hints`

export const requirements2026 = {
  // Base protocol (basic/)
  'base:protocol@2026-07-28': must('both', 'basic', 'All implementations MUST support the base protocol, versioning, and the message patterns', [
    `${V2_SERVER}negotiates the modern era through server/discover`,
    `${V2_CLIENT}detects the modern era through server/discover`,
  ]),
  'jsonrpc:json-rpc-2.0@2026-07-28': must('both', 'basic#messages', 'All messages between MCP clients and servers MUST follow the JSON-RPC 2.0 specification', [
    `${HTTP}checks Accept, Content-Type, body size and JSON`,
    `${V2_SERVER}lists tools and calls one, every request carrying the modern _meta and no session`,
  ]),
  'jsonrpc:id-string-or-integer@2026-07-28': must('both', 'basic#requests', 'Requests MUST include a string or integer ID, never null', [
    'spec/lib/jsonrpc/guards.spec.ts > checkMessage > [jsonrpc:id-not-null] refuses a request with a null id and answers id null',
  ]),
  'jsonrpc:id-outstanding@2026-07-28': must('both', 'basic#requests', 'The request ID MUST NOT match the ID of any other request the sender issued and has no response for yet', [
    `${CONNECTION}[jsonrpc:id-unique] refuses a request reusing an in-flight id and still answers the first`,
  ]),
  'jsonrpc:result-response@2026-07-28': must('both', 'basic#result-responses', 'Result responses MUST include the same ID as the request and a result field', [
    `${HTTP_MODERN}answers a POST without a session id in JSON, with resultType and no session`,
  ]),
  'jsonrpc:result-type@2026-07-28': must('server', 'basic#result-responses', 'The result MUST include a resultType field (servers of this revision include it on every result)', [
    `${HTTP_MODERN}answers a POST without a session id in JSON, with resultType and no session`,
    DISCOVER,
  ]),
  'jsonrpc:result-type-set@2026-07-28': must('both', 'basic#resulttype', 'The supported resultType values MUST be the core ones plus those of the extensions advertised in capabilities', [
    `${CLIENT_MODERN}rejects a task for a method tasks do not cover with InvalidResultError, and the client lives on`,
    `${TASKS}answers resultType "task" to a client that declared the extension, and tasks/get inlines the result`,
  ]),
  'jsonrpc:result-type-unknown@2026-07-28': must('client', 'basic#resulttype', 'A resultType the client does not recognize MUST be considered invalid', [
    `${CLIENT_MODERN}rejects an unknown resultType with InvalidResultError, and the client lives on`,
  ]),
  'jsonrpc:result-type-absent@2026-07-28': must('client', 'basic#resulttype', 'Clients MUST treat an absent resultType (a server of an earlier revision) as "complete"', [
    `${CLIENT_MODERN}takes a result without resultType (an earlier-revision server) as complete`,
  ]),
  'jsonrpc:error-response@2026-07-28': must('both', 'basic#error-responses', 'Error responses MUST include the same ID as the request (unless it could not be read) and an error field with an integer code and a message', [
    `${HTTP_MODERN}refuses an unsupported version with 400 and -32022 listing the versions served`,
    `${HTTP_MODERN}answers an unknown method with 404 and -32601`,
  ]),
  'errors:legacy-range@2026-07-28': outOfScope('application', 'basic#error-codes', 'New error codes MUST NOT be allocated in -32000 to -32019', 'binds whoever allocates codes (the specification); rxmcp allocates none there'),
  'errors:legacy-meaning@2026-07-28': must('client', 'basic#error-codes', 'Apart from -32002, receivers MUST NOT assume any specific meaning for codes -32000 to -32019', [
    `${ERROR_CODES}rebuilds an older rxmcp's -32003 and -32029 as ForbiddenError and RateLimitedError with today's codes, and leaves another peer's codes as they came`,
  ]),
  'errors:reserved-range@2026-07-28': must('both', 'basic#error-codes', 'Implementations MUST NOT emit a code in -32020 to -32099 that this specification does not define, and MUST use defined codes only with their meanings', [
    `${ERROR_CODES}allocates its own codes outside -32768..-32000, in -31000..-31099, and takes from the reserved range only the codes JSON-RPC, MCP and the SDKs defined`,
    `${ERROR_CODES}answers requireScopes with -31003 and rateLimit with -31029 over HTTP, in the modern era and in a legacy session`,
    `${ERROR_CODES}answers the HTTP listener's rate limit with 429 and -31029`,
  ]),
  'errors:retired-codes@2026-07-28': must('server', 'basic#error-codes', 'Implementations of this revision MUST NOT emit -32002 (resource not found, now -32602) or -32042 (URL elicitation required)', [
    `${MODERN}server/discover > answers an unknown resource with -32602 in the modern era`,
    `${RETIRED}answers a handler's ResourceNotFoundError with -32602 (data.uri) to a modern request, and with -32002 in a legacy session`,
    `${RETIRED}turns a handler's UrlElicitationRequiredError into an input_required round asking its URL elicitation, never -32042`,
    `${RETIRED}ends the request with -32603 when the URL elicitation is declined, -32021 when the client cannot answer one, and -32603 for a method that cannot ask`,
    `${RETIRED}carries a task's ResourceNotFoundError as -32602 in tasks/get of the modern era`,
  ]),
  'jsonrpc:notification-no-response@2026-07-28': must('both', 'basic#notifications', 'The receiver of a notification MUST NOT send a response', [
    `${HTTP_MODERN}accepts a notification with 202 and no body`,
  ]),
  'jsonrpc:notification-no-id@2026-07-28': must('both', 'basic#notifications', 'Notifications MUST NOT include an ID', [
    `${NEW}base.spec.ts > MCP 2026-07-28 base protocol > sends the notifications of a request without an id`,
  ]),
  'statelessness:no-connection-context@2026-07-28': must('server', 'basic#statelessness', 'Servers MUST NOT rely on prior requests over the same connection for context (capabilities, protocol version, client identity), nor infer capabilities from prior requests', [
    `${MODERN}the era of each request on one connection > serves a modern request before any initialize, refuses a legacy one, and serves both eras after initialize`,
    `${MODERN}shaping beside a legacy session > shapes a modern request's progress for 2026-07-28 even when the connection holds a 2024-11-05 session`,
  ]),
  'statelessness:explicit-ids@2026-07-28': must('both', 'basic#statelessness', 'State that spans requests MUST be referenced by an explicit identifier the client passes on each request', [
    `${TASKS}answers resultType "task" to a client that declared the extension, and tasks/get inlines the result`,
    `${MODERN}multi round-trip requests > goes round after round, carrying earlier answers in the state`,
  ]),
  'json-schema:2020-12@2026-07-28': must('both', 'basic#schema-dialect', 'Implementations MUST support at least JSON Schema 2020-12, which applies to schemas without an explicit $schema field', [
    ...bothValidators(`reads a schema without $schema as 2020-12 (prefixItems, $defs, unevaluatedProperties)`),
  ]),
  'json-schema:declared-dialect@2026-07-28': must('both', 'basic#implementation-requirements', 'Clients and servers MUST validate schemas according to their declared or default dialect', [
    ...bothValidators(`honours a draft-06 $schema`),
    ...bothValidators(`honours a 2019-09 $schema`),
  ]),
  'json-schema:unsupported-dialect@2026-07-28': must('both', 'basic#implementation-requirements', 'Implementations MUST handle unsupported dialects gracefully by returning an error indicating the dialect is not supported', [
    `${LAZY}refuses an unsupported dialect at registration, compiler or not`,
  ]),
  'json-schema:valid-schemas@2026-07-28': must('both', 'basic#schema-validation', 'Schemas MUST be valid according to their declared or default dialect', [
    `${LAZY}refuses a bad schema at registration once the compiler is loaded`,
  ]),
  'json-schema:no-network-ref@2026-07-28': must('both', 'basic#ref-resolution', 'Implementations MUST NOT automatically dereference $ref values that resolve to a network URI (an opt-in to fetch them MUST be off by default)', [
    `${NEW}json-schema.spec.ts > MCP 2026-07-28 $ref resolution > refuses a $ref to a network URI without fetching it`,
  ]),
  'meta:reserved-values@2026-07-28': must('both', 'basic#_meta', 'Implementations MUST NOT make assumptions about values at the _meta keys MCP reserves'),
  'meta:key-names@2026-07-28': must('both', 'basic#_meta', 'A _meta key prefix MUST be dot-separated labels (each starting with a letter, ending with a letter or digit) followed by a slash; a name MUST begin and end with an alphanumeric character unless empty'),
  'meta:required-fields@2026-07-28': must('client', 'basic#_meta', 'Every client request MUST carry the required io.modelcontextprotocol/* _meta fields (restated on the tools, resources, prompts, completion, pagination and MRTR pages)', [
    `${CLIENT_MODERN}stamps every request with protocolVersion, the declared clientCapabilities and clientInfo, keeping the caller's _meta`,
    `${V2_SERVER}lists tools and calls one, every request carrying the modern _meta and no session`,
  ]),
  'meta:missing-field@2026-07-28': must('server', 'basic#_meta', 'A request missing a required _meta field MUST be rejected with -32602, and over HTTP with 400 Bad Request', [
    `${MODERN}bad input > answers a tools/call whose _meta has a version but no clientCapabilities with -32602`,
    `${HTTP_MODERN}refuses a modern POST without _meta with 400 and -32602`,
  ]),
  'meta:declared-capabilities@2026-07-28': must('server', 'basic#_meta', 'A server MUST NOT rely on capabilities the client has not declared, and MUST answer a request that needs one with -32021 listing the missing capabilities in data.requiredCapabilities (over HTTP with 400)', [
    `${MODERN}multi round-trip requests > refuses to ask for what the request's _meta did not declare with -32021`,
    `${HTTP_MODERN}answers an input the request's capabilities cannot take with 400 and -32021`,
  ]),
  'meta:subscription-id@2026-07-28': must('server', 'basic#_meta', 'Notifications delivered on a subscriptions/listen stream MUST carry io.modelcontextprotocol/subscriptionId in _meta', [
    `${MODERN}subscriptions/listen > tags list changes with the subscription id, and sends only the kinds asked for`,
  ]),
  'meta:trace-formats@2026-07-28': must('both', 'basic#_meta', 'traceparent, tracestate and baggage in _meta, when present, MUST follow W3C Trace Context and W3C Baggage'),
  'icons:mime-types@2026-07-28': outOfScope('host UI', 'basic#icons', 'Clients that support rendering icons MUST support at least image/png and image/jpeg', 'rxmcp renders no icons; it passes icon metadata to the application'),
  'icons:untrusted@2026-07-28': outOfScope('host UI', 'basic#icons', 'Consumers of icon metadata MUST take security precautions: treat icons as untrusted, allow only https: and data: URIs, and reject unsafe schemes (javascript:, file:, ftp:, ws:) and cross-origin redirects', 'rxmcp never fetches or renders an icon; the application that does is bound by it'),

  // Versioning (basic/versioning)
  'versioning:unsupported@2026-07-28': must('server', 'basic/versioning#protocol-version-negotiation', 'A server that does not implement the requested version MUST answer UnsupportedProtocolVersionError (-32022) listing the versions it supports', [
    `${MODERN}bad input > answers an unsupported version with -32022, listing every version served and the one requested`,
    `${HTTP_MODERN}refuses an unsupported version with 400 and -32022 listing the versions served`,
  ]),
  'versioning:discover@2026-07-28': must('server', 'basic/versioning#protocol-version-negotiation', 'Servers MUST implement server/discover', [
    DISCOVER,
    `${V2_SERVER}negotiates the modern era through server/discover`,
  ]),
  'versioning:extension-ids@2026-07-28': must('both', 'basic/versioning#extension-negotiation', 'Extension identifiers (the keys of capabilities.extensions) MUST follow the _meta key naming rules, with a mandatory prefix', [
    'spec/actors/server-methods.spec.ts > server.extension: capabilities.extensions > refuses an identifier without a prefix',
  ]),
  'versioning:extension-fallback@2026-07-28': must('both', 'basic/versioning#extension-negotiation', 'When only one party supports an extension, it MUST revert to core behaviour or reject the request with an appropriate error', [
    `${TASKS}runs a plain call for a client without the extension, and refuses a required tool with -32021`,
    'spec/actors/client-tasks.spec.ts > client.callToolAsTask, refusals > does not declare the tasks extension on a plain modern callTool: the result is never a task',
  ]),

  // Patterns (basic/patterns/)
  'patterns:no-server-requests@2026-07-28': must('server', 'basic/patterns', 'Servers MUST NOT initiate JSON-RPC requests (nor write requests to stdout, nor send independent requests on a response stream); they MUST ask the client through MRTR', [
    `${MODERN}multi round-trip requests > answers a tool that elicits with input_required, and its retry with the answer completes`,
    `${V2_SERVER}answers an elicitation input request (MRTR) with its handler and retries`,
    `${V2_SERVER_STDIO}answers a sampling input request (MRTR) with its handler and retries`,
  ]),
  'cancellation:listen-teardown@2026-07-28': must('server', 'basic/patterns/cancellation', 'A server MUST send notifications/cancelled referencing the subscriptions/listen request when it tears down that stream', [
    `${TEARDOWN}over real HTTP: the listen response stream carries notifications/cancelled, then the completion result, then ends`,
    `${TEARDOWN}over a memory pair: notifications/cancelled naming the listen request (with its subscription id), then the completion result, when the server closes; the client completes and cancels nothing back`,
  ]),
  'cancellation:server-only-listen@2026-07-28': must('server', 'basic/patterns/cancellation', 'Servers MUST NOT send notifications/cancelled for any purpose other than ending a subscriptions/listen stream'),
  'cancellation:http-disconnect@2026-07-28': must('server', 'basic/transports/streamable-http#cancellation', 'Over Streamable HTTP, the server MUST treat the client closing the SSE response stream as cancellation of that request', [
    `${HTTP_MODERN}aborts the handler's signal when the client closes the response stream`,
  ]),
  'cancellation:client-notifies@2026-07-28': must('client', 'basic/transports/stdio#cancellation', 'On stdio (and other transports without a response stream), the client MUST cancel with notifications/cancelled referencing the request ID', [
    `${LISTEN}sends notifications/cancelled naming the listen request when unsubscribed (stdio and other non-HTTP transports)`,
    `${CONNECTION}[cancellation:no-response] sends notifications/cancelled when unsubscribed early, aborts the handler, and sends no response`,
  ]),
  'cancellation:only-in-flight@2026-07-28': must('client', 'basic/patterns/cancellation#behavior-requirements', 'Cancellation notifications MUST only reference requests the client issued and believes in progress', [
    `${TEARDOWN}over a memory pair: notifications/cancelled naming the listen request (with its subscription id), then the completion result, when the server closes; the client completes and cancels nothing back`,
  ]),
  'cancellation:no-more-messages@2026-07-28': must('server', 'basic/transports/stdio#cancellation', 'After a request is cancelled, the server MUST NOT send any further messages for it', [
    `${CONNECTION}[cancellation:no-response] sends notifications/cancelled when unsubscribed early, aborts the handler, and sends no response`,
  ]),
  'cancellation:races@2026-07-28': must('both', 'basic/patterns/cancellation#timing-considerations', 'Both parties MUST handle the race of a cancellation arriving after the request completed gracefully', [
    `${NEW}base.spec.ts > MCP 2026-07-28 base protocol > ignores a cancellation of a modern request that arrives after the response`,
  ]),
  'mrtr:meta@2026-07-28': must('client', 'basic/patterns/mrtr', 'Every request, a retry included, MUST include the required _meta fields', [
    `${CLIENT_ROUNDS}answers an elicitation input request with the handler (defaults filled in) and retries with a new id, inputResponses and the requestState echoed`,
  ]),
  'mrtr:supported-requests@2026-07-28': must('server', 'basic/patterns/mrtr#supported-requests', 'Servers MUST NOT send InputRequiredResult on client requests other than tools/call, prompts/get and resources/read', [
    `${MODERN}multi round-trip requests > answers -32603 when a handler of a request that cannot take input_required asks for input`,
  ]),
  'mrtr:input-requests@2026-07-28': must('server', 'basic/patterns/mrtr#server-requirements-basic-workflow', 'inputRequests keys MUST be unique within the request and each value MUST be an ElicitRequest, CreateMessageRequest or ListRootsRequest', [
    `${MODERN}multi round-trip requests > asks for every input of a Promise.all in one round, with default keys`,
    `${OWN_HTTP}answers elicitation, sampling and roots input rounds with the client handlers`,
  ]),
  'mrtr:state-integrity@2026-07-28': must('server', 'basic/patterns/mrtr#server-requirements-basic-workflow', 'Servers MUST treat requestState as attacker-controlled: protect its integrity (HMAC or AEAD) where it matters and reject state that fails verification', [
    `${MODERN}multi round-trip requests > refuses a requestState sealed for other arguments, another tool or another method with -32602`,
    `${MODERN}multi round-trip requests > refuses a requestState another server sealed, and continues one sealed under a shared requestStateKey`,
    `${HTTP_MODERN}answers a tampered requestState with -32602`,
    'spec/actors/request-state.spec.ts > RequestStateCodec > refuses a state whose payload was changed as forged',
  ]),
  'mrtr:state-once@2026-07-28': must('server', 'basic/patterns/mrtr#server-requirements-basic-workflow', 'Servers for which a requestState must be consumed at most once MUST enforce that server-side (rxmcp claims every verified state once)', [
    'spec/actors/server-mrtr-state.spec.ts > issue 20: a requestState can be replayed and inputResponses sent without a state skip the input round > runs what follows the input once per state: the same retry sent again is refused with -32602 (used)',
  ]),
  'mrtr:input-or-state@2026-07-28': must('server', 'basic/patterns/mrtr#server-requirements-basic-workflow', 'Every InputRequiredResult MUST include inputRequests or requestState (or both)', [
    `${MODERN}multi round-trip requests > answers a tool that elicits with input_required, and its retry with the answer completes`,
  ]),
  'mrtr:declared-inputs@2026-07-28': must('server', 'basic/patterns/mrtr#server-requirements-basic-workflow', 'Servers MUST NOT send input requests the client has not declared support for in its capabilities', [
    `${MODERN}multi round-trip requests > refuses to ask for what the request's _meta did not declare with -32021`,
  ]),
  'mrtr:no-assumed-retry@2026-07-28': must('server', 'basic/patterns/mrtr#server-requirements-basic-workflow', 'Servers MUST NOT assume that clients will fulfil the inputRequests or retry the original request'),
  'mrtr:client-fulfils@2026-07-28': must('client', 'basic/patterns/mrtr#client-requirements-basic-workflow', 'A client given inputRequests MUST construct the requested inputs before retrying', [
    `${CLIENT_ROUNDS}runs every input request of a round at once, and retries once all are answered`,
  ]),
  'mrtr:client-state@2026-07-28': must('client', 'basic/patterns/mrtr#client-requirements-basic-workflow', 'The client MUST echo requestState exactly, without inspecting, parsing or changing it, and MUST NOT send one the server did not give', [
    `${CLIENT_ROUNDS}answers an elicitation input request with the handler (defaults filled in) and retries with a new id, inputResponses and the requestState echoed`,
    `${CLIENT_ROUNDS}leaves requestState out of the retry when the server sent none, and never carries answers into another request`,
  ]),
  'mrtr:new-id@2026-07-28': must('client', 'basic/patterns/mrtr#client-requirements-basic-workflow', 'The retry MUST use a JSON-RPC id different from the initial request\'s, and its inputs MUST NOT be used for any other request', [
    `${CLIENT_ROUNDS}answers an elicitation input request with the handler (defaults filled in) and retries with a new id, inputResponses and the requestState echoed`,
    `${CLIENT_ROUNDS}leaves requestState out of the retry when the server sent none, and never carries answers into another request`,
  ]),
  'progress:token-type@2026-07-28': must('client', 'basic/patterns/progress#progress-flow', 'Progress tokens MUST be a string or integer value, unique across all active requests (the connection makes them the same way in both eras)', [
    `${NEW}client.spec.ts > MCP 2025-11-25 progress (client) > gives each request in flight its own string or integer progress token`,
  ]),
  'progress:increasing@2026-07-28': must('server', 'basic/patterns/progress#progress-flow', 'The progress value MUST increase with each notification, even if the total is unknown'),
  'progress:token@2026-07-28': must('server', 'basic/patterns/progress#behavior-requirements', 'Progress notifications MUST only reference tokens provided in an active request and associated with an in-progress operation', [
    `${HTTP_MODERN}streams the progress of a request that asked for it, ending with the result`,
    `${V2_SERVER}receives progress notifications before the result of a tools/call`,
  ]),
  'progress:stops-after-completion@2026-07-28': must('server', 'basic/patterns/progress#implementation-notes', 'Progress notifications MUST stop after completion', [
    `${NEW}base.spec.ts > MCP 2026-07-28 progress and sampling (server) > sends no progress after the response of a modern request`,
  ]),
  'subscriptions:requested-only@2026-07-28': must('server', 'basic/patterns/subscriptions#opening-a-stream', 'The server MUST NOT send notification types the client has not explicitly requested in subscriptions/listen', [
    `${MODERN}subscriptions/listen > tags list changes with the subscription id, and sends only the kinds asked for`,
    `${MODERN}subscriptions/listen > sends resources/updated only for the URIs subscribed`,
  ]),
  'subscriptions:ack-first@2026-07-28': must('server', 'basic/patterns/subscriptions#acknowledgment', 'notifications/subscriptions/acknowledged MUST be the first message carrying the subscription\'s id, with no notification on the subscription before it', [
    `${MODERN}subscriptions/listen > acknowledges first, with the subscription id and only the honoured part of the filter`,
  ]),
  'subscriptions:correlate@2026-07-28': must('client', 'basic/patterns/subscriptions#receiving-notifications', 'On stdio, clients MUST correlate notifications with their subscription by io.modelcontextprotocol/subscriptionId', [
    `${LISTEN}emits the acknowledgement, then only the notifications tagged with its subscription id`,
  ]),
  'subscriptions:stdio-relisten@2026-07-28': must('client', 'basic/patterns/subscriptions#graceful-closure', 'On stdio, after the connection is re-established, the client MUST send subscriptions/listen again'),

  // Transports (basic/transports/)
  'transport:utf-8@2026-07-28': must('both', 'basic/transports#messages', 'JSON-RPC messages MUST be UTF-8 encoded', [
    `${CODEC}reports invalid UTF-8 and invalid JSON as ParseError and goes on`,
  ]),
  'transport:delivery@2026-07-28': must('both', 'basic/transports#messages', 'A binding MUST deliver client requests and notifications to the server, and server responses and notifications to the client', [
    `${V2_SERVER}lists tools and calls one, every request carrying the modern _meta and no session`,
    `${V2_SERVER_STDIO}lists tools and calls one, every request carrying the modern _meta and no session`,
  ]),
  'transport:custom@2026-07-28': must('both', 'basic/transports#custom-transports', 'Custom transports MUST preserve the JSON-RPC message format, the message patterns and the per-request metadata model', [
    `${OWN_MEMORY}lists and calls tools, one of them with an x-mcp-header argument the server checks`,
    `${OWN_MEMORY}answers elicitation, sampling and roots input rounds with the client handlers`,
  ]),
  'stdio:no-embedded-newlines@2026-07-28': must('both', 'basic/transports/stdio', 'stdio messages are delimited by newlines and MUST NOT contain embedded newlines', [
    `${CODEC}encodes one payload as one line`,
  ]),
  'stdio:stdout-protocol-only@2026-07-28': must('server', 'basic/transports/stdio', 'The server MUST NOT write anything to its stdout that is not a valid MCP message', [
    'spec/transports/stdio-session.spec.ts > stdioClient with an rxmcp server child > [stdio:stdout-protocol-only] talks to a real child process, whose logs go to stderr only',
  ]),
  'stdio:stdin-protocol-only@2026-07-28': must('client', 'basic/transports/stdio', 'The client MUST NOT write anything to the server\'s stdin that is not a valid MCP message'),
  'stdio:client-no-responses@2026-07-28': must('client', 'basic/transports/stdio#sending-messages', 'The client MUST NOT write JSON-RPC responses'),
  'stdio:fallback-any-error@2026-07-28': must('client', 'basic/transports/stdio#backward-compatibility', 'A client\'s fallback to a legacy server MUST NOT be keyed to one specific error code (legacy servers answer the probe with any error, or not at all)', [
    `${ERA}connect (era selection over real stdio children) > falls back to initialize with a legacy server (official SDK v1) that answers the probe with an error`,
    `${ERA}connect (era selection) > falls back to initialize when the probe gets no answer within probeTimeout (virtual time), cancelling it`,
    `${ERA}connect (era selection) > falls back to initialize when the server answers -32601`,
    `${ERA}connect (era selection) > falls back to initialize when the server answers an empty result`,
  ]),
  'http:single-endpoint@2026-07-28': must('server', 'basic/transports/streamable-http', 'The server MUST provide a single HTTP endpoint path that supports POST', [
    `${HTTP_MODERN}answers a POST without a session id in JSON, with resultType and no session`,
  ]),
  'http:origin@2026-07-28': must('server', 'basic/transports/streamable-http#security-endpoint', 'Servers MUST validate the Origin header on all incoming connections, and answer an Origin that is present and invalid with 403 Forbidden', [
    `${HTTP}refuses a foreign Origin`,
  ]),
  'http:client-post@2026-07-28': must('client', 'basic/transports/streamable-http#sending-messages', 'Every JSON-RPC message the client sends MUST be a new HTTP POST to the MCP endpoint, with Accept listing application/json and text/event-stream and the request metadata headers (MCP-Protocol-Version, Mcp-Method, Mcp-Name) REQUIRED', [
    `${CLIENT_HTTP}sends MCP-Protocol-Version, Mcp-Method and Mcp-Name (encoded) on every POST, and no session id, GET or DELETE`,
  ]),
  'http:post-single-message@2026-07-28': must('client', 'basic/transports/streamable-http#sending-messages', 'The body of a POST MUST be a single JSON-RPC request or notification; the client MUST NOT send responses'),
  'http:accepted-202@2026-07-28': must('server', 'basic/transports/streamable-http#sending-messages', 'For an accepted notification, the server MUST return 202 Accepted with no body', [
    `${HTTP_MODERN}accepts a notification with 202 and no body`,
  ]),
  'http:refused-error-status@2026-07-28': must('server', 'basic/transports/streamable-http#sending-messages', 'If the server cannot accept a notification, it MUST return an HTTP error status code (e.g. 400)', [
    `${HTTP_MODERN}refuses a modern POST without _meta with 400 and -32602`,
  ]),
  'http:json-or-sse@2026-07-28': must('server', 'basic/transports/streamable-http#sending-messages', 'For a request, the server MUST answer with Content-Type application/json (one JSON object) or text/event-stream (an SSE response stream)', [
    `${HTTP_MODERN}answers a POST without a session id in JSON, with resultType and no session`,
    `${HTTP_MODERN}streams the progress of a request that asked for it, ending with the result`,
  ]),
  'http:client-json-and-sse@2026-07-28': must('client', 'basic/transports/streamable-http#sending-messages', 'The client MUST support both JSON and SSE answers', [
    `${CLIENT_HTTP}reads an SSE answer with progress, and cancels by closing the response stream (no notifications/cancelled POST)`,
    `${OWN_HTTP}lists and calls tools, one of them with an x-mcp-header argument the server checks`,
  ]),
  'http:stream-related@2026-07-28': must('server', 'basic/transports/streamable-http#receiving-messages', 'Notifications on an SSE response stream MUST relate to the originating request', [
    `${HTTP_MODERN}streams the progress of a request that asked for it, ending with the result`,
  ]),
  'http:version-header-match@2026-07-28': must('server', 'basic/transports/streamable-http#protocol-version-header', 'MCP-Protocol-Version MUST match the _meta protocolVersion; on a mismatch the server MUST answer 400 with HeaderMismatch (-32020)', [
    `${HTTP_MODERN}refuses a tools/call with MCP-Protocol-Version differing from _meta with 400 and -32020 carrying its id`,
  ]),
  'http:unsupported-version@2026-07-28': must('server', 'basic/transports/streamable-http#protocol-version-header', 'A server that does not implement the requested version MUST answer 400 with UnsupportedProtocolVersionError listing its versions', [
    `${HTTP_MODERN}refuses an unsupported version with 400 and -32022 listing the versions served`,
  ]),
  'http:unknown-method-404@2026-07-28': must('server', 'basic/transports/streamable-http#protocol-version-header', 'A server that does not implement the requested method MUST answer 404 Not Found with -32601', [
    `${HTTP_MODERN}answers an unknown method with 404 and -32601`,
    `${HTTP_MODERN}answers a legacy-only method asked in the modern era with 404 and -32601`,
  ]),
  'http:missing-headers@2026-07-28': must('server', 'basic/transports/streamable-http#server-validation', 'A request missing a required standard header (MCP-Protocol-Version, Mcp-Method, Mcp-Name) MUST be rejected per Server Validation (400, -32020), unless the server supports header-less clients', [
    `${HTTP_MODERN}refuses a tools/call with MCP-Protocol-Version missing with 400 and -32020 carrying its id`,
    `${HTTP_MODERN}refuses a tools/call with Mcp-Method missing with 400 and -32020 carrying its id`,
    `${HTTP_MODERN}refuses a tools/call with Mcp-Name missing with 400 and -32020 carrying its id`,
  ]),
  'http:client-encoding@2026-07-28': must('client', 'basic/transports/streamable-http#value-encoding', 'Clients MUST encode header values: Base64 of UTF-8 in the exact lowercase =?base64?...?= sentinel form for values that are not plain ASCII (Mcp-Name included), and for plain values that look like the sentinel', [
    `${CLIENT_HTTP}sends MCP-Protocol-Version, Mcp-Method and Mcp-Name (encoded) on every POST, and no session id, GET or DELETE`,
    `${CLIENT_HTTP}mirrors x-mcp-header arguments into Mcp-Param-* headers, encoded, omitting absent and null ones`,
  ]),
  'http:client-x-mcp-header@2026-07-28': must('client', 'basic/transports/streamable-http#custom-headers-from-tool-parameters', 'Clients MUST support x-mcp-header: mirror each annotated argument into an Mcp-Param-{Name} header, and omit it when the value is null or absent', [
    `${CLIENT_HTTP}mirrors x-mcp-header arguments into Mcp-Param-* headers, encoded, omitting absent and null ones`,
    `${OWN_HTTP}lists and calls tools, one of them with an x-mcp-header argument the server checks`,
  ]),
  'http:x-mcp-header-constraints@2026-07-28': must('client', 'basic/transports/streamable-http#schema-extension', 'Clients MUST reject (leave out of tools/list) tool definitions whose x-mcp-header values break the constraints: non-empty, an HTTP token without control characters, unique without case, on primitive properties statically reachable from the root (no items, composition, conditionals or $ref), integers in the safe range', [
    `${CLIENT_HTTP}leaves tools with invalid x-mcp-header annotations out of listTools() and tools(), reporting each`,
  ]),
  'http:server-decodes@2026-07-28': must('server', 'basic/transports/streamable-http#value-encoding', 'Servers MUST decode Base64-encoded Mcp-Name and Mcp-Param values before comparing them with the body', [
    `${HTTP_MODERN}accepts an Mcp-Name in the base64 sentinel form`,
    `${HTTP_MODERN}Mcp-Param headers of x-mcp-header arguments > serves a base64-encoded string that matches its argument`,
  ]),
  'http:header-body-match@2026-07-28': must('server', 'basic/transports/streamable-http#server-validation', 'A server that reads the body MUST reject (400, -32020 HeaderMismatch) a header value that does not match the body, a recognised Mcp-Param with invalid characters, and a missing Mcp-Param whose argument is given; it MUST NOT expect one for a null or absent argument', [
    `${HTTP_MODERN}refuses a tools/call with Mcp-Name naming another tool with 400 and -32020 carrying its id`,
    `${HTTP_MODERN}Mcp-Param headers of x-mcp-header arguments > refuses a header that differs with 400 and -32020`,
    `${HTTP_MODERN}Mcp-Param headers of x-mcp-header arguments > refuses a header missing while its argument is given with 400 and -32020`,
    `${HTTP_MODERN}Mcp-Param headers of x-mcp-header arguments > refuses a raw non-ASCII value with 400 and -32020`,
    `${HTTP_MODERN}Mcp-Param headers of x-mcp-header arguments > serves no mirrored argument and no header that matches its argument`,
  ]),
  'http:header-case@2026-07-28': must('both', 'basic/transports/streamable-http#case-sensitivity', 'Clients and servers MUST compare header names without case'),
  'http:intermediaries@2026-07-28': outOfScope('intermediary', 'basic/transports/streamable-http#server-behavior-for-custom-headers', 'Intermediaries MUST forward Mcp-Param headers they do not recognise, and answer validation failures with an HTTP error status', 'binds proxies between client and server'),

  // Client features (client/)
  'elicitation:no-sensitive-form@2026-07-28': outOfScope('application', 'client/elicitation#user-interaction-model', 'Servers MUST NOT use form mode to request sensitive information, and MUST use URL mode for it', 'binds what the server application asks for; rxmcp cannot tell what is sensitive'),
  'elicitation:client-ui@2026-07-28': outOfScope('host UI', 'client/elicitation#user-interaction-model', 'MCP clients MUST show which server asks, offer decline and cancel, let users review form answers, and show the target host of a URL', UI),
  'elicitation:capability@2026-07-28': must('client', 'client/elicitation#capabilities', 'Clients that support elicitation MUST declare it in the clientCapabilities _meta of each request, with at least one mode', [
    `${CLIENT_MODERN}stamps every request with protocolVersion, the declared clientCapabilities and clientInfo, keeping the caller's _meta`,
  ]),
  'elicitation:supported-modes@2026-07-28': must('server', 'client/elicitation#capabilities', 'Servers MUST NOT send elicitation requests with modes the client does not support', [
    `${MODERN}multi round-trip requests > refuses to ask for what the request's _meta did not declare with -32021`,
  ]),
  'elicitation:request-params@2026-07-28': must('server', 'client/elicitation#elicitation-requests', 'Every elicitation request MUST include a message; a form request MUST say mode "form" or omit it and include requestedSchema', [
    `${V2_SERVER}answers an elicitation input request (MRTR) with its handler and retries`,
  ]),
  'elicitation:default-form@2026-07-28': must('client', 'client/elicitation#elicitation-requests', 'Clients MUST treat requests without a mode field as form mode', [
    `${NEW}client.spec.ts > MCP 2026-07-28 elicitation (client) > takes an elicitation input request without a mode as form mode`,
  ]),
  'elicitation:url-params@2026-07-28': must('server', 'client/elicitation#url-mode-elicitation-requests', 'URL mode requests MUST specify mode "url", a message, a valid url and an elicitationId'),
  'elicitation:state-per-user@2026-07-28': outOfScope('application', 'client/elicitation#statefulness', 'Stored elicitation state MUST be bound to users, protected, with the user identified from MCP authorization where possible', 'binds the state a server application keeps; rxmcp\'s own round state travels in the integrity-protected requestState, bound to the principal'),
  'elicitation:no-self-authorization@2026-07-28': outOfScope('application', 'client/elicitation#url-mode-elicitation-for-oauth-flows', 'Servers MUST NOT rely on URL mode elicitation to authorize users for themselves', 'binds how the application authorizes users (rxmcp\'s own authorization is OAuth 2.1, see auth:*)'),
  'elicitation:third-party-credentials@2026-07-28': outOfScope('application', 'client/elicitation#understanding-the-distinction', 'Third-party credentials MUST NOT transit the MCP client; the server MUST NOT use the client\'s credentials for a third party nor send URL-obtained credentials to the client; the user MUST authorize the server directly', 'binds the server application\'s third-party flows'),
  'elicitation:handle-outcomes@2026-07-28': outOfScope('application', 'client/elicitation#error-handling', 'Servers MUST handle a declined or cancelled elicitation and a client that fails to process it', 'binds the handler: rxmcp gives it the action (accept, decline, cancel), and a failure as an error'),
  'elicitation:bind-identity@2026-07-28': must('server', 'client/elicitation#security-considerations', 'Servers MUST bind elicitation requests to the client and user identity', [
    `${AUTH_SERVER}bearerAuth on the Streamable HTTP listener > gives modern-era requests the principal, and refuses a requestState sealed for another principal`,
  ]),
  'elicitation:show-requester@2026-07-28': outOfScope('host UI', 'client/elicitation#security-considerations', 'Clients MUST clearly indicate which server is requesting information', UI),
  'elicitation:safe-url-content@2026-07-28': outOfScope('application', 'client/elicitation#safe-url-handling', 'Servers MUST NOT put sensitive user information in an elicitation URL, nor a pre-authenticated URL', 'binds the URL the server application builds'),
  'elicitation:safe-url-handling@2026-07-28': outOfScope('host UI', 'client/elicitation#safe-url-handling', 'Clients MUST handle elicitation URLs carefully: no pre-fetching, no opening without consent, the full URL shown, opened so neither client nor model can read the page', 'rxmcp never fetches or opens an elicitation URL; it hands it to the application, whose UI is bound by this'),
  'elicitation:verify-user@2026-07-28': outOfScope('application', 'client/elicitation#phishing', 'Servers MUST NOT trust client-provided user identification, MUST verify that the user completing a URL elicitation is the one who started it, resiliently to a modified URL', 'binds the server application\'s web flow behind the URL'),
  'roots:capability@2026-07-28': must('client', 'client/roots#capabilities', 'Clients that support roots MUST declare the roots capability in the clientCapabilities _meta of each request', [
    `${OWN_HTTP}answers elicitation, sampling and roots input rounds with the client handlers`,
  ]),
  'roots:file-uri@2026-07-28': must('client', 'client/roots#root', 'A root uri MUST be a file:// URI'),
  'roots:client-security@2026-07-28': outOfScope('application', 'client/roots#security-considerations', 'Clients MUST only expose roots with appropriate permissions, validate root URIs against path traversal, control access and monitor root accessibility', 'binds which directories the application exposes; rxmcp sends the roots it is given'),
  'sampling:tools-capability@2026-07-28': must('client', 'client/sampling#tools-in-sampling', 'Clients MUST declare sampling.tools to receive tool-enabled sampling requests', [
    `${CLIENT_ROUNDS}fails with CapabilityError and does not retry when the server asks for sampling with tools when sampling.tools is not declared`,
  ]),
  'sampling:no-tools-without-capability@2026-07-28': must('server', 'client/sampling#tools-in-sampling', 'Servers MUST NOT send tool-enabled sampling requests to clients that did not declare sampling.tools', [
    `${NEW}base.spec.ts > MCP 2026-07-28 progress and sampling (server) > does not ask a client for sampling with tools when it declared sampling without tools`,
  ]),
  'sampling:capability@2026-07-28': must('client', 'client/sampling#capabilities', 'Clients that support sampling MUST declare the sampling capability in the clientCapabilities _meta of each request', [
    `${V2_CLIENT}answers a sampling input request (MRTR) with the sampling handler`,
  ]),
  'sampling:tool-results-only@2026-07-28': must('both', 'client/sampling#tool-result-messages', 'A user message that contains tool results MUST contain only tool results'),
  'sampling:tool-use-balanced@2026-07-28': must('both', 'client/sampling#tool-use-and-result-balance', 'Every assistant message with tool uses MUST be followed by a user message of only tool results, one per tool use with a matching toolUseId, before any other message'),
  'sampling:tool-choice@2026-07-28': outOfScope('model', 'client/sampling#tool-choice-modes', 'With toolChoice "required" the model MUST use at least one tool; with "none" it MUST NOT use any', 'binds the model the host runs; rxmcp passes toolChoice to it'),
  'sampling:message-shape@2026-07-28': must('both', 'client/sampling#messages', 'Sampling messages MUST have a role of "user" or "assistant" and a content field'),
  'sampling:max-tokens@2026-07-28': must('client', 'client/sampling#sampling-parameters', 'The client MUST respect the maxTokens parameter (rxmcp\'s host passes it to the model as its token limit)', [
    'spec/host/llm.spec.ts > samplingRequest > maps messages, system prompt, limits and stop sequences',
  ]),
  'sampling:sensitive-data@2026-07-28': outOfScope('application', 'client/sampling#security-considerations', 'Both parties MUST handle sensitive data appropriately', 'binds what the applications put in and do with sampling messages'),
  'sampling:undeclared-tools-error@2026-07-28': must('client', 'schema#createmessagerequestparams-tools', 'The client MUST return an error when tools or toolChoice is given but it did not declare sampling.tools', [
    `${CLIENT_ROUNDS}fails with CapabilityError and does not retry when the server asks for sampling with tools when sampling.tools is not declared`,
  ]),
  'sampling:model-hints-order@2026-07-28': outOfScope('host UI', 'schema#modelpreferences-hints', 'When several model hints are given, the client MUST evaluate them in order', 'binds the host\'s model selection; rxmcp passes the hints to the application'),

  // Server features (server/)
  'discover:implemented@2026-07-28': must('server', 'server/discover', 'Servers MUST implement server/discover', [DISCOVER]),
  'prompts:capability@2026-07-28': must('server', 'server/prompts#capabilities', 'Servers that support prompts MUST declare the prompts capability in their DiscoverResult', [DISCOVER]),
  'prompts:list@2026-07-28': must('server', 'server/prompts#capabilities', 'prompts/list MUST answer with the prompts available to the requesting client, a set that MUST NOT vary per connection or as a side effect of other requests'),
  'prompts:content-encoding@2026-07-28': outOfScope('application', 'server/prompts#image-content', 'Image and audio data in prompts MUST be base64 with a valid MIME type; embedded resources MUST carry a URI, a MIME type and text or base64 blob', CONTENT),
  'prompts:validate@2026-07-28': must('both', 'server/prompts#security', 'Implementations MUST carefully validate all prompt inputs and outputs', [
    'spec/actors/typed-api.spec.ts > McpServer.prompt with a Standard Schema > [prompts:required-arguments] answers -32602 for arguments the schema refuses or a missing required one',
  ]),
  'resources:capability@2026-07-28': must('server', 'server/resources#capabilities', 'Servers that support resources MUST declare the resources capability', [DISCOVER]),
  'resources:list@2026-07-28': must('server', 'server/resources#capabilities', 'resources/list MUST answer with the resources available to the requesting client, a set that MUST NOT vary per connection or as a side effect of other requests'),
  'resources:uri-schemes@2026-07-28': outOfScope('application', 'server/resources#custom-uri-schemes', 'Custom URI schemes MUST follow RFC 3986', 'binds the URIs the server application registers'),
  'resources:not-found@2026-07-28': must('server', 'server/resources#error-handling', 'An unknown resource MUST be answered with -32602 (Invalid Params), never with an empty contents array', [
    `${MODERN}server/discover > answers an unknown resource with -32602 in the modern era`,
  ]),
  'resources:validate-uris@2026-07-28': must('server', 'server/resources#security-considerations', 'Servers MUST validate all resource URIs', [
    `${MODERN}server/discover > answers an unknown resource with -32602 in the modern era`,
  ]),
  'resources:binary-encoding@2026-07-28': must('server', 'server/resources#security-considerations', 'Binary resource data MUST be properly encoded (rxmcp encodes what it reads itself, skill files, as base64)', [
    'spec/actors/skills.spec.ts > serveSkills over a directory, and client.skills > loads a skill when asked: SKILL.md verified, supporting files read and verified on demand, binary ones too',
  ]),
  'resources:path-traversal@2026-07-28': must('server', 'server/resources#security-considerations', 'Servers MUST sanitize file paths to prevent directory traversal when serving file resources (rxmcp serves files through serveSkills)', [
    'spec/actors/skills.spec.ts > serveSkills limits > leaves out a folder given in memory past 512 files or 16 MiB, or with a path out of the skill',
  ]),
  'tools:capability@2026-07-28': must('server', 'server/tools#capabilities', 'Servers that support tools MUST declare the tools capability', [DISCOVER]),
  'tools:list@2026-07-28': must('server', 'server/tools#capabilities', 'tools/list MUST answer with the tools available to the requesting client, a set that MUST NOT vary per connection or as a side effect of other requests'),
  'tools:input-schema@2026-07-28': must('server', 'server/tools#tool', 'A tool\'s inputSchema MUST be a valid JSON Schema object (not null)', [
    'spec/actors/typed-api.spec.ts > McpServer.tool with a Standard Schema > throws at registration when the converter fails or the schema is not of an object',
  ]),
  'tools:annotations-untrusted@2026-07-28': outOfScope('host UI', 'server/tools#tool', 'Clients MUST consider tool annotations untrusted unless they come from trusted servers', 'binds decisions the host takes on annotations; rxmcp passes them on and decides nothing by them'),
  'tools:x-mcp-header@2026-07-28': must('client', 'server/tools#x-mcp-header', 'x-mcp-header values MUST meet the constraints (non-empty token, unique, on statically reachable primitive properties, safe integers), and HTTP clients MUST leave a tool that breaks them out of tools/list', [
    `${CLIENT_HTTP}leaves tools with invalid x-mcp-header annotations out of listTools() and tools(), reporting each`,
  ]),
  'tools:output-schema@2026-07-28': must('server', 'server/tools#output-schema', 'With an outputSchema, servers MUST provide structured results that conform to it', [
    'spec/actors/typed-api.spec.ts > McpServer.tool with a Standard Schema outputSchema > [tools:output-schema] fails the call with -32603 when structuredContent does not match',
  ]),
  'tools:server-security@2026-07-28': must('server', 'server/tools#security-considerations', 'Servers MUST validate tool inputs, control access, rate limit tool calls and sanitize outputs (rxmcp\'s part: input validation, and the permissions and rateLimit middleware)', [
    'spec/actors/middleware.spec.ts > permissions > lists only what a principal may use, and answers a hidden target as a missing one',
    'spec/actors/middleware.spec.ts > rateLimit > spends a token per request per principal, refills over time, and answers -31029 with retryAfterMs when spent',
  ]),
  'caching:hints@2026-07-28': must('server', 'server/utilities/caching#cacheable-results', 'Servers MUST include caching hints (a ttlMs >= 0 and a cacheScope) on complete results of server/discover, tools/list, prompts/list, resources/list, resources/templates/list and resources/read', [
    DISCOVER,
    `${MODERN}server/discover > gives the cacheHints option per method, and a resource's own cache wins for its reads`,
  ]),
  'caching:key@2026-07-28': must('client', 'server/utilities/caching#cache-key', 'Clients MUST NOT serve a cached response for a request whose method or parameters differ', [
    `${CACHE}keys by method and params: each page and each URI is its own entry`,
  ]),
  'caching:no-mrtr@2026-07-28': must('client', 'server/utilities/caching#cache-key', 'Results of retries carrying inputResponses or requestState MUST NOT be cached', [
    `${CACHE}never caches the result of a multi-round-trip retry, nor an input_required result`,
  ]),
  'caching:poll-jitter@2026-07-28': outOfScope('client', 'server/utilities/caching#freshness-calculation', 'Implementations that choose to poll MUST apply jitter and backoff', 'rxmcp does not poll for freshness: a stale entry is fetched again when next asked for'),
  'caching:per-authorization@2026-07-28': must('client', 'server/utilities/caching#cache-scope-field', 'Caches MUST NOT be shared across authorization contexts'),
  'caching:page-scope@2026-07-28': must('server', 'server/utilities/caching#interaction-with-pagination', 'Servers MUST apply the same cacheScope to every page of a list'),
  'caching:access-control@2026-07-28': outOfScope('application', 'server/utilities/caching#security-considerations', 'Servers MUST be aware that "public" results may be shared, apply per-primitive access control, and not rely on cacheScope alone', 'binds the cacheScope the application chooses; rxmcp\'s default is "private"'),
  'completion:capability@2026-07-28': must('server', 'server/utilities/completion#capabilities', 'Servers that support completions MUST declare the completions capability', [DISCOVER]),
  'completion:security@2026-07-28': outOfScope('application', 'server/utilities/completion#security', 'Implementations MUST validate completion inputs, rate limit, control access to sensitive suggestions and prevent information disclosure', 'binds which suggestions the application offers; rxmcp\'s rateLimit and permissions middleware apply to completion/complete as to any method'),
  'logging:capability@2026-07-28': must('server', 'server/utilities/logging#capabilities', 'Servers that emit log message notifications MUST declare the logging capability', [DISCOVER]),
  'logging:no-level-no-messages@2026-07-28': must('server', 'server/utilities/logging#per-request-log-level', 'The server MUST NOT emit notifications/message for a request without io.modelcontextprotocol/logLevel', [
    `${MODERN}logging per request > sends no log messages to a request without a logLevel`,
  ]),
  'logging:request-scoped@2026-07-28': must('server', 'server/utilities/logging#per-request-log-level', 'notifications/message MUST only go on the stream that carries the response of the request that set the level, never on a listen stream', [
    `${MODERN}logging per request > sends the messages at and above the request's logLevel, tied to nothing else`,
  ]),
  'logging:no-secrets@2026-07-28': outOfScope('application', 'server/utilities/logging#security', 'Log messages MUST NOT contain credentials, personal information or internal details that could aid attacks', 'binds what the application logs'),
  'pagination:client-page-size@2026-07-28': must('client', 'server/utilities/pagination#pagination-model', 'Clients MUST NOT assume a fixed page size', [
    'spec/lib/operators/paginate.spec.ts > paginate > emits the items of every page in order and completes after the last page',
  ]),
  'pagination:client-opaque-cursors@2026-07-28': must('client', 'server/utilities/pagination#implementation-guidelines', 'Clients MUST treat cursors as opaque: no assumptions about format, no parsing or changing them, and an empty string is a cursor, not the end', [
    `${NEW}pagination.spec.ts > MCP 2026-07-28 pagination > follows an empty-string cursor as a page, not as the end`,
  ]),

  // Authorization (basic/authorization/)
  'auth:alternative-transports@2026-07-28': must('both', 'basic/authorization#protocol-requirements', 'Implementations over alternative transports MUST follow established security best practices for their protocol (rxmcp: the WebSocket listener authenticates like HTTP)', [
    `${AUTH_SERVER}bearerAuth on the WebSocket listener > refuses an upgrade without a valid token with the challenge, and gives the socket's requests the principal`,
  ]),
  'auth:as-oauth-2.1@2026-07-28': outOfScope('authorization server', 'basic/authorization#overview', 'Authorization servers MUST implement OAuth 2.1 for confidential and public clients, and offer RFC 8414 metadata or OpenID Connect Discovery', 'binds the authorization server, which rxmcp is not'),
  'auth:umbrella@2026-07-28': outOfScope('both', 'basic/authorization#security-considerations', 'Implementations MUST follow the normative discovery and security requirements of the subpages, and OAuth 2.1 section 7', AUTH_BEST_PRACTICE),
  'auth:prm@2026-07-28': must('server', 'basic/authorization/authorization-server-discovery#authorization-server-location', 'MCP servers MUST implement Protected Resource Metadata (RFC 9728), whose authorization_servers field names at least one authorization server', [
    `${AUTH_SERVER}bearerAuth on the Streamable HTTP listener > serves the Protected Resource Metadata at the path-based and root well-known URLs`,
  ]),
  'auth:prm-discovery@2026-07-28': must('server', 'basic/authorization/authorization-server-discovery#protected-resource-metadata-discovery-requirements', 'MCP servers MUST make their metadata discoverable: resource_metadata in the WWW-Authenticate header of a 401, or the well-known URI', [
    `${AUTH_SERVER}bearerAuth on the Streamable HTTP listener > answers a request without a token 401 with a challenge naming the metadata and the required scopes`,
  ]),
  'auth:client-separate-as@2026-07-28': must('client', 'basic/authorization/authorization-server-discovery#authorization-server-location', 'Clients MUST keep registration state (credentials, tokens) per authorization server, keyed by issuer, MUST NOT reuse credentials of another authorization server, and MUST register again when it changes'),
  'auth:client-prm@2026-07-28': must('client', 'basic/authorization/authorization-server-discovery#protected-resource-metadata-discovery-requirements', 'Clients MUST use Protected Resource Metadata: the URL from WWW-Authenticate when present, else the well-known URIs in order; they MUST parse WWW-Authenticate and respond to 401', [
    `${AUTH_CLIENT}oauthFetch > discovery > reads the Protected Resource Metadata named by the WWW-Authenticate header, before any well-known URL`,
    `${AUTH_CLIENT}oauthFetch > discovery > falls back to the well-known PRM URLs when the one in the header fails`,
    `${AUTH_CLIENT}oauthFetch > discovery > tries the path-based PRM URL, then the root one`,
    'spec/actors/client-handshake-refusals.spec.ts > issue 20: a 401 on server/discover falls back to initialize > rejects connect (era auto) with the UnauthorizedError of the probe, carrying the challenge; the server saw one request and no initialize',
  ]),
  'auth:client-as-metadata@2026-07-28': must('client', 'basic/authorization/authorization-server-discovery#authorization-server-metadata-discovery', 'Clients MUST support both RFC 8414 and OpenID Connect discovery, trying the well-known endpoints in the given priority order', [
    `${AUTH_CLIENT}oauthFetch > discovery > tries oauth-authorization-server, then openid-configuration, for an issuer without a path`,
    `${AUTH_CLIENT}oauthFetch > discovery > finds metadata for an issuer with a path in the MCP order (oidc-appended)`,
  ]),
  'auth:client-issuer-match@2026-07-28': must('client', 'basic/authorization/authorization-server-discovery#authorization-server-metadata-discovery', 'Clients MUST validate fetched metadata: its issuer MUST be identical to the issuer used to build the well-known URL, else the metadata MUST NOT be used', [
    `${AUTH_CLIENT}oauthFetch > discovery > refuses metadata naming another issuer, before any registration or authorization`,
  ]),
  'auth:client-challenge-scopes@2026-07-28': must('client', 'basic/authorization#scope-selection-strategy', 'Clients MUST treat the scopes in the challenge as authoritative, assuming no set relationship with scopes_supported', [
    `${AUTH_CLIENT}oauthFetch > registration and the authorization code grant > asks for the challenge scope`,
  ]),
  'auth:client-id@2026-07-28': must('client', 'basic/authorization#client-registration', 'Clients MUST obtain a client ID (Client ID Metadata Document, pre-registration or Dynamic Client Registration) before the authorization flow', [
    `${AUTH_CLIENT}oauthFetch > registration and the authorization code grant > registers dynamically, then sends PKCE S256 and the resource in both the authorization and the token request`,
    `${AUTH_CLIENT}oauthFetch > registration and the authorization code grant > authenticates a pre-registered client with client_secret_basic`,
  ]),
  'auth:cimd-client@2026-07-28': must('client', 'basic/authorization/client-registration#implementation-requirements', 'Clients using Client ID Metadata Documents MUST host them at an https URL with a path, with client_id, client_name and redirect_uris, the client_id equal to the URL', [
    `${AUTH_CLIENT}oauthFetch > registration and the authorization code grant > uses a client ID metadata document URL as client_id where the server supports them`,
    `${AUTH_CLIENT}oauthFetch > registration and the authorization code grant > refuses a client metadata URL that is not https at once`,
  ]),
  'auth:cimd-as@2026-07-28': outOfScope('authorization server', 'basic/authorization/client-registration#implementation-requirements', 'Authorization servers MUST validate a fetched metadata document (client_id equal to its URL, redirect URIs, structure)', 'binds the authorization server'),
  'auth:dcr-application-type@2026-07-28': must('client', 'basic/authorization/client-registration#application-type-and-redirect-uri-constraints', 'Clients MUST give an appropriate application_type in Dynamic Client Registration, and be prepared for registration failures over redirect URI constraints'),
  'auth:iss-validation@2026-07-28': must('client', 'basic/authorization#authorization-response-validation', 'Clients MUST record the issuer with the PKCE verifier and validate iss in the authorization response (RFC 9207) by exact comparison before using the code, not acting on an error response whose iss mismatches', [
    `${AUTH_CLIENT}oauthFetch > registration and the authorization code grant > refuses a wrong iss (RFC 9207)`,
    `${AUTH_CLIENT}oauthFetch > registration and the authorization code grant > refuses no iss where the server advertises it (RFC 9207)`,
  ]),
  'auth:as-iss@2026-07-28': outOfScope('authorization server', 'basic/authorization#authorization-response-validation', 'Authorization servers that include iss MUST advertise authorization_response_iss_parameter_supported', 'binds the authorization server'),
  'auth:resource-parameter@2026-07-28': must('client', 'basic/authorization#resource-parameter-implementation', 'Clients MUST send the RFC 8707 resource parameter (the canonical URI of the MCP server) in both authorization and token requests, whether or not the authorization server supports it', [
    `${AUTH_CLIENT}oauthFetch > registration and the authorization code grant > registers dynamically, then sends PKCE S256 and the resource in both the authorization and the token request`,
  ]),
  'auth:bearer-every-request@2026-07-28': must('client', 'basic/authorization#token-requirements', 'Clients MUST send the token in the Authorization header of every HTTP request', [
    `${AUTH_CLIENT}oauthFetch with streamableHttpClient > connects and calls a tool through an authorizing front (modern era)`,
  ]),
  'auth:no-token-in-query@2026-07-28': must('client', 'basic/authorization#token-requirements', 'Access tokens MUST NOT be included in the URI query string'),
  'auth:validate-tokens@2026-07-28': must('server', 'basic/authorization#token-handling', 'Servers MUST validate access tokens (OAuth 2.1 section 5.2), including their audience, before processing a request, and answer invalid or expired ones with 401', [
    `${AUTH_SERVER}bearerAuth on the Streamable HTTP listener > refuses expired, wrong-audience, wrong-issuer, unsigned, alg-none, tampered and malformed tokens with 401 invalid_token, echoing none of them`,
    `${OIDC}discovers, registers, authorizes through the login and consent forms, calls, refreshes, and is refused on the wrong audience`,
  ]),
  'auth:client-own-as-tokens@2026-07-28': must('client', 'basic/authorization#token-handling', 'Clients MUST NOT send the server tokens other than those issued by its authorization server'),
  'auth:own-tokens-only@2026-07-28': must('server', 'basic/authorization#token-handling', 'Servers MUST only accept tokens valid for their own resources, and MUST NOT accept or pass on any other', [
    `${AUTH_SERVER}bearerAuth on the Streamable HTTP listener > refuses expired, wrong-audience, wrong-issuer, unsigned, alg-none, tampered and malformed tokens with 401 invalid_token, echoing none of them`,
  ]),
  'auth:refresh-tokens@2026-07-28': must('client', 'basic/authorization#refresh-tokens', 'Clients MUST keep refresh tokens confidential in transit and storage, and MUST NOT assume a refresh token will be issued', [
    `${AUTH_CLIENT}oauthFetch > refresh > authorizes again when there is no refresh token`,
    `${AUTH_CLIENT}fileTokenStore > creates the file with mode 0600 and reads back what it wrote`,
  ]),
  'auth:error-statuses@2026-07-28': must('server', 'basic/authorization#error-handling', 'Servers MUST answer authorization errors with the right status: 401, 403 (insufficient scope), 400', [
    `${AUTH_SERVER}bearerAuth on the Streamable HTTP listener > answers a request without a token 401 with a challenge naming the metadata and the required scopes`,
    `${AUTH_SERVER}bearerAuth on the Streamable HTTP listener > answers 403 insufficient_scope naming the scopes an operation needs, and serves it once the token has them (step-up)`,
  ]),
  'auth:scope-hierarchy@2026-07-28': must('server', 'basic/authorization#step-up-authorization-flow', 'Servers MUST account for scope hierarchies (a broader scope implying narrower ones) when deciding whether a token suffices'),
  'auth:token-storage@2026-07-28': must('client', 'basic/authorization/security-considerations#token-theft', 'Clients and servers MUST store tokens securely (rxmcp: the client\'s token file is 0600)', [
    `${AUTH_CLIENT}fileTokenStore > creates the file with mode 0600 and reads back what it wrote`,
  ]),
  'auth:as-security@2026-07-28': outOfScope('authorization server', 'basic/authorization/security-considerations#communication-security', 'Authorization servers MUST rotate public clients\' refresh tokens, serve every endpoint over HTTPS, include code_challenge_methods_supported in OIDC metadata, validate exact redirect URIs, avoid open redirects, weigh CIMD security and show the redirect host', 'binds the authorization server'),
  'auth:redirect-uris@2026-07-28': must('client', 'basic/authorization/security-considerations#communication-security', 'Redirect URIs MUST be localhost or https, and registered with the authorization server'),
  'auth:pkce@2026-07-28': must('client', 'basic/authorization/security-considerations#authorization-code-protection', 'Clients MUST use PKCE with S256 when technically capable', [
    `${AUTH_CLIENT}oauthFetch > registration and the authorization code grant > registers dynamically, then sends PKCE S256 and the resource in both the authorization and the token request`,
  ]),
  'auth:pkce-support@2026-07-28': must('client', 'basic/authorization/security-considerations#authorization-code-protection', 'Clients MUST verify PKCE support in the metadata (code_challenge_methods_supported) and refuse to proceed without it'),
  'auth:proxy-consent@2026-07-28': outOfScope('application', 'basic/authorization/security-considerations#confused-deputy-problem', 'MCP proxy servers using static client IDs MUST obtain user consent for each dynamically registered client before forwarding to third-party authorization servers', 'binds proxies that broker third-party OAuth; rxmcp\'s gateway does not'),
  'auth:no-passthrough@2026-07-28': must('server', 'basic/authorization/security-considerations#access-token-privilege-restriction', 'The MCP server MUST NOT pass through the token it received from the client'),
} as const
