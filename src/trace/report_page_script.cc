// The trace report page's script (report_page.h): plain JavaScript, no libraries, no network.
// It only draws: every value shown is a number of the embedded JSON, itself a table cell.
#include "trace/report_page.h"

namespace sextant {

const char* ReportPageScript() {
  return R"JS((function () {
'use strict';
var D = JSON.parse(document.getElementById('data').textContent);
var SVGNS = 'http://www.w3.org/2000/svg';
var app = document.getElementById('app');

var style = document.createElement('style');
style.textContent =
  '.sx-fig{margin:.5em 0 1.5em}.sx-fig svg{display:block;font-family:system-ui,sans-serif}' +
  '.sx-ctl{font-size:13px;margin:.3em 0 .4em}.sx-ctl label{margin-right:1em}' +
  '.sx-legend{font-size:12px;margin:.2em 0}.sx-legend span{margin-right:1.2em;white-space:nowrap}' +
  '.sx-sw{display:inline-block;width:11px;height:11px;margin-right:4px;vertical-align:-1px;' +
  'border-radius:2px}.sx-ax{font-size:11px;fill:#444}.sx-grid{stroke:#e6e6e6}' +
  '.sx-axis{stroke:#888}.sx-lbl{font-size:12px;fill:#222}.sx-roof{fill:none;stroke-width:2}' +
  '.sx-pt{stroke:#fff;stroke-width:.8;fill-opacity:.75}.sx-pt:hover,.sx-bar:hover{' +
  'stroke:#000;stroke-width:1.5}.sx-strag{font-weight:700;fill:#b00}' +
  '#sx-tip{position:fixed;z-index:10;display:none;pointer-events:none;background:#fff;' +
  'border:1px solid #999;border-radius:4px;padding:4px 8px;font-size:12px;max-width:560px;' +
  'box-shadow:0 2px 8px rgba(0,0,0,.2);overflow-wrap:anywhere;white-space:pre-line}' +
  '#sx-tip b{display:block}';
document.head.appendChild(style);

function h(tag, attrs, parent, text) {
  var e = document.createElement(tag);
  for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}
function s(tag, attrs, parent, text) {
  var e = document.createElementNS(SVGNS, tag);
  for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}

// Numbers as a person reads them: four significant digits, thousands grouped.
function num(v) {
  if (v === null || v === undefined || isNaN(v)) return '-';
  if (Math.abs(v) >= 1000) return Math.round(v).toLocaleString('en-US');
  return String(Number(v.toPrecision(4)));
}
// A power of ten as an axis label: 0.001 ... 10,000, else 1e-5.
function decade(k) { return k >= -3 && k <= 4 ? num(Math.pow(10, k)) : '1e' + k; }
// Sets the text of an SVG <text> to `full`, cut with "..." to fit `width` pixels.
function fitText(node, full, width) {
  node.textContent = full;
  if (node.getComputedTextLength() <= width) return;
  var lo = 1, hi = full.length;
  while (lo < hi) {
    var mid = (lo + hi + 1) >> 1;
    node.textContent = full.slice(0, mid) + '...';
    if (node.getComputedTextLength() <= width) lo = mid; else hi = mid - 1;
  }
  node.textContent = full.slice(0, lo) + '...';
}
function us(v) { return v >= 1000 ? num(v / 1000) + ' ms' : num(v) + ' us'; }

// A chart drawn in W x H units that shrinks with a narrow window instead of clipping its labels.
function scaled(W, H) {
  return {width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img',
          style: 'width:100%;max-width:' + W + 'px;height:auto'};
}

// One tooltip for the page: `lines[0]` in bold, the rest below.
var tip = h('div', {id: 'sx-tip', role: 'tooltip'}, document.body);
function hover(node, lines) {
  node.addEventListener('mousemove', function (ev) {
    tip.textContent = '';
    h('b', {}, tip, lines[0]);
    tip.appendChild(document.createTextNode(lines.slice(1).join('\n')));
    tip.style.display = 'block';
    var x = ev.clientX + 14, y = ev.clientY + 14;
    var r = tip.getBoundingClientRect();
    if (x + r.width > window.innerWidth - 4) x = Math.max(4, ev.clientX - r.width - 14);
    if (y + r.height > window.innerHeight - 4) y = Math.max(4, ev.clientY - r.height - 14);
    tip.style.left = x + 'px';
    tip.style.top = y + 'px';
  });
  node.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
}

// Puts `node` just before the table it draws (its <h3 id>), else at the end of the page.
function place(node, tableId) {
  var anchor = document.getElementById(tableId);
  if (anchor && anchor.parentNode) anchor.parentNode.insertBefore(node, anchor);
  else app.appendChild(node);
}
function figure(title) {
  var f = h('figure', {class: 'sx-fig'});
  h('figcaption', {}, f, title);
  return f;
}
// entries: [label, colour, category]; the category names the colour's meaning (one table of
// colours for the page: "exposed communication" is drawn as communication).
function legend(parent, entries) {
  var l = h('div', {class: 'sx-legend'}, parent);
  entries.forEach(function (e) {
    var span = h('span', {'data-category': e[2] || e[0]}, l);
    h('i', {class: 'sx-sw', style: 'background:' + e[1]}, span);
    span.appendChild(document.createTextNode(e[0]));
  });
}
function note(parent, text) { if (text) h('p', {class: 'note'}, parent, text); }

// One colour per kind of work on every chart of the page (category_colors.h); a name the table
// lacks takes a colour no category of the table has, so it cannot pass for one.
var COLORS = D.colors || {};
var SPARE = ['#d46fb0', '#17becf', '#bcbd22', '#e07b39', '#5b5ea6', '#8c564b'].filter(function (c) {
  return Object.keys(COLORS).every(function (k) { return COLORS[k] !== c; });
});
var spareOf = {};
function colorOf(name) {
  if (COLORS[name]) return COLORS[name];
  if (!spareOf[name]) spareOf[name] = SPARE[Object.keys(spareOf).length % SPARE.length];
  return spareOf[name];
}

// Nice linear ticks over [0, max].
function linearTicks(max, count) {
  if (!(max > 0)) return [0];
  var step = Math.pow(10, Math.floor(Math.log10(max / count)));
  var err = max / count / step;
  step *= err >= 7.5 ? 10 : err >= 3.5 ? 5 : err >= 1.5 ? 2 : 1;
  var t = [];
  for (var v = 0; v <= max * 1.0001; v += step) t.push(v);
  return t;
}

// ---- the rank selector shared by the roofline and the kernel chart ----
var chartRanks = D.chart_ranks || [];
var current = 0;
var selectors = [], redraws = [];
// The fastest and slowest rank by GPU span (gpu_timeline total_time), for the selector.
var spanEnds = [null, null];
if (D.timeline && D.timeline.ranks.length > 1) {
  var lo = null, hi = null;
  D.timeline.ranks.forEach(function (r) {
    if (!lo || r.ms.total_time < lo.ms.total_time) lo = r;
    if (!hi || r.ms.total_time > hi.ms.total_time) hi = r;
  });
  spanEnds = [lo.rank, hi.rank];
}
// Every chart with a rank selector shows chart rank `i` (an index into chartRanks).
function showChartRank(i) {
  current = i;
  selectors.forEach(function (o) { o.value = String(i); });
  redraws.forEach(function (f) { f(); });
}
function rankControl(parent) {
  if (chartRanks.length < 2) return;
  var label = h('label', {}, parent, 'rank ');
  var sel = h('select', {}, label);
  chartRanks.forEach(function (r, i) {
    h('option', {value: i}, sel, String(r) + (r === spanEnds[1] ? ' (slowest)' :
                                              r === spanEnds[0] ? ' (fastest)' : ''));
  });
  sel.value = String(current);
  sel.addEventListener('change', function () { showChartRank(+sel.value); });
  selectors.push(sel);
  if (D.chart_ranks_note) h('span', {class: 'note'}, parent, D.chart_ranks_note);
}

// ---- 1. GPU time per rank: one stacked bar each ----
function drawTimeline() {
  var T = D.timeline;
  if (!T || !T.ranks.length) return;
  var cats = T.categories || T.labels;
  var colors = cats.map(colorOf);
  var fig = figure('GPU time per rank (gpu_timeline): computation, exposed communication, ' +
                   'exposed memcpy and idle add up to the GPU span');
  var ctl = h('div', {class: 'sx-ctl'}, fig);
  var scale = 'ms';
  [['ms', 'milliseconds'], ['percent', '% of span']].forEach(function (o) {
    var lab = h('label', {}, ctl);
    var r = h('input', {type: 'radio', name: 'sx-tl-scale', value: o[0]}, lab);
    if (o[0] === scale) r.checked = true;
    lab.appendChild(document.createTextNode(' ' + o[1]));
    r.addEventListener('change', function () { scale = o[0]; draw(); });
  });
  legend(fig, T.labels.map(function (l, i) { return [l, colors[i], cats[i]]; }));
  var holder = h('div', {}, fig);
  var slowest = null, fastest = null;
  T.ranks.forEach(function (r) {
    var span = r.ms.total_time || 0;
    if (!slowest || span > (slowest.ms.total_time || 0)) slowest = r;
    if (!fastest || span < (fastest.ms.total_time || 0)) fastest = r;
  });
  if (T.ranks.length > 1) {
    note(fig, 'Slowest rank by GPU span: ' + slowest.rank + ' (' + num(slowest.ms.total_time) +
         ' ms); fastest: ' + fastest.rank + ' (' + num(fastest.ms.total_time) + ' ms).');
  }
  function draw() {
    holder.textContent = '';
    var n = T.ranks.length;
    var row = n <= 16 ? 22 : n <= 40 ? 14 : n <= 96 ? 10 : 6;
    // The axis title has a line of its own under the tick labels, centred: at the plot's end it
    // ran into the last tick ("100" and "% of GPU span").
    var labelW = 84, plotW = 680, right = 130, top = 8, axisH = 36;
    var W = labelW + plotW + right, H = top + n * row + axisH;
    var svg = s('svg', scaled(W, H), holder);
    var max = 0;
    T.ranks.forEach(function (r) {
      var total = 0;
      T.types.forEach(function (t) { total += scale === 'ms' ? (r.ms[t] || 0) : (r.percent[t] || 0); });
      max = Math.max(max, total);
    });
    var ticks = linearTicks(max, 6);
    var xmax = Math.max(max, ticks[ticks.length - 1]) || 1;
    var x = function (v) { return labelW + plotW * v / xmax; };
    ticks.forEach(function (t) {
      s('line', {x1: x(t), x2: x(t), y1: top, y2: top + n * row, class: 'sx-grid'}, svg);
      s('text', {x: x(t), y: top + n * row + 14, 'text-anchor': 'middle', class: 'sx-ax'}, svg,
        num(t));
    });
    s('text', {x: labelW + plotW / 2, y: top + n * row + 32, 'text-anchor': 'middle',
               class: 'sx-ax'}, svg, scale === 'ms' ? 'GPU time (ms)' : '% of GPU span');
    var every = row >= 10 ? 1 : Math.ceil(10 / row);
    T.ranks.forEach(function (r, i) {
      var y = top + i * row, x0 = 0;
      var strag = n > 1 && r === slowest;
      if (i % every === 0 || strag) {
        s('text', {x: labelW - 6, y: y + row * 0.5 + 4, 'text-anchor': 'end',
                   class: strag ? 'sx-lbl sx-strag' : 'sx-lbl',
                   style: row < 14 ? 'font-size:10px' : ''}, svg, 'rank ' + r.rank);
      }
      var lines = ['rank ' + r.rank + ': GPU span ' + num(r.ms.total_time) + ' ms'];
      T.types.forEach(function (t, k) {
        lines.push(T.labels[k] + ': ' + num(r.ms[t]) + ' ms (' + num(r.percent[t]) + '%)');
      });
      lines.push('busy: ' + num(r.ms.busy_time) + ' ms; all communication: ' +
                 num(r.ms.total_comm_time) + ' ms; all memcpy: ' + num(r.ms.total_memcpy_time) +
                 ' ms');
      var g = s('g', {}, svg);
      T.types.forEach(function (t, k) {
        var v = scale === 'ms' ? (r.ms[t] || 0) : (r.percent[t] || 0);
        var w = plotW * v / xmax;
        var rect = s('rect', {x: x(x0), y: y + 1, width: Math.max(0, w), height: Math.max(1, row - 2),
                              fill: colors[k], class: 'sx-bar'}, g);
        hover(rect, ['rank ' + r.rank + ', ' + T.labels[k] + ': ' + num(r.ms[t]) + ' ms (' +
                     num(r.percent[t]) + '% of span)'].concat(lines));
        x0 += v;
      });
      if (row >= 10) {
        s('text', {x: x(x0) + 4, y: y + row * 0.5 + 4, class: 'sx-ax',
                   style: strag ? 'font-weight:700;fill:#b00' : ''}, svg,
          num(r.ms.total_time) + ' ms' +
          (strag ? '  slowest' : ''));
      }
    });
    s('line', {x1: labelW, x2: labelW, y1: top, y2: top + n * row, class: 'sx-axis'}, svg);
  }
  place(fig, 'ranks');
  draw();
}

// ---- 2. roofline scatter of one rank ----
function drawRoofline() {
  // No roofline table on the page (no op with shapes and a cost model): no chart either,
  // rather than one at the foot of the page with nothing in it.
  if (!D.roofline || !D.roofline.length || !document.getElementById('roofline')) return;
  var fig = figure('Roofline: achieved TFLOP/s against arithmetic intensity, one point per op ' +
                   'group of the roofline table (area ~ kernel time)');
  var ctl = h('div', {class: 'sx-ctl'}, fig);
  rankControl(ctl);
  var holder = h('div', {}, fig);
  function draw() {
    holder.textContent = '';
    var R = D.roofline[current] || D.roofline[0];
    fig.setAttribute('data-rank', R.rank);
    var all = R.points || [];
    var pts = all.filter(function (p) { return p.tflops > 0 && p.flops_per_byte > 0; });
    if (!pts.length) {
      note(holder, 'Rank ' + R.rank + ': no op with a cost model and GPU time (shapes need ' +
           'record_shapes=True).');
      return;
    }
    var bw = R.hbm_tbps || 0, ceilings = R.ceilings || [];
    var fams = [];
    pts.forEach(function (p) { if (fams.indexOf(p.family) < 0) fams.push(p.family); });
    legend(holder, fams.map(function (f) { return [f, colorOf(f)]; }));
    var xs = pts.map(function (p) { return p.flops_per_byte; });
    var ys = pts.map(function (p) { return p.tflops; });
    var topCeil = 0;
    ceilings.forEach(function (c) {
      topCeil = Math.max(topCeil, c[1]);
      if (bw > 0) xs.push(c[1] / bw);
      ys.push(c[1]);
    });
    var lx0 = Math.floor(Math.log10(Math.min.apply(null, xs)) - 0.3);
    var lx1 = Math.ceil(Math.log10(Math.max.apply(null, xs)) + 0.3);
    var ly0 = Math.floor(Math.log10(Math.min.apply(null, ys)) - 0.3);
    var ly1 = Math.ceil(Math.log10(Math.max.apply(null, ys)) + 0.2);
    var left = 64, top = 14, plotW = 720, plotH = 400, right = 220, bottom = 44;
    var W = left + plotW + right, H = top + plotH + bottom;
    var svg = s('svg', scaled(W, H), holder);
    var X = function (v) { return left + plotW * (Math.log10(v) - lx0) / (lx1 - lx0); };
    var Y = function (v) { return top + plotH * (1 - (Math.log10(v) - ly0) / (ly1 - ly0)); };
    var k;
    for (k = lx0; k <= lx1; ++k) {
      s('line', {x1: X(Math.pow(10, k)), x2: X(Math.pow(10, k)), y1: top, y2: top + plotH,
                 class: 'sx-grid'}, svg);
      // Low enough to clear the lowest y label, which sits on the same corner.
      s('text', {x: X(Math.pow(10, k)), y: top + plotH + 18, 'text-anchor': 'middle',
                 class: 'sx-ax'}, svg, decade(k));
    }
    for (k = ly0; k <= ly1; ++k) {
      s('line', {x1: left, x2: left + plotW, y1: Y(Math.pow(10, k)), y2: Y(Math.pow(10, k)),
                 class: 'sx-grid'}, svg);
      s('text', {x: left - 6, y: Y(Math.pow(10, k)) + 4, 'text-anchor': 'end', class: 'sx-ax'},
        svg, decade(k));
    }
    s('rect', {x: left, y: top, width: plotW, height: plotH, fill: 'none', class: 'sx-axis'}, svg);
    s('text', {x: left + plotW / 2, y: H - 6, 'text-anchor': 'middle', class: 'sx-lbl'}, svg,
      'arithmetic intensity (FLOP/byte)');
    s('text', {x: 14, y: top + plotH / 2, 'text-anchor': 'middle', class: 'sx-lbl',
               transform: 'rotate(-90 14 ' + (top + plotH / 2) + ')'}, svg, 'achieved TFLOP/s');
    var clip = 'sx-clip';
    var defs = s('defs', {}, svg);
    s('rect', {x: left, y: top, width: plotW, height: plotH},
      s('clipPath', {id: clip}, defs));
    var roof = s('g', {'clip-path': 'url(#' + clip + ')'}, svg);
    var xLo = Math.pow(10, lx0), xHi = Math.pow(10, lx1);
    if (bw > 0 && topCeil > 0) {
      // Memory roof: TFLOP/s = intensity x TB/s, up to the highest compute ceiling.
      s('line', {x1: X(xLo), y1: Y(bw * xLo), x2: X(topCeil / bw), y2: Y(topCeil),
                 stroke: '#555', class: 'sx-roof'}, roof);
      var a = Math.atan2(Y(bw * xLo) - Y(bw * xLo * 10), X(xLo * 10) - X(xLo)) * 180 / Math.PI;
      var lx = xLo * Math.pow(10, 0.25), ly = bw * lx;
      if (Y(ly) < top + plotH - 10) {
        s('text', {x: X(lx), y: Y(ly) - 6, class: 'sx-ax', transform: 'rotate(' + (-a) + ' ' +
                   X(lx) + ' ' + (Y(ly) - 6) + ')'}, svg, 'HBM ' + num(bw) + ' TB/s');
      }
    }
    // The roofs some point of this rank runs against are solid, the others dashed. Their labels
    // keep a line apart: FP8 and BF16 peaks a factor of two apart are 11 px apart on the scale.
    var labels = [];
    ceilings.forEach(function (c) {
      var x0 = bw > 0 ? Math.max(xLo, c[1] / bw) : xLo;
      var used = pts.some(function (p) { return p.peak_tflops === c[1]; });
      s('line', {x1: X(x0), y1: Y(c[1]), x2: X(xHi), y2: Y(c[1]), stroke: used ? '#555' : '#aaa',
                 'stroke-dasharray': used ? '' : '6 4', class: 'sx-roof'}, roof);
      labels.push({y: Y(c[1]) + 4, text: c[0] + ' ' + num(c[1])});
    });
    labels.sort(function (a, b) { return a.y - b.y; });
    labels.forEach(function (l, i) {
      if (i > 0) l.y = Math.max(l.y, labels[i - 1].y + 14);
      s('text', {x: left + plotW + 6, y: l.y, class: 'sx-ax'}, svg, l.text);
    });
    var maxT = Math.max.apply(null, pts.map(function (p) { return p.kernel_us; })) || 1;
    pts.slice().sort(function (a, b) { return b.kernel_us - a.kernel_us; }).forEach(function (p) {
      var c = s('circle', {cx: X(p.flops_per_byte), cy: Y(p.tflops),
                           r: 3 + 13 * Math.sqrt(p.kernel_us / maxT), fill: colorOf(p.family),
                           class: 'sx-pt'}, roof);
      hover(c, [p.name + ' (' + p.family + ')', 'shape: ' + (p.input_dims || '-'),
                'calls: ' + num(p.count) + ', kernel time ' + us(p.kernel_us),
                num(p.tflops) + ' TFLOP/s, ' + num(p.tbps) + ' TB/s, ' +
                num(p.flops_per_byte) + ' FLOP/byte',
                p.pct_of_roofline === null || p.pct_of_roofline === undefined
                    ? 'no roof: GPU not in the hardware library'
                    : num(p.pct_of_roofline) + '% of roof (' + p.bound + '-bound, peak ' +
                      num(p.peak_tflops) + ' TFLOP/s)']);
    });
    var notes = [];
    if (R.gpu) notes.push('Roofs: ' + R.gpu + ' (' + num(bw) + ' TB/s HBM, dense TFLOP/s), the ' +
                          'peaks of the roofline table; solid: the roofs these ops run against.');
    else notes.push('GPU not in the hardware library: no roofs (pass --gpu-arch).');
    if (R.rows > all.length) {
      notes.push(all.length + ' of ' + R.rows + ' op groups drawn (largest kernel time first); ' +
                 'the roofline table lists all.');
    }
    if (all.length > pts.length) {
      notes.push((all.length - pts.length) + ' op group(s) without FLOPs or bytes not drawn.');
    }
    note(holder, notes.join(' '));
  }
  place(fig, 'roofline');  // in the document before drawing: labels are measured
  redraws.push(draw);
  draw();
}

// ---- 3. top kernels of one rank ----
function drawKernels() {
  if (!D.kernels || !D.kernels.length) return;
  var fig = figure('Top kernels by total GPU time');
  var ctl = h('div', {class: 'sx-ctl'}, fig);
  rankControl(ctl);
  var holder = h('div', {}, fig);
  function draw() {
    holder.textContent = '';
    var K = D.kernels[current] || D.kernels[0];
    fig.setAttribute('data-rank', K.rank);
    var top = K.top || [];
    if (!top.length) { note(holder, 'Rank ' + K.rank + ': no GPU kernels.'); return; }
    var cats = [];
    top.forEach(function (k) { if (cats.indexOf(k.category) < 0) cats.push(k.category); });
    legend(holder, cats.map(function (c) { return [c, colorOf(c)]; }));
    var row = 20, labelW = 400, plotW = 440, right = 140;
    var W = labelW + plotW + right, H = top.length * row + 6;
    var svg = s('svg', scaled(W, H), holder);
    var max = Math.max.apply(null, top.map(function (k) { return k.total_us; })) || 1;
    top.forEach(function (k, i) {
      var y = 3 + i * row;
      var w = plotW * k.total_us / max;
      var lines = [k.label || k.name, 'category: ' + k.category + ', launched ' + num(k.count) +
                   ' times', 'total ' + us(k.total_us) + ' (' + num(k.percent) +
                   '% of GPU time), mean ' + us(k.mean_us)];
      if (k.label) lines.push('the whole name: hover its cell in the kernels table below');
      var t = s('text', {x: labelW - 6, y: y + 14, 'text-anchor': 'end', class: 'sx-lbl'}, svg);
      fitText(t, k.label || k.name, labelW - 10);
      hover(t, lines);
      var r = s('rect', {x: labelW, y: y + 2, width: Math.max(1, w), height: row - 4,
                         fill: colorOf(k.category), class: 'sx-bar'}, svg);
      hover(r, lines);
      s('text', {x: labelW + w + 5, y: y + 14, class: 'sx-ax'}, svg,
        us(k.total_us) + ' (' + num(k.percent) + '%)');
    });
    if (K.rows > top.length) {
      note(holder, top.length + ' of ' + K.rows + ' kernels and memory operations of rank ' +
           K.rank + '; the kernels table below lists more.');
    }
  }
  place(fig, 'kernels');  // in the document before drawing: labels are measured
  redraws.push(draw);
  draw();
}

// ---- 4. a rank filter over every table with a rank column ----
// Shows one rank's rows (or all) in all of them at once; the page's row cap per rank still
// applies (the tables' notes say so).
function rankFilter() {
  var tables = [];
  var ranks = {};
  Array.prototype.forEach.call(document.querySelectorAll('table'), function (t) {
    var th = t.querySelector('thead th');
    if (!th || th.textContent !== 'rank') return;
    tables.push(t);
    Array.prototype.forEach.call(t.querySelectorAll('tbody tr'), function (tr) {
      ranks[tr.cells[0].textContent] = true;
    });
  });
  var list = Object.keys(ranks).sort(function (a, b) { return +a - +b; });
  if (list.length < 2) return;
  var bar = h('div', {class: 'sx-ctl', id: 'sx-rank-filter'});
  var label = h('label', {}, bar, 'tables: rank ');
  var sel = h('select', {}, label);
  h('option', {value: ''}, sel, 'all ' + list.length);
  list.forEach(function (r) {
    h('option', {value: r}, sel, r + (+r === spanEnds[1] ? ' (slowest)' :
                                     +r === spanEnds[0] ? ' (fastest)' : ''));
  });
  sel.addEventListener('change', function () {
    // The charts with a rank selector follow when they have that rank; "all" leaves them be.
    var charted = chartRanks.indexOf(+sel.value);
    if (sel.value && charted >= 0 && charted !== current) showChartRank(charted);
    tables.forEach(function (t) {
      Array.prototype.forEach.call(t.querySelectorAll('tbody tr'), function (tr) {
        tr.style.display = !sel.value || tr.cells[0].textContent === sel.value ? '' : 'none';
      });
    });
  });
  var first = document.querySelector('section');
  if (first) first.parentNode.insertBefore(bar, first);
  else app.appendChild(bar);
}

drawTimeline();
drawRoofline();
drawKernels();
rankFilter();
})();
)JS";
}

}  // namespace sextant
