/**
 * A directory of skills on disk, read into {@link SkillFolder}s for `serveSkills` (the skills
 * extension, SEP-2640): each folder directly under the root that holds a `SKILL.md` is a skill,
 * named by the folder, with every regular file under it. Symbolic links are never followed (a
 * link could lead out of the directory), hidden entries (`.git`, `.DS_Store`) are left out, and a
 * skill past the extension's limits (512 files, 16 MiB) is skipped and reported, not cut short.
 * With `watch`, the folders are read again after changes settle (fs.watch, debounced).
 */
import { watch as watchFs, type FSWatcher } from 'node:fs'
import { lstat, readdir, readFile } from 'node:fs/promises'
import { join, relative, sep } from 'node:path'
import { asyncScheduler, Observable, type SchedulerLike, type Subscription } from '../lib/rx.ts'
import { SKILL_LIMITS, SKILL_MANIFEST, type SkillFolder } from '../lib/skills.ts'

export type { SkillFolder }

/** Options of {@link skillsDirectory}. */
export interface SkillsDirectoryOptions {
  /** Read again when files change (default false: read once). */
  watch?: boolean
  /** Ms without changes before reading again (default 100). */
  debounceMs?: number
  /** Where the debounce is timed (default RxJS's `asyncScheduler`, real time): a test passes a virtual one. */
  scheduler?: SchedulerLike
  /** Told of each skill left out and why (default: console.warn). */
  onSkipped?: (name: string, reason: string) => void
}

/**
 * The skills under `root`: the folders now, then (with `watch`) again after each change. Cold;
 * unsubscribing stops watching. Errors when the root cannot be read.
 */
export function skillsDirectory(root: string, options: SkillsDirectoryOptions = {}): Observable<SkillFolder[]> {
  return new Observable<SkillFolder[]>(subscriber => {
    const skipped = options.onSkipped ?? ((name, reason) => console.warn(`[rxmcp] skill ${name} left out: ${reason}`))
    let watcher: FSWatcher | undefined
    // The debounce's pending read, re-armed by each change.
    let timer: Subscription | undefined
    const scheduler = options.scheduler ?? asyncScheduler
    let reading = Promise.resolve()
    const read = () => {
      reading = reading.then(() => readSkills(root, (name, reason) => { if (!subscriber.closed) skipped(name, reason) })).then(skills => { if (!subscriber.closed) subscriber.next(skills) }, error => subscriber.error(error))
    }
    read()
    if (options.watch) {
      try {
        watcher = watchFs(root, { recursive: true }, () => {
          timer?.unsubscribe()
          timer = scheduler.schedule(read, options.debounceMs ?? 100)
        })
        watcher.on('error', error => subscriber.error(error))
      } catch (error) {
        subscriber.error(error)
      }
    } else {
      void reading.then(() => subscriber.complete())
    }
    return () => {
      timer?.unsubscribe()
      watcher?.close()
    }
  })
}

/** Every skill folder under `root`, read now. */
export async function readSkills(root: string, skipped: (name: string, reason: string) => void = () => {}): Promise<SkillFolder[]> {
  const skills: SkillFolder[] = []
  for (const entry of (await readdir(root, { withFileTypes: true })).sort((a, b) => a.name < b.name ? -1 : 1)) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue
    const folder = join(root, entry.name)
    const manifest = await lstat(join(folder, SKILL_MANIFEST)).catch(() => undefined)
    if (manifest === undefined || !manifest.isFile()) continue
    // A file may vanish between readdir and readFile while an editor saves (write, then rename):
    // the skill is read once more, then left out of this read if it still fails (the change's own
    // event brings another read); one busy folder never ends the watch.
    let skill: SkillFolder = { name: entry.name, files: [], folders: [] }
    const problem = await walk(folder, folder, skill).catch(() => {
      skill = { name: entry.name, files: [], folders: [] }
      return walk(folder, folder, skill).catch((error: unknown) => `could not be read (${(error as Error).message})`)
    })
    if (problem !== undefined) skipped(entry.name, problem)
    else skills.push(skill)
  }
  return skills
}

/** Reads `dir` into `skill`; a reason when the skill passes a limit. */
async function walk(top: string, dir: string, skill: SkillFolder, total = { bytes: 0 }): Promise<string | undefined> {
  for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name < b.name ? -1 : 1)) {
    if (entry.name.startsWith('.') || entry.isSymbolicLink()) continue
    const path = join(dir, entry.name)
    const name = relative(top, path).split(sep).join('/')
    if (entry.isDirectory()) {
      skill.folders.push(name)
      const problem = await walk(top, path, skill, total)
      if (problem !== undefined) return problem
    } else if (entry.isFile()) {
      if (skill.files.length >= SKILL_LIMITS.maxResources) return `more than ${SKILL_LIMITS.maxResources} files`
      const size = (await lstat(path)).size
      if (total.bytes + size > SKILL_LIMITS.maxTotalBytes) return `more than ${SKILL_LIMITS.maxTotalBytes} bytes`
      const bytes = new Uint8Array(await readFile(path))
      total.bytes += bytes.byteLength
      skill.files.push({ path: name, bytes })
    }
  }
  return undefined
}
