// Line charts for the game-capacity benchmark (SVG by hand, like charts.mjs): one line per
// peer, a metric against the number of connected players.
const esc = (s) => String(s).replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
const FONT = 'font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif"';
export const PEER_COLORS = {
  tachyon: '#d9480f',
  'tachyon-compact': '#f59f00',
  uws: '#495057',
  'socketio-uws': '#1c7ed6',
  socketio: '#2f9e44',
  bun: '#ae3ec9',
};

/** series: [{ label, color, points: [[x, y], …] }]; `limit`: a horizontal reference line. */
export function lineChart({ title, xLabel, yLabel, series, limit, yMax }) {
  const W = 760;
  const H = 360;
  const [l, r, t, b] = [64, 150, 44, 44];
  const xs = series.flatMap((s) => s.points.map((p) => p[0]));
  const ys = series.flatMap((s) => s.points.map((p) => p[1])).filter(Number.isFinite);
  const xMax = Math.max(1, ...xs) * 1.02;
  const yTop = yMax ?? Math.max(limit ?? 0, ...ys, 1) * 1.08;
  const X = (v) => l + (v / xMax) * (W - l - r);
  const Y = (v) => H - b - (Math.min(v, yTop) / yTop) * (H - t - b);
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" ${FONT} font-size="12">`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
  ];
  out.push(`<text x="12" y="22" font-size="15" font-weight="600" fill="#212529">${esc(title)}</text>`);
  for (let i = 0; i <= 5; i++) {
    const yv = (yTop / 5) * i;
    out.push(`<line x1="${l}" x2="${W - r}" y1="${Y(yv).toFixed(1)}" y2="${Y(yv).toFixed(1)}" stroke="#e9ecef"/>`);
    out.push(`<text x="${l - 6}" y="${(Y(yv) + 4).toFixed(1)}" text-anchor="end" fill="#868e96">${+yv.toPrecision(3)}</text>`);
    const xv = (xMax / 5) * i;
    out.push(
      `<text x="${X(xv).toFixed(1)}" y="${H - b + 16}" text-anchor="middle" fill="#868e96">${Math.round(xv).toLocaleString('en-US')}</text>`,
    );
  }
  out.push(`<text x="${(l + W - r) / 2}" y="${H - 8}" text-anchor="middle" fill="#495057">${esc(xLabel)}</text>`);
  out.push(
    `<text x="14" y="${(t + H - b) / 2}" transform="rotate(-90 14 ${(t + H - b) / 2})" text-anchor="middle" fill="#495057">${esc(yLabel)}</text>`,
  );
  if (limit !== undefined)
    out.push(
      `<line x1="${l}" x2="${W - r}" y1="${Y(limit).toFixed(1)}" y2="${Y(limit).toFixed(1)}" stroke="#212529" stroke-dasharray="4 3"/>`,
    );
  series.forEach((s, i) => {
    const pts = s.points.filter((p) => Number.isFinite(p[1]));
    if (pts.length)
      out.push(
        `<polyline fill="none" stroke="${s.color}" stroke-width="1.8" points="${pts.map((p) => `${X(p[0]).toFixed(1)},${Y(p[1]).toFixed(1)}`).join(' ')}"/>`,
      );
    out.push(`<rect x="${W - r + 12}" y="${t + i * 20}" width="14" height="4" fill="${s.color}"/>`);
    out.push(`<text x="${W - r + 32}" y="${t + i * 20 + 6}" fill="#212529">${esc(s.label)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n');
}
