// The start-up the inspector's Chromium specs share: `rxmcp inspect --ui --no-open ...` run from
// sources with tsx, its page URL read off its output, and a page on it once the connection view
// is there.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { stopGroup, type HeadlessPage } from './chromium.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))

/** A running `rxmcp inspect --ui`: the page's URL (with its token), and a close that ends its process group. */
export interface InspectorCommand {
  readonly url: string
  close(): Promise<void>
}

/**
 * Starts `rxmcp inspect --ui --no-open ...args` in its own process group and resolves with the URL
 * it prints (`UI: http://127.0.0.1:PORT/?token=...`); rejects with its output when it exits first.
 * The process group is ended by `close()`, or at once when the start fails.
 */
export async function startInspector(args: readonly string[]): Promise<InspectorCommand> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/rxmcp.ts', 'inspect', '--ui', '--no-open', ...args],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  let output = ''
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const look = (chunk: Buffer) => {
        output += chunk.toString()
        const found = /UI: (http:\/\/127\.0\.0\.1:\d+\/\?token=\S+)/.exec(output)
        if (found !== null) resolve(found[1]!)
      }
      child.stdout!.on('data', look)
      child.stderr!.on('data', look)
      child.once('exit', code => reject(new Error(`rxmcp inspect --ui ${args.join(' ')} exited (${code}):\n${output}`)))
    })
    return { url, close: () => stopGroup(child) }
  } catch (error) {
    await stopGroup(child)
    throw error
  }
}

/** Points `page` at the inspector's `url` and resolves once its connection view is there (within `timeoutMs`). */
export async function showInspector(page: HeadlessPage, url: string, timeoutMs: number): Promise<void> {
  await page.evaluate(`location.assign(${JSON.stringify(url)}); true`)
  await page.waitFor(`document.body?.dataset.token && document.getElementById('connection') !== null`, timeoutMs)
}
