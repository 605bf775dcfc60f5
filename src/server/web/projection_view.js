// Projection panels of the pipeline view: for each simulated experiment config, the projected
// memory per pipeline stage (stacked by component, against the GPU's capacity), the iteration
// breakdown and the node-count scaling table. Reads the same embedded data as pp_view.js
// ("projections": [{run, memory, performance}], the JSON of `projection both --json`).
(function () {
  'use strict';
  const node = document.getElementById('data');
  if (!node) return;
  const data = JSON.parse(node.textContent);
  const projections = data.projections || [];
  const app = document.getElementById('app');
  if (!projections.length || !app) return;
  const SVG = 'http://www.w3.org/2000/svg';
  const GiB = 1024 * 1024 * 1024;
  const PARTS = [
    ['params_bytes', 'parameters', '#4e79a7'],
    ['grads_bytes', 'gradients', '#59a14f'],
    ['optimizer_bytes', 'optimizer state', '#f28e2b'],
    ['activations_bytes', 'activations', '#e15759'],
    ['buffers_bytes', 'buffers', '#9c755f'],
  ];
  function el(tag, attrs, ...kids) {
    const e = ['svg', 'rect', 'line', 'text', 'g', 'path', 'circle', 'title'].includes(tag)
      ? document.createElementNS(SVG, tag) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    for (const k of kids) e.append(k instanceof Node ? k : String(k));
    return e;
  }
  const gib = b => (b / GiB).toFixed(2);
  // The width of a label in the charts' 11px font, known before the chart is in the page.
  const measure = document.createElement('canvas').getContext('2d');
  const textWidth = text => {
    if (!measure) return text.length * 6.5;
    measure.font = '11px system-ui,sans-serif';
    return measure.measureText(text).width;
  };
  const runName = id => ((data.runs || []).find(r => r.id === id) || {}).name || id;
  const ms = v => v.toLocaleString('en-US', {minimumFractionDigits: 2, maximumFractionDigits: 2});
  // The simulated step of a run (forward and backward of every micro-batch, the schedule's
  // own time), which the iteration extends by the optimizer step and exposed DP communication.
  const stepMs = id => {
    const its = ((data.runs || []).find(r => r.id === id) || {}).iterations || [];
    return its.length === 1 && typeof its[0].iteration_time_ms === 'number' ? its[0].iteration_time_ms : null;
  };

  // Every enumerated layout is pruned before being built, not runnable, over HBM, or fits: the
  // four counts add up to the total, as the console's search summary does.
  function searchCounts(c) {
    const n = k => (c[k] || 0).toLocaleString();
    const skipped = c.layer_shapes_skipped > 0
      ? `; ${n('layer_shapes_skipped')} layer shapes left out by the time budget` : '';
    return `${n('evaluated')} of ${n('enumerated')} layouts fit (${n('out_of_memory')} over HBM, ` +
      `${n('invalid')} not runnable, ${n('pruned')} pruned before being built: layers not split ` +
      `over PP × VPP)${skipped}`;
  }

  function memoryChart(memory) {
    const stages = memory.stages || [];
    const W = 900, L = 70, R = 150, rowH = 22, T = 24;
    const H = T + stages.length * (rowH + 6) + 30;
    const most = Math.max(memory.capacity_bytes || 0, ...stages.map(s => s.total_bytes)) || 1;
    const x = b => L + (W - L - R) * b / most;
    const cx = memory.capacity_bytes ? x(memory.capacity_bytes) : null;
    const svg = el('svg', {class: 'memory-chart', width: W, height: H, viewBox: `0 0 ${W} ${H}`,
                           style: 'max-width:100%;height:auto', role: 'img',
                           'aria-label': 'projected memory per pipeline stage'});
    stages.forEach((s, i) => {
      const y = T + i * (rowH + 6);
      svg.append(el('text', {x: L - 8, y: y + rowH * 0.7, 'text-anchor': 'end', class: 'axis'},
                    'PP-' + s.pp_rank));
      let at = 0;
      for (const [key, label, colour] of PARTS) {
        const b = s[key] || 0;
        if (b <= 0) continue;
        const r = el('rect', {class: 'mem-part', x: x(at), y, width: Math.max(0.5, x(at + b) - x(at)),
                              height: rowH, fill: colour, 'data-rank': s.pp_rank, 'data-part': label,
                              'data-bytes': b});
        r.append(el('title', {}, `PP-${s.pp_rank} ${label}: ${gib(b)} GiB`));
        svg.append(r);
        at += b;
      }
      // A total just under the capacity would sit on its dashed line: it goes past the line.
      const label = `${gib(s.total_bytes)} GiB`;
      let lx = x(at) + 6;
      if (cx !== null && lx - 3 < cx && lx + textWidth(label) + 3 > cx) lx = cx + 6;
      svg.append(el('text', {x: lx, y: y + rowH * 0.7, class: 'axis total'}, label));
    });
    if (cx !== null) {
      svg.append(el('line', {x1: cx, x2: cx, y1: T - 4, y2: H - 24, class: 'capacity'}));
      svg.append(el('text', {x: cx, y: T - 9, 'text-anchor': 'middle', class: 'axis'},
                    `HBM ${gib(memory.capacity_bytes)} GiB`));
    }
    let lx = L;
    for (const [, label, colour] of PARTS) {
      svg.append(el('rect', {x: lx, y: H - 16, width: 10, height: 10, fill: colour}));
      svg.append(el('text', {x: lx + 14, y: H - 7, class: 'axis'}, label));
      lx += 24 + label.length * 7;
    }
    return svg;
  }

  function table(head, rows) {
    const t = el('table', {class: 'projection-table'});
    t.append(el('tr', {}, ...head.map(h => el('th', {}, h))));
    for (const r of rows) t.append(el('tr', {}, ...r.map(c => el('td', {}, c))));
    return t;
  }

  // A node count the job cannot run at (too few micro-batches for the schedule, say) is a
  // point with only `nodes` and `note`: the table gives its note, the chart leaves it out.
  const projected = p => typeof p.tokens_per_s_per_gpu === 'number' &&
    typeof p.iteration_time_ms === 'number';

  function scalingChart(allPoints) {
    const W = 520, H = 220, L = 70, R = 20, T = 16, B = 36;
    const svg = el('svg', {class: 'scaling-chart', width: W, height: H, viewBox: `0 0 ${W} ${H}`,
                           style: 'max-width:100%;height:auto', role: 'img',
                           'aria-label': 'tokens per second per GPU by node count'});
    const points = allPoints.filter(projected);
    if (!points.length) return svg;
    const xs = points.map(p => Math.log2(p.nodes));
    const x0 = Math.min(...xs), x1 = Math.max(...xs) || 1;
    // 5% headroom: the highest point stays off the frame's top edge.
    const yaxis = SextantAxis.ticks(1.05 * Math.max(...points.map(p => p.tokens_per_s_per_gpu)) || 1, 4);
    const ymax = yaxis.top;
    const px = v => L + (W - L - R) * (x1 > x0 ? (v - x0) / (x1 - x0) : 0.5);
    const py = v => T + (H - T - B) * (1 - v / ymax);
    svg.append(el('line', {x1: L, x2: W - R, y1: H - B, y2: H - B, class: 'axis-line'}));
    svg.append(el('line', {x1: L, x2: L, y1: T, y2: H - B, class: 'axis-line'}));
    for (const v of yaxis.ticks) {
      svg.append(el('text', {x: L - 6, y: py(v) + 4, 'text-anchor': 'end', class: 'axis'},
                    v.toLocaleString()));
    }
    const d = points.map((p, i) => `${i ? 'L' : 'M'}${px(Math.log2(p.nodes))},${py(p.tokens_per_s_per_gpu)}`).join('');
    svg.append(el('path', {d, class: 'scaling-line'}));
    for (const p of points) {
      const c = el('circle', {cx: px(Math.log2(p.nodes)), cy: py(p.tokens_per_s_per_gpu), r: 4,
                              class: 'scaling-point', 'data-nodes': p.nodes});
      c.append(el('title', {}, `${p.nodes} nodes: ${Math.round(p.tokens_per_s_per_gpu)} tokens/s/GPU, ` +
                               `${p.iteration_time_ms.toFixed(1)} ms, MFU ${(100 * p.mfu).toFixed(1)}%`));
      svg.append(c);
      svg.append(el('text', {x: px(Math.log2(p.nodes)), y: H - B + 16, 'text-anchor': 'middle', class: 'axis'},
                    String(p.nodes)));
    }
    svg.append(el('text', {x: (L + W - R) / 2, y: H - 4, 'text-anchor': 'middle', class: 'axis'},
                  'nodes (log scale)'));
    svg.append(el('text', {x: 12, y: (T + H - B) / 2, 'text-anchor': 'middle', class: 'axis',
                           transform: `rotate(-90 12 ${(T + H - B) / 2})`}, 'tokens/s per GPU'));
    return svg;
  }

  const layoutName = e => {
    const q = e.parallel || {};
    return `TP${q.tp} PP${q.pp}${q.vpp > 1 ? ' VPP' + q.vpp : ''}${q.cp > 1 ? ' CP' + q.cp : ''}` +
      `${q.ep > 1 ? ' EP' + q.ep : ''} DP${q.dp} · mbs ${e.micro_batch_size} · ${e.recompute} · ${e.schedule}` +
      // Optimizer sharding tells apart layouts that are otherwise alike (as the CLI's column).
      ` · ${e.fsdp2 ? 'fsdp2' : e.distributed_optimizer ? 'dist-opt' : 'no sharding'}`;
  };

  // The search's layouts as (peak memory, tokens/s/GPU) points: the Pareto front joined, the
  // best by the objective ringed, and the config's own projection as a diamond.
  function searchChart(search, own) {
    const W = 760, H = 300, L = 70, R = 20, T = 16, B = 40;
    const svg = el('svg', {class: 'search-chart', width: W, height: H, viewBox: `0 0 ${W} ${H}`,
                           style: 'max-width:100%;height:auto', role: 'img',
                           'aria-label': 'layouts: peak memory against tokens per second per GPU'});
    const pts = [...(search.pareto || []).map(e => ({e, front: true})),
                 ...(search.top || []).map(e => ({e, front: false}))];
    const all = pts.map(p => [p.e.peak_bytes / GiB, p.e.tokens_per_s_per_gpu]);
    if (own) all.push(own);
    if (!all.length) return svg;
    const capacity = ((search.pareto || [])[0] || {}).capacity_bytes / GiB || 0;
    // Round ticks (1, 2 or 5 times a power of ten) from 0 to just past the largest value.
    const xaxis = SextantAxis.ticks(Math.max(capacity, ...all.map(a => a[0])) || 1, 5);
    const yaxis = SextantAxis.ticks(1.05 * Math.max(...all.map(a => a[1])) || 1, 4);
    const xmax = xaxis.top, ymax = yaxis.top;
    const px = v => L + (W - L - R) * v / xmax, py = v => T + (H - T - B) * (1 - v / ymax);
    svg.append(el('line', {x1: L, x2: W - R, y1: H - B, y2: H - B, class: 'axis-line'}));
    svg.append(el('line', {x1: L, x2: L, y1: T, y2: H - B, class: 'axis-line'}));
    for (const v of yaxis.ticks) {
      svg.append(el('text', {x: L - 6, y: py(v) + 4, 'text-anchor': 'end', class: 'axis'},
                    v.toLocaleString()));
    }
    for (const v of xaxis.ticks) {
      svg.append(el('text', {x: px(v), y: H - B + 16, 'text-anchor': 'middle', class: 'axis'},
                    v.toLocaleString()));
    }
    svg.append(el('text', {x: (L + W - R) / 2, y: H - 4, 'text-anchor': 'middle', class: 'axis'},
                  'peak memory per GPU (GiB)'));
    if (capacity) {
      svg.append(el('line', {x1: px(capacity), x2: px(capacity), y1: T, y2: H - B, class: 'capacity'}));
    }
    const front = (search.pareto || []).slice().sort((a, b) => a.peak_bytes - b.peak_bytes);
    if (front.length > 1) {
      svg.append(el('path', {class: 'front-line', d: front.map((e, i) =>
        `${i ? 'L' : 'M'}${px(e.peak_bytes / GiB)},${py(e.tokens_per_s_per_gpu)}`).join('')}));
    }
    for (const p of pts) {
      const c = el('circle', {cx: px(p.e.peak_bytes / GiB), cy: py(p.e.tokens_per_s_per_gpu),
                              r: p.front ? 5 : 7, class: p.front ? 'front-point' : 'top-point'});
      c.append(el('title', {}, `${layoutName(p.e)}\n${Math.round(p.e.tokens_per_s_per_gpu)} tokens/s/GPU, ` +
        `MFU ${(100 * p.e.mfu).toFixed(1)}%, peak ${(p.e.peak_bytes / GiB).toFixed(1)} GiB`));
      svg.append(c);
    }
    if (own) {
      const [x, y] = [px(own[0]), py(own[1])];
      const d = el('path', {d: `M${x},${y - 8}L${x + 8},${y}L${x},${y + 8}L${x - 8},${y}Z`, class: 'own-point'});
      d.append(el('title', {}, `this config: ${Math.round(own[1])} tokens/s/GPU, peak ${own[0].toFixed(1)} GiB`));
      svg.append(d);
    }
    return svg;
  }

  const style = el('style', {}, `
    section.projection{margin:28px 0;padding:12px 16px;background:#fff;border:1px solid #dde1e7;border-radius:6px}
    section.projection h2{font-size:16px;margin:0 0 6px}
    section.projection .axis{font:11px system-ui,sans-serif;fill:#444}
    section.projection .capacity{stroke:#c00;stroke-dasharray:4 3;stroke-width:1.5}
    section.projection .axis-line{stroke:#999}
    section.projection .scaling-line{fill:none;stroke:#2456a6;stroke-width:2}
    section.projection .scaling-point{fill:#2456a6}
    section.projection .verdict-FITS{color:#1a7f37}section.projection .verdict-AT-RISK{color:#9a6700}
    section.projection .verdict-OOM{color:#c00}
    table.projection-table{border-collapse:collapse;margin:8px 0;font-size:13px}
    table.projection-table td,table.projection-table th{padding:2px 10px;border-bottom:1px solid #eee;text-align:right}
    table.scaling-table td:nth-child(7),table.scaling-table th:nth-child(7){text-align:left;max-width:640px}
    section.projection ul.assumptions{font-size:12px;color:#555}
    section.projection .front-line{fill:none;stroke:#59a14f;stroke-width:1.5}
    section.projection .front-point{fill:#59a14f}
    section.projection .top-point{fill:none;stroke:#2456a6;stroke-width:1.5}
    section.projection .own-point{fill:#e15759}`);
  document.head.append(style);

  for (const p of projections) {
    const m = p.memory || {}, perf = p.performance || {};
    const s = el('section', {class: 'projection', 'data-run': p.run});
    s.append(el('h2', {}, `Projection: ${runName(p.run)}`));
    // The console's words: the iteration is the step plus what follows it.
    const step = stepMs(p.run), iteration = perf.iteration_time_ms || 0;
    const parts = step === null ? '' : ` = one step ${ms(step)} ms (the timeline above) + optimizer step ` +
      `and exposed DP communication ${ms(iteration - step)} ms`;
    s.append(el('p', {class: 'projection-headline'},
      `${perf.model || m.model || ''} on ${perf.gpus || '?'} × ${perf.gpu || m.gpu || ''}: ` +
      `iteration ${ms(iteration)} ms${parts}, ` +
      `${Math.round(perf.tokens_per_s_per_gpu || 0).toLocaleString()} tokens/s/GPU, ` +
      `MFU ${(100 * (perf.mfu || 0)).toFixed(1)}%, peak memory ${gib(m.peak_bytes || 0)} GiB on PP-${m.peak_pp_rank} `,
      el('b', {class: 'verdict-' + m.verdict}, m.verdict || '')));
    s.append(el('h3', {}, 'Memory per GPU by pipeline stage'));
    s.append(memoryChart(m));
    const b = perf.breakdown_ms || {};
    s.append(el('h3', {}, 'Where the iteration goes (critical pipeline rank)'));
    // The console's names; PP send/recv runs beside compute, so it is not part of the total.
    const labels = [['compute', 'compute'], ['pipeline_bubble', 'pipeline bubble'],
                    ['tp_comm', 'TP communication (on critical path)'],
                    ['cp_comm', 'CP communication'], ['ep_comm', 'EP communication'],
                    ['dp_comm_exposed', 'DP communication, exposed'],
                    ['optimizer', 'optimizer step'], ['measured_idle', 'idle (measured)'],
                    ['pp_comm', 'PP send/recv (overlapped, not in the total)']];
    const rows = labels.filter(([k]) => k in b && (b[k] > 0 || k === 'compute'))
                       .map(([k, name]) => [name, b[k].toFixed(2)]);
    rows.push(['iteration', (perf.iteration_time_ms || 0).toFixed(2)]);
    s.append(table(['component', 'ms'], rows));
    if ((perf.scaling || []).length) {
      s.append(el('h3', {}, 'Scaling with the node count'));
      s.append(scalingChart(perf.scaling));
      // As the console's table: a note column when a node count has one (it does not run, or
      // runs out of memory).
      const noted = perf.scaling.some(q => q.note);
      const dash = '\u2014';
      const scalingTable = table(['nodes', 'DP', 'micro-batches', 'iteration (ms)', 'tokens/s/GPU', 'MFU %',
                      ...(noted ? ['note'] : [])],
        perf.scaling.map(q => [q.nodes, q.dp ?? dash, q.micro_batches ?? dash,
                               ...(projected(q)
                                 ? [q.iteration_time_ms.toFixed(1),
                                    Math.round(q.tokens_per_s_per_gpu).toLocaleString(),
                                    (100 * (q.mfu || 0)).toFixed(1)]
                                 : [dash, dash, dash]),
                               ...(noted ? [q.note || ''] : [])]));
      scalingTable.classList.add('scaling-table');
      s.append(scalingTable);
    }
    if (p.search) {
      const q = p.search;
      s.append(el('h3', {}, `Layouts on ${q.nodes} node${q.nodes === 1 ? '' : 's'} (projection search)`));
      s.append(el('p', {class: 'search-legend'},
        `green: Pareto front (fastest for its memory); blue rings: the best ${(q.top || []).length} by ` +
        `${q.objective === 'memory' ? 'memory' : 'tokens/s/GPU'}; red diamond: this config as configured; ` +
        `dashed: HBM. ${searchCounts(q.counts || {})}; searched in ${(q.wall_time_s || 0).toFixed(2)} s.`));
      s.append(searchChart(q, [(m.peak_bytes || 0) / GiB, perf.tokens_per_s_per_gpu || 0]));
      s.append(el('p', {class: 'search-legend'},
        'Ranked by the objective; AT-RISK layouts (above 92% of HBM) rank after every one that ' +
        'fits, so the list can start below a configuration that is faster but at risk.'));
      s.append(table(['layout', 'tokens/s/GPU', 'MFU %', 'iteration (ms)', 'peak GiB', 'memory'],
        (q.top || []).map(e => [layoutName(e), Math.round(e.tokens_per_s_per_gpu).toLocaleString(),
                                (100 * e.mfu).toFixed(1), e.iteration_time_ms.toFixed(1),
                                (e.peak_bytes / GiB).toFixed(1), e.verdict || ''])));
    }
    const notes = [...(m.assumptions || []), ...(perf.assumptions || [])];
    if (notes.length) {
      const d = el('details', {}, el('summary', {}, `Assumptions (${notes.length})`));
      d.append(el('ul', {class: 'assumptions'}, ...notes.map(n => el('li', {}, n))));
      s.append(d);
    }
    // Above the notes and footer of the schedule view when it drew them.
    const notesSection = document.getElementById('notes-section');
    if (notesSection && notesSection.parentNode) notesSection.parentNode.insertBefore(s, notesSection);
    else app.append(s);
  }
})();
