/**
 * Child processes of the benchmark: CPU time read from /proc, and cleanup that leaves no child
 * behind, whatever way the run ends (finished, failed, interrupted).
 */
import { execFileSync } from 'node:child_process'
import { readFileSync, readdirSync } from 'node:fs'

/** Clock ticks per second of /proc/<pid>/stat times (`getconf CLK_TCK`, almost always 100). */
export const CLOCK_TICKS = (() => {
  try {
    const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim())
    return ticks > 0 ? ticks : 100
  } catch {
    return 100
  }
})()

/** User + system CPU of another process so far, in milliseconds (fields 14 and 15 of /proc/<pid>/stat). */
export function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  // The command name (field 2) may hold spaces; every field after its closing parenthesis is plain.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 1000 / CLOCK_TICKS
}

/** User + system CPU of this process so far, in milliseconds. */
export function selfCpuMs(): number {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1000
}

/** Resident memory of a process, in bytes. */
export function rss(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find(row => row.startsWith('VmRSS:'))!
  return Number(line.replace(/\D+/g, '')) * 1024
}

/**
 * Every live child of `parent` (this process by default), found through /proc (so children spawned
 * inside a client transport are found too, not only the ones we spawned ourselves).
 */
export function childPids(parent: number = process.pid): number[] {
  const children: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      // fields[0] is the state, fields[1] the parent pid; a zombie needs no kill.
      if (Number(fields[1]) === parent && fields[0] !== 'Z') children.push(Number(entry))
    } catch {
      // The process ended while we looked.
    }
  }
  return children
}

/** SIGKILLs every child still alive. Synchronous, so it also works in an `exit` handler. */
export function killChildren(): number {
  const pids = childPids()
  for (const pid of pids) {
    try { process.kill(pid, 'SIGKILL') } catch { /* already gone */ }
  }
  return pids.length
}

/** Kills every child when the process exits, or is interrupted or terminated. */
export function installCleanup(): void {
  process.on('exit', () => { killChildren() })
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      killChildren()
      process.exit(128 + (signal === 'SIGINT' ? 2 : signal === 'SIGTERM' ? 15 : 1))
    })
  }
}

/** Settles as `promise` does, or rejects with `message` if it has not settled within `ms`. */
export function within<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(message)), ms) })
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer))
}
