/** A dependency-free SVG line chart for benchmark results (readable in a README and on GitHub). */

export interface Series {
  name: string;
  points: [number, number][];
}

const COLORS = ['#2f6f5e', '#b3261e', '#3b5bdb', '#e67700', '#7048e8'];
const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

/** A vertical line at x with a label (a curriculum level change, say). */
export interface Marker {
  x: number;
  label: string;
}

export function lineChartSvg(options: {
  title: string;
  xLabel: string;
  series: Series[];
  markers?: Marker[];
  width?: number;
  height?: number;
}): string {
  const width = options.width ?? 720;
  const height = options.height ?? 360;
  const pad = { left: 48, right: 16, top: 36, bottom: 64 };
  const all = options.series.flatMap((s) => s.points);
  const xMax = Math.max(1, ...all.map((p) => p[0]));
  const yMax = Math.max(1, ...all.map((p) => p[1]));
  const x = (v: number) => pad.left + (v / xMax) * (width - pad.left - pad.right);
  const y = (v: number) => height - pad.bottom - (v / yMax) * (height - pad.top - pad.bottom);
  const grid = [0, 0.25, 0.5, 0.75, 1].map((f) => {
    const v = f * yMax;
    return `<line x1="${pad.left}" x2="${width - pad.right}" y1="${y(v)}" y2="${y(v)}" stroke="#e6e2d8"/><text x="${pad.left - 6}" y="${y(v) + 4}" text-anchor="end" font-size="11">${v.toFixed(2)}</text>`;
  });
  // Labels alternate between two rows so markers a few updates apart do not write over each other.
  const markers = (options.markers ?? []).map(
    (m, i) =>
      `<line x1="${x(m.x)}" x2="${x(m.x)}" y1="${pad.top}" y2="${height - pad.bottom}" stroke="#7a7467" stroke-dasharray="4 3"/><text x="${x(m.x) + 3}" y="${pad.top + 10 + (i % 2) * 12}" font-size="11">${escape(m.label)}</text>`,
  );
  const lines = options.series.map((s, i) => {
    const d = s.points.map((p, j) => `${j ? 'L' : 'M'}${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(' ');
    const legendY = height - pad.bottom + 36 + Math.floor(i / 2) * 14;
    const legendX = pad.left + (i % 2) * 320;
    return (
      `<path d="${d}" fill="none" stroke="${COLORS[i % COLORS.length]}" stroke-width="2"/>` +
      `<rect x="${legendX}" y="${legendY - 9}" width="10" height="10" fill="${COLORS[i % COLORS.length]}"/><text x="${legendX + 14}" y="${legendY}" font-size="12">${escape(s.name)}</text>`
    );
  });
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="system-ui, sans-serif">`,
    `<rect width="100%" height="100%" fill="#fbfaf7"/>`,
    `<text x="${pad.left}" y="22" font-size="14" font-weight="600">${escape(options.title)}</text>`,
    ...grid,
    `<text x="${(width + pad.left) / 2}" y="${height - pad.bottom + 20}" text-anchor="middle" font-size="12">${escape(options.xLabel)} (0–${xMax})</text>`,
    ...markers,
    ...lines,
    '</svg>',
  ].join('\n');
}
