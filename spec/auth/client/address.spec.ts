import { describe, expect, it } from 'vitest'
import { addressKind, hostKind, normalizeHost, type AddressKind } from '../../../auth/client/address.ts'
import { checkEndpoint, type EndpointPolicy } from '../../../auth/client/endpoint-guard.ts'
import { AuthorizationError, AuthorizationErrorCode } from '../../../auth/client/errors.ts'

describe('hostKind', () => {
  it.each<[string, AddressKind | undefined]>([
    ['127.0.0.1', 'loopback'], ['127.255.0.9', 'loopback'], ['[::1]', 'loopback'], ['localhost', 'loopback'], ['LOCALHOST.', 'loopback'], ['app.localhost', 'loopback'],
    ['10.0.0.1', 'private'], ['172.16.0.1', 'private'], ['172.31.255.255', 'private'], ['192.168.1.1', 'private'], ['100.64.0.1', 'private'], ['100.100.100.200', 'private'],
    ['[fc00::1]', 'private'], ['[fd00:ec2::254]', 'private'], ['[fec0::1]', 'private'],
    ['169.254.169.254', 'link-local'], ['169.254.170.2', 'link-local'], ['[fe80::1]', 'link-local'], ['[febf::1]', 'link-local'],
    ['0.0.0.0', 'special'], ['[::]', 'special'], ['255.255.255.255', 'special'], ['224.0.0.1', 'special'], ['[ff02::1]', 'special'],
    ['192.0.0.192', 'special'], ['192.0.2.1', 'special'], ['198.18.0.1', 'special'], ['203.0.113.9', 'special'], ['[2001:db8::1]', 'special'],
    // IPv4 inside IPv6 is judged by the IPv4 address.
    ['[::ffff:7f00:1]', 'loopback'], ['[::ffff:a9fe:a9fe]', 'link-local'], ['[64:ff9b::a00:1]', 'private'], ['[2002:c0a8:101::1]', 'private'], ['[::ffff:808:808]', 'public'],
    ['8.8.8.8', 'public'], ['172.32.0.1', 'public'], ['[2606:4700:4700::1111]', 'public'],
    ['example.com', undefined], ['10.0.0.1.nip.io', undefined],
  ])('%s is %s', (host, kind) => {
    expect(hostKind(host)).toBe(kind)
  })

  it('reads the forms URL parsing normalizes numeric hosts to', () => {
    for (const written of ['http://2130706433/', 'http://0x7f.1/', 'http://017700000001/', 'http://[0:0:0:0:0:ffff:127.0.0.1]/']) {
      expect(hostKind(new URL(written).hostname)).toBe('loopback')
    }
  })
})

describe('addressKind', () => {
  it('reads what a resolver returns, dotted IPv4 tails and zones included', () => {
    expect(addressKind('::ffff:169.254.169.254')).toBe('link-local')
    expect(addressKind('fe80::1%eth0')).toBe('link-local')
    expect(addressKind('1:2:3:4:5:6:7:8')).toBe('public')
  })

  it.each(['1::2::3', 'gggg::1', '1:2:3:4:5:6:7:8:9', '256.1.1.1', '1.2.3', ''])('gives undefined for %j', text => {
    expect(addressKind(text)).toBeUndefined()
  })
})

describe('normalizeHost', () => {
  it('lower-cases, unbrackets and drops a trailing dot', () => {
    expect(normalizeHost('[FE80::1]')).toBe('fe80::1')
    expect(normalizeHost('AS.Example.')).toBe('as.example')
  })
})

describe('checkEndpoint', () => {
  const policy: EndpointPolicy = { allowInsecureRequests: false, allowPrivateNetwork: false, lookup: undefined, maxResponseBytes: 1, timeoutMs: 1, maxRedirects: 0 }
  const publicServer = new URL('https://mcp.example.com/mcp')
  const loopbackServer = new URL('http://127.0.0.1:3000/mcp')
  const outcome = (url: string, server: URL, changes: Partial<EndpointPolicy> = {}) =>
    checkEndpoint(new URL(url), server, { ...policy, ...changes }).then(() => 'allowed', (error: unknown) => {
      expect(error).toBeInstanceOf(AuthorizationError)
      expect((error as AuthorizationError).code).toBe(AuthorizationErrorCode.EndpointRefused)
      return 'refused'
    })

  it.each<[string, URL, Partial<EndpointPolicy>, string]>([
    ['https://as.example.com/token', publicServer, {}, 'allowed'],
    ['http://as.example.com/token', publicServer, {}, 'refused'],
    ['http://as.example.com/token', publicServer, { allowInsecureRequests: true }, 'allowed'],
    ['ftp://as.example.com/token', publicServer, { allowInsecureRequests: true }, 'refused'],
    ['http://127.0.0.1:9000/token', loopbackServer, {}, 'allowed'],
    ['http://localhost:9000/token', loopbackServer, {}, 'allowed'],
    ['http://127.0.0.1:9000/token', publicServer, {}, 'refused'],
    ['https://10.1.2.3/token', publicServer, {}, 'refused'],
    ['https://10.1.2.3/token', loopbackServer, {}, 'refused'],
    ['https://10.1.2.3/token', publicServer, { allowPrivateNetwork: ['10.1.2.3'] }, 'allowed'],
    ['https://10.1.2.4/token', publicServer, { allowPrivateNetwork: ['10.1.2.3'] }, 'refused'],
    ['https://[fe80::1]/token', publicServer, { allowPrivateNetwork: true }, 'allowed'],
    ['http://169.254.169.254/latest', publicServer, { allowInsecureRequests: true }, 'refused'],
    ['https://0.0.0.0/token', loopbackServer, {}, 'refused'],
    ['https://as.internal/token', publicServer, { lookup: async () => ['93.184.216.34', '10.0.0.1'] }, 'refused'],
    ['https://as.internal/token', publicServer, { lookup: async () => ['93.184.216.34'] }, 'allowed'],
    ['https://as.internal/token', loopbackServer, { lookup: async () => ['127.0.0.1'] }, 'allowed'],
    ['https://as.internal/token', publicServer, { lookup: async () => ['127.0.0.1'] }, 'refused'],
    ['https://as.internal/token', publicServer, { lookup: async () => { throw new Error('ENOTFOUND') } }, 'allowed'],
  ])('%s for an MCP server at %s with %j: %s', async (url, server, changes, expected) => {
    expect(await outcome(url, server, changes)).toBe(expected)
  })
})
