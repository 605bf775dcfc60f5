// Sextant pipeline-schedule viewer.
// Reads the JSON document in <script id="data"> and builds the whole view inside #app.
// Plain browser JavaScript: no dependencies, no network access.
(function () {
  'use strict';

  var app = document.getElementById('app');
  if (!app) return;

  // ---------------------------------------------------------------- helpers

  function isNum(v) { return typeof v === 'number' && isFinite(v); }
  function numOr(v, d) { return isNum(v) ? v : d; }

  var formatters = {};
  // Grouped fixed-point number for tables and titles; '—' when missing.
  function fmt(v, digits) {
    if (!isNum(v)) return '\u2014';
    var f = formatters[digits];
    if (!f) {
      f = new Intl.NumberFormat('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
      formatters[digits] = f;
    }
    var s = f.format(v);
    return s === '-0' || /^-0\.0*$/.test(s) ? s.slice(1) : s;
  }
  function fmtPct(ratio) { return isNum(ratio) ? fmt(ratio * 100, 2) + '%' : '\u2014'; }
  // Ungrouped time for the tooltip, precise enough for short transfers.
  function fmtTime(v) {
    if (!isNum(v)) return '\u2014';
    return Math.abs(v) < 10 ? v.toFixed(3) : v.toFixed(2);
  }
  // Axis label with as many decimals as the tick step needs.
  function fmtTick(v, step) {
    var d = step >= 1 ? 0 : Math.min(6, Math.ceil(-Math.log10(step) - 1e-9));
    return fmt(v, d);
  }
  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c];
    });
  }
  // Small DOM builder: el('div', {class: 'x'}, child, 'text', ...).
  function el(tag, attrs) {
    var node = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        var v = attrs[k];
        if (v === null || v === undefined || v === false) return;
        if (k === 'text') node.textContent = v;
        else if (k === 'class') node.className = v;
        else node.setAttribute(k, v === true ? '' : String(v));
      });
    }
    for (var i = 2; i < arguments.length; i++) {
      var c = arguments[i];
      if (c === null || c === undefined || c === false) continue;
      node.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    }
    return node;
  }

  var OP_NAMES = { F: 'Forward', B: 'Backward', W: 'Weight gradient', BW: 'Backward (input + weight)' };
  function opClass(op) { return op === 'BW' ? 'B' : op; }

  // Colours: F blues, B greens, W oranges; a different lightness per virtual chunk.
  var HUE = { F: 216, B: 136, W: 28 };
  var SAT = { F: 60, B: 46, W: 82 };
  var LIGHT = [40, 68, 29, 80, 52, 88, 34, 60];
  function shade(chunk) { return LIGHT[(chunk >= 0 ? chunk : 0) % LIGHT.length]; }
  function blockFill(op, chunk) {
    var k = opClass(op);
    if (!(k in HUE)) return '#9aa0a6';
    return 'hsl(' + HUE[k] + ',' + SAT[k] + '%,' + shade(chunk) + '%)';
  }
  function blockStroke(op) {
    var k = opClass(op);
    if (!(k in HUE)) return '#444';
    return 'hsl(' + HUE[k] + ',' + Math.min(90, SAT[k] + 20) + '%,20%)';
  }
  function labelFill(chunk) { return shade(chunk) < 56 ? '#ffffff' : '#17202a'; }

  var niceStep = SextantAxis.niceStep;

  // ---------------------------------------------------------------- data

  var data;
  try {
    var holder = document.getElementById('data');
    data = JSON.parse((holder && holder.textContent) || '{}');
  } catch (err) {
    app.appendChild(el('p', { class: 'pv-error', role: 'alert', text: 'The embedded schedule data could not be read: ' + err.message }));
    return;
  }
  if (!data || typeof data !== 'object') data = {};

  var runs = (Array.isArray(data.runs) ? data.runs : []).filter(function (r) { return r && typeof r === 'object'; });
  var runById = new Map();
  runs.forEach(function (run, i) {
    run.id = run.id === undefined || run.id === null ? 'run' + i : String(run.id);
    if (runById.has(run.id)) run.id = run.id + '#' + i;
    run.name = run.name ? String(run.name) : run.id;
    run.source = run.source ? String(run.source) : 'measured';
    run.iterations = (Array.isArray(run.iterations) ? run.iterations : []).filter(function (it) { return it && typeof it === 'object'; });
    run.iterations.forEach(function (it, k) { prepareIteration(it, k); });
    runById.set(run.id, run);
  });

  // A page carries a rank's blocks and transfers column by column ({"start_ms": [...], ...},
  // a column of strings as {"levels": ["send", "recv"], "codes": [0, 1, ...]}): a fifth of the
  // bytes of one object per block. The view reads one object each; a list of objects (pp view
  // --json, /api/N.json) is taken as it is.
  function columnValues(c) {
    if (Array.isArray(c)) return c;
    if (c && Array.isArray(c.codes) && Array.isArray(c.levels)) {
      return c.codes.map(function (code) { return c.levels[code]; });
    }
    return null;
  }
  function rowsOf(v) {
    if (Array.isArray(v) || !v || typeof v !== 'object') return v;
    var keys = [], columns = [];
    Object.keys(v).forEach(function (key) {
      var values = columnValues(v[key]);
      if (values) { keys.push(key); columns.push(values); }
    });
    var n = columns.length ? columns[0].length : 0;
    var rows = new Array(n);
    for (var i = 0; i < n; i++) {
      var row = {};
      for (var j = 0; j < keys.length; j++) row[keys[j]] = columns[j][i];
      rows[i] = row;
    }
    return rows;
  }

  function prepareIteration(it, k) {
    it.key = it.key === undefined || it.key === null ? String(k) : String(it.key);
    var ranks = (Array.isArray(it.ranks) ? it.ranks : []).filter(function (r) { return r && typeof r === 'object'; });
    ranks.forEach(function (r, i) { r.rank = isNum(r.rank) ? r.rank : i; });
    ranks.sort(function (a, b) { return a.rank - b.rank; });
    it.ranks = ranks;
    var minStart = 0, maxEnd = 0, maxTotal = 0, hasXfer = false, hasW = false, maxChunk = 0;
    ranks.forEach(function (r) {
      r.blocks = rowsOf(r.blocks);
      r.transfers = rowsOf(r.transfers);
      r.blocks = (Array.isArray(r.blocks) ? r.blocks : []).filter(function (b) {
        return b && isNum(b.start_ms) && isNum(b.end_ms);
      });
      r.transfers = (Array.isArray(r.transfers) ? r.transfers : []).filter(function (t) {
        return t && isNum(t.start_ms) && isNum(t.end_ms);
      });
      var f = 0, bw = 0, w = 0;
      r.blocks.forEach(function (b) {
        b.op = String(b.op || '?');
        b.mb = isNum(b.mb) ? b.mb : -1;
        b.chunk = isNum(b.chunk) ? b.chunk : -1;
        var d = b.end_ms - b.start_ms;
        if (b.op === 'F') f += d; else if (b.op === 'B' || b.op === 'BW') bw += d; else if (b.op === 'W') { w += d; hasW = true; }
        if (b.chunk > maxChunk) maxChunk = b.chunk;
        minStart = Math.min(minStart, b.start_ms);
        maxEnd = Math.max(maxEnd, b.end_ms);
      });
      r.transfers.forEach(function (t) {
        minStart = Math.min(minStart, t.start_ms);
        maxEnd = Math.max(maxEnd, t.end_ms);
      });
      if (r.transfers.length) hasXfer = true;
      // Transfer indices per kind in start order, so that marks closer than a pixel can be merged.
      r._xferOrder = { send: [], recv: [] };
      r.transfers.forEach(function (t, i) { r._xferOrder[t.kind === 'recv' ? 'recv' : 'send'].push(i); });
      ['send', 'recv'].forEach(function (kind) {
        r._xferOrder[kind].sort(function (a, b) { return r.transfers[a].start_ms - r.transfers[b].start_ms; });
      });
      // Fill in statistics the producer left out, from the blocks themselves.
      if (!isNum(r.forward_ms)) r.forward_ms = f;
      if (!isNum(r.backward_ms)) r.backward_ms = bw;
      if (!isNum(r.wgrad_ms)) r.wgrad_ms = w;
      if (!isNum(r.busy_ms)) r.busy_ms = f + bw + w;
      if (isNum(r.total_ms)) maxTotal = Math.max(maxTotal, r.total_ms);
    });
    if (!isNum(it.iteration_time_ms)) it.iteration_time_ms = Math.max(maxTotal, maxEnd);
    if (!isNum(it.max_memory_gib)) {
      var mems = ranks.map(function (r) { return r.memory_gib; }).filter(isNum);
      it.max_memory_gib = mems.length ? Math.max.apply(null, mems) : null;
    }
    it._minStart = minStart;
    it._maxEnd = maxEnd;
    it._hasXfer = hasXfer;
    it._hasW = hasW;
    it._maxChunk = maxChunk;
  }

  function findIteration(run, key) {
    if (!run) return null;
    for (var i = 0; i < run.iterations.length; i++) if (run.iterations[i].key === key) return run.iterations[i];
    return null;
  }
  function idealRunOf(run) {
    for (var i = 0; i < runs.length; i++) if (runs[i].source === 'ideal' && String(runs[i].ideal_of) === run.id) return runs[i];
    return null;
  }
  function idealIterationFor(run, key) {
    var ideal = idealRunOf(run);
    if (!ideal || !ideal.iterations.length) return null;
    return findIteration(ideal, key) || (ideal.iterations.length === 1 ? ideal.iterations[0] : null);
  }
  // A simulated config is one step of its schedule, as the console calls it; a dump has
  // numbered iterations.
  function isOneStep(run) { return run.source === 'simulated' && run.iterations.length === 1; }
  // The iteration time `projection performance` gives a simulated config, when the page has it.
  function projectedIterationMs(run) {
    var found = (Array.isArray(data.projections) ? data.projections : []).filter(function (p) {
      return p && String(p.run) === run.id && p.performance;
    })[0];
    return found ? found.performance.iteration_time_ms : null;
  }

  function memoryWord(run) {
    return run.memory_label && run.memory_label !== 'max memory reserved' ? String(run.memory_label) : 'max memory';
  }
  function panelKey(runId, iterKey) { return runId + '\u0000' + iterKey; }

  var hasIdealRuns = runs.some(function (r) { return r.source === 'ideal' && runById.has(String(r.ideal_of)); });

  // ---------------------------------------------------------------- state

  var state = {
    shown: [],          // [{run, iteration}] in display order
    overlay: false,
    fullX0: 0, fullX1: 1,
    x0: 0, x1: 1,
    cursorT: null,
    drag: null
  };

  (Array.isArray(data.initial) ? data.initial : []).forEach(function (p) {
    if (!p) return;
    var run = runById.get(String(p.run));
    var key = String(p.iteration);
    if (!run || !findIteration(run, key)) return;
    if (state.shown.some(function (s) { return s.run === run.id && s.iteration === key; })) return;
    state.shown.push({ run: run.id, iteration: key });
  });
  if (!state.shown.length) {
    // Nothing usable in "initial": show the last iteration of every run that is not an ideal replay.
    runs.forEach(function (run) {
      if (run.source !== 'ideal' && run.iterations.length) {
        state.shown.push({ run: run.id, iteration: run.iterations[run.iterations.length - 1].key });
      }
    });
  }

  // ---------------------------------------------------------------- page skeleton

  var title = data.title ? String(data.title) : 'Pipeline schedule';
  var header = el('header', { class: 'pv-header' },
    el('div', { class: 'pv-titlebar' },
      el('h1', { id: 'title', text: title }),
      data.generator ? el('span', { class: 'pv-generator', text: String(data.generator) }) : null));

  var picker = el('div', { id: 'panel-picker', class: 'pv-picker', role: 'group', 'aria-label': 'Panels shown (run \u00d7 iteration)' });
  runs.forEach(function (run) {
    // "file · schedule": when the name is too long for the picker, the file is cut, never the
    // schedule, which is what tells the runs of one config apart.
    var cut = run.name.lastIndexOf(' \u00b7 ');
    var row = el('div', { class: 'pick-run', 'data-run': run.id },
      el('span', { class: 'pick-name' },
        el('span', { class: 'pick-run-name', title: run.name + (run.origin ? ' \u2014 ' + run.origin : '') },
          el('span', { class: 'pick-run-head', text: cut > 0 ? run.name.slice(0, cut) : run.name }),
          cut > 0 ? el('span', { class: 'pick-run-tail', text: run.name.slice(cut) }) : null),
        el('span', { class: 'badge badge-' + run.source, text: run.source })));
    var chips = el('span', { class: 'pick-iters' });
    if (!run.iterations.length) chips.appendChild(el('span', { class: 'muted', text: 'no iterations' }));
    run.iterations.forEach(function (it) {
      var box = el('input', {
        type: 'checkbox', 'data-run': run.id, 'data-iteration': it.key,
        'aria-label': run.name + ' iteration ' + it.key
      });
      chips.appendChild(el('label', {
        class: 'chip',
        title: run.name + ' \u00b7 ' + (isOneStep(run) ? 'one step' : 'iteration ' + it.key) + ' \u00b7 ' +
          fmt(it.iteration_time_ms, 2) + ' ms'
      }, box, el('span', { text: it.key })));
    });
    row.appendChild(chips);
    picker.appendChild(row);
  });
  if (!runs.length) picker.appendChild(el('span', { class: 'muted', text: 'This file contains no runs.' }));
  header.appendChild(el('div', { class: 'pv-controls' },
    el('div', { class: 'pv-controls-label', text: 'Panels' }), picker));

  var overlayBox = el('input', { type: 'checkbox', id: 'overlay-ideal', disabled: !hasIdealRuns });
  var rangeEl = el('span', { id: 'range', class: 'pv-range', 'aria-live': 'polite' });
  var cursorEl = el('span', { id: 'cursor-time', class: 'pv-cursor-time muted' });
  var toolbar = el('div', { class: 'pv-toolbar', role: 'toolbar', 'aria-label': 'Timeline view' },
    el('label', { class: 'toggle', title: hasIdealRuns ? "Draw each measured run's ideal schedule (measured op times, free transfers) over it" : 'No ideal runs in this file' },
      overlayBox, ' overlay ideal'),
    el('span', { class: 'pv-sep' }),
    el('button', { type: 'button', id: 'zoom-out', title: 'Zoom out (-)', 'aria-label': 'Zoom out', text: '\u2212' }),
    el('button', { type: 'button', id: 'zoom-in', title: 'Zoom in (+)', 'aria-label': 'Zoom in', text: '+' }),
    el('button', { type: 'button', id: 'zoom-reset', title: 'Show everything (0)', text: 'Reset' }),
    rangeEl,
    cursorEl,
    el('span', { class: 'pv-hint muted', text: 'wheel zoom \u00b7 drag pan \u00b7 + \u2212 0 \u2190 \u2192 Home End' }));

  var legend = el('div', { id: 'legend', class: 'pv-legend', 'aria-label': 'Legend' });
  var panelsEl = el('div', { id: 'panels' });
  var compareEl = el('section', { id: 'comparisons', class: 'pv-section' });
  var notesList = el('ul', { id: 'notes' });
  var notesEl = el('section', { id: 'notes-section', class: 'pv-section' }, el('h2', { text: 'Notes' }), notesList);
  var tooltip = el('div', { id: 'tooltip', role: 'tooltip', hidden: true });

  app.classList.add('pp-view');
  app.appendChild(header);
  app.appendChild(toolbar);
  app.appendChild(el('main', { class: 'pv-main' }, legend, panelsEl, compareEl, notesEl));
  app.appendChild(el('footer', { class: 'pv-footer muted', text: data.generator ? 'Generated by ' + data.generator : '' }));
  app.appendChild(tooltip);

  // ---------------------------------------------------------------- panels

  var panels = [];      // {run, it, ideal, section, wrap, svg, uid, geom}
  var uidCounter = 0;

  function syncPicker() {
    var on = new Set(state.shown.map(function (s) { return panelKey(s.run, s.iteration); }));
    picker.querySelectorAll('input[type=checkbox]').forEach(function (box) {
      box.checked = on.has(panelKey(box.getAttribute('data-run'), box.getAttribute('data-iteration')));
    });
  }

  function buildPanels() {
    hideTooltip();
    panelsEl.textContent = '';
    panels = [];
    state.shown.forEach(function (s) {
      var run = runById.get(s.run);
      var it = findIteration(run, s.iteration);
      if (run && it) panels.push(buildPanel(run, it));
    });
    if (!panels.length) {
      panelsEl.appendChild(el('p', { class: 'pv-empty muted', text: runs.length ? 'No panel selected: tick a run and iteration above.' : 'Nothing to show.' }));
    }
    syncPicker();
    buildLegend();
  }

  function buildPanel(run, it) {
    var uid = ++uidCounter;
    var p = { run: run, it: it, uid: uid, ideal: null, idealIndex: null };
    var section = el('section', {
      class: 'panel', 'data-run': run.id, 'data-iteration': it.key, 'data-source': run.source,
      'data-name': run.name, 'data-origin': run.origin ? String(run.origin) : null,
      'aria-label': run.name + ' iteration ' + it.key
    });
    var titleText = run.name + ' \u00b7 ' + (isOneStep(run) ? 'one step ' : 'iteration ' + it.key +
      ' \u00b7 iteration time ') + fmt(it.iteration_time_ms, 2) + ' ms \u00b7 ' +
      memoryWord(run) + ' ' + (isNum(it.max_memory_gib) ? fmt(it.max_memory_gib, 2) + ' GiB' : '\u2014') + ' \u00b7 ' + run.source;
    var closeBtn = el('button', { type: 'button', class: 'panel-close', title: 'Hide this panel', 'aria-label': 'Hide ' + run.name + ' iteration ' + it.key, text: '\u00d7' });
    closeBtn.addEventListener('click', function () {
      state.shown = state.shown.filter(function (s) { return !(s.run === run.id && s.iteration === it.key); });
      refreshAll();
    });
    var sub = [];
    if (run.schedule) sub.push('schedule ' + run.schedule);
    if (isNum(run.pp)) sub.push('PP ' + run.pp);
    if (isNum(run.vpp)) sub.push('VPP ' + run.vpp);
    if (isNum(run.micro_batches)) sub.push(run.micro_batches + ' micro-batches');
    if (isNum(it.stage_imbalance)) sub.push('stage imbalance ' + fmt(it.stage_imbalance, 2));
    if (run.source === 'ideal' && run.ideal_of && runById.has(String(run.ideal_of))) sub.push('ideal of ' + runById.get(String(run.ideal_of)).name);
    // The step is forward and backward only; the iteration `projection performance` reports
    // (the projection below) adds the optimizer step and exposed DP communication.
    var projected = projectedIterationMs(run);
    if (isOneStep(run) && isNum(projected)) {
      sub.push('the iteration with the optimizer step and exposed DP communication: ' + fmt(projected, 2) +
        ' ms (projection below)');
    }
    if (run.labels_inferred) {
      sub.push(run.vpp > 1 ? "ids inferred from Megatron's interleaved order"
                           : "ids inferred from 1F1B order");
    }
    var subEl = el('div', { class: 'panel-sub muted' }, sub.join(' \u00b7 '));
    if (run.origin) subEl.appendChild(el('span', { class: 'panel-origin', title: String(run.origin), text: (sub.length ? ' \u00b7 ' : '') + String(run.origin) }));
    p.idealNote = el('div', { class: 'panel-ideal muted', hidden: true });
    section.appendChild(el('header', { class: 'panel-head' },
      el('div', { class: 'panel-titles' }, el('h2', { class: 'panel-title', text: titleText }), subEl, p.idealNote),
      closeBtn));

    var wrap = el('div', { class: 'timeline-wrap' });
    var svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
    svg.setAttribute('class', 'timeline');
    svg.setAttribute('role', 'img');
    svg.setAttribute('aria-label', run.name + ' iteration ' + it.key + ': ' + it.ranks.length + ' pipeline ranks, ' +
      it.ranks.reduce(function (n, r) { return n + r.blocks.length; }, 0) + ' compute blocks');
    wrap.appendChild(svg);
    section.appendChild(wrap);
    section.appendChild(buildStats(run, it));
    p.section = section; p.wrap = wrap; p.svg = svg;
    attachTimelineEvents(p);
    panelsEl.appendChild(section);
    return p;
  }

  function buildStats(run, it) {
    var n = it.ranks.length;
    var details = el('details', { class: 'stats-details', open: n <= 16 });
    details.appendChild(el('summary', null,
      'Per-rank statistics',
      el('span', { class: 'muted', text: ' \u00b7 ' + n + (n === 1 ? ' rank' : ' ranks') +
        ' \u00b7 stage imbalance ' + fmt(it.stage_imbalance, 2) + " (slowest rank's busy time / mean busy time)" })));
    var table = el('table', { class: 'stats' });
    var memTitle = run.memory_label ? String(run.memory_label) : 'memory';
    var heads = [['rank', null], ['F ms', 'forward time'], ['B ms', 'backward time (un-split backward counted here)'],
      ['W ms', 'weight-gradient time'], ['busy ms', 'F + B + W'], ['idle ms', 'iteration time \u2212 busy'],
      ['bubble %', 'idle / iteration time'], ['memory GiB', memTitle], ['peak in-flight', 'peak in-flight micro-batches']];
    var tr = el('tr');
    heads.forEach(function (h) { tr.appendChild(el('th', { scope: 'col', title: h[1], text: h[0] })); });
    table.appendChild(el('thead', null, tr));
    var body = el('tbody');
    var maxBubble = 0;
    it.ranks.forEach(function (r) { if (isNum(r.bubble_ratio)) maxBubble = Math.max(maxBubble, r.bubble_ratio); });
    it.ranks.forEach(function (r) {
      var bubbleCell = el('td', { class: 'num bubble-cell' });
      if (isNum(r.bubble_ratio)) {
        var bar = el('span', { class: 'bar', 'aria-hidden': 'true' });
        bar.style.width = (maxBubble > 0 ? Math.max(0, Math.min(1, r.bubble_ratio / maxBubble)) * 100 : 0).toFixed(1) + '%';
        bubbleCell.appendChild(bar);
      }
      bubbleCell.appendChild(el('span', { class: 'v', text: isNum(r.bubble_ratio) ? fmt(r.bubble_ratio * 100, 2) : '\u2014' }));
      body.appendChild(el('tr', { 'data-rank': r.rank },
        el('th', { scope: 'row', text: 'PP-' + r.rank }),
        el('td', { class: 'num', text: fmt(r.forward_ms, 2) }),
        el('td', { class: 'num', text: fmt(r.backward_ms, 2) }),
        el('td', { class: 'num', text: fmt(r.wgrad_ms, 2) }),
        el('td', { class: 'num', text: fmt(r.busy_ms, 2) }),
        el('td', { class: 'num', text: fmt(r.idle_ms, 2) }),
        bubbleCell,
        el('td', { class: 'num', text: fmt(r.memory_gib, 2) }),
        el('td', { class: 'num', text: isNum(r.peak_inflight_micro_batches) ? String(r.peak_inflight_micro_batches) : '\u2014' })));
    });
    if (!n) body.appendChild(el('tr', null, el('td', { colspan: heads.length, class: 'muted', text: 'no ranks in this iteration' })));
    table.appendChild(body);
    details.appendChild(el('div', { class: 'table-scroll' }, table));
    return details;
  }

  function updateOverlayInfo() {
    panels.forEach(function (p) {
      p.ideal = state.overlay && p.run.source === 'measured' ? idealIterationFor(p.run, p.it.key) : null;
      p.idealIndex = null;
      if (p.ideal) {
        var idx = new Map();
        p.ideal.ranks.forEach(function (r) {
          r.blocks.forEach(function (b) { if (b.mb >= 0) idx.set(r.rank + '|' + opClass(b.op) + '|' + b.mb + '|' + b.chunk, b); });
        });
        p.idealIndex = idx;
        var d = p.it.iteration_time_ms > 0 ? (p.ideal.iteration_time_ms - p.it.iteration_time_ms) / p.it.iteration_time_ms * 100 : null;
        p.idealNote.textContent = 'ideal overlay: iteration time ' + fmt(p.ideal.iteration_time_ms, 2) + ' ms' +
          (isNum(d) ? ' (' + (d > 0 ? '+' : '') + fmt(d, 1) + '% vs measured)' : '') + ' \u00b7 ' + idealRunOf(p.run).name + ' \u00b7 iteration ' + p.ideal.key;
        p.idealNote.hidden = false;
      } else {
        p.idealNote.hidden = true;
      }
    });
  }

  // ---------------------------------------------------------------- view range

  function computeFull() {
    var lo = 0, hi = 0;
    panels.forEach(function (p) {
      hi = Math.max(hi, numOr(p.it.iteration_time_ms, 0), p.it._maxEnd);
      lo = Math.min(lo, p.it._minStart);
      if (p.ideal) {
        hi = Math.max(hi, numOr(p.ideal.iteration_time_ms, 0), p.ideal._maxEnd);
        lo = Math.min(lo, p.ideal._minStart);
      }
    });
    hi = hi > lo ? hi * 1.05 : lo + 1;
    return [lo, hi];
  }

  function minSpan() { return Math.max((state.fullX1 - state.fullX0) * 1e-6, 1e-6); }

  function setView(x0, x1) {
    var lo = state.fullX0, hi = state.fullX1, span = hi - lo;
    if (!isNum(x0) || !isNum(x1)) { x0 = lo; x1 = hi; }
    var w = x1 - x0;
    var mn = minSpan();
    if (w < mn) { var c = (x0 + x1) / 2; x0 = c - mn / 2; x1 = c + mn / 2; w = mn; }
    if (w >= span) { x0 = lo; x1 = hi; } else {
      if (x0 < lo) { x1 += lo - x0; x0 = lo; }
      if (x1 > hi) { x0 -= x1 - hi; x1 = hi; }
    }
    state.x0 = x0; state.x1 = x1;
    updateRange();
  }

  function updateRange() {
    rangeEl.setAttribute('data-x0', String(state.x0));
    rangeEl.setAttribute('data-x1', String(state.x1));
    var span = state.x1 - state.x0;
    var zoom = (state.fullX1 - state.fullX0) / (span || 1);
    var d = span >= 100 ? 1 : span >= 1 ? 3 : 4;
    rangeEl.textContent = fmt(state.x0, d) + ' \u2013 ' + fmt(state.x1, d) + ' ms' + (zoom > 1.0005 ? ' \u00b7 \u00d7' + fmt(zoom, zoom < 10 ? 2 : 1) : '');
    rangeEl.title = 'visible time range (' + fmt(span, d) + ' ms wide)';
  }

  function isFullView() {
    return state.x0 <= state.fullX0 && state.x1 >= state.fullX1;
  }

  function refreshRange(keepZoom) {
    var full = computeFull();
    var wasFull = isFullView();
    state.fullX0 = full[0]; state.fullX1 = full[1];
    if (!keepZoom || wasFull) setView(full[0], full[1]); else setView(state.x0, state.x1);
  }

  function zoomAt(t, factor) {
    setView(t - (t - state.x0) * factor, t + (state.x1 - t) * factor);
    scheduleDraw();
  }
  function zoomCentre(factor) { zoomAt((state.x0 + state.x1) / 2, factor); }
  function panBy(ms) { setView(state.x0 + ms, state.x1 + ms); scheduleDraw(); }
  function resetView() { setView(state.fullX0, state.fullX1); scheduleDraw(); }

  // ---------------------------------------------------------------- drawing

  var LEFT = 56, TOP = 4, AXIS = 24;
  var FONT_STACK = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif';

  var measureCtx = null;
  function textWidth(s, px) {
    if (measureCtx === null) {
      var c = document.createElement('canvas');
      measureCtx = (c.getContext && c.getContext('2d')) || false;
    }
    if (!measureCtx) return s.length * px * 0.62;
    measureCtx.font = px + 'px ' + FONT_STACK;
    return measureCtx.measureText(s).width;
  }

  function rowNote(r) {
    return 'bubble ' + fmtPct(r.bubble_ratio) + ' \u00b7 mem ' + (isNum(r.memory_gib) ? fmt(r.memory_gib, 2) + ' GiB' : '\u2014');
  }

  function geometry(p) {
    var width = Math.max(520, Math.floor(p.wrap.clientWidth || 0) || 1000);
    var n = p.it.ranks.length;
    var rowH = n <= 4 ? 30 : n <= 8 ? 26 : n <= 16 ? 21 : n <= 32 ? 15 : n <= 64 ? 11 : 8;
    var gap = rowH >= 15 ? 3 : 1;
    var hasXfer = p.it._hasXfer;
    var xferH = hasXfer ? (rowH >= 15 ? 5 : 3) : 0;
    var fs = rowH >= 15 ? 12 : rowH >= 11 ? 10 : 8;
    if (p.rightFs !== fs) {
      // Right gutter wide enough for the longest "bubble · mem" note.
      var widest = textWidth('ms', 11);
      p.it.ranks.forEach(function (r) { widest = Math.max(widest, textWidth(rowNote(r), fs)); });
      p.rightFs = fs;
      p.right = Math.ceil(widest * 1.08) + 18;
    }
    var plotW = Math.max(200, width - LEFT - p.right);
    width = LEFT + plotW + p.right;
    return {
      width: width, n: n, rowH: rowH, gap: gap, xferH: xferH, blockH: rowH - gap - xferH, fs: fs,
      plotW: plotW, plotH: Math.max(n, 1) * rowH, height: TOP + Math.max(n, 1) * rowH + AXIS,
      k: plotW / (state.x1 - state.x0)
    };
  }

  function drawPanel(p, g) {
    p.geom = g;
    var x0 = state.x0, x1 = state.x1, k = g.k;
    var lim0 = LEFT - 2, lim1 = LEFT + g.plotW + 2;
    function X(t) { return LEFT + (t - x0) * k; }
    function clampX(v) { return v < lim0 ? lim0 : v > lim1 ? lim1 : v; }
    var runAttr = esc(p.run.id), iterAttr = esc(p.it.key);
    var clipId = 'pv-clip-' + p.uid;
    var out = [];
    out.push('<defs><clipPath id="' + clipId + '"><rect x="' + LEFT + '" y="0" width="' + g.plotW + '" height="' + (TOP + g.plotH) + '"></rect></clipPath></defs>');

    // Row backgrounds: idle time shows through between blocks.
    out.push('<g class="row-bgs">');
    for (var ri = 0; ri < g.n; ri++) {
      out.push('<rect class="row-bg" data-rank="' + p.it.ranks[ri].rank + '" x="' + LEFT + '" y="' + (TOP + ri * g.rowH) +
        '" width="' + g.plotW + '" height="' + (g.rowH - g.gap) + '"></rect>');
    }
    out.push('</g>');

    // Grid and axis ticks.
    var step = niceStep(x1 - x0, Math.max(2, g.plotW / 90));
    var first = Math.ceil(x0 / step) * step;
    var grid = ['<g class="grid">'], axis = ['<g class="axis">'];
    var yAxis = TOP + g.plotH;
    axis.push('<line class="axis-line" x1="' + LEFT + '" x2="' + (LEFT + g.plotW) + '" y1="' + yAxis + '" y2="' + yAxis + '"></line>');
    // The unit follows the last tick label: a tick at the plot's end ("21,000") is centred on it
    // and half of it lies where the unit would otherwise start.
    var unitX = LEFT + g.plotW + 8;
    for (var t = first, guard = 0; t <= x1 + step * 1e-9 && guard < 1000; t += step, guard++) {
      var tv = Math.abs(t) < step * 1e-9 ? 0 : t;
      var xt = X(tv).toFixed(2), label = fmtTick(tv, step);
      grid.push('<line x1="' + xt + '" x2="' + xt + '" y1="' + TOP + '" y2="' + yAxis + '"></line>');
      axis.push('<line class="tick" x1="' + xt + '" x2="' + xt + '" y1="' + yAxis + '" y2="' + (yAxis + 4) + '"></line>' +
        '<text class="tick-label" x="' + xt + '" y="' + (yAxis + 15) + '">' + label + '</text>');
      unitX = Math.max(unitX, +xt + textWidth(label, 11) / 2 + 6);
    }
    axis.push('<text class="axis-unit" x="' + unitX.toFixed(2) + '" y="' + (yAxis + 15) + '">ms</text>');
    grid.push('</g>'); axis.push('</g>');
    // Everything that moves with the time axis sits in g.xform, so that a heavy panel can be
    // previewed with a transform while it is being zoomed and drawn properly once input pauses.
    out.push('<g class="plot" clip-path="url(#' + clipId + ')"><g class="xform">');
    out.push(grid.join(''));

    // Blocks and transfers, one group per rank.
    var labelSize = Math.min(11, g.blockH - 3);
    var drawnBlocks = 0, drawnWidth = 0;
    out.push('<g class="rows">');
    for (ri = 0; ri < g.n; ri++) {
      var r = p.it.ranks[ri];
      var y = TOP + ri * g.rowH;
      out.push('<g class="row" data-rank="' + r.rank + '">');
      var blocks = r.blocks;
      for (var bi = 0; bi < blocks.length; bi++) {
        var b = blocks[bi];
        if (b.end_ms < x0 || b.start_ms > x1) continue;
        var xa = clampX(X(b.start_ms)), xb = clampX(X(b.end_ms));
        var w = Math.max(xb - xa, 0.6);
        drawnBlocks++; drawnWidth += w;
        out.push('<rect class="block op-' + esc(opClass(b.op)) + '" x="' + xa.toFixed(2) + '" y="' + y + '" width="' + w.toFixed(2) +
          '" height="' + g.blockH + '" fill="' + blockFill(b.op, b.chunk) + '" data-ri="' + ri + '" data-i="' + bi +
          '" data-run="' + runAttr + '" data-iteration="' + iterAttr + '" data-rank="' + r.rank + '" data-op="' + esc(b.op) +
          '" data-mb="' + b.mb + '" data-chunk="' + b.chunk + '" data-start="' + b.start_ms + '" data-end="' + b.end_ms + '"></rect>');
        if (b.mb >= 0 && labelSize >= 7) {
          var label = String(b.mb);
          if (w >= label.length * labelSize * 0.62 + 4) {
            out.push('<text class="blabel" x="' + (xa + w / 2).toFixed(2) + '" y="' + (y + g.blockH / 2).toFixed(2) +
              '" font-size="' + labelSize + '" fill="' + labelFill(b.chunk) + '">' + label + '</text>');
          }
        }
      }
      if (g.xferH) {
        var th = (g.xferH - 1) / 2;
        drawTransfers(out, r, ri, 'send', y + g.blockH + 1, th, X, clampX, x0, x1);
        drawTransfers(out, r, ri, 'recv', y + g.blockH + 1 + th, th, X, clampX, x0, x1);
      }
      out.push('</g>');
    }
    out.push('</g>');

    // Ideal schedule drawn over the measured one.
    if (p.ideal) {
      out.push('<g class="overlays">');
      var idealRanks = new Map();
      p.ideal.ranks.forEach(function (ir) { idealRanks.set(ir.rank, ir); });
      for (ri = 0; ri < g.n; ri++) {
        var ir = idealRanks.get(p.it.ranks[ri].rank);
        if (!ir) continue;
        var oy = TOP + ri * g.rowH + 1, oh = Math.max(g.blockH - 2, 1);
        for (bi = 0; bi < ir.blocks.length; bi++) {
          var ob = ir.blocks[bi];
          if (ob.end_ms < x0 || ob.start_ms > x1) continue;
          var oa = clampX(X(ob.start_ms)), oe = clampX(X(ob.end_ms));
          out.push('<rect class="overlay" x="' + oa.toFixed(2) + '" y="' + oy + '" width="' + Math.max(oe - oa, 0.6).toFixed(2) +
            '" height="' + oh + '" fill="' + blockFill(ob.op, ob.chunk) + '" stroke="' + blockStroke(ob.op) + '"></rect>');
        }
      }
      var ie = X(p.ideal.iteration_time_ms);
      if (ie >= LEFT && ie <= LEFT + g.plotW) {
        out.push('<line class="iter-end ideal-end" x1="' + ie.toFixed(2) + '" x2="' + ie.toFixed(2) + '" y1="' + TOP + '" y2="' + yAxis + '"></line>');
      }
      out.push('</g>');
    }

    // Iteration end marker.
    var xe = X(p.it.iteration_time_ms);
    if (p.it.iteration_time_ms > 0 && xe >= LEFT && xe <= LEFT + g.plotW) {
      out.push('<line class="iter-end" x1="' + xe.toFixed(2) + '" x2="' + xe.toFixed(2) + '" y1="' + TOP + '" y2="' + yAxis + '"><title>iteration end ' +
        fmt(p.it.iteration_time_ms, 2) + ' ms</title></line>');
    }
    out.push('</g></g>');

    // Rank labels and per-row annotations.
    out.push('<g class="labels" font-size="' + g.fs + '">');
    for (ri = 0; ri < g.n; ri++) {
      var rr = p.it.ranks[ri];
      var cy = (TOP + ri * g.rowH + (g.rowH - g.gap) / 2).toFixed(1);
      out.push('<text class="rank-label" x="' + (LEFT - 8) + '" y="' + cy + '">PP-' + rr.rank + '</text>');
      out.push('<text class="row-note" x="' + (LEFT + g.plotW + 8) + '" y="' + cy + '">' + esc(rowNote(rr)) + '</text>');
    }
    if (!g.n) out.push('<text class="row-note muted" x="' + (LEFT + 8) + '" y="' + (TOP + g.rowH / 2) + '">no ranks in this iteration</text>');
    out.push('</g>');
    out.push(axis.join(''));

    // Time cursor shared by all panels.
    var cx = state.cursorT !== null ? X(state.cursorT) : -1;
    var cvis = cx >= LEFT && cx <= LEFT + g.plotW;
    out.push('<line class="cursor" x1="' + cx.toFixed(2) + '" x2="' + cx.toFixed(2) + '" y1="' + TOP + '" y2="' + yAxis + '"' + (cvis ? '' : ' visibility="hidden"') + '></line>');

    // Thin blocks lose their outline, or the outline is all one sees.
    p.svg.classList.toggle('dense', drawnBlocks > 0 && drawnWidth / drawnBlocks < 4);
    p.svg.setAttribute('width', String(g.width));
    p.svg.setAttribute('height', String(g.height));
    p.svg.setAttribute('viewBox', '0 0 ' + g.width + ' ' + g.height);
    p.svg.innerHTML = out.join('');
    p.cursorLine = p.svg.querySelector('line.cursor');
    p.xform = p.svg.querySelector('g.xform');
    p.drawn = { x0: x0, k: k };
    p.drawnCount = out.length;
    p.hlMb = null;
  }

  // Send or receive marks of one rank; marks that would touch on screen become one mark (data-n).
  function drawTransfers(out, r, ri, kind, ty, th, X, clampX, x0, x1) {
    var order = r._xferOrder[kind];
    var runA = 0, runB = -1, runFirst = -1, runN = 0, runPay = '';
    function flush() {
      if (!runN) return;
      out.push('<rect class="xfer xfer-' + kind + ' pay-' + runPay + '" x="' + runA.toFixed(2) + '" y="' + ty.toFixed(2) +
        '" width="' + Math.max(runB - runA, 1.5).toFixed(2) + '" height="' + th.toFixed(2) + '" data-ri="' + ri +
        '" data-xi="' + runFirst + '" data-kind="' + kind + '"' + (runN > 1 ? ' data-n="' + runN + '"' : '') + '></rect>');
      runN = 0;
    }
    for (var j = 0; j < order.length; j++) {
      var tr = r.transfers[order[j]];
      if (tr.end_ms < x0 || tr.start_ms > x1) continue;
      var ta = clampX(X(tr.start_ms)), tb = Math.max(clampX(X(tr.end_ms)), ta + 1.5);
      var pay = tr.payload === 'gradient' ? 'gradient' : 'activation';
      if (runN && ta <= runB + 1) {
        runB = Math.max(runB, tb);
        runN++;
        if (pay !== runPay) runPay = 'mixed';
        continue;
      }
      flush();
      runA = ta; runB = tb; runFirst = j; runN = 1; runPay = pay;
    }
    flush();
  }

  // Above this many drawn elements, zoom and pan first stretch the last drawing and redraw later.
  var HEAVY_ELEMENTS = 6000;
  var drawPending = false, settleTimer = 0;

  function drawAll() {
    drawPending = false;
    if (settleTimer) { clearTimeout(settleTimer); settleTimer = 0; }
    // Every panel's width is read before any is drawn: a read after a panel's new SVG would
    // lay the page out again each time (1.2 of 3.5 s for DeepSeek-V3's five schedules).
    var geoms = panels.map(geometry);
    panels.forEach(function (p, i) { drawPanel(p, geoms[i]); });
    app.removeAttribute('data-busy');
  }
  function scheduleDraw() {
    app.setAttribute('data-busy', '1');
    var drawn = panels.reduce(function (n, p) { return n + (p.drawnCount || 0); }, 0);
    if (drawn > HEAVY_ELEMENTS) {
      previewAll();
      if (settleTimer) clearTimeout(settleTimer);
      settleTimer = setTimeout(drawAll, 160);
      return;
    }
    if (drawPending) return;
    drawPending = true;
    requestAnimationFrame(function () { if (drawPending) drawAll(); });
  }
  function drawNow() { drawAll(); }

  function previewAll() {
    panels.forEach(function (p) {
      if (!p.geom || !p.drawn || !p.xform) return;
      var k2 = p.geom.plotW / (state.x1 - state.x0);
      var sc = k2 / p.drawn.k;
      var tx = LEFT * (1 - sc) + (p.drawn.x0 - state.x0) * k2;
      p.xform.setAttribute('transform', 'matrix(' + sc + ' 0 0 1 ' + tx + ' 0)');
      p.geom.k = k2;
    });
  }

  function refreshAll() {
    buildPanels();
    updateOverlayInfo();
    refreshRange(true);
    drawNow();
  }

  // ---------------------------------------------------------------- legend, comparisons, notes

  function swatch(fill, cls) {
    var s = el('span', { class: 'swatch' + (cls ? ' ' + cls : ''), 'aria-hidden': 'true' });
    if (fill) s.style.background = fill;
    return s;
  }

  function buildLegend() {
    legend.textContent = '';
    var shownRuns = panels.length ? panels.map(function (p) { return p.it; }) : [];
    var chunks = 1, hasW = false, hasBW = false, hasXfer = false;
    shownRuns.forEach(function (it) {
      chunks = Math.max(chunks, it._maxChunk + 1);
      if (it._hasW) hasW = true;
      if (it._hasXfer) hasXfer = true;
      it.ranks.forEach(function (r) { if (r.blocks.some(function (b) { return b.op === 'BW'; })) hasBW = true; });
    });
    chunks = Math.min(chunks, LIGHT.length);
    var ops = ['F', 'B'];
    if (hasW) ops.push('W');
    ops.forEach(function (op) {
      var grp = el('span', { class: 'legend-group' });
      grp.appendChild(el('span', { class: 'legend-op', text: op === 'B' && hasBW ? 'B / BW' : op }));
      for (var c = 0; c < chunks; c++) {
        grp.appendChild(el('span', { class: 'legend-item', title: OP_NAMES[op] + (chunks > 1 ? ', virtual chunk ' + c : '') },
          swatch(blockFill(op, c)), chunks > 1 ? 'chunk ' + c : OP_NAMES[op].toLowerCase()));
      }
      legend.appendChild(grp);
    });
    var misc = el('span', { class: 'legend-group' });
    misc.appendChild(el('span', { class: 'legend-item' }, swatch(null, 'sw-idle'), 'idle'));
    if (hasXfer) {
      misc.appendChild(el('span', { class: 'legend-item' }, swatch(null, 'sw-send'), 'send'));
      misc.appendChild(el('span', { class: 'legend-item' }, swatch(null, 'sw-recv'), 'recv'));
    }
    misc.appendChild(el('span', { class: 'legend-item' }, swatch(null, 'sw-end'), 'iteration end'));
    if (hasIdealRuns) misc.appendChild(el('span', { class: 'legend-item' }, swatch(null, 'sw-ideal'), 'ideal (overlay)'));
    legend.appendChild(misc);
  }

  function buildComparisons() {
    var list = (Array.isArray(data.comparisons) ? data.comparisons : []).filter(function (c) { return c && typeof c === 'object'; });
    compareEl.textContent = '';
    if (!list.length) { compareEl.hidden = true; return; }
    compareEl.appendChild(el('h2', { text: 'Comparisons' }));
    list.forEach(function (c) {
      var m = runById.get(String(c.measured)), o = runById.get(String(c.other));
      var mName = m ? m.name : String(c.measured), oName = o ? o.name : String(c.other);
      var oSrc = o ? o.source : 'other';
      var mIt = findIteration(m, String(c.measured_iteration)), oIt = findIteration(o, String(c.other_iteration));
      var block = el('div', { class: 'comparison', 'data-measured': String(c.measured), 'data-other': String(c.other) });
      var mKey = c.measured_iteration === undefined || c.measured_iteration === null ? '?' : String(c.measured_iteration);
      var oKey = c.other_iteration === undefined || c.other_iteration === null ? '?' : String(c.other_iteration);
      var head = mName + ' \u00b7 iteration ' + mKey + ' (measured) vs ' + oName + ' \u00b7 iteration ' + oKey + ' (' + oSrc + ')';
      block.appendChild(el('h3', { text: head }));
      if (mIt && oIt) {
        var d = mIt.iteration_time_ms > 0 ? (oIt.iteration_time_ms - mIt.iteration_time_ms) / mIt.iteration_time_ms * 100 : null;
        block.appendChild(el('p', { class: 'muted', text: 'iteration time ' + fmt(mIt.iteration_time_ms, 2) + ' ms measured vs ' +
          fmt(oIt.iteration_time_ms, 2) + ' ms ' + oSrc + (isNum(d) ? ' (' + (d > 0 ? '+' : '') + fmt(d, 2) + '%)' : '') }));
      }
      var table = el('table', { class: 'compare' });
      var cols = ['rank', 'measured total ms', oSrc + ' total ms', 'diff %', 'measured busy ms', oSrc + ' busy ms', 'measured bubble %', oSrc + ' bubble %'];
      var tr = el('tr');
      cols.forEach(function (h) { tr.appendChild(el('th', { scope: 'col', text: h })); });
      table.appendChild(el('thead', null, tr));
      var body = el('tbody');
      (Array.isArray(c.ranks) ? c.ranks : []).forEach(function (r) {
        if (!r) return;
        var diff = r.total_diff_pct;
        body.appendChild(el('tr', null,
          el('th', { scope: 'row', text: 'PP-' + r.rank }),
          el('td', { class: 'num', text: fmt(r.measured_total_ms, 2) }),
          el('td', { class: 'num', text: fmt(r.other_total_ms, 2) }),
          el('td', { class: 'num ' + (isNum(diff) ? (diff > 0 ? 'pos' : diff < 0 ? 'neg' : '') : ''), text: isNum(diff) ? (diff > 0 ? '+' : '') + fmt(diff, 2) : '\u2014' }),
          el('td', { class: 'num', text: fmt(r.measured_busy_ms, 2) }),
          el('td', { class: 'num', text: fmt(r.other_busy_ms, 2) }),
          el('td', { class: 'num', text: isNum(r.measured_bubble_ratio) ? fmt(r.measured_bubble_ratio * 100, 2) : '\u2014' }),
          el('td', { class: 'num', text: isNum(r.other_bubble_ratio) ? fmt(r.other_bubble_ratio * 100, 2) : '\u2014' })));
      });
      table.appendChild(body);
      block.appendChild(el('div', { class: 'table-scroll' }, table));
      compareEl.appendChild(block);
    });
  }

  function buildNotes() {
    var notes = (Array.isArray(data.notes) ? data.notes : []).filter(function (n) { return n !== null && n !== undefined && String(n).length; });
    notesList.textContent = '';
    notes.forEach(function (n) { notesList.appendChild(el('li', { text: String(n) })); });
    notesEl.hidden = !notes.length;
  }

  // ---------------------------------------------------------------- tooltip and hover

  function panelOf(svg) {
    for (var i = 0; i < panels.length; i++) if (panels[i].svg === svg) return panels[i];
    return null;
  }

  function tooltipRow(tbody, name, value) {
    tbody.appendChild(el('tr', null, el('th', { scope: 'row', text: name }), el('td', { text: value })));
  }

  function showBlockTip(p, target, ev) {
    var rank = p.it.ranks[+target.getAttribute('data-ri')];
    var b = rank && rank.blocks[+target.getAttribute('data-i')];
    if (!b) return hideTooltip();
    tooltip.textContent = '';
    var head = el('div', { class: 'tt-head' }, swatch(blockFill(b.op, b.chunk)),
      (OP_NAMES[b.op] || b.op) + ' (' + b.op + ')');
    tooltip.appendChild(head);
    var tb = el('tbody');
    tooltipRow(tb, 'micro-batch', b.mb >= 0 ? String(b.mb) : 'unknown');
    tooltipRow(tb, 'chunk', b.chunk >= 0 ? String(b.chunk) : 'unknown');
    tooltipRow(tb, 'rank', 'PP-' + rank.rank);
    tooltipRow(tb, 'start', fmtTime(b.start_ms) + ' ms');
    tooltipRow(tb, 'end', fmtTime(b.end_ms) + ' ms');
    tooltipRow(tb, 'duration', fmtTime(b.end_ms - b.start_ms) + ' ms');
    if (p.idealIndex && b.mb >= 0) {
      var ib = p.idealIndex.get(rank.rank + '|' + opClass(b.op) + '|' + b.mb + '|' + b.chunk);
      if (ib) {
        var dd = b.start_ms - ib.start_ms;
        tooltipRow(tb, 'ideal', fmtTime(ib.start_ms) + ' \u2013 ' + fmtTime(ib.end_ms) + ' ms');
        tooltipRow(tb, 'start delay', (dd >= 0 ? '+' : '') + fmtTime(dd) + ' ms vs ideal');
      }
    }
    tooltip.appendChild(el('table', null, tb));
    tooltip.appendChild(el('div', { class: 'tt-foot muted', text: p.run.name + ' \u00b7 iteration ' + p.it.key }));
    if (p.run.labels_inferred) {
      tooltip.appendChild(el('div', { class: 'tt-note', text: p.run.vpp > 1
          ? "(ids inferred from Megatron's interleaved order)" : '(ids inferred from 1F1B order)' }));
    }
    placeTooltip(ev);
    highlightMb(p, b.mb);
  }

  function showXferTip(p, target, ev) {
    var rank = p.it.ranks[+target.getAttribute('data-ri')];
    var kindAttr = target.getAttribute('data-kind') === 'recv' ? 'recv' : 'send';
    var order = rank && rank._xferOrder[kindAttr];
    var first = +target.getAttribute('data-xi');
    var count = +(target.getAttribute('data-n') || 1);
    var t = order && rank.transfers[order[first]];
    if (!t) return hideTooltip();
    tooltip.textContent = '';
    var send = t.kind !== 'recv';
    if (count > 1) {
      var lastEnd = t.end_ms;
      for (var j = first; j < first + count && j < order.length; j++) lastEnd = Math.max(lastEnd, rank.transfers[order[j]].end_ms);
      tooltip.appendChild(el('div', { class: 'tt-head' }, swatch(null, send ? 'sw-send' : 'sw-recv'),
        count + (send ? ' sends' : ' receives') + ' on PP-' + rank.rank));
      var mt = el('tbody');
      tooltipRow(mt, 'first start', fmtTime(t.start_ms) + ' ms');
      tooltipRow(mt, 'last end', fmtTime(lastEnd) + ' ms');
      tooltip.appendChild(el('table', null, mt));
      tooltip.appendChild(el('div', { class: 'tt-foot muted', text: 'zoom in to see each transfer' }));
      placeTooltip(ev);
      highlightMb(p, null);
      return;
    }
    tooltip.appendChild(el('div', { class: 'tt-head' }, swatch(null, send ? 'sw-send' : 'sw-recv'),
      (send ? 'send ' : 'recv ') + (t.payload || '') + (send ? ' \u2192 PP-' : ' \u2190 PP-') + (isNum(t.peer) ? t.peer : '?')));
    var tb = el('tbody');
    tooltipRow(tb, 'micro-batch', isNum(t.mb) && t.mb >= 0 ? String(t.mb) : 'unknown');
    tooltipRow(tb, 'chunk', isNum(t.chunk) && t.chunk >= 0 ? String(t.chunk) : 'unknown');
    tooltipRow(tb, 'rank', 'PP-' + rank.rank);
    tooltipRow(tb, 'start', fmtTime(t.start_ms) + ' ms');
    tooltipRow(tb, 'end', fmtTime(t.end_ms) + ' ms');
    tooltipRow(tb, 'duration', fmtTime(t.end_ms - t.start_ms) + ' ms');
    tooltip.appendChild(el('table', null, tb));
    tooltip.appendChild(el('div', { class: 'tt-foot muted', text: p.run.name + ' \u00b7 iteration ' + p.it.key }));
    placeTooltip(ev);
    highlightMb(p, null);
  }

  function placeTooltip(ev) {
    tooltip.hidden = false;
    var pad = 14;
    var vw = document.documentElement.clientWidth, vh = document.documentElement.clientHeight;
    var w = tooltip.offsetWidth, h = tooltip.offsetHeight;
    var x = ev.clientX + pad, y = ev.clientY + pad;
    if (x + w > vw - 4) x = Math.max(4, ev.clientX - pad - w);
    if (y + h > vh - 4) y = Math.max(4, ev.clientY - pad - h);
    tooltip.style.left = (x + window.scrollX) + 'px';
    tooltip.style.top = (y + window.scrollY) + 'px';
  }

  function hideTooltip() {
    tooltip.hidden = true;
    panels.forEach(function (p) { highlightMb(p, null); });
  }

  function highlightMb(p, mb) {
    if (mb === undefined || mb === null || mb < 0) mb = null;
    if (p.hlMb === mb) return;
    if (p.hlMb !== null && p.hlMb !== undefined) {
      p.svg.querySelectorAll('rect.block.hl').forEach(function (r) { r.classList.remove('hl'); });
    }
    p.hlMb = mb;
    if (mb === null) { p.svg.classList.remove('tracing'); return; }
    p.svg.classList.add('tracing');
    p.svg.querySelectorAll('rect.block[data-mb="' + mb + '"]').forEach(function (r) { r.classList.add('hl'); });
  }

  function setCursor(t) {
    state.cursorT = t;
    panels.forEach(function (p) {
      if (!p.cursorLine || !p.geom) return;
      var x = t === null ? -1 : LEFT + (t - state.x0) * p.geom.k;
      var vis = t !== null && x >= LEFT && x <= LEFT + p.geom.plotW;
      p.cursorLine.setAttribute('x1', x.toFixed(2));
      p.cursorLine.setAttribute('x2', x.toFixed(2));
      if (vis) p.cursorLine.removeAttribute('visibility'); else p.cursorLine.setAttribute('visibility', 'hidden');
    });
    cursorEl.textContent = t === null ? '' : 'cursor ' + fmt(t, (state.x1 - state.x0) >= 100 ? 2 : 4) + ' ms';
  }

  // Position of a mouse event on the time axis of panel p; null outside the plot area.
  function eventTime(p, ev, clampToPlot) {
    if (!p.geom) return null;
    var rect = p.svg.getBoundingClientRect();
    var sx = rect.width > 0 ? p.geom.width / rect.width : 1;
    var x = (ev.clientX - rect.left) * sx;
    if (!clampToPlot && (x < LEFT || x > LEFT + p.geom.plotW)) return null;
    x = Math.max(LEFT, Math.min(LEFT + p.geom.plotW, x));
    return state.x0 + (x - LEFT) / p.geom.k;
  }

  function attachTimelineEvents(p) {
    var svg = p.svg;
    svg.addEventListener('mousemove', function (ev) {
      if (state.drag) return;
      setCursor(eventTime(p, ev, false));
      var t = ev.target;
      if (t && t.classList && t.classList.contains('block')) showBlockTip(p, t, ev);
      else if (t && t.classList && t.classList.contains('xfer')) showXferTip(p, t, ev);
      else hideTooltip();
    });
    svg.addEventListener('mouseleave', function () {
      hideTooltip();
      if (!state.drag) setCursor(null);
    });
    svg.addEventListener('wheel', function (ev) {
      var t = eventTime(p, ev, false);
      if (t === null) return;
      ev.preventDefault();
      var unit = ev.deltaMode === 1 ? 16 : ev.deltaMode === 2 ? 400 : 1;
      var dx = ev.deltaX * unit, dy = ev.deltaY * unit;
      if (ev.shiftKey && !dx) { dx = dy; dy = 0; }
      if (Math.abs(dx) > Math.abs(dy)) {
        panBy(dx / p.geom.k);
      } else if (dy) {
        var factor = Math.exp(Math.max(-600, Math.min(600, dy)) * 0.0018);
        zoomAt(t, factor);
      }
      hideTooltip();
    }, { passive: false });
    svg.addEventListener('mousedown', function (ev) {
      if (ev.button !== 0 || eventTime(p, ev, false) === null) return;
      ev.preventDefault();
      state.drag = { startX: ev.clientX, x0: state.x0, x1: state.x1, k: p.geom.k * (p.svg.getBoundingClientRect().width / p.geom.width || 1) };
      document.body.classList.add('pv-dragging');
      hideTooltip();
    });
  }

  window.addEventListener('mousemove', function (ev) {
    var d = state.drag;
    if (!d) return;
    var dt = (ev.clientX - d.startX) / d.k;
    setView(d.x0 - dt, d.x1 - dt);
    scheduleDraw();
  });
  window.addEventListener('mouseup', function () {
    if (!state.drag) return;
    state.drag = null;
    document.body.classList.remove('pv-dragging');
  });

  // ---------------------------------------------------------------- controls

  picker.addEventListener('change', function (ev) {
    var box = ev.target;
    if (!box || box.type !== 'checkbox') return;
    var run = box.getAttribute('data-run'), key = box.getAttribute('data-iteration');
    state.shown = state.shown.filter(function (s) { return !(s.run === run && s.iteration === key); });
    if (box.checked) state.shown.push({ run: run, iteration: key });
    refreshAll();
  });
  overlayBox.addEventListener('change', function () {
    state.overlay = overlayBox.checked;
    updateOverlayInfo();
    refreshRange(true);
    drawNow();
  });
  toolbar.querySelector('#zoom-in').addEventListener('click', function () { zoomCentre(1 / 1.5); });
  toolbar.querySelector('#zoom-out').addEventListener('click', function () { zoomCentre(1.5); });
  toolbar.querySelector('#zoom-reset').addEventListener('click', resetView);

  document.addEventListener('keydown', function (ev) {
    if (ev.defaultPrevented || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    var t = ev.target;
    if (t && t.nodeType === 1) {
      if (t.isContentEditable || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT') return;
      if (t.tagName === 'INPUT' && !/^(checkbox|radio|button)$/.test(t.type)) return;
    }
    var span = state.x1 - state.x0;
    switch (ev.key) {
      case '+': case '=': zoomCentre(1 / 1.5); break;
      case '-': case '_': zoomCentre(1.5); break;
      case '0': resetView(); break;
      case 'ArrowLeft': panBy(-span * 0.2); break;
      case 'ArrowRight': panBy(span * 0.2); break;
      case 'Home': setView(state.fullX0, state.fullX0 + span); scheduleDraw(); break;
      case 'End': setView(state.fullX1 - span, state.fullX1); scheduleDraw(); break;
      case 'Escape': hideTooltip(); return;
      default: return;
    }
    hideTooltip();
    ev.preventDefault();
  });

  var lastWidth = 0;
  if (typeof ResizeObserver === 'function') {
    new ResizeObserver(function (entries) {
      var w = Math.round(entries[0].contentRect.width);
      if (w && w !== lastWidth) { lastWidth = w; scheduleDraw(); }
    }).observe(panelsEl);
  } else {
    window.addEventListener('resize', scheduleDraw);
  }

  // ---------------------------------------------------------------- start

  buildComparisons();
  buildNotes();
  buildPanels();
  updateOverlayInfo();
  refreshRange(false);
  drawNow();
  lastWidth = Math.round(panelsEl.getBoundingClientRect().width);
  app.setAttribute('data-ready', '1');
})();
