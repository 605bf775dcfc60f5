#include "snapshot/page_scripts.h"

namespace sextant {
namespace {

constexpr const char* kStyle = R"CSS(
body{font:14px/1.4 system-ui,sans-serif;margin:20px;color:#222}
h1{font-size:18px}h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse;margin:8px 0}td,th{padding:2px 10px;text-align:right;border-bottom:1px solid #eee;white-space:nowrap}
td.l,th.l{text-align:left;white-space:normal}.chart{border:1px solid #ccc;background:#fff;cursor:crosshair;user-select:none}
.readout{font-family:monospace;white-space:pre;min-height:3em;color:#333}.muted{color:#777}
.legend{font-size:12px;margin:4px 0}.legend>span{margin-right:14px;white-space:nowrap}
.swatch{display:inline-block;width:12px;height:3px;margin-right:4px;vertical-align:middle}
)CSS";

// Shared helpers: element builder, byte formatting and a zoomable line chart.
constexpr const char* kCommonScript = R"JS(
const DATA = JSON.parse(document.getElementById('data').textContent);
function el(tag, attrs, ...kids) {
  const ns = ['svg','path','line','text','rect','g','circle','defs','clipPath'].includes(tag) ? 'http://www.w3.org/2000/svg' : null;
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
// A chart drawn in W x H units that shrinks with a narrow window (its viewBox), and the pointer's
// x in those units.
function chartSvg(W, H) {
  return el('svg', {viewBox: '0 0 ' + W + ' ' + H, width: W, height: H, class: 'chart',
                    style: 'width:100%;max-width:' + W + 'px;height:auto'});
}
function svgX(svg, ev, W) {
  const r = svg.getBoundingClientRect();
  return r.width > 0 ? (ev.clientX - r.left) * W / r.width : ev.offsetX;
}
// A clip path of the plot rectangle, so that lines zoomed past its edges stop there instead of
// running over the axis labels; ids are numbered, one per chart of the page.
let clipCount = 0;
function plotClip(svg, x, y, width, height) {
  const id = 'plot-clip-' + (++clipCount);
  const clip = el('clipPath', {id});
  clip.append(el('rect', {x, y, width, height}));
  svg.append(el('defs', {}, clip));
  return 'url(#' + id + ')';
}
// The index of the last point at or before x (0 when every point is after it).
function lastAtOrBefore(pts, x) {
  let lo = 0, hi = pts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (pts[mid][0] <= x) lo = mid; else hi = mid - 1;
  }
  return lo;
}
// series: [{name, color, pts: [[x, y], ...], step}]; xfmt/yfmt format axis values. A step
// series holds each value until the next point (an allocator's totals change only at events);
// the others join their samples with straight lines.
// opts: {yMax: a fixed top of the scale (utilisation in %), bytes: ticks at round binary
// multiples (0.5 GiB, not 537.60 MiB)}.
function lineChart(parent, series, xfmt, yfmt, marks, opts) {
  const W = 960, H = 300, L = 80, R = 10, T = 10, B = 30;
  const all = series.flatMap(s => s.pts);
  if (!all.length) { parent.append(el('p', {class: 'muted'}, 'no data points')); return; }
  let x0 = Math.min(...all.map(p => p[0])), x1 = Math.max(...all.map(p => p[0]));
  if (x1 == x0) x1 = x0 + 1;
  const full = [x0, x1];
  const o = opts || {};
  const top = Math.max(1, ...all.map(p => p[1]));
  let ymax = o.yMax && top <= o.yMax ? o.yMax : top * 1.05;
  if (o.bytes && !o.yMax) {
    // Four ticks of 1, 2 or 5 x 1024^k / 10^j bytes: the scale's top is the next multiple.
    const unit = Math.pow(1024, Math.max(0, Math.floor(Math.log(ymax) / Math.log(1024))));
    const raw = ymax / unit / 4, pow = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 2.5, 5, 10].map(m => m * pow).find(v => v >= raw) * unit;
    ymax = 4 * step;
  }
  const svg = chartSvg(W, H);
  svg.classList.add('line-chart');
  const readout = el('div', {class: 'readout'});
  // Which colour is which series (allocated, reserved; one line per GPU).
  const legend = el('div', {class: 'legend'}, ...series.map(s => el('span', {},
      el('span', {class: 'swatch', style: 'background:' + s.color}), s.name)));
  parent.append(legend, svg, readout);
  function draw() {
    svg.replaceChildren();
    // The visible range, for whoever reads the chart without its pixels (tests).
    svg.dataset.x0 = x0; svg.dataset.x1 = x1; svg.dataset.yMax = ymax;
    const sx = x => L + (x - x0) / (x1 - x0) * (W - L - R), sy = y => H - B - y / ymax * (H - T - B);
    for (let k = 0; k <= 4; k++) {
      const y = ymax * k / 4;
      svg.append(el('line', {x1: L, x2: W - R, y1: sy(y), y2: sy(y), stroke: '#eee'}));
      svg.append(el('text', {x: L - 4, y: sy(y) + 4, 'text-anchor': 'end', 'font-size': 11}, yfmt(y)));
      const x = x0 + (x1 - x0) * k / 4;
      svg.append(el('text', {x: sx(x), y: H - 10, 'text-anchor': k == 4 ? 'end' : 'middle', 'font-size': 11}, xfmt(x)));
    }
    const clip = plotClip(svg, L, T, W - L - R, H - T - B);
    for (const s of series) {
      if (!s.pts.length) continue;
      // From the last point at or before the left edge: the value in effect there. A step line
      // starts at the edge and ends there on the right; a sampled line runs on to its next point
      // past either edge, and the clip path cuts it at the frame.
      const edge = x => s.step ? Math.max(L, Math.min(W - R, sx(x))) : sx(x);
      let d = '';
      for (let i = lastAtOrBefore(s.pts, x0); i < s.pts.length; i++) {
        const p = s.pts[i], x = edge(p[0]).toFixed(1), y = sy(p[1]).toFixed(1);
        if (!d) d = 'M' + x + ',' + y;
        else if (s.step && p[0] > x1) { d += 'H' + x; break; }
        else d += s.step ? 'H' + x + 'V' + y : 'L' + x + ',' + y;
        if (p[0] > x1) break;
      }
      svg.append(el('path', {d, fill: 'none', stroke: s.color, 'stroke-width': 1.5, 'clip-path': clip,
                             class: 'series', 'data-series': s.name}));
    }
    for (const m of marks || []) {
      if (m.x < x0 || m.x > x1) continue;
      svg.append(el('circle', {cx: sx(m.x), cy: sy(m.y), r: 4, fill: m.color}));
      // Near the right edge the label goes left of its mark, not past the plot.
      const right = sx(m.x) > W - R - 60;
      svg.append(el('text', {x: sx(m.x) + (right ? -6 : 6), y: sy(m.y) - 6, 'font-size': 11,
          fill: m.color, 'text-anchor': right ? 'end' : 'start'}, m.label));
    }
    svg.append(el('rect', {x: L, y: T, width: W - L - R, height: H - T - B, fill: 'transparent', stroke: '#999',
                           class: 'frame'}));
  }
  const toX = ev => x0 + (svgX(svg, ev, W) - L) / (W - L - R) * (x1 - x0);
  svg.addEventListener('wheel', ev => {
    ev.preventDefault();
    const at = toX(ev), f = ev.deltaY < 0 ? 0.8 : 1.25;
    x0 = Math.max(full[0], at - (at - x0) * f); x1 = Math.min(full[1], at + (x1 - at) * f);
    if (x1 - x0 < 1e-9) x1 = x0 + 1e-9;
    draw();
  });
  let drag = null;
  svg.addEventListener('mousedown', ev => { drag = {x: svgX(svg, ev, W), x0, x1}; });
  window.addEventListener('mouseup', () => { drag = null; });
  svg.addEventListener('dblclick', () => { [x0, x1] = full; draw(); });
  svg.addEventListener('mousemove', ev => {
    if (drag) {
      const dx = (svgX(svg, ev, W) - drag.x) / (W - L - R) * (drag.x1 - drag.x0);
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
// Active memory timeline: each allocation a band from its allocation to its free, stacked as
// PyTorch's memory_viz stacks them; the layout comes computed in DATA (active_timeline).
const SITE_COLORS = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1',
    '#ff9da7', '#9c755f', '#bab0ac', '#1f4e79', '#a0522d', '#2e8b57', '#8b3a8b', '#b8860b', '#00838f'];
const MERGED_COLOR = '#c7c7c7';
function siteColor(site) {
  let h = 2166136261;
  for (let i = 0; i < site.length; i++) { h ^= site.charCodeAt(i); h = Math.imul(h, 16777619); }
  return SITE_COLORS[(h >>> 0) % SITE_COLORS.length];
}
function activeTimeline(parent, d, X, xfmt, useTime) {
  const at = d.active_timeline;
  if (!at || d.timeline.length < 2) return;
  const frames = at.frames;
  const xOf = new Map(d.timeline.map(p => [p[0], X(p)]));
  const bands = at.bands.map((b, i) => ({i, addr: b[0], size: b[1], stack: at.stacks[b[2]],
      ae: b[3], at: b[4], fe: b[5], ft: b[6], offs: b[7]}));
  // Band times are microseconds since the first trace entry, where the x axis starts.
  const bx = (e, us) => useTime ? (us >= 0 ? us / 1e6 : 0) : e;
  const freedSize = new Map();
  for (const b of bands) {
    if (b.ae >= 0) xOf.set(b.ae, bx(b.ae, b.at));
    if (b.fe >= 0) { xOf.set(b.fe, bx(b.fe, b.ft)); freedSize.set(b.fe, b.size); }
  }
  const xStart = X(d.timeline[0]), xEnd = X(d.timeline[d.timeline.length - 1]);
  for (const b of bands) {
    // offsets: the offset at allocation, then the entries where the band drops by the size of
    // the band freed there.
    b.xs = [b.ae >= 0 ? xOf.get(b.ae) : xStart]; b.os = [b.offs[0]];
    for (let k = 1; k < b.offs.length; k++) { b.xs.push(xOf.get(b.offs[k])); b.os.push(b.os.at(-1) - freedSize.get(b.offs[k])); }
    b.xe = b.fe >= 0 ? xOf.get(b.fe) : xEnd;
    b.color = siteColor(b.stack.site);
  }
  // The merged band sits on the drawn ones: its bottom is the drawn total, a step function
  // that changes at the bands' allocations and frees; its size is known at the sampled points.
  const changes = new Map();
  const at_entry = e => { let c = changes.get(e); if (!c) changes.set(e, c = {drawn: 0, merged: null}); return c; };
  for (const b of bands) { at_entry(b.ae).drawn += b.size; if (b.fe >= 0) at_entry(b.fe).drawn -= b.size; }
  for (const [e, bytes] of at.merged) at_entry(e).merged = bytes;
  const merged = [];  // [x, drawn, merged bytes]
  let drawn = 0, small = 0, ymax = d.peak_allocated_bytes;
  for (const e of [...changes.keys()].sort((a, b) => a - b)) {
    const c = changes.get(e);
    drawn += c.drawn;
    if (c.merged !== null) small = c.merged;
    merged.push([e < 0 ? xStart : xOf.get(e), drawn, small, e]);
    ymax = Math.max(ymax, drawn + small);
  }
  ymax = Math.max(1, ymax) * 1.05;
  const heightAt = e => {
    let h = 0;
    for (const m of merged) { if (m[3] <= e) h = m[1] + m[2]; else break; }
    return h;
  };
  const peakX = xOf.get(d.peak_entry_index) ?? xStart;
  const peakHeight = heightAt(d.peak_entry_index);
  const alive = (b, e) => b.ae <= e && (b.fe < 0 || b.fe > e);

  parent.append(el('h2', {}, 'Active memory timeline'));
  parent.append(el('p', {}, 'Every allocation is a band from its allocation to its free, stacked as ' +
      'PyTorch\'s memory_viz stacks them: a band keeps its height for its lifetime and drops down when one ' +
      'below it is freed. Colour: call site. ' + (at.merged_allocations > 0
      ? 'The ' + at.bands_drawn + ' largest of ' + at.allocations + ' allocations (each ' +
        fmtBytes(at.smallest_drawn_bytes) + ' or more) have bands of their own; the other ' +
        at.merged_allocations + ' (each ' + fmtBytes(at.largest_merged_bytes) + ' or less) are merged ' +
        'into the grey "smaller allocations" band, its size sampled at ' + at.merged.length + ' points. '
      : 'All ' + at.allocations + ' allocations are drawn. ') +
      'Wheel to zoom, drag to pan, double-click to reset; hover a band for its size, address, lifetime and stack.'));
  const W = 960, H = 380, L = 80, R = 10, T = 10, B = 30;
  let x0 = xStart, x1 = xEnd > xStart ? xEnd : xStart + 1;
  const full = [x0, x1];
  const svg = chartSvg(W, H);
  const readout = el('div', {class: 'readout', style: 'max-width:' + W + 'px;overflow-x:auto'});
  parent.append(svg, readout);
  let paths = new Map(), selected = null;
  const when = (e, t) => e < 0 ? 'before the trace' :
      xfmt(bx(e, t)) + (useTime ? ' (entry ' + e + ')' : '');
  function describe(b) {
    const fr = b.stack.frames.map(f => '  ' + frames[f][0] + '  ' + frames[f][1] + ':' + frames[f][2]);
    return fmtBytes(b.size) + ' (' + b.size + ' B) at 0x' + b.addr.toString(16) + '\n' +
        'allocated ' + (b.stack.of_free ? 'before recording began' : when(b.ae, b.at)) +
        ', freed ' + (b.fe >= 0 ? when(b.fe, b.ft) : '— still allocated at snapshot time') + '\n' +
        b.stack.site + (b.stack.of_free ? '  (stack of its free)' : '') + '\n' +
        (b.stack.inner_frames ? '  (' + b.stack.inner_frames + ' innermost allocator and dispatch frames not shown)\n' : '') +
        (fr.length ? fr.join('\n') : '  <no stack recorded>');
  }
  function highlight(i) {
    if (selected) selected.setAttribute('stroke', 'none');
    selected = paths.get(i) || null;
    if (selected) { selected.setAttribute('stroke', '#000'); selected.parentNode.append(selected); }
    readout.textContent = i === null ? '' : describe(bands[i]);
  }
  function draw() {
    svg.replaceChildren();
    paths = new Map(); selected = null;
    const px = x => Math.max(L - 2, Math.min(W - R + 2, L + (x - x0) / (x1 - x0) * (W - L - R)));
    const sy = y => (H - B - y / ymax * (H - T - B)).toFixed(1);
    for (let k = 0; k <= 4; k++) {
      const y = ymax * k / 4;
      svg.append(el('line', {x1: L, x2: W - R, y1: sy(y), y2: sy(y), stroke: '#eee'}));
      svg.append(el('text', {x: L - 4, y: +sy(y) + 4, 'text-anchor': 'end', 'font-size': 11}, fmtBytes(y)));
      const x = x0 + (x1 - x0) * k / 4;
      svg.append(el('text', {x: px(x), y: H - 10, 'text-anchor': k == 4 ? 'end' : 'middle', 'font-size': 11}, xfmt(x)));
    }
    // A band with steps: bottom edge left to right, top edge back.
    function stepPath(xs, los, his, xe) {
      let top = '', d = 'M' + px(xs[0]).toFixed(1) + ',' + sy(los[0]);
      for (let k = 1; k < xs.length; k++) {
        const x = px(xs[k]).toFixed(1);
        d += 'L' + x + ',' + sy(los[k - 1]) + 'L' + x + ',' + sy(los[k]);
        top = 'L' + x + ',' + sy(his[k]) + 'L' + x + ',' + sy(his[k - 1]) + top;
      }
      const xr = px(xe).toFixed(1), n = xs.length - 1;
      return d + 'L' + xr + ',' + sy(los[n]) + 'L' + xr + ',' + sy(his[n]) + top +
          'L' + px(xs[0]).toFixed(1) + ',' + sy(his[0]) + 'Z';
    }
    const g = el('g', {});
    for (const b of bands) {
      if (b.xe < x0 || b.xs[0] > x1 || b.size <= 0) continue;
      const p = el('path', {d: stepPath(b.xs, b.os, b.os.map(o => o + b.size), b.xe), fill: b.color,
          stroke: 'none', 'stroke-width': 1, 'data-band': b.i});
      paths.set(b.i, p);
      g.append(p);
    }
    if (at.merged_allocations > 0 && merged.length) {
      g.append(el('path', {d: stepPath(merged.map(m => m[0]), merged.map(m => m[1]),
          merged.map(m => m[1] + m[2]), xEnd), fill: MERGED_COLOR, 'data-merged': 1}));
    }
    svg.append(g);
    if (peakX >= x0 && peakX <= x1) {
      const x = px(peakX);
      svg.append(el('line', {x1: x, x2: x, y1: T, y2: H - B, stroke: '#d62728', 'stroke-dasharray': '4 3'}));
      svg.append(el('circle', {cx: x, cy: sy(peakHeight), r: 4, fill: '#d62728'}));
      svg.append(el('text', {x: x + (x > W / 2 ? -6 : 6), y: +sy(peakHeight) - 6, 'font-size': 11, fill: '#d62728',
          'text-anchor': x > W / 2 ? 'end' : 'start'}, 'peak ' + fmtBytes(peakHeight) + ' at ' + xfmt(peakX)));
    }
    svg.append(el('rect', {x: L, y: T, width: W - L - R, height: H - T - B, fill: 'none', stroke: '#999'}));
  }
  const toX = ev => x0 + (svgX(svg, ev, W) - L) / (W - L - R) * (x1 - x0);
  svg.addEventListener('wheel', ev => {
    ev.preventDefault();
    const c = toX(ev), f = ev.deltaY < 0 ? 0.8 : 1.25;
    x0 = Math.max(full[0], c - (c - x0) * f); x1 = Math.min(full[1], c + (x1 - c) * f);
    if (x1 - x0 < 1e-9) x1 = x0 + 1e-9;
    draw();
  });
  let drag = null;
  svg.addEventListener('mousedown', ev => { drag = {x: svgX(svg, ev, W), x0, x1, moved: false}; });
  window.addEventListener('mouseup', () => { drag = null; });
  svg.addEventListener('dblclick', () => { [x0, x1] = full; draw(); });
  svg.addEventListener('mousemove', ev => {
    if (drag && svgX(svg, ev, W) !== drag.x) {
      const span = drag.x1 - drag.x0, dx = (svgX(svg, ev, W) - drag.x) / (W - L - R) * span;
      x0 = Math.min(Math.max(full[0], drag.x0 - dx), full[1] - span); x1 = x0 + span;
      draw();
      return;
    }
    const t = ev.target;
    if (t.dataset && t.dataset.band !== undefined) { highlight(+t.dataset.band); return; }
    if (selected) highlight(null);
    if (t.dataset && t.dataset.merged) {
      const c = toX(ev);
      let m = merged[0];
      for (const q of merged) { if (q[0] <= c) m = q; else break; }
      readout.textContent = 'smaller allocations (each ' + fmtBytes(at.largest_merged_bytes) + ' or less), merged: ' +
          fmtBytes(m[2]) + ' at ' + xfmt(c) + ' (sampled at the points the allocated timeline keeps)';
    } else {
      readout.textContent = '';
    }
  });
  draw();

  const atPeak = bands.filter(b => alive(b, d.peak_entry_index)).sort((a, b) => b.size - a.size || a.addr - b.addr);
  const shown = atPeak.slice(0, 20), rest = atPeak.slice(20);
  const peakMerged = merged.filter(m => m[3] <= d.peak_entry_index).at(-1);
  parent.append(el('h2', {}, 'Allocations alive at the peak (' + fmtBytes(peakHeight) + ' at ' + xfmt(peakX) + ')'));
  const rows = shown.map(b => [el('span', {style: 'display:inline-block;width:10px;height:10px;background:' + b.color}),
      fmtBytes(b.size), '0x' + b.addr.toString(16), b.stack.of_free ? 'before recording' : when(b.ae, b.at),
      b.fe >= 0 ? when(b.fe, b.ft) : 'not freed', b.stack.site]);
  if (rest.length) rows.push(['', fmtBytes(rest.reduce((s, b) => s + b.size, 0)), '', '', '', rest.length + ' more bands']);
  if (peakMerged && peakMerged[2] > 0) rows.push([el('span', {style: 'display:inline-block;width:10px;height:10px;background:' + MERGED_COLOR}),
      fmtBytes(peakMerged[2]), '', '', '', 'smaller allocations, merged']);
  const tbl = table(['', 'size', 'address', 'allocated', 'freed', 'call site'], rows);
  [...tbl.querySelectorAll('tr')].slice(1, shown.length + 1).forEach((tr, k) =>
      tr.addEventListener('mouseenter', () => highlight(shown[k].i)));
  parent.append(tbl);
}

const app = document.getElementById('app');
for (const d of DATA.devices) {
  app.append(el('h2', {}, 'Device ' + d.device));
  const t0 = d.timeline.length > 1 && d.timeline[1][1] >= 0 ? d.timeline[1][1] : null;
  const useTime = t0 !== null;
  const X = p => useTime ? (p[1] >= 0 ? (p[1] - t0) / 1e6 : 0) : p[0];
  // Entry -1 is the state before the first trace entry (what was allocated before recording).
  const xfmt = useTime ? (x => x.toFixed(3) + ' s')
                       : (x => x < 0 ? 'before trace' : 'entry ' + Math.round(x));
  const peak = d.timeline.find(p => p[0] == d.peak_entry_index) || d.timeline[0];
  app.append(el('p', {}, 'Peak allocated ' + fmtBytes(d.peak_allocated_bytes) + ', peak reserved ' +
      fmtBytes(d.peak_reserved_bytes) + '; at snapshot: reserved ' + fmtBytes(d.reserved_bytes) +
      ', allocated ' + fmtBytes(d.allocated_bytes) + ', cached free ' + fmtBytes(d.cached_free_bytes) +
      ' (fragmentation ' + fmtBytes(d.inactive_split_bytes) + ')' +
      (d.trace_entries > 1 ? '. Wheel to zoom, drag to pan, double-click to reset.' : '.')));
  // A snapshot recorded without allocation history (one OOM entry, or none) has no course over
  // time to draw: say so rather than draw a chart of one point.
  const history = d.trace_entries > 1;
  if (!history) {
    app.append(el('p', {class: 'muted'}, 'No allocation history was recorded (' +
        d.trace_entries + ' trace ' + (d.trace_entries == 1 ? 'entry' : 'entries') +
        '): the charts over time are left out; the state at snapshot time is below.'));
  }
  // With --compare, the new file's lines on the same axes, each file timed from its own start
  // (or counted in its own trace entries when either file has no times).
  const ct = d.compare_timeline;
  const series = [
    {name: 'allocated', color: '#1f77b4', step: true, pts: d.timeline.map(p => [X(p), p[2]])},
    {name: 'reserved', color: '#ff7f0e', step: true, pts: d.timeline.map(p => [X(p), p[3]])},
  ];
  if (ct && ct.length > 1) {
    const c0 = ct[1][1] >= 0 ? ct[1][1] : null;
    const Xc = p => useTime && c0 !== null ? (p[1] >= 0 ? (p[1] - c0) / 1e6 : 0) : p[0];
    if (!useTime || c0 !== null) {
      series.push(
          {name: 'allocated, ' + DATA.compare_name, color: '#2ca02c', step: true, pts: ct.map(p => [Xc(p), p[2]])},
          {name: 'reserved, ' + DATA.compare_name, color: '#9467bd', step: true, pts: ct.map(p => [Xc(p), p[3]])});
    }
  }
  if (history) lineChart(app, series, xfmt, fmtBytes, (peak ? [{x: X(peak), y: d.peak_allocated_bytes, color: '#d62728', label: 'peak'}] : [])
      .concat(d.ooms.map(o => ({x: X([o.entry_index, o.time_us]), y: o.allocated_bytes, color: '#000', label: 'OOM'}))),
      {bytes: true});
  if (history) activeTimeline(app, d, X, xfmt, useTime);
  app.append(el('h2', {}, 'Call sites alive at the peak'));
  // As the console: each site's share of the peak, and the sites past the top ones summed, so
  // the rows add up to the peak.
  const share = b => d.peak_allocated_bytes > 0
      ? (100 * b / d.peak_allocated_bytes).toFixed(1) + '%' : '';
  const siteRows = d.top_allocations_at_peak.map(s =>
      [fmtBytes(s.size), share(s.size), s.count, el('details', {}, el('summary', {}, s.site),
          el('pre', {}, s.frames.map(f => f.name + '  ' + f.filename + ':' + f.line).join('\n')))]);
  const other = d.other_allocations_at_peak;
  if (other && other.sites > 0) {
    siteRows.push([fmtBytes(other.size), share(other.size), other.count,
                   '(' + other.sites + ' more call sites)']);
  }
  app.append(table(['bytes', 'share', 'count', 'call site'], siteRows));
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
    x => x.toFixed(2) + ' s', fmtBytes, [], {bytes: true});
app.append(el('h2', {}, 'Utilisation'));
// Only the GPUs that reported utilisation get a line and a legend entry; the axis is 0-100 %.
lineChart(app, gpus.map((g, i) => ({name: 'GPU ' + g, color: colors[i % 8],
    pts: DATA.samples.filter(s => s.gpu == g && s.utilization_percent >= 0).map(s => [s.elapsed_ms / 1000, s.utilization_percent])}))
    .filter(series => series.pts.length > 0),
    x => x.toFixed(2) + ' s', y => y.toFixed(0) + ' %', [], {yMax: 100});
)JS";

}  // namespace sextant
