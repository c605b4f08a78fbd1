/**
 * Serving skills (SEP-2640, `io.modelcontextprotocol/skills`) from a source of skill folders: the
 * extension declared (with `directoryRead`), each file a `skill://<name>/<path>` resource, and the
 * extension's methods `skills/list`, `skills/get` and `resources/directory/read`. Built on the
 * server's general mechanisms (`server.extension`, `server.method`, `server.resource`), so every
 * era and transport serves it. Each new set of folders replaces the last: resources come and go
 * (the server tells clients `resources/list_changed`) and the entries carry the new digests.
 */
import type { Observable, Subscription } from '../../lib/rx.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { InvalidParamsError } from '../../lib/jsonrpc/errors.ts'
import { pageOf, withCursor } from '../../lib/cursor.ts'
import { base64 } from '../../lib/base64url.ts'
import { readFrontmatter } from '../../lib/frontmatter.ts'
import { SKILLS_EXTENSION, SKILL_LIMITS, SKILL_MANIFEST, SKILL_NAME, sha256Digest, type SkillEntry, type SkillFolder } from '../../lib/skills.ts'
import type { McpServer, CacheHint } from './api.ts'

/** Options of {@link serveSkills}. */
export interface ServeSkillsOptions {
  /** Entries per page of `skills/list` (default 50). */
  pageSize?: number
  /** Cache hints of skills/list and skills/get results (modern era; default `{ ttlMs: 0, cacheScope: 'private' }`). */
  cache?: CacheHint
  /** Told of each folder left out (no readable frontmatter, a bad name) and why (default: console.warn). */
  onSkipped?: (name: string, reason: string) => void
  /** Told when the source fails after the first set was served (say, its directory was removed); what is served stays (default: console.error). */
  onError?: (error: unknown) => void
}

/** The skills being served; `close()` stops following the source and withdraws everything. */
export interface ServedSkills {
  /** Resolves once the first set of skills is served. */
  readonly ready: Promise<void>
  /** The entries now, by SKILL.md URI. */
  readonly entries: ReadonlyMap<string, SkillEntry>
  close(): void
}

/** What is kept of one file: what resources/read answers. */
interface ServedFile { uri: string; bytes: Uint8Array; text: string | undefined; mimeType: string }

const DIRECTORY_MIME = 'inode/directory'

/**
 * Serves the skills `source` gives (an Observable of folder sets, such as `skillsDirectory(root,
 * { watch: true })`, or one array).
 * @example
 * const skills = serveSkills(server, skillsDirectory('./skills', { watch: true }))
 * await skills.ready
 */
