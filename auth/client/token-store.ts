/** The tokens the client holds for one protected resource. */
export interface TokenSet {
  /** The access token. */
  accessToken: string
  /** `bearer`, or `dpop` for a token bound to a DPoP key (RFC 9449). */
  tokenType: 'bearer' | 'dpop'
  /** The refresh token, when the authorization server gave one. */
  refreshToken?: string
  /** When the access token expires, in ms since the epoch (from `expires_in` and the `now` clock). */
  expiresAt?: number
  /** The scopes granted (or, when the server did not say, the scopes asked for), space separated. */
  scope?: string
  /** The issuer of the authorization server that issued the tokens. */
  issuer: string
  /** The client id the tokens were issued to. */
  clientId: string
  /**
   * For a client registered dynamically (RFC 7591): how it authenticates, and its secret, so that
   * a restarted oauthFetch with the same store refreshes as the same client instead of registering
   * again. (Pre-registered credentials come from the options, never from the store.)
   */
  registration?: { method: 'none' | 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt'; clientSecret?: string }
}

/**
 * Where {@link oauthFetch} keeps tokens, keyed by the protected resource (the canonical MCP server URL).
 *
 * Every method may be async. `set` replaces the whole entry; `delete` of a missing key does nothing.
 */
export interface TokenStore {
  /** The tokens stored under `key`, or undefined. */
  get(key: string): Promise<TokenSet | undefined> | TokenSet | undefined
  /** Stores `value` under `key`. */
  set(key: string, value: TokenSet): Promise<void> | void
  /** Forgets `key`. */
  delete(key: string): Promise<void> | void
}

/**
 * A {@link TokenStore} in memory, the default: tokens live as long as the process.
 * @see fileTokenStore
 */
export function memoryTokenStore(): TokenStore {
  const entries = new Map<string, TokenSet>()
  return {
    get: key => entries.get(key),
    set: (key, value) => { entries.set(key, value) },
    delete: key => { entries.delete(key) },
  }
}

/**
 * A {@link TokenStore} in one JSON file (`{ [key]: TokenSet }`), readable only by its owner.
 *
 * Every write goes to a new temporary file beside it, created exclusively (O_CREAT | O_EXCL, so a
 * file or symlink planted at that name fails the write instead of being written through) under a
 * random name with mode 0600, then renamed over the store (rename replaces a symlink at the
 * store's path, never its target). So a crash leaves the old or the new content, and the store is
 * always a fresh file readable only by its owner (an older file with wider rights is replaced).
 * Writes from one store are serialized. A missing file reads as empty. node:fs is loaded on first
 * use, so importing this module costs nothing in a browser.
 * @example
 * oauthFetch({ tokenStore: fileTokenStore(join(homedir(), '.config/me/tokens.json')), … })
 * @see memoryTokenStore
 */
export function fileTokenStore(path: string): TokenStore {
  // Writes wait for each other: two concurrent read-modify-write cycles would lose one.
  let queue: Promise<unknown> = Promise.resolve()
  /** node:fs and node:path, imported on first use. */
  let modules: Promise<[typeof import('node:fs/promises'), typeof import('node:path')]> | undefined
  const node = () => modules ??= Promise.all([import('node:fs/promises'), import('node:path')])
  const read = async (): Promise<Record<string, TokenSet>> => {
    const [{ readFile }] = await node()
    try {
      const value = JSON.parse(await readFile(path, 'utf8')) as unknown
      return typeof value === 'object' && value !== null ? value as Record<string, TokenSet> : {}
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {}
      throw error
    }
  }
  const update = (change: (entries: Record<string, TokenSet>) => void): Promise<void> => {
    const next = queue.then(async () => {
      const [{ mkdir, open, rename, unlink }, { dirname }] = await node()
      const entries = await read()
      change(entries)
      await mkdir(dirname(path), { recursive: true, mode: 0o700 })
      // A name nobody can guess, opened with 'wx' (O_EXCL): never a file or symlink someone planted.
      const temporary = `${path}.${randomSuffix()}.tmp`
      const file = await open(temporary, 'wx', 0o600)
      try {
        try {
          // Exactly 0600 whatever the umask, set on the descriptor rather than through the name.
          await file.chmod(0o600)
          await file.writeFile(JSON.stringify(entries, null, 2))
        } finally {
          await file.close()
        }
        await rename(temporary, path)
      } catch (error) {
        await unlink(temporary).catch(() => undefined)
        throw error
      }
    })
    queue = next.catch(() => undefined)
    return next
  }
  return {
    get: async key => (await read())[key],
    set: (key, value) => update(entries => { entries[key] = value }),
    delete: key => update(entries => { delete entries[key] }),
  }
}

/** 16 random bytes as hex: the temporary file's name part (Web Crypto, in Node and browsers alike). */
function randomSuffix(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  return Array.from(bytes, byte => byte.toString(16).padStart(2, '0')).join('')
}
