// The README's pictures are made by the browser tests, so they stay true. A run writes one only when
// it shows something else than the committed file: a clock on the page, a scroll a pixel off or a
// web font a frame late change 1-3% of the pixels from run to run (measured on the app view), and
// rewriting the file for that would leave every test run a change to commit. A view laid out anew
// changes far more.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { inflateSync } from 'node:zlib'

/** Share of pixels that may differ from the committed picture before it is written anew. */
export const PICTURE_TOLERANCE = 0.05

/**
 * Writes `png` to `path` unless the file there has the same size and differs in at most
 * `tolerance` of its pixels. Answers whether it wrote.
 */
export function keepPicture(path: string, png: Buffer, tolerance = PICTURE_TOLERANCE): boolean {
  if (existsSync(path)) {
    const before = decodePng(readFileSync(path))
    const after = decodePng(png)
    if (before !== undefined && after !== undefined && differingShare(before, after) <= tolerance) return false
  }
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, png)
  return true
}

/** A decoded picture: its size, bytes per pixel and unfiltered rows. */
export interface Pixels { width: number; height: number; channels: number; data: Uint8Array }

/** Share of pixels that differ (1 when the sizes do). */
export function differingShare(a: Pixels, b: Pixels): number {
  if (a.width !== b.width || a.height !== b.height || a.channels !== b.channels) return 1
  let differing = 0
  for (let at = 0; at < a.data.length; at += a.channels) {
    for (let channel = 0; channel < a.channels; channel++) {
      if (a.data[at + channel] !== b.data[at + channel]) { differing++; break }
    }
  }
  return differing / (a.width * a.height)
}

/**
 * Decodes what Chromium's screenshots are: 8-bit truecolour (RGB or RGBA), not interlaced.
 * Undefined for any other PNG (the caller then writes the picture).
 */
export function decodePng(file: Buffer): Pixels | undefined {
  if (file.length < 8 || file.readUInt32BE(0) !== 0x89504e47) return undefined
  let width = 0
  let height = 0
  let channels = 0
  const compressed: Buffer[] = []
  for (let at = 8; at + 8 <= file.length;) {
    const length = file.readUInt32BE(at)
    const type = file.toString('latin1', at + 4, at + 8)
    const body = file.subarray(at + 8, at + 8 + length)
    if (type === 'IHDR') {
      width = body.readUInt32BE(0)
      height = body.readUInt32BE(4)
      const [depth, colour, , , interlace] = [body[8], body[9], body[10], body[11], body[12]]
      if (depth !== 8 || interlace !== 0 || (colour !== 2 && colour !== 6)) return undefined
      channels = colour === 6 ? 4 : 3
    } else if (type === 'IDAT') {
      compressed.push(body)
    } else if (type === 'IEND') {
      break
    }
    at += 12 + length
  }
  if (channels === 0) return undefined
  const raw = inflateSync(Buffer.concat(compressed))
  const stride = width * channels
  const data = new Uint8Array(stride * height)
  for (let row = 0; row < height; row++) {
    const filter = raw[row * (stride + 1)]
    const line = raw.subarray(row * (stride + 1) + 1, (row + 1) * (stride + 1))
    const out = row * stride
    for (let x = 0; x < stride; x++) {
      const left = x >= channels ? data[out + x - channels]! : 0
      const up = row > 0 ? data[out - stride + x]! : 0
      const upLeft = row > 0 && x >= channels ? data[out - stride + x - channels]! : 0
      const value = line[x]!
      data[out + x] = (filter === 0 ? value
        : filter === 1 ? value + left
        : filter === 2 ? value + up
        : filter === 3 ? value + ((left + up) >> 1)
        : value + paeth(left, up, upLeft)) & 0xff
    }
  }
  return { width, height, channels, data }
}

/** The PNG Paeth predictor. */
function paeth(left: number, up: number, upLeft: number): number {
  const estimate = left + up - upLeft
  const toLeft = Math.abs(estimate - left)
  const toUp = Math.abs(estimate - up)
  const toUpLeft = Math.abs(estimate - upLeft)
  return toLeft <= toUp && toLeft <= toUpLeft ? left : toUp <= toUpLeft ? up : upLeft
}
