import { describe, expect, it } from 'vitest'
import { authorizeMessage, type AuthRefusal, type Authenticator, type AuthRequest, type Principal } from '../../lib/auth.ts'

const request: AuthRequest = { method: 'GET', pathname: '/mcp', header: () => null }
const NOW = 1_700_000_000_000
const alice: Principal = { subject: 'alice', kind: 'user', scopes: ['mcp'], expiresAt: NOW / 1000 + 60 }
const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'write_file' } }

/** An authenticator that refuses with `refusal` whatever it is asked. */
const refusing = (refusal: AuthRefusal | undefined): Authenticator => ({ authenticate: async () => ({ type: 'allow', principal: alice }), authorize: () => refusal })

const plain403: AuthRefusal = {
  status: 403,
  headers: { 'WWW-Authenticate': 'Bearer error="insufficient_scope", scope="mcp files:write"' },
  body: JSON.stringify({ error: 'insufficient_scope' }),
}

describe('authorizeMessage', () => {
  it.each([
    ['no authenticator', undefined, alice, NOW, { type: 'allow' }],
    ['no principal', refusing(plain403), undefined, NOW, { type: 'allow' }],
    ['an authenticator without authorize', { authenticate: async () => ({ type: 'allow' as const, principal: alice }) }, alice, NOW, { type: 'allow' }],
    ['authorize letting it through', refusing(undefined), alice, NOW, { type: 'allow' }],
    ['a token without expiry', refusing(undefined), { subject: 'svc', scopes: [] }, Number.MAX_SAFE_INTEGER, { type: 'allow' }],
    ['a token at its expiry', refusing(undefined), alice, NOW + 60_000, {
      type: 'refuse', answer: { status: 401 }, error: { code: -31003, data: { error: 'invalid_token' } },
    }],
    ['a refusal with its own error', refusing({ ...plain403, error: { code: -31003, message: 'no', data: { why: 'policy' } } }), alice, NOW, {
      type: 'refuse', answer: { status: 403 }, error: { code: -31003, message: 'no', data: { why: 'policy' } },
    }],
    ['a refusal without one: its OAuth error and the challenge\'s scopes', refusing(plain403), alice, NOW, {
      type: 'refuse', answer: { status: 403 },
      error: { code: -31003, message: 'Forbidden: insufficient_scope', data: { error: 'insufficient_scope', requiredScopes: ['mcp', 'files:write'], missingScopes: ['files:write'] } },
    }],
  ] as const)('%s', (_case, auth, principal, now, expected) => {
    expect(authorizeMessage(auth, principal, call, now, request)).toMatchObject(expected)
  })
})
