import { describe, expect, it } from 'vitest'
import { REQUEST_STATE_STORE_DEFAULTS, RequestStateCodec, memoryRequestStateStore, paramsDigest, type RoundState } from '../../actors/server/request-state.ts'
import { ErrorCode, RateLimitedError } from '../../lib/jsonrpc/errors.ts'

const KEY = 'a request-state key of 32 bytes!'
const TTL = 60_000

const STATE: Omit<RoundState, 'expires' | 'id'> = {
  method: 'tools/call',
  digest: 'digest-of-params',
  principal: '',
  asked: { user_name: 'elicitation/create' },
  answers: { earlier: { action: 'accept', content: { name: 'Ada' } } },
  data: { step: 2, notes: ['kept'] },
}

/** A codec whose clock the test moves by hand. */
function codecAt(start: number, key: string | Uint8Array = KEY) {
  const clock = { now: start }
  return { clock, codec: new RequestStateCodec(key, TTL, () => clock.now) }
}

/** `text` with the character at `index` replaced by another base64url character. */
function changeAt(text: string, index: number): string {
  const replacement = text[index] === 'A' ? 'B' : 'A'
  return text.slice(0, index) + replacement + text.slice(index + 1)
}

function base64url(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64url')
}

describe('RequestStateCodec', () => {
  it('opens what it sealed, with the expiry its clock and TTL give', async () => {
    const { codec } = codecAt(1_000)
    const sealed = await codec.seal(STATE)
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/)
    expect(await codec.open(sealed)).toEqual({ ...STATE, id: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/), expires: 1_000 + TTL })
  })

  it('gives every state it seals an id of its own', async () => {
    const { codec } = codecAt(1_000)
    const [first, second] = await Promise.all([codec.seal(STATE), codec.seal(STATE)])
    const ids = await Promise.all([codec.open(first), codec.open(second)]).then(states => states.map(state => (state as RoundState).id))
    expect(ids[0]).not.toBe(ids[1])
  })

  it('refuses an authentic state without an id as malformed', async () => {
    const payload = `v1.${base64url(new TextEncoder().encode(JSON.stringify({ ...STATE, expires: 10 ** 15 })))}`
    const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(KEY), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
    const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(payload)))
    expect(await codecAt(0).codec.open(`${payload}.${base64url(mac)}`)).toBe('malformed')
  })

  it('opens a state sealed by another codec with the same key (scale-out)', async () => {
    const sealed = await codecAt(0).codec.seal(STATE)
    expect(await codecAt(0, new TextEncoder().encode(KEY)).codec.open(sealed)).toEqual({ ...STATE, id: expect.any(String), expires: TTL })
  })

  it('refuses a state whose payload was changed as forged', async () => {
    const { codec } = codecAt(0)
    const [version, payload, mac] = (await codec.seal(STATE)).split('.')
    expect(await codec.open(`${version}.${changeAt(payload!, 10)}.${mac}`)).toBe('forged')
    expect(await codec.open(`${version}.${payload}A.${mac}`)).toBe('forged')
  })

  it('refuses a state whose mac was changed as forged', async () => {
    const { codec } = codecAt(0)
    const [version, payload, mac] = (await codec.seal(STATE)).split('.')
    expect(await codec.open(`${version}.${payload}.${changeAt(mac!, 0)}`)).toBe('forged')
    expect(await codec.open(`${version}.${payload}.${mac!.slice(0, 40)}`)).toBe('forged')
  })

  it('refuses a state sealed under another key as forged', async () => {
    const sealed = await codecAt(0, 'another key, also 32 bytes long!').codec.seal(STATE)
    expect(await codecAt(0).codec.open(sealed)).toBe('forged')
  })

  it.each([
    ['a number', 42],
    ['undefined', undefined],
    ['an object', { state: 'v1.a.b' }],
    ['one part', 'opaque'],
    ['two parts', 'v1.abc'],
    ['four parts', 'v1.a.b.c'],
    ['another version', 'v2.abc.def'],
    ['a mac that is not base64url', 'v1.abc.not+base64/'],
    ['a mac of impossible length', 'v1.abc.abcde'],
  ])('refuses %s as malformed', async (_, sealed) => {
    expect(await codecAt(0).codec.open(sealed)).toBe('malformed')
  })

  it('refuses an authentic payload that is not JSON as malformed', async () => {
    const payload = `v1.${base64url(new TextEncoder().encode('not json {'))}`
    const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(KEY), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
    const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(payload)))
    expect(await codecAt(0).codec.open(`${payload}.${base64url(mac)}`)).toBe('malformed')
  })

  it('opens a state until its expiry and refuses it as expired after', async () => {
    const { clock, codec } = codecAt(5_000)
    const sealed = await codec.seal(STATE)
    clock.now = 5_000 + TTL
    expect(await codec.open(sealed)).toMatchObject({ method: 'tools/call', expires: 5_000 + TTL })
    clock.now = 5_000 + TTL + 1
    expect(await codec.open(sealed)).toBe('expired')
  })

  it('refuses a key shorter than 16 bytes', () => {
    expect(() => new RequestStateCodec('short', TTL)).toThrow(TypeError)
    expect(() => new RequestStateCodec('short', TTL)).toThrow('requestStateKey must be at least 16 bytes')
  })

  it('makes a random key per codec when none is given', async () => {
    const sealed = await new RequestStateCodec(undefined, TTL).seal(STATE)
    expect(await new RequestStateCodec(undefined, TTL).open(sealed)).toBe('forged')
  })
})

