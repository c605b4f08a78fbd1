import { describe, expectTypeOf, it } from 'vitest'
import type { Observable } from 'rxjs'
import type { McpClient } from '../../actors/client.ts'
import type { ServerSession } from '../../actors/server.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import type { RequestEvent } from '../../lib/operators/progress.ts'
import type {
  CallToolResult, ClientRequests, CreateMessageResult, ElicitResult, EmptyResult, ListRootsResult, ListToolsResult,
  LoggingMessageNotificationParams, NotificationParams, ParamsArgument, ProgressNotificationParams, RequestParams,
  RequestResult, ResourceUpdatedNotificationParams, ServerNotifications, CancelledNotificationParams,
} from '../../lib/schema/types.ts'

// Type-level only: `client` and `session` exist for tsc alone (`npx tsc --noEmit -p .`, which
// `npm test` runs over spec/), so every use of them sits in a function that is checked and never
// called (`void fn` marks it used). The assertions are the expectTypeOf calls and the expected
// errors inside: tsc fails on a mismatched type and on an unused ts-expect-error directive.
declare const client: McpClient
declare const session: ServerSession

describe('ParamsArgument', () => {
  it('makes params optional exactly when the method may go without them', () => {
    expectTypeOf<ParamsArgument<RequestParams<ClientRequests, 'ping'>>>().toEqualTypeOf<[params?: never]>()
    expectTypeOf<ParamsArgument<RequestParams<ClientRequests, 'tools/list'>>>().toEqualTypeOf<[params?: { cursor?: string; _meta?: import('../../lib/jsonrpc/message.ts').Meta }]>()
    expectTypeOf<ParamsArgument<RequestParams<ClientRequests, 'tools/call'>>>().toEqualTypeOf<[params: ClientRequests['tools/call']['params']]>()
  })
})

describe('RequestResult', () => {
  it('is the result type of the method map entry', () => {
    expectTypeOf<RequestResult<ClientRequests, 'tools/call'>>().toEqualTypeOf<CallToolResult>()
  })
})

describe('NotificationParams', () => {
  it('is the params, or a JsonObject for a notification without params', () => {
    expectTypeOf<NotificationParams<ServerNotifications, 'notifications/message'>>().toEqualTypeOf<LoggingMessageNotificationParams>()
    expectTypeOf<NotificationParams<ServerNotifications, 'notifications/tools/list_changed'>>().toEqualTypeOf<JsonObject>()
  })
})

describe('McpClient.request', () => {
  it('types params and result by method name', () => {
    const typed = () => {
      expectTypeOf(client.request('tools/call', { name: 'add', arguments: { a: 1 } })).toEqualTypeOf<Observable<RequestEvent<CallToolResult>>>()
      expectTypeOf(client.request('tools/list')).toEqualTypeOf<Observable<RequestEvent<ListToolsResult>>>()
      expectTypeOf(client.request('tools/list', { cursor: 'c' }, { timeout: 5 })).toEqualTypeOf<Observable<RequestEvent<ListToolsResult>>>()
      expectTypeOf(client.request('ping')).toEqualTypeOf<Observable<RequestEvent<EmptyResult>>>()
      expectTypeOf(client.request('ping', undefined, { timeout: 1_000 })).toEqualTypeOf<Observable<RequestEvent<EmptyResult>>>()
      // @ts-expect-error ping takes no params
      client.request('ping', { now: true })
      // @ts-expect-error tools/call needs its params
      client.request('tools/call')
      // @ts-expect-error the name of a tool is a string
      client.request('tools/call', { name: 1 })
      // @ts-expect-error resources/read needs a uri
      client.request('resources/read', { url: 'x' })
    }
    void typed
  })

  it('takes any other method with JsonObject params and a JsonObject result', () => {
    const untyped = () => {
      expectTypeOf(client.request('vendor/thing', { any: 1 })).toEqualTypeOf<Observable<RequestEvent<JsonObject>>>()
      expectTypeOf(client.request('vendor/thing')).toEqualTypeOf<Observable<RequestEvent<JsonObject>>>()
      expectTypeOf(client.request<{ answer: number }>('vendor/thing')).toEqualTypeOf<Observable<RequestEvent<{ answer: number }>>>()
      // A method known only at run time is any other method.
      const method: string = 'tools/list'
      expectTypeOf(client.request(method, { cursor: 1 })).toEqualTypeOf<Observable<RequestEvent<JsonObject>>>()
    }
    void untyped
  })
})

