/**
 * A server's event bus shared over Redis pub/sub (ServerOptions.eventBus): list changes, resource
 * updates and task changes raised on one instance reach the sessions and listen streams of every
 * instance. Each instance tags what it publishes and ignores its own messages when they come back.
 */
import { Observable } from '../lib/rx.ts'
import { randomId } from '../lib/base64url.ts'
import type { EventBus, ServerEvent } from '../lib/events.ts'

/** The pub/sub commands the bus uses (node-redis v5): a client to publish, and a duplicate to subscribe. */
export interface RedisPubSubLike {
  publish(channel: string, message: string): Promise<number>
  duplicate(): RedisPubSubLike & { connect(): Promise<unknown>; close?(): Promise<unknown>; quit?(): Promise<unknown>; on?(event: 'error', listener: (error: unknown) => void): unknown }
  subscribe(channel: string, listener: (message: string) => void): Promise<unknown>
  unsubscribe(channel: string): Promise<unknown>
}

/** Options of {@link redisEventBus}. */
export interface RedisEventBusOptions {
  /** The channel (default `rxmcp:events`): instances of one server share it, other servers use another. */
  channel?: string
  /** Told of a publish that failed or a message that could not be read (default: ignored). */
  onError?: (error: unknown) => void
}

/**
 * An {@link EventBus} on Redis pub/sub. Each subscriber to `remote` (the server, once, from its
 * creation to its close) opens a connection of its own: a Redis connection in subscriber mode
 * takes no other commands.
 * @example
 * const redis = await connectRedis(url)
 * createServer(info, { eventBus: redisEventBus(redis), tasks: { store: redisTaskStore(redis) } })
 */
export function redisEventBus(redis: RedisPubSubLike, options: RedisEventBusOptions = {}): EventBus {
  const channel = options.channel ?? 'rxmcp:events'
  const onError = options.onError ?? (() => {})
  const origin = randomId(9)
  const remote = new Observable<ServerEvent>(subscriber => channelMessages(redis, channel, onError).subscribe(text => {
    try {
      const message = JSON.parse(text) as { origin: string; event: ServerEvent }
      if (message.origin !== origin) subscriber.next(message.event)
    } catch (error) { onError(error) }
  }))
  return {
    publish(event: ServerEvent): void {
      redis.publish(channel, JSON.stringify({ origin, event })).catch(onError)
    },
    remote,
  }
}

/**
 * The messages of one pub/sub channel, on a connection of their own (a Redis connection in
 * subscriber mode takes no other commands), opened per subscriber and closed with it. A lost
 * connection is reported to `onError`, never thrown: node-redis reconnects and subscribes again.
 */
export function channelMessages(redis: RedisPubSubLike, channel: string, onError: (error: unknown) => void): Observable<string> {
  return new Observable<string>(subscriber => {
    const connection = redis.duplicate()
    connection.on?.('error', onError)
    void connection.connect().then(() => connection.subscribe(channel, text => subscriber.next(text))).catch(onError)
    // Run once, when the subscriber goes.
    return () => {
      void connection.unsubscribe(channel).catch(() => {}).then(() => (connection.close ?? connection.quit)?.call(connection)).catch(() => {})
    }
  })
}