describe('memoryRequestStateStore', () => {
  /** A store whose clock the test moves by hand. */
  function storeAt(start: number, maxEntries?: number) {
    const clock = { now: start }
    return { clock, store: memoryRequestStateStore({ maxEntries, now: () => clock.now }) }
  }

  it('lets each id be claimed once while its state lives', () => {
    const { clock, store } = storeAt(0)
    expect(store.claim('a', 1_000)).toBe(true)
    expect(store.claim('b', 1_000)).toBe(true)
    expect(store.claim('a', 1_000)).toBe(false)
    clock.now = 1_000
    expect(store.claim('a', 1_000)).toBe(false)
  })

  it('forgets an id once its state has expired (the codec refuses the state then)', () => {
    const { clock, store } = storeAt(0)
    store.claim('a', 1_000)
    clock.now = 1_001
    expect(store.claim('a', 1_000)).toBe(true)
  })

  it('never drops a live id to make room: when full it refuses with -31029 until the first expires', () => {
    const { clock, store } = storeAt(0, 3)
    for (const [id, expires] of [['c', 3_000], ['a', 1_000], ['b', 2_000]] as const) expect(store.claim(id, expires)).toBe(true)
    let error: unknown
    try { store.claim('d', 4_000) } catch (caught) { error = caught }
    expect(error).toBeInstanceOf(RateLimitedError)
    expect(error).toMatchObject({ code: ErrorCode.RateLimited, data: { retryAfterMs: 1_001 } })
    expect(store.claim('a', 1_000)).toBe(false)
    clock.now = 1_500
    // 'a' expired: its place goes to 'd', and the others are still remembered.
    expect(store.claim('d', 4_000)).toBe(true)
    expect(['b', 'c', 'd'].map(id => store.claim(id, 5_000))).toEqual([false, false, false])
    // At 3,500 'b' and 'c' have expired (claimable again); 'd' lives, so the third new id finds no room.
    clock.now = 3_500
    expect(store.claim('b', 5_000)).toBe(true)
    expect(store.claim('c', 5_000)).toBe(true)
    expect(() => store.claim('e', 5_000)).toThrow(RateLimitedError)
    expect(store.claim('d', 5_000)).toBe(false)
  })

  it('holds 100,000 ids by default', () => {
    expect(REQUEST_STATE_STORE_DEFAULTS.maxEntries).toBe(100_000)
  })
})

describe('paramsDigest', () => {
  const params = { name: 'greet', arguments: { greeting: 'Hi', options: { loud: true, times: 2 } } }

  it('leaves out _meta, inputResponses and requestState', async () => {
    const retry = {
      ...params,
      _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', progressToken: 7 },
      inputResponses: { user_name: { action: 'accept' } },
      requestState: 'v1.a.b',
    }
    expect(await paramsDigest(retry)).toBe(await paramsDigest(params))
  })

  it('does not depend on the order of keys, at any depth', async () => {
    const reordered = { arguments: { options: { times: 2, loud: true }, greeting: 'Hi' }, name: 'greet' }
    expect(await paramsDigest(reordered)).toBe(await paramsDigest(params))
  })

  it('differs when a value, a key or an array order differs', async () => {
    const digest = await paramsDigest(params)
    expect(await paramsDigest({ ...params, arguments: { ...params.arguments, greeting: 'Bye' } })).not.toBe(digest)
    expect(await paramsDigest({ ...params, name: 'other' })).not.toBe(digest)
    expect(await paramsDigest({ ...params, extra: null })).not.toBe(digest)
    expect(await paramsDigest({ list: [1, 2] })).not.toBe(await paramsDigest({ list: [2, 1] }))
  })

  it('is a SHA-256 in base64url, the same for no params and empty params', async () => {
    const digest = await paramsDigest(undefined)
    expect(digest).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(await paramsDigest({})).toBe(digest)
    expect(await paramsDigest({ _meta: { anything: true } })).toBe(digest)
  })
})
