#!/usr/bin/env node
// Headless-browser check of the pipeline-schedule viewer (sextant pp view).
//
//   node tests/web/pp_view_test.mjs --url URL --dump DIR [--dump DIR...] [--screenshot PNG]
//
// URL is a page served by `sextant pp view` (http://127.0.0.1:PORT/...) or a file:// export.
// Each DIR is a Primus pipeline dump (config.json + pp_rank_N.json); block counts are read from
// those files directly, never from the page's embedded data.
// Prints one line per check (PASS / FAIL / SKIP) and exits non-zero when any check fails.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import puppeteer from 'puppeteer-core';

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const OVERALL_TIMEOUT_MS = 180000;

function usage(msg) {
  if (msg) console.error(`pp_view_test: ${msg}`);
  console.error('usage: node tests/web/pp_view_test.mjs --url URL --dump DIR [--dump DIR...] [--screenshot PNG]');
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { url: null, dumps: [], screenshot: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--url') opts.url = value();
    else if (a === '--dump') opts.dumps.push(value());
    else if (a === '--screenshot') opts.screenshot = value();
    else if (a === '-h' || a === '--help') usage();
    else usage(`unknown argument ${a}`);
  }
  if (!opts.url) usage('--url is required');
  if (!opts.dumps.length) usage('at least one --dump is required');
  return opts;
}

// ------------------------------------------------------------------ results

let failures = 0;
function pass(name, detail) { console.log(`PASS ${name}${detail ? ': ' + detail : ''}`); }
function fail(name, detail) { failures++; console.log(`FAIL ${name}${detail ? ': ' + detail : ''}`); }
function skip(name, detail) { console.log(`SKIP ${name}${detail ? ': ' + detail : ''}`); }
function check(ok, name, detail) { (ok ? pass : fail)(name, detail); return ok; }

// ------------------------------------------------------------------ dumps

function loadDump(dir) {
  const abs = path.resolve(dir);
  const cfgPath = path.join(abs, 'config.json');
  let cfg = {};
  if (fs.existsSync(cfgPath)) cfg = JSON.parse(fs.readFileSync(cfgPath, 'utf8'));
  const rankFiles = fs.readdirSync(abs)
    .map((f) => /^pp_rank_(\d+)\.json$/.exec(f))
    .filter(Boolean)
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
  const pp = Number.isInteger(cfg.pp_size) ? cfg.pp_size : rankFiles.length;
  if (!pp) throw new Error(`${dir}: no pp_rank_N.json files`);
  const ranks = [];
  for (let r = 0; r < pp; r++) {
    const file = path.join(abs, `pp_rank_${r}.json`);
    if (!fs.existsSync(file)) throw new Error(`${dir}: missing pp_rank_${r}.json`);
    ranks.push(JSON.parse(fs.readFileSync(file, 'utf8')));
  }
  return { dir, abs, base: path.basename(abs), pp, ranks };
}

function len(v) { return Array.isArray(v) ? v.length : 0; }

// Expected F/B/W counts for one iteration key, per rank; null when the key is absent.
function expectedCounts(dump, key) {
  const out = [];
  for (let r = 0; r < dump.pp; r++) {
    const rec = dump.ranks[r][key];
    if (!rec) return null;
    out.push({ F: len(rec.fwd_start), B: len(rec.bwd_start), W: len(rec.wgrad_start) });
  }
  return out;
}

function matchDump(dumps, panel) {
  const exact = dumps.filter((d) => panel.origin && path.resolve(panel.origin) === d.abs);
  if (exact.length) return exact[0];
  const loose = dumps.filter((d) =>
    (panel.origin && path.basename(path.resolve(panel.origin)) === d.base) || panel.name === d.base);
  return loose.length === 1 ? loose[0] : null;
}

// ------------------------------------------------------------------ page probes