export function serveSkills(server: McpServer, source: Observable<SkillFolder[]> | readonly SkillFolder[], options: ServeSkillsOptions = {}): ServedSkills {
  const entries = new Map<string, SkillEntry>()
  /** Folder URIs (a skill's root and its subfolders) with their direct children. */
  const folders = new Map<string, JsonObject[]>()
  let removals: Array<() => void> = []
  const skipped = options.onSkipped ?? ((name: string, reason: string) => console.warn(`[rxmcp] skill ${name} left out: ${reason}`))
  // Both results are cacheable (SEP-2640); the server adds the hints to modern-era results.
  const cache = options.cache ?? { ttlMs: 0, cacheScope: 'private' as const }

  const registrations = [
    server.extension(SKILLS_EXTENSION, { directoryRead: true }),
    server.method('skills/list', params => {
      const page = pageOf('skills', [...entries.values()], params?.cursor, options.pageSize ?? 50)
      return withCursor({ skills: page.items as unknown as JsonObject[] }, page.nextCursor)
    }, { cache }),
    server.method('skills/get', params => {
      const uri = params?.uri
      const entry = typeof uri === 'string' ? entries.get(uri) : undefined
      if (entry === undefined) throw new InvalidParamsError(`Invalid params: no skill at ${JSON.stringify(uri)}`, { uri })
      return { skill: entry as unknown as JsonObject }
    }, { cache }),
    server.method('resources/directory/read', params => {
      const uri = typeof params?.uri === 'string' ? params.uri.replace(/\/+$/, '') : undefined
      const children = uri === undefined ? undefined : folders.get(uri)
      if (children === undefined) throw new InvalidParamsError(`Invalid params: ${JSON.stringify(params?.uri)} is not a directory this server serves`, { uri: params?.uri })
      const page = pageOf('directory', children, params?.cursor, options.pageSize ?? 50)
      return withCursor({ resources: page.items }, page.nextCursor)
    }),
  ]

  let resolveReady!: () => void
  let rejectReady!: (error: unknown) => void
  const ready = new Promise<void>((resolve, reject) => { resolveReady = resolve; rejectReady = reject })
  /** Set by close(): a read still under way then serves nothing. */
  let isClosed = false
  /** Set once the first set is served (or failed): later failures go to onError, not to ready. */
  let isSettled = false
  const failed = (error: unknown) => {
    if (!isSettled) { isSettled = true; rejectReady(error); return }
    if (options.onError) options.onError(error)
    else console.error('[rxmcp] skills source failed:', error)
  }
  const served = () => { isSettled = true; resolveReady() }

  /** Replaces what is served with `skills`. */
  const serve = async (skills: readonly SkillFolder[]) => {
    const next = new Map<string, { entry: SkillEntry; files: ServedFile[] }>()
    const nextFolders = new Map<string, JsonObject[]>()
    for (const skill of skills) {
      const built = await build(skill)
      if (typeof built === 'string') { skipped(skill.name, built); continue }
      next.set(built.entry.uri, built)
      for (const [folder, children] of listing(skill, built.files)) nextFolders.set(folder, children)
    }
    if (isClosed) return
    for (const remove of removals) remove()
    removals = []
    entries.clear()
    folders.clear()
    for (const [uri, { entry, files }] of next) {
      entries.set(uri, entry)
      for (const file of files) removals.push(registerFile(server, file, file.uri === entry.uri ? entry : undefined))
    }
    for (const [folder, children] of nextFolders) folders.set(folder, children)
  }

  let chain = Promise.resolve()
  const subscription: Subscription | undefined = Array.isArray(source)
    ? (chain = serve(source).then(served, failed), undefined)
    : (source as Observable<SkillFolder[]>).subscribe({
      next: skills => { chain = chain.then(() => serve(skills)).then(served, failed) },
      error: failed,
    })
  return {
    ready,
    entries,
    close: () => {
      isClosed = true
      subscription?.unsubscribe()
      for (const remove of removals) remove()
      for (const registration of registrations) registration.remove()
      entries.clear()
      folders.clear()
    },
  }
}

