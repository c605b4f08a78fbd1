import { describe, expect, it } from 'vitest'
import { appAllow, appCsp, appUriOf, hasUiExtension, isAppCallable, isModelVisible, uiCapability, UI_EXTENSION } from '../../lib/apps.ts'
import { withCsp } from '../../host/app-bridge.ts'

describe('appCsp', () => {
  it('gives an app with no declaration no network, and inline script and style', () => {
    expect(appCsp(undefined)).toBe([
      `default-src 'none'`, `script-src 'unsafe-inline' blob:`, `style-src 'unsafe-inline'`, `img-src data: blob:`, `font-src data:`,
      `media-src data: blob:`, `connect-src 'none'`, `frame-src 'none'`, `base-uri 'self'`, `object-src 'none'`, `form-action 'none'`,
    ].join('; '))
  })

  it('adds the declared origins to their directives', () => {
    const csp = appCsp({ connectDomains: ['https://api.example.com', 'wss://live.example.com'], resourceDomains: ['https://*.cdn.example'], frameDomains: ['https://www.youtube.com'], baseUriDomains: ['https://base.example'] })
    expect(csp).toContain(`connect-src https://api.example.com wss://live.example.com`)
    expect(csp).toContain(`script-src 'unsafe-inline' blob: https://*.cdn.example`)
    expect(csp).toContain(`img-src data: blob: https://*.cdn.example`)
    expect(csp).toContain(`frame-src https://www.youtube.com`)
    expect(csp).toContain(`base-uri https://base.example`)
  })

  it.each([
    ["'unsafe-eval'"], ['*'], ['https://a.example; script-src *'], ['https://a.example https://b.example'], ['javascript:alert(1)'], ['http:'],
  ])('drops %s, which is not a plain origin', entry => {
    const csp = appCsp({ connectDomains: [entry], resourceDomains: [entry] })
    expect(csp).toContain(`connect-src 'none'`)
    expect(csp).not.toContain(entry)
  })
})

describe('appAllow', () => {
  it.each([
    [undefined, ''],
    [{}, ''],
    [{ camera: {} }, 'camera'],
    [{ camera: {}, microphone: {}, geolocation: {}, clipboardWrite: {} }, 'camera; microphone; geolocation; clipboard-write'],
  ])('maps %j to %j', (permissions, allow) => {
    expect(appAllow(permissions)).toBe(allow)
  })
})

describe('appUriOf, isAppCallable, isModelVisible', () => {
  it.each([
    [{}, undefined, true, true],
    [{ _meta: { ui: { resourceUri: 'ui://a/view.html' } } }, 'ui://a/view.html', true, true],
    [{ _meta: { 'ui/resourceUri': 'ui://old/view.html' } }, 'ui://old/view.html', true, true],
    [{ _meta: { ui: { resourceUri: 'https://not-ui.example' } } }, undefined, true, true],
    [{ _meta: { ui: { resourceUri: 'ui://a', visibility: ['app'] } } }, 'ui://a', true, false],
    [{ _meta: { ui: { resourceUri: 'ui://a', visibility: ['model'] } } }, 'ui://a', false, true],
  ] as const)('reads %j', (tool, uri, appCallable, modelVisible) => {
    expect([appUriOf(tool), isAppCallable(tool), isModelVisible(tool)]).toEqual([uri, appCallable, modelVisible])
  })
})

describe('hasUiExtension', () => {
  it.each([
    [undefined, false],
    [{}, false],
    [uiCapability(), true],
    [{ extensions: { [UI_EXTENSION]: {} } }, true],
    [{ extensions: { [UI_EXTENSION]: { mimeTypes: ['text/html+skybridge'] } } }, false],
  ])('reads %j as %s', (capabilities, expected) => {
    expect(hasUiExtension(capabilities)).toBe(expected)
  })
})

describe('withCsp', () => {
  it.each([
    [`<!doctype html><html><head><title>t</title></head><body>x</body></html>`, `<!doctype html><html><head><meta http-equiv="Content-Security-Policy" content="default-src 'none'"><title>t</title></head><body>x</body></html>`],
    [`<html lang="en"><body>x</body></html>`, `<html lang="en"><head><meta http-equiv="Content-Security-Policy" content="default-src 'none'"></head><body>x</body></html>`],
    [`<p>x</p>`, `<!doctype html><html><head><meta http-equiv="Content-Security-Policy" content="default-src 'none'"></head><body><p>x</p></body></html>`],
  ])('puts the policy first in the head of %s', (html, expected) => {
    expect(withCsp(html, `default-src 'none'`)).toBe(expected)
  })

  it('escapes the policy as an attribute value', () => {
    expect(withCsp('<head></head>', `a"b<c`)).toBe('<head><meta http-equiv="Content-Security-Policy" content="a&quot;b&lt;c"></head>')
  })
})