// Visible panels with their per-rank rendered block counts.
async function readPanels(page) {
  return page.$$eval('section.panel', (sections) => sections
    .filter((s) => {
      const r = s.getBoundingClientRect();
      return r.width > 0 && r.height > 0 && getComputedStyle(s).display !== 'none' && getComputedStyle(s).visibility !== 'hidden';
    })
    .map((s) => {
      const counts = {};
      s.querySelectorAll('svg.timeline rect.block').forEach((b) => {
        const rank = b.getAttribute('data-rank');
        const op = b.getAttribute('data-op');
        const c = counts[rank] || (counts[rank] = { F: 0, B: 0, W: 0, other: 0 });
        if (op === 'F') c.F++;
        else if (op === 'B' || op === 'BW') c.B++;
        else if (op === 'W') c.W++;
        else c.other++;
      });
      return {
        run: s.getAttribute('data-run'),
        iteration: s.getAttribute('data-iteration'),
        source: s.getAttribute('data-source'),
        name: s.getAttribute('data-name'),
        origin: s.getAttribute('data-origin'),
        rows: s.querySelectorAll('svg.timeline g.row').length,
        counts,
      };
    }));
}

async function readRange(page) {
  return page.$eval('#range', (el) => ({
    x0: Number(el.getAttribute('data-x0')),
    x1: Number(el.getAttribute('data-x1')),
  }));
}

function panelSelector(p) {
  const q = (s) => JSON.stringify(String(s));
  return `section.panel[data-run=${q(p.run)}][data-iteration=${q(p.iteration)}]`;
}

function compareCounts(panel, dump) {
  const label = `block counts ${panel.name || panel.run} iteration ${panel.iteration}`;
  const want = expectedCounts(dump, panel.iteration);
  if (!want) return fail(label, `iteration key "${panel.iteration}" not in ${dump.dir}`);
  const problems = [];
  if (panel.rows !== dump.pp) problems.push(`${panel.rows} rank rows, dump has ${dump.pp} ranks`);
  let total = { F: 0, B: 0, W: 0 };
  for (let r = 0; r < dump.pp; r++) {
    const got = panel.counts[String(r)] || { F: 0, B: 0, W: 0, other: 0 };
    const exp = want[r];
    for (const op of ['F', 'B', 'W']) {
      total[op] += exp[op];
      if (got[op] !== exp[op]) problems.push(`PP-${r} ${op} ${got[op]} != ${exp[op]}`);
    }
    if (got.other) problems.push(`PP-${r} has ${got.other} blocks of unknown op`);
  }
  const extra = Object.keys(panel.counts).filter((k) => !(Number(k) >= 0 && Number(k) < dump.pp));
  if (extra.length) problems.push(`blocks on ranks not in the dump: ${extra.join(',')}`);
  const detail = `${dump.pp} ranks, F ${total.F} B ${total.B} W ${total.W} (dump ${dump.dir})`;
  return problems.length ? fail(label, problems.slice(0, 8).join('; ') + (problems.length > 8 ? ` (+${problems.length - 8} more)` : ''))
    : pass(label, detail);
}

// Numbers shown in a text, with thousands separators removed.
function numbersIn(text) {
  return (text.replace(/(\d),(?=\d{3})/g, '$1').match(/-?\d+(?:\.\d+)?/g) || []).map(Number);
}

