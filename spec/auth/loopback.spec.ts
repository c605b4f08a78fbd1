import { afterEach, describe, expect, it, vi } from 'vitest'
import { AuthorizationError, LOOPBACK_REDIRECT_DEFAULTS, loopbackRedirect, type LoopbackRedirect } from '../../auth/client.ts'

let loopback: LoopbackRedirect | undefined

afterEach(async () => {
  vi.useRealTimers()
  await loopback?.close()
  loopback = undefined
})

describe('issue 20: the loopback redirect accepts the first callback', () => {
  it('answers callbacks without the authorization\'s state 400 and keeps waiting; only the matching one completes', async () => {
    loopback = await loopbackRedirect({ onAuthorizationUrl: () => {} })
    const authorizationUrl = new URL('https://as.example/authorize?response_type=code&client_id=c&state=the-real-state')
    let callback: URL | undefined
    const waiting = loopback.redirect(authorizationUrl).then(url => { callback = url })
    const get = (query: string) => fetch(`${loopback!.redirectUri}?${query}`)

    // Forged by another local process: another state, none, an error without the state.
    for (const query of ['code=forged&state=attacker-state', 'code=forged', 'error=access_denied', 'code=forged&state=the-real-stat', 'code=forged&state=the-real-state-']) {
      const forged = await get(query)
      expect(forged.status).toBe(400)
      expect(await forged.text()).toBe('This callback does not belong to the authorization in progress.')
    }
    expect(callback).toBeUndefined()

    const real = await get('code=real&state=the-real-state&iss=https%3A%2F%2Fas.example')
    expect(real.status).toBe(200)
    await waiting
    expect(callback?.searchParams.get('code')).toBe('real')
    expect(callback?.href).toBe(`${loopback.redirectUri}?code=real&state=the-real-state&iss=https%3A%2F%2Fas.example`)
    // Done: later callbacks find nothing waiting.
    expect((await get('code=late&state=the-real-state')).status).toBe(404)
  })

  it('completes with an error callback that carries the state (the grant then reports the denial)', async () => {
    loopback = await loopbackRedirect({ onAuthorizationUrl: () => {} })
    const waiting = loopback.redirect(new URL('https://as.example/authorize?state=s1'))
    expect((await fetch(`${loopback.redirectUri}?error=access_denied&state=s1`)).status).toBe(200)
    expect((await waiting).searchParams.get('error')).toBe('access_denied')
  })

  it('still fails the authorization after timeoutMs (5 minutes), whatever bad callbacks came', async () => {
    loopback = await loopbackRedirect({ onAuthorizationUrl: () => {} })
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    let outcome: unknown
    const waiting = loopback.redirect(new URL('https://as.example/authorize?state=s2')).then(() => { outcome = 'completed' }, (error: unknown) => { outcome = error })
    expect((await fetch(`${loopback.redirectUri}?code=x&state=other`)).status).toBe(400)
    await vi.advanceTimersByTimeAsync(LOOPBACK_REDIRECT_DEFAULTS.timeoutMs - 1)
    await new Promise(resolve => setImmediate(resolve))
    expect(outcome).toBeUndefined()
    await vi.advanceTimersByTimeAsync(1)
    await waiting
    expect(outcome).toBeInstanceOf(AuthorizationError)
    expect((outcome as AuthorizationError).message).toBe('no answer from the browser in time')
  })
})
