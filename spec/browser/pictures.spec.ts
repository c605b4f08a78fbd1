import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { deflateSync } from 'node:zlib'
import { afterEach, describe, expect, it } from 'vitest'
import { decodePng, differingShare, keepPicture } from './pictures.ts'

/** A PNG chunk: length, type, body, CRC-32 of type and body. */
function chunk(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(8)
  head.writeUInt32BE(body.length, 0)
  head.write(type, 4, 'latin1')
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), body])), 0)
  return Buffer.concat([head, body, crc])
}

function crc32(bytes: Buffer): number {
  let crc = ~0
  for (const byte of bytes) {
    crc ^= byte
    for (let bit = 0; bit < 8; bit++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1))
  }
  return ~crc >>> 0
}

/**
 * An RGB PNG of `pixels` (rows of [r, g, b] triples), row r filtered with filter type r mod 5, each
 * filter written from its definition in the PNG specification (the predictors, by name).
 */
function encodeRgb(rows: number[][][]): Buffer {
  const width = rows[0]!.length
  const stride = width * 3
  const flat = rows.map(row => row.flat())
  const filtered: number[] = []
  flat.forEach((line, y) => {
    const filter = y % 5
    filtered.push(filter)
    for (let x = 0; x < stride; x++) {
      const a = x >= 3 ? line[x - 3]! : 0
      const b = y > 0 ? flat[y - 1]![x]! : 0
      const c = y > 0 && x >= 3 ? flat[y - 1]![x - 3]! : 0
      const p = a + b - c
      const predictor = [0, a, b, Math.floor((a + b) / 2),
        Math.abs(p - a) <= Math.abs(p - b) && Math.abs(p - a) <= Math.abs(p - c) ? a : Math.abs(p - b) <= Math.abs(p - c) ? b : c][filter]!
      filtered.push((line[x]! - predictor + 256) % 256)
    }
  })
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(rows.length, 4)
  header.set([8, 2, 0, 0, 0], 8)
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', deflateSync(Buffer.from(filtered))), chunk('IEND', Buffer.alloc(0))])
}

/** A 12 x 10 picture with varied colours, `changed` of its pixels (from the top left, row by row) set to white. */
function picture(changed = 0): number[][][] {
  let count = 0
  return Array.from({ length: 10 }, (_, y) => Array.from({ length: 12 }, (_, x) => count++ < changed ? [255, 255, 255] : [(x * 37 + y * 11) % 256, (x * y * 7) % 256, (250 - x * 13 - y * 17 + 512) % 256]))
}

let dir: string | undefined
afterEach(() => { if (dir !== undefined) rmSync(dir, { recursive: true, force: true }); dir = undefined })

describe('the README pictures', () => {
  it('decodes every PNG filter type to the pixels encoded', () => {
    const rows = picture()
    const decoded = decodePng(encodeRgb(rows))!
    expect(decoded).toMatchObject({ width: 12, height: 10, channels: 3 })
    expect([...decoded.data]).toEqual(rows.flat(2))
  })

  it('counts the share of differing pixels; another size differs wholly', () => {
    const base = decodePng(encodeRgb(picture()))!
    expect(differingShare(base, base)).toBe(0)
    expect(differingShare(base, decodePng(encodeRgb(picture(6)))!)).toBeCloseTo(6 / 120)
    expect(differingShare(base, decodePng(encodeRgb(picture().slice(0, 9)))!)).toBe(1)
  })

  it('keeps the committed picture when a few pixels changed, writes it when more did or when none is there', () => {
    dir = mkdtempSync(join(tmpdir(), 'rxmcp-pictures-'))
    const path = join(dir, 'view.png')
    const committed = encodeRgb(picture())
    expect(keepPicture(path, committed)).toBe(true)
    // 2 of 120 pixels (1.7%): within the tolerance, the file stays as it was.
    expect(keepPicture(path, encodeRgb(picture(2)))).toBe(false)
    expect(readFileSync(path).equals(committed)).toBe(true)
    // 12 of 120 (10%): a different view, written.
    const changed = encodeRgb(picture(12))
    expect(keepPicture(path, changed)).toBe(true)
    expect(readFileSync(path).equals(changed)).toBe(true)
    // A file that is no PNG this reads is replaced.
    writeFileSync(path, 'not a picture')
    expect(keepPicture(path, committed)).toBe(true)
  })
})
