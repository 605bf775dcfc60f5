// Opens one page of `sextant serve` or an exported HTML file in headless Chromium and checks
// that it loads without console or page errors and shows what it should:
//   node tests/web/page_test.mjs --url URL [--expect CSS-SELECTOR]... [--rank-filter RANK]
//                                [--screenshot PNG]
// Each --expect selector must match at least one element. --rank-filter picks RANK in the
// trace report's table rank filter: every table with a rank column must then show rows of
// that rank only, and some. Exit status 1 on any failure.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import puppeteer from 'puppeteer-core';

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

function parseArgs(argv) {
  const opts = { url: '', expect: [], screenshot: '', rankFilter: '' };
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
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
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
