// Opens one page of `sextant serve` or an exported HTML file in headless Chromium and checks
// that it loads without console or page errors and shows what it should:
//   node tests/web/page_test.mjs --url URL [--expect CSS-SELECTOR]... [--click CSS-SELECTOR]...
//                                [--rank-filter RANK] [--wheel-zoom N] [--max-row-height PX]
//                                [--labels-apart] [--category-colors] [--screenshot PNG]
// Each --expect selector must match at least one element. Each --click selector is clicked
// first, in order (a chart's scale, say), before the checks below.
// --rank-filter picks RANK in the trace report's table rank filter: every table with a rank
// column must then show rows of that rank only, and some, and every chart with a rank selector
// (figure[data-rank]) must show RANK.
// --wheel-zoom N turns the wheel N notches in over the middle of the first line chart
// (svg.line-chart: a memory snapshot's allocated and reserved timeline); every line must then
// be clipped to the chart's frame, and each step line must start at the frame's left edge at
// the value in effect there: that of the last timeline point at or before the visible range's
// start (data-x0), read from the page's embedded snapshot data.
// --max-row-height PX: no table row is taller than PX pixels, and some cells were shortened:
// each cell with a title (its whole text) shows less than it.
// --labels-apart: in every SVG chart no two text labels overlap (by more than a pixel) and no
// label lies across a dashed line (a capacity or limit).
// --category-colors: every legend entry of a trace report's charts (span[data-category]) is
// drawn in the colour the page's colour table (the embedded JSON's "colors") gives its
// category, and an entry of a category outside the table in none of the table's colours.
// Exit status 1 on any failure.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import puppeteer from 'puppeteer-core';

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

function parseArgs(argv) {
  const opts = { url: '', expect: [], click: [], screenshot: '', rankFilter: '', wheelZoom: 0,
    maxRowHeight: 0, labelsApart: false, categoryColors: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--url') opts.url = value();
    else if (a === '--expect') opts.expect.push(value());
    else if (a === '--screenshot') opts.screenshot = value();
    else if (a === '--rank-filter') opts.rankFilter = value();
    else if (a === '--click') opts.click.push(value());
    else if (a === '--wheel-zoom') opts.wheelZoom = +value();
    else if (a === '--max-row-height') opts.maxRowHeight = +value();
    else if (a === '--labels-apart') opts.labelsApart = true;
    else if (a === '--category-colors') opts.categoryColors = true;
    else throw new Error(`unknown argument ${a}`);
  }
  if (!opts.url) throw new Error('--url is required');
  return opts;
}

let failed = false;
const report = (ok, what, detail) => {
  if (!ok) failed = true;
  console.log(`${ok ? 'PASS' : 'FAIL'} ${what}: ${detail}`);
};

