/**
 * The few Cloudflare Workers types the example uses, declared here so the example needs no
 * `@cloudflare/workers-types` (a real project installs that package and drops this file).
 */

/** The id of one Durable Object. */
export interface DurableObjectId {
  toString(): string
}

/** A handle on one Durable Object: requests sent through it reach that object, wherever it runs. */
export interface DurableObjectStub {
  fetch(request: Request): Promise<Response>
}

/** A Durable Object's own storage (the parts used here): transactional, one object's alone. */
export interface DurableObjectStorage {
  get<T = unknown>(key: string): Promise<T | undefined>
  put<T>(key: string, value: T): Promise<void>
  deleteAll(): Promise<void>
  /** Calls the object's `alarm()` at `scheduledTime` (ms since the epoch), even after it was evicted. */
  setAlarm(scheduledTime: number): Promise<void>
}

/** A Durable Object namespace binding (`[[durable_objects.bindings]]` in wrangler.toml). */
export interface DurableObjectNamespace {
  idFromName(name: string): DurableObjectId
  get(id: DurableObjectId): DurableObjectStub
}

/** What a Durable Object's constructor is given about itself. */
export interface DurableObjectState {
  readonly id: DurableObjectId
  readonly storage: DurableObjectStorage
}

/** What a Worker's `fetch` is given beside the request and the bindings. */
export interface ExecutionContext {
  waitUntil(promise: Promise<unknown>): void
}