/** A skill's entry and files, or why it cannot be served. */
async function build(skill: SkillFolder): Promise<{ entry: SkillEntry; files: ServedFile[] } | string> {
  if (!SKILL_NAME.test(skill.name)) return `the folder name ${JSON.stringify(skill.name)} is not a valid skill name`
  // A folder built in memory gets the checks skillsDirectory makes on disk: the limits, and paths
  // that stay inside the skill (no `..`, `.` or empty segment, nothing absolute).
  if (skill.files.length > SKILL_LIMITS.maxResources) return `more than ${SKILL_LIMITS.maxResources} files`
  if (skill.files.reduce((total, file) => total + file.bytes.byteLength, 0) > SKILL_LIMITS.maxTotalBytes) return `more than ${SKILL_LIMITS.maxTotalBytes} bytes`
  const escaping = [...skill.files.map(file => file.path), ...skill.folders].find(path => path.split('/').some(segment => segment === '' || segment === '.' || segment === '..'))
  if (escaping !== undefined) return `the path ${JSON.stringify(escaping)} does not stay inside the skill`
  const manifest = skill.files.find(file => file.path === SKILL_MANIFEST)
  if (manifest === undefined) return `no ${SKILL_MANIFEST}`
  const read = await readFrontmatter(textOf(manifest.bytes) ?? '')
  if (read === undefined) return `${SKILL_MANIFEST} has no readable YAML frontmatter`
  const frontmatter = read.data
  if (typeof frontmatter.name !== 'string' || typeof frontmatter.description !== 'string' || frontmatter.description === '') return 'the frontmatter needs a name and a description'
  if (frontmatter.name !== skill.name) return `frontmatter.name ${JSON.stringify(frontmatter.name)} differs from the folder name`
  const root = `skill://${skill.name}`
  const files: ServedFile[] = skill.files.map(file => ({ uri: `${root}/${file.path}`, bytes: file.bytes, text: textOf(file.bytes), mimeType: mimeTypeOf(file.path) }))
  const uri = `${root}/${SKILL_MANIFEST}`
  const resources = await Promise.all(files.map(async file => ({ uri: file.uri, digest: await sha256Digest(file.bytes), size: file.bytes.byteLength })))
  // SKILL.md first: the file a client reads to load the skill.
  resources.sort((a, b) => Number(b.uri === uri) - Number(a.uri === uri))
  return { entry: { uri, frontmatter, resources }, files }
}

/** The direct children of a skill's root and of each of its subfolders. */
function listing(skill: SkillFolder, files: ServedFile[]): Map<string, JsonObject[]> {
  const root = `skill://${skill.name}`
  const children = new Map<string, JsonObject[]>([[root, []]])
  for (const folder of skill.folders) children.set(`${root}/${folder}`, [])
  for (const folder of skill.folders) {
    const parent = folder.includes('/') ? `${root}/${folder.slice(0, folder.lastIndexOf('/'))}` : root
    children.get(parent)?.push({ uri: `${root}/${folder}`, name: folder.slice(folder.lastIndexOf('/') + 1), mimeType: DIRECTORY_MIME })
  }
  for (const file of files) {
    const parent = file.uri.slice(0, file.uri.lastIndexOf('/'))
    children.get(parent)?.push({ uri: file.uri, name: file.uri.slice(file.uri.lastIndexOf('/') + 1), mimeType: file.mimeType, size: file.bytes.byteLength })
  }
  return children
}

/** Registers one file as a resource; the SKILL.md takes the skill's name and description. Returns its removal. */
function registerFile(server: McpServer, file: ServedFile, entry: SkillEntry | undefined): () => void {
  const name = entry !== undefined ? String(entry.frontmatter.name) : file.uri.slice(file.uri.indexOf('://') + 3)
  const definition = entry !== undefined
    ? { name, description: String(entry.frontmatter.description), mimeType: file.mimeType, size: file.bytes.byteLength }
    : { name, mimeType: file.mimeType, size: file.bytes.byteLength }
  const registration = server.resource(file.uri, definition, () => file.text !== undefined
    ? { uri: file.uri, mimeType: file.mimeType, text: file.text }
    : { uri: file.uri, mimeType: file.mimeType, blob: base64(file.bytes) })
  return () => registration.remove()
}

/** The bytes as text when they are valid UTF-8. */
function textOf(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes)
  } catch {
    return undefined
  }
}

const MIME_TYPES: Readonly<Record<string, string>> = {
  md: 'text/markdown', txt: 'text/plain', json: 'application/json', yaml: 'application/yaml', yml: 'application/yaml',
  py: 'text/x-python', js: 'text/javascript', ts: 'text/typescript', sh: 'text/x-shellscript', html: 'text/html', css: 'text/css',
  csv: 'text/csv', xml: 'application/xml', png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', svg: 'image/svg+xml', pdf: 'application/pdf',
}

function mimeTypeOf(path: string): string {
  const dot = path.lastIndexOf('.')
  return (dot < 0 ? undefined : MIME_TYPES[path.slice(dot + 1).toLowerCase()]) ?? 'application/octet-stream'
}
