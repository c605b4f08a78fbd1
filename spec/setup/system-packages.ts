/**
 * Installs the Debian packages the suite drives for real (headless Chromium for the browser client
 * test, tmux for the terminal chat test, redis-server and nginx for the Redis and scale-out tests),
 * when they are missing. Run by `npm test` before vitest, so a fresh machine needs nothing but
 * `npm install`. Needs root (or passwordless sudo) for apt-get; without it, it names what to install
 * and the tests that need the package fail saying so.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'

/** Command that proves a package is there -> the Debian package that provides it. */
const PACKAGES: Record<string, string> = {
  chromium: 'chromium',
  // The terminal test of `rxmcp chat` drives it through tmux (send keys, read the screen).
  tmux: 'tmux',
  // The Redis stores are tested against a real server (spec/helpers/redis-server.ts).
  'redis-server': 'redis-server',
  // Issue 27: a Sentinel-managed primary fails over under a live session (spec/transports/redis-sentinel.spec.ts).
  'redis-sentinel': 'redis-sentinel',
  // The scale-out tests put several instances behind a real nginx (spec/helpers/nginx.ts).
  nginx: 'nginx',
}

/** Where Debian puts daemons, not on every user's PATH (nginx is /usr/sbin/nginx). */
const SBIN = ['/usr/sbin', '/sbin']

function has(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0 || SBIN.some(dir => existsSync(`${dir}/${command}`))
}

const missing = Object.entries(PACKAGES).filter(([command]) => !has(command)).map(([, pkg]) => pkg)
if (missing.length > 0) {
  const isRoot = process.getuid?.() === 0
  const sudo = isRoot ? [] : has('sudo') ? ['sudo', '-n'] : undefined
  if (sudo === undefined) {
    console.error(`rxmcp tests: missing system packages ${missing.join(', ')}; install them with apt-get (as root).`)
  } else {
    console.error(`rxmcp tests: installing ${missing.join(', ')} with apt-get (once per machine)...`)
    const apt = (...args: string[]) => execFileSync(sudo[0] ?? 'apt-get', [...sudo.slice(1), ...(sudo.length > 0 ? ['apt-get'] : []), ...args], {
      stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, timeout: 15 * 60_000,
    })
    apt('update', '-qq')
    apt('install', '-y', '-qq', '--no-install-recommends', ...missing)
  }
}