async function checkHover(page, panel) {
  const label = `tooltip on hover ${panel.name || panel.run} iteration ${panel.iteration}`;
  const sel = panelSelector(panel);
  // The widest block is the easiest to hit.
  const handle = await page.evaluateHandle((s) => {
    const blocks = [...document.querySelectorAll(`${s} svg.timeline rect.block`)];
    let best = null, bestW = -1;
    for (const b of blocks) {
      const w = b.getBoundingClientRect().width;
      if (w > bestW) { best = b; bestW = w; }
    }
    return best;
  }, sel);
  const block = handle.asElement();
  if (!block) return fail(label, 'no block rendered');
  const attrs = await block.evaluate((b) => ({
    mb: b.getAttribute('data-mb'), start: Number(b.getAttribute('data-start')), end: Number(b.getAttribute('data-end')),
    op: b.getAttribute('data-op'), rank: b.getAttribute('data-rank'),
  }));
  await block.hover();
  try {
    await page.waitForFunction(() => {
      const t = document.getElementById('tooltip');
      return t && !t.hidden && getComputedStyle(t).display !== 'none' && t.textContent.trim().length > 0;
    }, { timeout: 3000 });
  } catch {
    return fail(label, `#tooltip not shown for ${attrs.op} mb ${attrs.mb} on PP-${attrs.rank}`);
  }
  const text = (await page.$eval('#tooltip', (t) => t.innerText)).replace(/\s+/g, ' ').trim();
  const problems = [];
  const mbMatch = /micro-batch:?\s*(-?\d+|unknown|\?)/i.exec(text);
  const wantMb = Number(attrs.mb) >= 0 ? String(attrs.mb) : null;
  if (!mbMatch) problems.push('no "micro-batch" in tooltip');
  else if (wantMb !== null && mbMatch[1] !== wantMb) problems.push(`micro-batch ${mbMatch[1]} != ${wantMb}`);
  const nums = numbersIn(text);
  const near = (v) => nums.some((n) => Math.abs(n - v) <= Math.max(0.0051, Math.abs(v) * 1e-6));
  if (!near(attrs.start)) problems.push(`start ${attrs.start} not in tooltip`);
  if (!near(attrs.end)) problems.push(`end ${attrs.end} not in tooltip`);
  if (problems.length) return fail(label, `${problems.join('; ')} — tooltip: "${text}"`);
  pass(label, `"${text.length > 140 ? text.slice(0, 140) + '…' : text}"`);
  await page.mouse.move(1, 1);
}

// A point inside the plot area of a panel's timeline (over its middle rank row), at fraction fx.
async function plotPoint(page, panel, fx) {
  const bb = await page.$eval(`${panelSelector(panel)} svg.timeline`, (svg) => {
    const rows = svg.querySelectorAll('rect.row-bg');
    const target = rows.length ? rows[Math.floor(rows.length / 2)] : svg;
    target.scrollIntoView({ block: 'center' });
    const r = target.getBoundingClientRect();
    return { x: r.x, y: r.y, w: r.width, h: r.height };
  });
  return { x: bb.x + bb.w * fx, y: bb.y + bb.h / 2 };
}

const close = (a, b, tol) => Math.abs(a - b) <= tol;

