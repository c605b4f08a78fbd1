import { describe, expect, it } from 'vitest'
import { RequestStateCodec, paramsDigest, type RoundState } from '../../actors/server/request-state.ts'

const KEY = 'a request-state key of 32 bytes!'
const TTL = 60_000

const STATE: Omit<RoundState, 'expires'> = {
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
    expect(await codec.open(sealed)).toEqual({ ...STATE, expires: 1_000 + TTL })
  })

  it('opens a state sealed by another codec with the same key (scale-out)', async () => {
    const sealed = await codecAt(0).codec.seal(STATE)
    expect(await codecAt(0, new TextEncoder().encode(KEY)).codec.open(sealed)).toEqual({ ...STATE, expires: TTL })
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
