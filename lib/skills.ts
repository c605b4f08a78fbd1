/**
 * The skills extension (SEP-2640, `io.modelcontextprotocol/skills`): what a skill entry is, its
 * naming rules and limits, and the checks both ends make. No I/O: a server hands file bytes in, a
 * client hands in what `resources/read` gave it.
 *
 * A skill is a folder whose root holds `SKILL.md` (YAML frontmatter with at least `name` and
 * `description`, then instructions) and any supporting files. Each file is a resource
 * `skill://<skill-path>/<file path>`; the last segment of `<skill-path>` is the skill's name.
 */
import { LocalError, LocalErrorCode } from './jsonrpc/errors.ts'
import { isJsonObject } from './jsonrpc/guards.ts'
import { readFrontmatter } from './frontmatter.ts'

/** The extension's identifier. */
export const SKILLS_EXTENSION = 'io.modelcontextprotocol/skills'

/** The manifest file at a skill's root. */
export const SKILL_MANIFEST = 'SKILL.md'

/** Limits of the extension: files per skill, and bytes of a skill's files together. */
export const SKILL_LIMITS = { maxResources: 512, maxTotalBytes: 16 * 1024 * 1024 } as const

/** Agent Skills naming: 1-64 of lowercase letters, digits and hyphens; no hyphen first, last or twice in a row. */
export const SKILL_NAME = /^(?!.*--)[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/

/** A skill's files as a server holds them (read from disk, or built in memory). */
export interface SkillFolder {
  /** The skill's name (the last segment of its `skill://` path). */
  name: string
  /** Its files, paths relative to the skill's root with `/` separators, SKILL.md among them. */
  files: Array<{ path: string; bytes: Uint8Array }>
  /** Its subfolders, relative paths with `/` separators. */
  folders: string[]
}

/** One file of a skill as an entry lists it. */
export interface SkillResource {
  uri: string
  /** `sha256:` and 64 lowercase hex digits, over the file's bytes. */
  digest: string
  /** Bytes. */
  size: number
}

/** A skill as `skills/list` and `skills/get` describe it. */
export interface SkillEntry {
  /** The URI of its SKILL.md. */
  uri: string
  /** The SKILL.md frontmatter, as a JSON object. */
  frontmatter: Record<string, unknown>
  /** Every file (SKILL.md included), or `'dynamic'` when the server publishes no manifest. */
  resources: SkillResource[] | 'dynamic'
  _meta?: Record<string, unknown>
}

/** `sha256:<hex>` of some bytes (Web Crypto). */
export async function sha256Digest(bytes: Uint8Array): Promise<string> {
  const hash = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>))
  let hex = ''
  for (const byte of hash) hex += byte.toString(16).padStart(2, '0')
  return `sha256:${hex}`
}

/** The skill name a SKILL.md URI names (its last path segment before `/SKILL.md`), if it is one. */
export function skillNameOf(uri: string): string | undefined {
  const scheme = uri.indexOf('://')
  if (scheme < 0 || !uri.endsWith(`/${SKILL_MANIFEST}`)) return undefined
  const segments = uri.slice(scheme + 3, -(SKILL_MANIFEST.length + 1)).split('/').filter(segment => segment.length > 0)
  return segments.at(-1)
}

/** The URI of a skill's folder, from its SKILL.md URI. */
export function skillRootOf(uri: string): string {
  return uri.slice(0, -(SKILL_MANIFEST.length + 1))
}

/** Why a skill failed verification. */
export type SkillProblem = 'size' | 'digest' | 'frontmatter' | 'name' | 'limits' | 'unlisted'

/**
 * A skill file that does not match its entry (size, digest), a SKILL.md whose frontmatter differs
 * from the entry's, or an entry that breaks the naming rules or limits. Its content is never
 * handed over.
 */
export class SkillVerificationError extends LocalError {
  override name = 'SkillVerificationError'
  readonly code = LocalErrorCode.SkillVerification
  constructor(readonly uri: string, readonly problem: SkillProblem, message: string) {
    super(`Skill verification failed for ${uri}: ${message}`)
  }
}

/** Checks an entry before anything of it is read: its name, the URIs of its files, and the limits. */
export function checkSkillEntry(entry: SkillEntry): void {
  const name = skillNameOf(entry.uri)
  if (name === undefined || !SKILL_NAME.test(name) || entry.frontmatter.name !== name) {
    throw new SkillVerificationError(entry.uri, 'name', `the skill name ${JSON.stringify(name)} is not a valid name equal to frontmatter.name ${JSON.stringify(entry.frontmatter.name)}`)
  }
  if (entry.resources === 'dynamic') return
  const root = `${skillRootOf(entry.uri)}/`
  let total = 0
  for (const file of entry.resources) {
    if (!file.uri.startsWith(root)) throw new SkillVerificationError(entry.uri, 'limits', `${file.uri} lies outside the skill`)
    total += file.size
  }
  if (entry.resources.length > SKILL_LIMITS.maxResources) throw new SkillVerificationError(entry.uri, 'limits', `${entry.resources.length} files, more than ${SKILL_LIMITS.maxResources}`)
  if (total > SKILL_LIMITS.maxTotalBytes) throw new SkillVerificationError(entry.uri, 'limits', `${total} bytes, more than ${SKILL_LIMITS.maxTotalBytes}`)
}

/**
 * Checks one file's bytes against the entry: listed, its size, then its digest; for SKILL.md,
 * its frontmatter field by field against the entry's. Resolves when all hold.
 */
export async function verifySkillFile(entry: SkillEntry, uri: string, bytes: Uint8Array): Promise<void> {
  if (entry.resources !== 'dynamic') {
    const listed = entry.resources.find(file => file.uri === uri)
    if (listed === undefined) throw new SkillVerificationError(uri, 'unlisted', 'the file is not in the skill\'s resources')
    // A size that differs fails before any hashing: it cannot match.
    if (bytes.byteLength !== listed.size) throw new SkillVerificationError(uri, 'size', `${bytes.byteLength} bytes where the entry says ${listed.size}`)
    const digest = await sha256Digest(bytes)
    if (digest !== listed.digest) throw new SkillVerificationError(uri, 'digest', `digest ${digest} where the entry says ${listed.digest}`)
  }
  if (uri !== entry.uri) return
  const read = await readFrontmatter(new TextDecoder().decode(bytes))
  if (read === undefined) throw new SkillVerificationError(uri, 'frontmatter', 'SKILL.md has no readable YAML frontmatter')
  const differing = [...new Set([...Object.keys(read.data), ...Object.keys(entry.frontmatter)])]
    .filter(key => !sameJson(read.data[key] ?? null, entry.frontmatter[key] ?? null))
  if (differing.length > 0) throw new SkillVerificationError(uri, 'frontmatter', `the frontmatter differs from the entry's in ${differing.join(', ')}`)
}

/** Reads an entry off the wire; undefined when it is not one. */
export function readSkillEntry(value: unknown): SkillEntry | undefined {
  if (!isJsonObject(value) || typeof value.uri !== 'string' || !isJsonObject(value.frontmatter)) return undefined
  const resources = value.resources
  if (resources === 'dynamic') return value as unknown as SkillEntry
  if (!Array.isArray(resources)) return undefined
  for (const file of resources) {
    if (!isJsonObject(file) || typeof file.uri !== 'string' || typeof file.digest !== 'string' || typeof file.size !== 'number') return undefined
  }
  return value as unknown as SkillEntry
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return false
  const keys = new Set([...Object.keys(a), ...Object.keys(b)])
  for (const key of keys) if (!sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false
  return true
}