async function checkZoomPan(page, panel) {
  await page.evaluate(() => document.activeElement && document.activeElement.blur && document.activeElement.blur());
  await page.keyboard.press('0');
  const full = await readRange(page);
  if (!check(Number.isFinite(full.x0) && Number.isFinite(full.x1) && full.x1 > full.x0, 'range readout',
    `#range data-x0=${full.x0} data-x1=${full.x1}`)) return;
  const W = full.x1 - full.x0;
  const tol = W * 1e-6;

  // Mouse wheel over the timeline zooms around the cursor.
  const fx = 0.4;
  const pt = await plotPoint(page, panel, fx);
  await page.mouse.move(pt.x, pt.y);
  const before = await readRange(page);
  await page.mouse.wheel({ deltaY: -400 });
  await page.waitForFunction((x0, x1) => {
    const el = document.getElementById('range');
    return Number(el.getAttribute('data-x0')) !== x0 || Number(el.getAttribute('data-x1')) !== x1;
  }, { timeout: 3000 }, before.x0, before.x1).catch(() => {});
  const wz = await readRange(page);
  const tBefore = before.x0 + fx * (before.x1 - before.x0);
  const tAfter = wz.x0 + fx * (wz.x1 - wz.x0);
  check(wz.x1 - wz.x0 < (before.x1 - before.x0) * 0.99 && close(tBefore, tAfter, W * 0.01),
    'wheel zoom narrows the range around the cursor',
    `${fmtR(before)} -> ${fmtR(wz)}, time under cursor ${tBefore.toFixed(2)} -> ${tAfter.toFixed(2)} ms`);
  await page.mouse.move(1, 1);

  await page.keyboard.press('0');
  let r = await readRange(page);
  check(close(r.x0, full.x0, tol) && close(r.x1, full.x1, tol), "'0' resets the range", fmtR(r));

  await page.keyboard.press('+');
  const zin = await readRange(page);
  check(zin.x1 - zin.x0 < W * 0.99 && zin.x0 >= full.x0 - tol && zin.x1 <= full.x1 + tol, "'+' zooms in", `${fmtR(full)} -> ${fmtR(zin)}`);

  await page.keyboard.press('ArrowRight');
  const right = await readRange(page);
  check(right.x0 > zin.x0 && close(right.x1 - right.x0, zin.x1 - zin.x0, tol), 'ArrowRight pans later', `${fmtR(zin)} -> ${fmtR(right)}`);
  await page.keyboard.press('ArrowLeft');
  const left = await readRange(page);
  check(left.x0 < right.x0 && close(left.x1 - left.x0, zin.x1 - zin.x0, tol), 'ArrowLeft pans earlier', `${fmtR(right)} -> ${fmtR(left)}`);

  // Drag the timeline to the left: the view moves to later times.
  const a = await plotPoint(page, panel, 0.6);
  const dragStart = await readRange(page);
  await page.mouse.move(a.x, a.y);
  await page.mouse.down();
  await page.mouse.move(a.x - 120, a.y, { steps: 6 });
  await page.mouse.up();
  await page.mouse.move(1, 1);
  const dragged = await readRange(page);
  check(dragged.x0 > dragStart.x0 + tol && close(dragged.x1 - dragged.x0, dragStart.x1 - dragStart.x0, tol),
    'drag pans the range', `${fmtR(dragStart)} -> ${fmtR(dragged)}`);

  await page.keyboard.press('Home');
  r = await readRange(page);
  check(close(r.x0, full.x0, tol) && r.x1 < full.x1, 'Home jumps to the start', fmtR(r));
  await page.keyboard.press('End');
  r = await readRange(page);
  check(close(r.x1, full.x1, tol) && r.x0 > full.x0, 'End jumps to the end', fmtR(r));
  await page.keyboard.press('-');
  const zout = await readRange(page);
  check(zout.x1 - zout.x0 > r.x1 - r.x0, "'-' zooms out", `${fmtR(r)} -> ${fmtR(zout)}`);

  await page.keyboard.press('0');
  r = await readRange(page);
  check(close(r.x0, full.x0, tol) && close(r.x1, full.x1, tol), "'0' resets the range after panning", fmtR(r));
}

function fmtR(r) { return `[${r.x0.toFixed(2)}, ${r.x1.toFixed(2)}] ms`; }

// Waits until the viewer has drawn the current view (#app loses data-busy) and two frames passed.
async function nextFrame(page) {
  await page.waitForFunction(() => !document.querySelector('#app[data-busy]'), { timeout: 10000 }).catch(() => {});
  await page.evaluate(() => new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(res))));
}

// Tick another iteration of a measured run in the panel picker, check its counts, untick it.
async function checkPicker(page, dumps, shown) {
  const label = 'panel picker adds and removes a panel';
  const target = await page.evaluate((shownKeys) => {
    const boxes = [...document.querySelectorAll('#panel-picker input[type=checkbox]')];
    const isShown = (b) => shownKeys.includes(b.getAttribute('data-run') + '\u0000' + b.getAttribute('data-iteration'));
    const cand = boxes.filter((b) => !b.checked && !isShown(b));
    return cand.map((b) => ({ run: b.getAttribute('data-run'), iteration: b.getAttribute('data-iteration') }));
  }, shown.map((p) => p.run + '\u0000' + p.iteration));
  const measuredRuns = new Map(shown.filter((p) => p.source === 'measured').map((p) => [p.run, p]));
  const pick = target.find((t) => measuredRuns.has(t.run));
  if (!pick) return skip(label, 'no other iteration of a shown measured run to add');
  const q = (s) => JSON.stringify(String(s));
  const boxSel = `#panel-picker input[type=checkbox][data-run=${q(pick.run)}][data-iteration=${q(pick.iteration)}]`;
  await page.$eval(boxSel, (b) => b.click());
  const sel = panelSelector(pick);
  try {
    await page.waitForSelector(sel, { timeout: 3000 });
  } catch {
    return fail(label, `no panel appeared for run ${pick.run} iteration ${pick.iteration}`);
  }
  await nextFrame(page);
  const panels = await readPanels(page);
  const added = panels.find((p) => p.run === pick.run && p.iteration === pick.iteration);
  const dump = added && matchDump(dumps, added);
  if (added && dump) compareCounts(added, dump);
  await page.$eval(boxSel, (b) => b.click());
  await nextFrame(page);
  const gone = (await page.$(sel)) === null;
  const stillThere = (await readPanels(page)).length === shown.length;
  check(!!added && gone && stillThere, label,
    `run ${pick.run} iteration ${pick.iteration} ${added ? 'shown' : 'missing'}, then ${gone ? 'removed' : 'still shown'}`);
}

