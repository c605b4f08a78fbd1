/**
 * The client's side of the skills extension (SEP-2640): listing skills, and loading one only when
 * asked. Nothing of a skill is read before `load` (no prefetch on connection, listing or
 * approval); what is read is checked against the entry (size, then digest; for SKILL.md, the
 * frontmatter field by field) before anything is handed over, and a file that fails is refused
 * with a {@link SkillVerificationError}: its content never reaches the caller.
 */
import { from, lastValueFrom, map } from '../../lib/rx.ts'
import { paginate } from '../../lib/operators/paginate.ts'
import type { RequestOptions } from '../../lib/connection.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { CapabilityError, ProtocolError } from '../../lib/jsonrpc/errors.ts'
import { isJsonObject } from '../../lib/jsonrpc/guards.ts'
import { bytesOfBase64 } from '../../lib/base64url.ts'
import { readFrontmatter } from '../../lib/frontmatter.ts'
import { resultOf, type RequestEvent } from '../../lib/operators/progress.ts'
import {
  SKILLS_EXTENSION, SkillVerificationError, checkSkillEntry, readSkillEntry, skillRootOf, verifySkillFile, type SkillEntry,
} from '../../lib/skills.ts'
import type { Observable } from '../../lib/rx.ts'

/** What the skills code needs of the client. */
export interface SkillClientHost {
  readonly serverCapabilities: JsonObject
  request<R extends JsonObject>(method: string, params: JsonObject | undefined, options: RequestOptions): Observable<RequestEvent<R>>
}

/** A file of a loaded skill, verified. */
export interface SkillFile {
  uri: string
  bytes: Uint8Array
  /** The text, when the server sent text. */
  text?: string
  mimeType?: string
}

/** A skill loaded: its SKILL.md read and verified; supporting files read (and verified) on demand. */
export interface LoadedSkill {
  entry: SkillEntry
  /** The SKILL.md frontmatter (equal to the entry's). */
  frontmatter: Record<string, unknown>
  /** The SKILL.md instructions after the frontmatter. */
  instructions: string
  /** One of the skill's files by URI, or by path inside the skill (`references/FORMS.md`), verified. */
  readFile(uriOrPath: string, options?: RequestOptions): Promise<SkillFile>
}

/** `client.skills`: see the file's comment. */
export class ClientSkills {
  /** Entries seen in listings, by URI: what `load` verifies against. */
  readonly #known = new Map<string, SkillEntry>()

  constructor(private readonly host: SkillClientHost) {}

  /** Whether the server declared the extension. */
  get isSupported(): boolean {
    const extensions = this.host.serverCapabilities.extensions
    return isJsonObject(extensions) && isJsonObject(extensions[SKILLS_EXTENSION])
  }

  #require(): void {
    if (!this.isSupported) throw new CapabilityError(`The server did not declare the ${SKILLS_EXTENSION} extension`)
  }

  async #call(method: string, params: JsonObject, options?: RequestOptions): Promise<JsonObject> {
    return lastValueFrom(this.host.request<JsonObject>(method, params, { ...options, progress: false }).pipe(resultOf()))
  }

  /** Every skill the server lists, across pages. Reads no skill file. */
  async list(options?: RequestOptions): Promise<SkillEntry[]> {
    this.#require()
    const pages = paginate(cursor => from(this.#call('skills/list', cursor === undefined ? {} : { cursor }, options)).pipe(map(result => ({
      items: (Array.isArray(result.skills) ? result.skills : []).map(raw => {
        const entry = readSkillEntry(raw)
        if (entry === undefined) throw new ProtocolError(`skills/list answered an entry that is not a skill entry: ${JSON.stringify(raw).slice(0, 200)}`)
        return entry
      }),
      nextCursor: typeof result.nextCursor === 'string' && result.nextCursor !== '' ? result.nextCursor : undefined,
    }))))
    const all: SkillEntry[] = []
    await new Promise<void>((resolve, reject) => pages.subscribe({ next: entry => { this.#known.set(entry.uri, entry); all.push(entry) }, error: reject, complete: resolve }))
    return all
  }

  /** One skill's entry (`skills/get`). Reads no skill file. */
  async get(uri: string, options?: RequestOptions): Promise<SkillEntry> {
    this.#require()
    const entry = readSkillEntry((await this.#call('skills/get', { uri }, options)).skill)
    if (entry === undefined || entry.uri !== uri) throw new ProtocolError(`skills/get for ${uri} answered no entry for it`)
    this.#known.set(uri, entry)
    return entry
  }

  /**
   * Loads a skill: its SKILL.md read and verified against the entry (from the last listing, else
   * `skills/get`). Rejects with {@link SkillVerificationError} when the entry breaks the naming
   * rules or limits, or the file's size, digest or frontmatter do not match.
   */
  async load(skill: string | SkillEntry, options?: RequestOptions): Promise<LoadedSkill> {
    const entry = typeof skill === 'string' ? this.#known.get(skill) ?? await this.get(skill, options) : skill
    checkSkillEntry(entry)
    const manifest = await this.#read(entry, entry.uri, options)
    const read = (await readFrontmatter(manifest.text ?? new TextDecoder().decode(manifest.bytes)))!
    const root = `${skillRootOf(entry.uri)}/`
    return {
      entry,
      frontmatter: read.data,
      instructions: read.body,
      readFile: (uriOrPath, fileOptions) => this.#read(entry, uriOrPath.includes('://') ? uriOrPath : `${root}${uriOrPath.replace(/^\/+/, '')}`, fileOptions ?? options),
    }
  }

  /** Reads one file of a skill and verifies it before handing it over. */
  async #read(entry: SkillEntry, uri: string, options?: RequestOptions): Promise<SkillFile> {
    const root = `${skillRootOf(entry.uri)}/`
    // `..` or `.` segments could name a file of another skill, even one that starts with this root.
    if (!uri.startsWith(root) || uri.slice(root.length).split('/').some(segment => segment === '' || segment === '.' || segment === '..')) {
      throw new SkillVerificationError(uri, 'unlisted', 'the file lies outside the skill')
    }
    const result = await this.#call('resources/read', { uri }, options)
    const contents = Array.isArray(result.contents) ? result.contents.filter(isJsonObject) : []
    const content = contents.find(item => item.uri === uri) ?? contents[0]
    if (content === undefined) throw new SkillVerificationError(uri, 'size', 'resources/read gave no content')
    const text = typeof content.text === 'string' ? content.text : undefined
    const bytes = text !== undefined ? new TextEncoder().encode(text) : typeof content.blob === 'string' ? bytesOfBase64(content.blob) : new Uint8Array()
    await verifySkillFile(entry, uri, bytes)
    const file: SkillFile = { uri, bytes }
    if (text !== undefined) file.text = text
    if (typeof content.mimeType === 'string') file.mimeType = content.mimeType
    return file
  }
}