describe('McpClient.notify', () => {
  it('types params by method name and takes any other method', () => {
    const calls = () => {
      expectTypeOf(client.notify('notifications/roots/list_changed')).toEqualTypeOf<Promise<void>>()
      expectTypeOf(client.notify('notifications/cancelled', { requestId: 3, reason: 'bored' })).toEqualTypeOf<Promise<void>>()
      expectTypeOf(client.notify('vendor/ping', { n: 1 })).toEqualTypeOf<Promise<void>>()
      // @ts-expect-error progress needs progressToken and progress
      void client.notify('notifications/progress', { progress: 1 })
    }
    void calls
  })
})

describe('McpClient.notifications', () => {
  it('types what a server notification carries', () => {
    const calls = () => {
      expectTypeOf(client.notifications('notifications/resources/updated')).toEqualTypeOf<Observable<ResourceUpdatedNotificationParams>>()
      expectTypeOf(client.notifications('notifications/progress')).toEqualTypeOf<Observable<ProgressNotificationParams>>()
      expectTypeOf(client.notifications('notifications/tools/list_changed')).toEqualTypeOf<Observable<JsonObject>>()
      expectTypeOf(client.notifications('vendor/event')).toEqualTypeOf<Observable<JsonObject>>()
      expectTypeOf(client.notifications<{ n: number }>('vendor/event')).toEqualTypeOf<Observable<{ n: number }>>()
    }
    void calls
  })
})

describe('ServerSession', () => {
  it('types requests to the client by the server request map', () => {
    const calls = () => {
      expectTypeOf(session.request('roots/list')).toEqualTypeOf<Observable<RequestEvent<ListRootsResult>>>()
      expectTypeOf(session.request('sampling/createMessage', { messages: [], maxTokens: 10 })).toEqualTypeOf<Observable<RequestEvent<CreateMessageResult>>>()
      expectTypeOf(session.request('elicitation/create', { message: 'ok?', requestedSchema: { type: 'object', properties: {} } }))
        .toEqualTypeOf<Observable<RequestEvent<ElicitResult>>>()
      expectTypeOf(session.request('vendor/ask', { q: 1 })).toEqualTypeOf<Observable<RequestEvent<JsonObject>>>()
      // @ts-expect-error sampling needs maxTokens
      session.request('sampling/createMessage', { messages: [] })
    }
    void calls
  })

  it('types notifications both ways', () => {
    const calls = () => {
      expectTypeOf(session.notify('notifications/tools/list_changed')).toEqualTypeOf<void>()
      expectTypeOf(session.notify('notifications/resources/updated', { uri: 'file:///x' })).toEqualTypeOf<void>()
      expectTypeOf(session.notify('vendor/event', { n: 1 })).toEqualTypeOf<void>()
      // @ts-expect-error resources/updated needs a uri
      session.notify('notifications/resources/updated', {})
    }
    void calls
    const listens = () => {
      expectTypeOf(session.notifications('notifications/cancelled')).toEqualTypeOf<Observable<CancelledNotificationParams>>()
      expectTypeOf(session.notifications('notifications/roots/list_changed')).toEqualTypeOf<Observable<JsonObject>>()
      expectTypeOf(session.notifications('vendor/event')).toEqualTypeOf<Observable<JsonObject>>()
    }
    void listens
  })
})