async function checkOverlay(page, panels) {
  const label = 'overlay ideal toggle';
  const box = await page.$('#overlay-ideal');
  if (!box) return fail(label, 'no #overlay-ideal control');
  const disabled = await box.evaluate((b) => b.disabled);
  if (disabled) return skip(label, 'no ideal runs in this page');
  const countAll = () => page.$$eval('section.panel', (ss) => ss.map((s) => ({
    overlay: s.querySelectorAll('svg.timeline rect.overlay').length,
    blocks: s.querySelectorAll('svg.timeline rect.block').length,
    source: s.getAttribute('data-source'),
  })));
  const before = await countAll();
  await box.click();
  await nextFrame(page);
  const on = await countAll();
  await box.click();
  await nextFrame(page);
  const off = await countAll();
  const overlays = on.reduce((n, p) => n + p.overlay, 0);
  const blocksSame = JSON.stringify(before.map((p) => p.blocks)) === JSON.stringify(on.map((p) => p.blocks));
  const cleared = off.every((p) => p.overlay === 0);
  check(overlays > 0 && blocksSame && cleared, label,
    `${overlays} outlined ideal blocks when on, block counts ${blocksSame ? 'unchanged' : 'changed'}, ${cleared ? 'none' : 'some left'} when off`);
  void panels;
}