let opts;
try {
  opts = parseArgs(process.argv.slice(2));
} catch (e) {
  console.error(`page_test: ${e.message}`);
  process.exit(2);
}
const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'page-test-'));
const browser = await puppeteer.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    `--user-data-dir=${userDir}`],
  defaultViewport: { width: 1440, height: 900, deviceScaleFactor: 1 },
});
try {
  const page = await browser.newPage();
  const errors = [];
  page.on('console', (msg) => {
    const where = (msg.location() && msg.location().url) || '';
    if (msg.type() === 'error' && !/\/favicon\.ico(\?|$)/.test(where)) errors.push(msg.text());
  });
  page.on('pageerror', (err) => errors.push(String(err && err.message ? err.message : err)));
  const response = await page.goto(opts.url, { waitUntil: 'load', timeout: 30000 });
  const status = response ? response.status() : 0;
  report(!response || (status >= 200 && status < 300), 'page loads',
    `${opts.url}${status ? ` (HTTP ${status})` : ''}, title "${await page.title()}"`);
  const frames = () => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  await frames();
  for (const selector of opts.click) {
    const found = await page.$(selector);
    report(found !== null, `click ${selector}`, found ? 'clicked' : 'no such element');
    if (found) await found.click();
    await frames();
  }
  for (const selector of opts.expect) {
    const n = await page.$$eval(selector, (els) => els.length);
    report(n > 0, `shows ${selector}`, `${n} element(s)`);
  }
  if (opts.rankFilter) {
    const shown = await page.evaluate((rank) => {
      const sel = document.querySelector('#sx-rank-filter select');
      if (!sel) return null;
      sel.value = rank;
      sel.dispatchEvent(new Event('change'));
      const seen = {};
      document.querySelectorAll('table').forEach((t) => {
        const th = t.querySelector('thead th');
        if (!th || th.textContent !== 'rank') return;
        t.querySelectorAll('tbody tr').forEach((tr) => {
          if (tr.style.display !== 'none') seen[tr.cells[0].textContent] = true;
        });
      });
      return Object.keys(seen);
    }, opts.rankFilter);
    report(shown !== null && shown.length === 1 && shown[0] === opts.rankFilter,
      `rank filter ${opts.rankFilter}`, shown === null ? 'no filter on the page' :
        `ranks of the visible rows: ${shown.join(', ') || 'none'}`);
    await frames();
    const charts = await page.$$eval('figure[data-rank]', (figs) => figs.map((f) =>
      `${f.querySelector('figcaption').textContent.slice(0, 30)}: rank ${f.dataset.rank}`));
    report(charts.length > 0 && charts.every((c) => c.endsWith(`: rank ${opts.rankFilter}`)),
      `charts follow the rank filter ${opts.rankFilter}`, charts.join('; ') || 'no chart with a rank selector');
  }
  if (opts.wheelZoom > 0) {
    const box = await page.$eval('svg.line-chart', (svg) => {
      svg.scrollIntoView({ block: 'center' });
      const r = svg.getBoundingClientRect();
      return { x: r.left + r.width * 0.55, y: r.top + r.height / 2 };
    }).catch(() => null);
    report(box !== null, 'line chart to zoom', box ? 'svg.line-chart' : 'none on the page');
    if (box) {
      await page.mouse.move(box.x, box.y);
      for (let k = 0; k < opts.wheelZoom; k++) {
        await page.mouse.wheel({ deltaY: -100 });
        await frames();
      }
      const lines = await page.evaluate(() => {
        const svg = document.querySelector('svg.line-chart');
        const frame = svg.querySelector('rect.frame');
        const f = { x: +frame.getAttribute('x'), y: +frame.getAttribute('y'),
          w: +frame.getAttribute('width'), h: +frame.getAttribute('height') };
        const x0 = +svg.dataset.x0, yMax = +svg.dataset.yMax;
        // The snapshot page's first chart is device 0's; its time axis is seconds since the first
        // timed entry (the second point: the first is the state before the trace), else entries.
        const DATA = JSON.parse(document.getElementById('data').textContent);
        const tl = DATA.devices[0].timeline;
        const t0 = tl.length > 1 && tl[1][1] >= 0 ? tl[1][1] : null;
        const X = (p) => t0 !== null ? (p[1] >= 0 ? (p[1] - t0) / 1e6 : 0) : p[0];
        const column = { allocated: 2, reserved: 3 };
        return [...svg.querySelectorAll('path.series')].map((path) => {
          const name = path.dataset.series, d = path.getAttribute('d');
          const clipRef = (path.getAttribute('clip-path') || '').match(/url\(#(.+)\)/);
          const clipRect = clipRef && document.getElementById(clipRef[1]) &&
            document.getElementById(clipRef[1]).querySelector('rect');
          const clipped = !!clipRect && +clipRect.getAttribute('x') === f.x &&
            +clipRect.getAttribute('y') === f.y && +clipRect.getAttribute('width') === f.w &&
            +clipRect.getAttribute('height') === f.h;
          const xs = [...d.matchAll(/[MH](-?[\d.]+)/g)].map((m) => +m[1]);
          const start = d.match(/^M(-?[\d.]+),(-?[\d.]+)/);
          let expected = null;
          if (column[name] !== undefined) {
            let v = tl[0][column[name]];
            for (const p of tl) { if (X(p) <= x0) v = p[column[name]]; else break; }
            expected = f.y + f.h - v / yMax * f.h;
          }
          return { name, clipped, start: start ? [+start[1], +start[2]] : null, expected,
            outside: xs.filter((x) => x < f.x - 0.05 || x > f.x + f.w + 0.05), left: f.x };
        });
      });
      report(lines.length > 0, 'lines of the zoomed chart', lines.map((l) => l.name).join(', ') || 'none');
      for (const l of lines) {
        report(l.clipped, `${l.name}: clipped to the plot`, l.clipped ? 'clip path of the frame' : 'no clip path of the frame');
        report(l.outside.length === 0, `${l.name}: drawn inside the plot`,
          l.outside.length ? `x outside the frame: ${l.outside.slice(0, 5).join(', ')}` : 'every x in the frame');
        if (l.expected === null) continue;
        const ok = l.start && Math.abs(l.start[0] - l.left) < 0.06 && Math.abs(l.start[1] - l.expected) < 0.06;
        report(ok, `${l.name}: starts at the value in effect at the left edge`,
          `path starts at ${l.start ? l.start.join(',') : 'nothing'}, expected ${l.left},${l.expected.toFixed(1)}`);
      }
    }
  }
  if (opts.maxRowHeight > 0) {
    const rows = await page.evaluate((max) => {
      const tall = [];
      let rowsSeen = 0, titled = 0, badTitles = 0;
      document.querySelectorAll('table tr').forEach((tr) => {
        const h = tr.getBoundingClientRect().height;
        if (h > 0) rowsSeen++;
        if (h > max) tall.push(`${Math.round(h)} px: ${tr.textContent.slice(0, 60)}`);
      });
      document.querySelectorAll('td[title]').forEach((td) => {
        titled++;
        if (td.title.length <= td.textContent.length) badTitles++;
      });
      return { rowsSeen, tall, titled, badTitles };
    }, opts.maxRowHeight);
    report(rows.rowsSeen > 0 && rows.tall.length === 0, `table rows at most ${opts.maxRowHeight} px`,
      rows.tall.length ? `${rows.tall.length} taller: ${rows.tall.slice(0, 3).join(' | ')}` : `${rows.rowsSeen} rows`);
    report(rows.titled > 0 && rows.badTitles === 0, 'shortened cells keep their text on hover',
      `${rows.titled} cells with a title, ${rows.badTitles} of them no longer than the cell's text`);
  }
  if (opts.labelsApart) {
    const clashes = await page.evaluate(() => {
      const out = [];
      let texts = 0;
      const apart = (a, b) => a.right <= b.left + 1 || b.right <= a.left + 1 ||
        a.bottom <= b.top + 1 || b.bottom <= a.top + 1;
      document.querySelectorAll('svg').forEach((svg) => {
        const labels = [...svg.querySelectorAll('text')]
          .map((t) => ({ text: t.textContent, r: t.getBoundingClientRect() }))
          .filter((l) => l.text.trim() && l.r.width > 0 && l.r.height > 0);
        texts += labels.length;
        const dashed = [...svg.querySelectorAll('line')].filter((l) => {
          const d = getComputedStyle(l).strokeDasharray;
          return d && d !== 'none';
        }).map((l) => l.getBoundingClientRect());
        for (let i = 0; i < labels.length; i++) {
          for (let j = i + 1; j < labels.length; j++) {
            if (!apart(labels[i].r, labels[j].r)) out.push(`"${labels[i].text}" and "${labels[j].text}"`);
          }
          for (const line of dashed) {
            if (!apart(labels[i].r, line)) out.push(`"${labels[i].text}" and a dashed line`);
          }
        }
      });
      return { texts, out };
    });
    report(clashes.texts > 0 && clashes.out.length === 0, 'chart labels apart',
      clashes.out.length ? `${clashes.out.length} overlaps: ${clashes.out.slice(0, 6).join('; ')}` : `${clashes.texts} labels`);
  }
  if (opts.categoryColors) {
    const colors = await page.evaluate(() => {
      const table = JSON.parse(document.getElementById('data').textContent).colors || {};
      const rgb = (c) => { const e = document.createElement('i'); e.style.color = c; document.body.append(e);
        const v = getComputedStyle(e).color; e.remove(); return v; };
      const tableRgb = {};
      Object.keys(table).forEach((k) => { tableRgb[k] = rgb(table[k]); });
      const used = new Set(Object.values(tableRgb));
      const entries = [], wrong = [];
      document.querySelectorAll('span[data-category]').forEach((span) => {
        const cat = span.dataset.category, drawn = getComputedStyle(span.querySelector('.sx-sw')).backgroundColor;
        entries.push(`${span.textContent}=${cat}`);
        if (tableRgb[cat] ? drawn !== tableRgb[cat] : used.has(drawn)) wrong.push(`${span.textContent} (${cat}): ${drawn}`);
      });
      return { entries, wrong, tableSize: Object.keys(table).length };
    });
    report(colors.entries.length > 0 && colors.tableSize > 0 && colors.wrong.length === 0,
      'one colour per category', colors.wrong.length ? `wrong: ${colors.wrong.join('; ')}` :
        `${colors.entries.length} legend entries over a table of ${colors.tableSize}`);
  }
  if (opts.screenshot) {
    // The first screen of the page: long report pages would give images of many megabytes.
    await page.setViewport({ width: 1440, height: 1100, deviceScaleFactor: 1 });
    await page.screenshot({ path: opts.screenshot, fullPage: false });
    report(fs.statSync(opts.screenshot).size > 0, 'screenshot', opts.screenshot);
  }
  report(errors.length === 0, 'no console or page errors', errors.length ? errors.join(' | ') : 'none');
} finally {
  await browser.close();
  fs.rmSync(userDir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
