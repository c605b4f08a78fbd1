import { describe, expect, it } from 'vitest'
import { renderChart } from './chart.ts'

/** The bars of a rendered chart: side, ratio and width, in order. */
function barsOf(svg: string): { side: string; ratio: number; width: number }[] {
  return [...svg.matchAll(/<rect [^>]*width="(\d+)"[^>]*data-side="([^"]+)" data-ratio="([\d.]+)"/g)]
    .map(([, width, side, ratio]) => ({ side: side!, ratio: Number(ratio), width: Number(width) }))
}

describe('renderChart', () => {
  it('draws each side relative to its path\'s floor, on one scale across paths', () => {
    const svg = renderChart([
      { path: 'stdio, 64 in flight', bars: [{ side: 'rxmcp', callsPerSecond: 75_000 }, { side: 'floor', callsPerSecond: 100_000 }, { side: 'official', callsPerSecond: 25_000 }] },
      { path: 'http, 64/16', bars: [{ side: 'rxmcp', callsPerSecond: 4_000 }, { side: 'floor', callsPerSecond: 5_000 }] },
    ], 'rxmcp against the floor')
    const bars = barsOf(svg)
    expect(bars.map(bar => [bar.side, bar.ratio])).toEqual([['rxmcp', 0.75], ['floor', 1], ['official', 0.25], ['rxmcp', 0.8], ['floor', 1]])
    // Widths are proportional to the ratios (the floor is the widest here).
    const floorWidth = bars[1]!.width
    for (const bar of bars) expect(Math.abs(bar.width - floorWidth * bar.ratio)).toBeLessThanOrEqual(1)
    expect(svg).toContain('>0.75x</text>')
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true)
  })

  it('scales to the fastest side where one passes the floor, and to the fastest where there is no floor', () => {
    const bars = barsOf(renderChart([
      { path: 'ws', bars: [{ side: 'rxmcp', callsPerSecond: 3_000 }, { side: 'floor', callsPerSecond: 1_500 }] },
      { path: 'modern http', bars: [{ side: 'rxmcp', callsPerSecond: 5_000 }, { side: 'sdk-v2', callsPerSecond: 500 }] },
    ], 'chart'))
    expect(bars.map(bar => bar.ratio)).toEqual([2, 1, 1, 0.1])
    expect(bars[0]!.width).toBeGreaterThan(bars[1]!.width * 1.9)
  })

  it('escapes what it writes as text', () => {
    const svg = renderChart([{ path: 'a <b> & "c"', bars: [{ side: 'x<y', callsPerSecond: 1 }] }], 'T & <t>')
    expect(svg).not.toMatch(/<b>|<y|<t>/)
    expect(svg).toContain('a &lt;b&gt; &amp; &quot;c&quot;')
  })
})
