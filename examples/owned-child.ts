/**
 * A child process this process owns, for the examples' spawn helpers (a cluster instance, the Deno
 * server): killed when this process exits unless stopped first, and stopped politely (SIGTERM,
 * then SIGKILL past a deadline).
 */
import type { ChildProcess } from 'node:child_process'

/** What {@link ownChild} gives. */
export interface OwnedChild {
  /** Resolves with the exit code, or the signal that ended the child. */
  readonly exited: Promise<number | string>
  /** SIGTERM, SIGKILL after `stopTimeoutMs`; resolves once the child has exited (at once if it had). */
  stop(): Promise<void>
  /** SIGKILL; resolves once the child has exited. */
  kill(): Promise<void>
}

/** Ties `child` to this process (see {@link OwnedChild}). */
export function ownChild(child: ChildProcess, stopTimeoutMs: number): OwnedChild {
  const exited = new Promise<number | string>(resolve => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')))
  const killOnExit = () => child.kill('SIGKILL')
  process.once('exit', killOnExit)
  const hasExited = () => child.exitCode !== null || child.signalCode !== null
  return {
    exited,
    stop: async () => {
      process.off('exit', killOnExit)
      if (hasExited()) return
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), stopTimeoutMs)
      await exited
      clearTimeout(timer)
    },
    kill: async () => {
      process.off('exit', killOnExit)
      if (!hasExited()) child.kill('SIGKILL')
      await exited
    },
  }
}
