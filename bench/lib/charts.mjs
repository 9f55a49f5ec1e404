// SVG bar charts of the ratios, drawn by hand (no charting dependency).
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { GOALS, SCENARIOS } from './scenarios.mjs';
import { fmtInt, fmtX } from './util.mjs';

const esc = (s) => String(s).replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
const COLORS = { tachyon: '#d9480f', uws: '#495057', other: '#4c6ef5', missing: '#adb5bd' };
const FONT = 'font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif"';

/** A horizontal bar chart: items { label, value (ratio), text, color, note }. `refs`: vertical reference lines { at, label }. */
function barChart({ title, subtitle, items, refs = [], max }) {
  const W = 760;
  const left = 150;
  const right = 210;
  const barH = 20;
  const gap = 8;
  const top = 66;
  const plotW = W - left - right;
  const H = top + items.length * (barH + gap) + 40;
  const top1 = Math.max(max ?? 0, ...items.map((i) => i.value ?? 0), ...refs.map((r) => r.at)) * 1.08 || 1;
  const x = (v) => left + (Math.max(0, v) / top1) * plotW;
  const out = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" ${FONT} font-size="12">`);
  out.push(`<rect width="${W}" height="${H}" fill="#ffffff"/>`);
  out.push(`<text x="12" y="22" font-size="15" font-weight="600" fill="#212529">${esc(title)}</text>`);
  if (subtitle) out.push(`<text x="12" y="40" fill="#495057">${esc(subtitle)}</text>`);
  // Grid: 0 and a few ticks.
  const step = top1 > 20 ? 10 : top1 > 8 ? 2 : top1 > 3 ? 1 : top1 > 1.5 ? 0.5 : 0.25;
  for (let v = 0; v <= top1 + 1e-9; v += step) {
    out.push(`<line x1="${x(v).toFixed(1)}" y1="${top - 6}" x2="${x(v).toFixed(1)}" y2="${H - 30}" stroke="#e9ecef"/>`);
    out.push(`<text x="${x(v).toFixed(1)}" y="${H - 16}" text-anchor="middle" fill="#868e96">${esc(`${+v.toFixed(2)}×`)}</text>`);
  }
  // Reference lines first, then bars and goal marks, then the labels on top (with a halo).
  for (const r of refs) {
    const rx = x(r.at);
    out.push(`<line x1="${rx.toFixed(1)}" y1="${top - 6}" x2="${rx.toFixed(1)}" y2="${H - 30}" stroke="#212529" stroke-dasharray="4 3"/>`);
    out.push(`<text x="${(rx + 4).toFixed(1)}" y="${top - 8}" fill="#212529">${esc(r.label)}</text>`);
  }
  const labels = [];
  items.forEach((it, i) => {
    const y = top + i * (barH + gap);
    out.push(
      `<text x="${left - 8}" y="${y + barH / 2 + 4}" text-anchor="end" fill="#212529"${it.bold ? ' font-weight="600"' : ''}>${esc(it.label)}</text>`,
    );
    if (it.value === undefined || !Number.isFinite(it.value)) {
      labels.push(`<text x="${left + 4}" y="${y + barH / 2 + 4}" fill="${COLORS.missing}">${esc(it.text ?? 'not measured')}</text>`);
      return;
    }
    const w = Math.max(1, x(it.value) - left);
    out.push(
      `<rect x="${left}" y="${y}" width="${w.toFixed(1)}" height="${barH}" rx="2" fill="${it.color}"${it.hatch ? ' fill-opacity="0.55"' : ''}/>`,
    );
    if (it.goal !== undefined) {
      const gx = x(it.goal);
      out.push(`<line x1="${gx.toFixed(1)}" y1="${y - 2}" x2="${gx.toFixed(1)}" y2="${y + barH + 2}" stroke="#2b8a3e" stroke-width="2"/>`);
    }
    labels.push(
      `<text x="${(left + w + 6).toFixed(1)}" y="${y + barH / 2 + 4}" fill="#212529" stroke="#ffffff" stroke-width="4" stroke-linejoin="round" paint-order="stroke">${esc(it.text)}</text>`,
    );
  });
  out.push(...labels);
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

/** Writes the charts for this run into `dir` (old ones removed); returns { overview, <scenario>: relative path }. */
export function writeCharts(rows, dir, relFrom) {
  mkdirSync(dir, { recursive: true });
  for (const f of readdirSync(dir)) if (f.endsWith('.svg')) rmSync(path.join(dir, f));
  const rel = (f) => path.relative(relFrom, path.join(dir, f)).split(path.sep).join('/');
  const written = {};
  const scenarios = [...new Set(rows.map((r) => r.scenario))];
  for (const s of scenarios) {
    const srows = rows.filter((r) => r.scenario === s);
    const uws = srows.find((r) => r.peer === 'uws' && r.status === 'ok');
    if (!uws) continue;
    const items = srows.map((r) => {
      if (r.status !== 'ok')
        return { label: r.label, text: r.status === 'unavailable' ? 'unavailable (see RESULTS.md)' : 'failed (see RESULTS.md)' };
      const v = r.median / uws.median;
      return {
        label: r.label,
        value: v,
        bold: r.peer === 'tachyon',
        color: r.peer === 'tachyon' ? COLORS.tachyon : r.peer === 'uws' ? COLORS.uws : COLORS.other,
        hatch: r.generatorBoundRuns > 0,
        text: `${fmtX(v)}  ${fmtInt(r.median)} ${r.unit}${r.generatorBoundRuns ? ' *' : ''}${r.lossyRuns ? ' (lossy)' : ''}`,
      };
    });
    const sc = SCENARIOS[s];
    const gb = srows.some((r) => r.generatorBoundRuns);
    writeFileSync(
      path.join(dir, `${s}.svg`),
      barChart({
        title: `${s}: throughput relative to raw uWebSockets.js`,
        subtitle: `${sc.title}${gb ? '  (* generator-bound: a floor)' : ''}`,
        items,
        refs: [{ at: 1, label: 'raw uWS' }],
      }),
    );
    written[s] = rel(`${s}.svg`);
  }
  // Overview: Tachyon / raw uWS on every scenario, with the goal marks.
  const items = [];
  for (const s of scenarios) {
    const t = rows.find((r) => r.scenario === s && r.peer === 'tachyon' && r.status === 'ok');
    const u = rows.find((r) => r.scenario === s && r.peer === 'uws' && r.status === 'ok');
    if (!t || !u) continue;
    const goal = GOALS.find((g) => g.scenario === s && g.vs === 'uws')?.min;
    const v = t.median / u.median;
    items.push({
      label: s,
      value: v,
      color: COLORS.tachyon,
      hatch: t.generatorBoundRuns > 0 && u.generatorBoundRuns > 0,
      goal,
      text: `${fmtX(v)}${t.generatorBoundRuns && u.generatorBoundRuns ? ' *' : ''}`,
    });
  }
  if (items.length) {
    writeFileSync(
      path.join(dir, 'tachyon-vs-uws.svg'),
      barChart({
        title: 'Tachyon throughput / raw uWebSockets.js, per scenario',
        subtitle: 'green marks: the goal (0.95×; 1.0× on fan-out).  * both generator-bound: compare CPU per unit in RESULTS.md',
        items,
        refs: [{ at: 1, label: 'raw uWS' }],
        max: 1.1,
      }),
    );
    written.overview = rel('tachyon-vs-uws.svg');
  }
  return written;
}
