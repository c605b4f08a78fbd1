/**
 * A server's event bus shared over Redis pub/sub (ServerOptions.eventBus): list changes, resource
 * updates and task changes raised on one instance reach the sessions and listen streams of every
 * instance. Each instance tags what it publishes and ignores its own messages when they come back.
 */
import { Observable } from '../lib/rx.ts'
import { randomId } from '../lib/base64url.ts'
import type { EventBus, ServerEvent } from '../lib/events.ts'

/**
 * The pub/sub commands the bus uses (node-redis v5): a client to publish, and a duplicate to
 * subscribe. A connection that says `pubsub: 'sharded'` (`connectRedis` to a Redis Cluster) is
 * used with SPUBLISH / SSUBSCRIBE on itself: a channel then lives on the shard of its slot, instead
 * of every message crossing the cluster bus to every node. One without `duplicate` (a Sentinel
 * client) subscribes on itself too: node-redis keeps its subscriptions on a connection of their own.
 */
export interface RedisPubSubLike {
  publish(channel: string, message: string): Promise<number>
  duplicate?(): RedisPubSubLike & { connect(): Promise<unknown>; close?(): Promise<unknown>; quit?(): Promise<unknown>; on?(event: 'error', listener: (error: unknown) => void): unknown }
  subscribe(channel: string, listener: (message: string) => void): Promise<unknown>
  unsubscribe(channel: string, listener?: (message: string) => void): Promise<unknown>
  /** Sharded pub/sub (Redis 7), used when `pubsub` is `'sharded'`. */
  sPublish?(channel: string, message: string): Promise<number>
  sSubscribe?(channel: string, listener: (message: string) => void): Promise<unknown>
  sUnsubscribe?(channel: string, listener?: (message: string) => void): Promise<unknown>
  readonly pubsub?: 'sharded' | 'classic'
}

/** PUBLISH, or SPUBLISH on a sharded connection: how many subscribers (of the channel's shard) got it. */
export function publishOn(redis: RedisPubSubLike, channel: string, message: string): Promise<number> {
  return redis.pubsub === 'sharded' && redis.sPublish !== undefined ? redis.sPublish(channel, message) : redis.publish(channel, message)
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
      publishOn(redis, channel, JSON.stringify({ origin, event })).catch(onError)
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
  const sharded = redis.pubsub === 'sharded' && redis.sSubscribe !== undefined && redis.sUnsubscribe !== undefined
  if (sharded || redis.duplicate === undefined) {
    // A cluster or Sentinel client: its subscriptions already have connections of their own (per
    // shard; following the primary), so this listener is added to it and removed with it alone.
    return new Observable<string>(subscriber => {
      const listener = (text: string) => subscriber.next(text)
      const subscribing = (sharded ? redis.sSubscribe!(channel, listener) : redis.subscribe(channel, listener)).catch(onError)
      return () => {
        void subscribing.then(() => sharded ? redis.sUnsubscribe!(channel, listener) : redis.unsubscribe(channel, listener)).catch(() => {})
      }
    })
  }
  const duplicate = redis.duplicate
  return new Observable<string>(subscriber => {
    const connection = duplicate.call(redis)
    connection.on?.('error', onError)
    void connection.connect().then(() => connection.subscribe(channel, text => subscriber.next(text))).catch(onError)
    // Run once, when the subscriber goes.
    return () => {
      void connection.unsubscribe(channel).catch(() => {}).then(() => (connection.close ?? connection.quit)?.call(connection)).catch(() => {})
    }
  })
}
