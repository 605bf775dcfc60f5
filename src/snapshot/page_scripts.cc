#include "snapshot/page_scripts.h"

namespace sextant {
namespace {

constexpr const char* kStyle = R"CSS(
body{font:14px/1.4 system-ui,sans-serif;margin:20px;color:#222}
h1{font-size:18px}h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse;margin:8px 0}td,th{padding:2px 10px;text-align:right;border-bottom:1px solid #eee}
td.l,th.l{text-align:left}.chart{border:1px solid #ccc;background:#fff;cursor:crosshair;user-select:none}
.readout{font-family:monospace;white-space:pre;min-height:3em;color:#333}.muted{color:#777}
)CSS";

// Shared helpers: element builder, byte formatting and a zoomable line chart.
constexpr const char* kCommonScript = R"JS(
const DATA = JSON.parse(document.getElementById('data').textContent);
function el(tag, attrs, ...kids) {
  const ns = ['svg','path','line','text','rect','g','circle'].includes(tag) ? 'http://www.w3.org/2000/svg' : null;
  const e = ns ? document.createElementNS(ns, tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const k of kids) e.append(k instanceof Node ? k : String(k));
  return e;
}
function fmtBytes(b) {
  const u = ['B','KiB','MiB','GiB','TiB']; let i = 0, v = Math.abs(b);
  while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
  return (b < 0 ? '-' : '') + (i ? v.toFixed(2) : v) + ' ' + u[i];
}
function table(head, rows) {
  const t = el('table', {}, el('tr', {}, ...head.map((h, i) => el('th', {class: i == head.length - 1 ? 'l' : ''}, h))));
  for (const r of rows) t.append(el('tr', {}, ...r.map((c, i) => el('td', {class: i == r.length - 1 ? 'l' : ''}, c))));
  return t;
}
// series: [{name, color, pts: [[x, y], ...]}]; xfmt/yfmt format axis values.
function lineChart(parent, series, xfmt, yfmt, marks) {
  const W = 960, H = 300, L = 80, R = 10, T = 10, B = 30;
  const all = series.flatMap(s => s.pts);
  if (!all.length) { parent.append(el('p', {class: 'muted'}, 'no data points')); return; }
  let x0 = Math.min(...all.map(p => p[0])), x1 = Math.max(...all.map(p => p[0]));
  if (x1 == x0) x1 = x0 + 1;
  const full = [x0, x1];
  const ymax = Math.max(1, ...all.map(p => p[1])) * 1.05;
  const svg = el('svg', {width: W, height: H, class: 'chart'});
  const readout = el('div', {class: 'readout'});
  parent.append(svg, readout);
  function draw() {
    svg.replaceChildren();
    const sx = x => L + (x - x0) / (x1 - x0) * (W - L - R), sy = y => H - B - y / ymax * (H - T - B);
    for (let k = 0; k <= 4; k++) {
      const y = ymax * k / 4;
      svg.append(el('line', {x1: L, x2: W - R, y1: sy(y), y2: sy(y), stroke: '#eee'}));
      svg.append(el('text', {x: L - 4, y: sy(y) + 4, 'text-anchor': 'end', 'font-size': 11}, yfmt(y)));
      const x = x0 + (x1 - x0) * k / 4;
      svg.append(el('text', {x: sx(x), y: H - 10, 'text-anchor': 'middle', 'font-size': 11}, xfmt(x)));
    }
    for (const s of series) {
      let d = '', prev = null;
      for (const p of s.pts) {
        if (p[0] < x0 && prev && prev[0] < x0) { prev = p; continue; }
        d += (d ? 'L' : 'M') + sx(p[0]).toFixed(1) + ',' + sy(p[1]).toFixed(1);
        prev = p;
        if (p[0] > x1) break;
      }
      svg.append(el('path', {d, fill: 'none', stroke: s.color, 'stroke-width': 1.5}));
    }
    for (const m of marks || []) {
      if (m.x < x0 || m.x > x1) continue;
      svg.append(el('circle', {cx: sx(m.x), cy: sy(m.y), r: 4, fill: m.color}));
      svg.append(el('text', {x: sx(m.x) + 6, y: sy(m.y) - 6, 'font-size': 11, fill: m.color}, m.label));
    }
    svg.append(el('rect', {x: L, y: T, width: W - L - R, height: H - T - B, fill: 'transparent', stroke: '#999'}));
  }
  const toX = ev => x0 + (ev.offsetX - L) / (W - L - R) * (x1 - x0);
  svg.addEventListener('wheel', ev => {
    ev.preventDefault();
    const at = toX(ev), f = ev.deltaY < 0 ? 0.8 : 1.25;
    x0 = Math.max(full[0], at - (at - x0) * f); x1 = Math.min(full[1], at + (x1 - at) * f);
    if (x1 - x0 < 1e-9) x1 = x0 + 1e-9;
    draw();
  });
  let drag = null;
  svg.addEventListener('mousedown', ev => { drag = {x: ev.offsetX, x0, x1}; });
  window.addEventListener('mouseup', () => { drag = null; });
  svg.addEventListener('dblclick', () => { [x0, x1] = full; draw(); });
  svg.addEventListener('mousemove', ev => {
    if (drag) {
      const dx = (ev.offsetX - drag.x) / (W - L - R) * (drag.x1 - drag.x0);
      const span = drag.x1 - drag.x0;
      x0 = Math.min(Math.max(full[0], drag.x0 - dx), full[1] - span); x1 = x0 + span;
      draw();
      return;
    }
    const at = toX(ev);
    const lines = [xfmt(at)];
    for (const s of series) {
      let best = null;
      for (const p of s.pts) { if (p[0] <= at) best = p; else break; }
      if (best) lines.push(s.name + ': ' + yfmt(best[1]));
    }
    readout.textContent = lines.join('\n');
  });
  draw();
}
)JS";

}  // namespace

HtmlPage ChartPage(const std::string& title, const nlohmann::json& data, const char* page_script) {
  HtmlPage page(title);
  page.data = data;
  page.script = std::string(kCommonScript) + page_script;
  page.style = kStyle;
  return page;
}

const char* const kSnapshotPageScript = R"JS(
const app = document.getElementById('app');
for (const d of DATA.devices) {
  app.append(el('h2', {}, 'Device ' + d.device));
  const t0 = d.timeline.length > 1 && d.timeline[1][1] >= 0 ? d.timeline[1][1] : null;
  const useTime = t0 !== null;
  const X = p => useTime ? (p[1] >= 0 ? (p[1] - t0) / 1e6 : 0) : p[0];
  const xfmt = useTime ? (x => x.toFixed(3) + ' s') : (x => 'entry ' + Math.round(x));
  const peak = d.timeline.find(p => p[0] == d.peak_entry_index) || d.timeline[0];
  app.append(el('p', {}, 'Peak allocated ' + fmtBytes(d.peak_allocated_bytes) + ', peak reserved ' +
      fmtBytes(d.peak_reserved_bytes) + '; at snapshot: reserved ' + fmtBytes(d.reserved_bytes) +
      ', allocated ' + fmtBytes(d.allocated_bytes) + ', fragmentation ' + fmtBytes(d.fragmentation_bytes) +
      '. Wheel to zoom, drag to pan, double-click to reset.'));
  lineChart(app, [
    {name: 'allocated', color: '#1f77b4', pts: d.timeline.map(p => [X(p), p[2]])},
    {name: 'reserved', color: '#ff7f0e', pts: d.timeline.map(p => [X(p), p[3]])},
  ], xfmt, fmtBytes, (peak ? [{x: X(peak), y: d.peak_allocated_bytes, color: '#d62728', label: 'peak'}] : [])
      .concat(d.ooms.map(o => ({x: X([o.entry_index, o.time_us]), y: o.allocated_bytes, color: '#000', label: 'OOM'}))));
  app.append(el('h2', {}, 'Call sites alive at the peak'));
  app.append(table(['bytes', 'count', 'call site'], d.top_allocations_at_peak.map(s =>
      [fmtBytes(s.size), s.count, el('details', {}, el('summary', {}, s.site),
          el('pre', {}, s.frames.map(f => f.name + '  ' + f.filename + ':' + f.line).join('\n')))])));
  app.append(el('h2', {}, 'Segments with the most free space'));
  app.append(table(['address', 'size', 'allocated', 'free', 'largest free', 'blocks', 'type'],
      d.segments_most_free.map(g => ['0x' + g.address.toString(16), fmtBytes(g.total_size),
          fmtBytes(g.allocated_bytes), fmtBytes(g.free_bytes), fmtBytes(g.largest_free_bytes), g.blocks, g.segment_type])));
  for (const o of d.ooms) {
    app.append(el('p', {}, 'OOM at entry ' + o.entry_index + ': requested ' + fmtBytes(o.requested_bytes) +
        ', driver free ' + fmtBytes(o.device_free_bytes) + ', largest free cached block ' +
        fmtBytes(o.largest_free_block_bytes) + ' — ' + o.site));
  }
}
if (DATA.comparison) {
  for (const d of DATA.comparison.devices) {
    app.append(el('h2', {}, 'Comparison with ' + DATA.comparison.base + ' (device ' + d.device + ')'));
    app.append(table(['base', 'new', 'change', 'call site'], d.sites_at_peak.map(s =>
        [fmtBytes(s.base_bytes), fmtBytes(s.new_bytes), fmtBytes(s.delta_bytes), s.site])));
  }
}
)JS";

const char* const kWatchPageScript = R"JS(
const app = document.getElementById('app');
app.append(el('p', {}, 'Command: ' + DATA.command.join(' ') + ' — exit status ' + DATA.exit_status +
    ', ' + DATA.samples.length + ' samples every ' + DATA.interval_ms + ' ms from ' + DATA.source));
const gpus = [...new Set(DATA.samples.map(s => s.gpu))];
const colors = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f'];
app.append(el('h2', {}, 'Memory used'));
lineChart(app, gpus.map((g, i) => ({name: 'GPU ' + g, color: colors[i % 8],
    pts: DATA.samples.filter(s => s.gpu == g).map(s => [s.elapsed_ms / 1000, s.memory_used_bytes])})),
    x => x.toFixed(2) + ' s', fmtBytes);
app.append(el('h2', {}, 'Utilisation'));
lineChart(app, gpus.map((g, i) => ({name: 'GPU ' + g, color: colors[i % 8],
    pts: DATA.samples.filter(s => s.gpu == g && s.utilization_percent >= 0).map(s => [s.elapsed_ms / 1000, s.utilization_percent])})),
    x => x.toFixed(2) + ' s', y => y.toFixed(0) + ' %');
)JS";

}  // namespace sextant
