/**
 * A one-line progress bar for terminals: redrawn in place on a TTY, plain lines elsewhere (CI logs).
 */
export interface ProgressBar {
  update(progress: number, total?: number, message?: string): void
  done(message?: string): void
}

/** Makes a progress bar writing to `stream` (stdout or stderr). */
export function progressBar(stream: NodeJS.WriteStream, width = 30): ProgressBar {
  const isTty = stream.isTTY === true
  return {
    update(progress, total, message) {
      const ratio = total !== undefined && total > 0 ? Math.min(1, progress / total) : undefined
      const filled = ratio === undefined ? 0 : Math.round(ratio * width)
      const bar = ratio === undefined ? `${progress}` : `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${Math.round(ratio * 100)}%`
      const line = `  ${bar}${message ? ` ${message}` : ''}`
      stream.write(isTty ? `\r\x1b[2K${line}` : `${line}\n`)
    },
    done(message) {
      if (isTty) stream.write('\n')
      if (message) stream.write(`  ${message}\n`)
    },
  }
}