// ------------------------------------------------------------------ main

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const dumps = [];
  for (const d of opts.dumps) {
    try { dumps.push(loadDump(d)); } catch (e) { fail(`read dump ${d}`, e.message); }
  }
  if (!dumps.length) return;

  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pp-view-test-'));
  let browser = null;
  try {
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync', `--user-data-dir=${userDir}`],
      defaultViewport: { width: 1440, height: 900, deviceScaleFactor: 1 },
    });
    const page = await browser.newPage();
    const consoleErrors = [];
    const pageErrors = [];
    page.on('console', (msg) => {
      if (msg.type() !== 'error') return;
      const where = (msg.location() && msg.location().url) || '';
      // Browsers ask for /favicon.ico on their own; a missing one says nothing about the page.
      if (/\/favicon\.ico(\?|$)/.test(where)) return;
      consoleErrors.push(msg.text() + (where ? ` (${where})` : ''));
    });
    page.on('pageerror', (err) => pageErrors.push(String(err && err.message ? err.message : err)));

    let response = null;
    try {
      response = await page.goto(opts.url, { waitUntil: 'load', timeout: 30000 });
    } catch (e) {
      fail('page loads', `${opts.url}: ${e.message}`);
      return;
    }
    const isHttp = /^https?:/.test(opts.url);
    const status = isHttp && response ? response.status() : 0;
    if (isHttp && !(status >= 200 && status < 300)) {
      fail('page loads', `HTTP ${status} for ${opts.url}`);
      return;
    }
    try {
      await page.waitForSelector('#app[data-ready="1"]', { timeout: 15000 });
    } catch {
      fail('page loads', 'the viewer did not finish rendering (#app[data-ready="1"] missing)');
      return;
    }
    await nextFrame(page);
    const title = await page.title();
    pass('page loads', `${opts.url.length > 90 ? opts.url.slice(0, 90) + '…' : opts.url}${status ? ` (HTTP ${status})` : ''}, title "${title}"`);

    // Block counts of every visible panel drawn from a dump (measured, or a simulator's dump
    // such as Sextant's --pp-dump) against that dump.
    const panels = await readPanels(page);
    const measured = panels.filter((p) => p.source !== 'ideal');
    check(panels.length > 0, 'panels rendered', `${panels.length} visible (${measured.length} measured): ` +
      panels.map((p) => `${p.name || p.run}@${p.iteration}`).join(', '));
    const used = new Set();
    for (const p of measured) {
      const d = matchDump(dumps, p);
      if (!d) { skip(`block counts ${p.name || p.run} iteration ${p.iteration}`, 'no --dump given for this run'); continue; }
      used.add(d);
      compareCounts(p, d);
    }
    for (const d of dumps) {
      if (!used.has(d)) fail(`dump ${d.dir} shown`, 'no visible measured panel belongs to this dump (matched by data-origin or data-name)');
    }

    // Hover: one panel per dump.
    const hovered = new Set();
    for (const p of measured) {
      const d = matchDump(dumps, p);
      if (!d || hovered.has(d)) continue;
      hovered.add(d);
      await checkHover(page, p);
    }
    if (!measured.length && panels.length) await checkHover(page, panels[0]);

    if (panels.length) await checkZoomPan(page, measured[0] || panels[0]);
    else fail('zoom and pan', 'no panel to zoom');

    // After the reset every block must be drawn again.
    await nextFrame(page);
    const again = await readPanels(page);
    {
      let got = 0, exp = 0, n = 0;
      const short = [];
      for (const p of again.filter((q) => q.source !== 'ideal')) {
        const d = matchDump(dumps, p);
        if (!d) continue;
        const want = expectedCounts(d, p.iteration);
        const g = Object.values(p.counts).reduce((s, c) => s + c.F + c.B + c.W, 0);
        const e = want ? want.reduce((s, c) => s + c.F + c.B + c.W, 0) : -1;
        if (g !== e) short.push(`${p.name || p.run} iteration ${p.iteration}: ${g} of ${e}`);
        got += g; exp += e; n++;
      }
      if (n) {
        check(!short.length, 'all blocks drawn again after the zoom reset',
          short.length ? short.slice(0, 6).join('; ') : `${n} panel(s), ${got} of ${exp} blocks`);
      }
    }

    await checkOverlay(page, again);
    await checkPicker(page, dumps, again);

    if (opts.screenshot) {
      await page.keyboard.press('0');
      await nextFrame(page);
      fs.mkdirSync(path.dirname(path.resolve(opts.screenshot)), { recursive: true });
      await page.screenshot({ path: opts.screenshot, fullPage: true });
      const size = fs.existsSync(opts.screenshot) ? fs.statSync(opts.screenshot).size : 0;
      check(size > 0, 'screenshot', `${opts.screenshot} (${size} bytes)`);
    }

    await nextFrame(page);
    check(consoleErrors.length === 0, 'no console errors', consoleErrors.length ? consoleErrors.slice(0, 5).join(' | ') : 'none');
    check(pageErrors.length === 0, 'no page errors', pageErrors.length ? pageErrors.slice(0, 5).join(' | ') : 'none');
  } finally {
    if (browser) await browser.close().catch(() => {});
    fs.rmSync(userDir, { recursive: true, force: true });
  }
}

const guard = setTimeout(() => {
  console.log(`FAIL test finished in time: still running after ${OVERALL_TIMEOUT_MS / 1000} s`);
  process.exit(1);
}, OVERALL_TIMEOUT_MS);
guard.unref();

main().then(() => {
  console.log(failures ? `${failures} check(s) failed` : 'all checks passed');
  process.exit(failures ? 1 : 0);
}, (err) => {
  console.log(`FAIL test error: ${err && err.stack ? err.stack : err}`);
  process.exit(1);
});
