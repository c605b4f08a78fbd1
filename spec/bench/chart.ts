/**
 * The bench's chart: one SVG, drawn from the bench's own results (no service, no library), of each
 * path's sides (rxmcp, the no-library floor, the official SDKs, other peers) as horizontal bars of
 * calls per second relative to the floor of that path, 1.00x being the floor. Paths without a
 * floor are drawn against their fastest side. `npm run bench` writes it to .bench/chart.svg, and
 * to the file `BENCH_CHART` names (docs/bench.svg is the one README shows).
 */

/** One path of the chart: its sides' calls per second. */
export interface ChartGroup {
  path: string
  bars: readonly { side: string; callsPerSecond: number }[]
}

/** Where each side's bar is coloured; a side not listed gets the last colour. */
const COLOURS: Record<string, string> = {
  rxmcp: '#6f42c1', web: '#8f6ad8', floor: '#6a737d', official: '#0366d6', 'sdk-v2': '#2188ff', fastmcp: '#e36209', before: '#b392f0',
}
const OTHER = '#959da5'

const WIDTH = 760
const LABEL_WIDTH = 250
const BAR_HEIGHT = 16
const GAP = 4
const GROUP_GAP = 18
const TITLE_HEIGHT = 34
/** The ratio the full bar width stands for: the largest in the chart, at least the floor's 1.0. */
const MIN_SCALE = 1

/** Text as SVG character data. */
function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
}

/** Each bar's value relative to the group's floor (or its fastest side when it has none). */
function relative(group: ChartGroup): { side: string; ratio: number }[] {
  const floor = group.bars.find(bar => bar.side === 'floor')?.callsPerSecond ?? Math.max(...group.bars.map(bar => bar.callsPerSecond))
  return group.bars.map(bar => ({ side: bar.side, ratio: floor > 0 ? bar.callsPerSecond / floor : 0 }))
}

/**
 * The chart as SVG text: a title, then per group its path as a heading and one bar per side with
 * its ratio written beside it. Bars share one scale across the chart, so groups compare too.
 */
export function renderChart(groups: readonly ChartGroup[], title: string): string {
  const rows = groups.map(group => ({ path: group.path, bars: relative(group) }))
  const scale = Math.max(MIN_SCALE, ...rows.flatMap(row => row.bars.map(bar => bar.ratio)))
  const barSpace = WIDTH - LABEL_WIDTH - 70
  const parts: string[] = [`<text x="8" y="22" font-size="15" font-weight="bold">${escape(title)}</text>`]
  let y = TITLE_HEIGHT
  for (const row of rows) {
    parts.push(`<text x="8" y="${y + 12}" font-size="12" font-weight="bold">${escape(row.path)}</text>`)
    y += BAR_HEIGHT + GAP
    for (const bar of row.bars) {
      const width = Math.max(1, Math.round(barSpace * bar.ratio / scale))
      parts.push(
        `<text x="${LABEL_WIDTH - 8}" y="${y + 12}" font-size="12" text-anchor="end">${escape(bar.side)}</text>`,
        `<rect x="${LABEL_WIDTH}" y="${y}" width="${width}" height="${BAR_HEIGHT}" fill="${COLOURS[bar.side] ?? OTHER}" data-side="${escape(bar.side)}" data-ratio="${bar.ratio.toFixed(3)}"/>`,
        `<text x="${LABEL_WIDTH + width + 6}" y="${y + 12}" font-size="12">${bar.ratio.toFixed(2)}x</text>`,
      )
      y += BAR_HEIGHT + GAP
    }
    y += GROUP_GAP
  }
  const floorX = LABEL_WIDTH + Math.round(barSpace / scale)
  parts.push(`<line x1="${floorX}" y1="${TITLE_HEIGHT - 4}" x2="${floorX}" y2="${y - GROUP_GAP}" stroke="#24292e" stroke-dasharray="3,3"/>`)
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${y}" viewBox="0 0 ${WIDTH} ${y}" font-family="sans-serif">\n${parts.join('\n')}\n</svg>\n`
}
