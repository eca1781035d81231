/**
 * A picture of a compare report for the docs: opens DIR/report.html in headless Chromium (Debian's, as
 * the report tests use: test/support/browser.ts) at a 1400 px wide window and writes a PNG of one of its
 * parts, by default the matrix (`#matrix`: report-html.ts matrixHtml), or the whole page with `--full`.
 *
 *   node --import tsx scripts/report-picture.ts REPORT.html OUT.png [--selector CSS] [--full]
 *
 * Fails (exit 1, one line) when the page shows a script error or the part is missing; waits until every
 * plot is drawn (the page's `data-plots-ready`), so a full-page picture holds them.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';

async function main(argv: string[]): Promise<number> {
  const positional = argv.filter((a, i) => !a.startsWith('--') && argv[i - 1] !== '--selector');
  const [report, out] = positional;
  if (!report || !out) {
    console.error('usage: node --import tsx scripts/report-picture.ts REPORT.html OUT.png [--selector CSS] [--full]');
    return 2;
  }
  if (!existsSync(report)) {
    console.error(`report-picture: ${report}: no such file`);
    return 2;
  }
  if (!existsSync(chromiumPath)) {
    console.error(`report-picture: ${chromiumPath} is missing (Debian's chromium: scripts/setup.sh installs it; or set CHROMIUM)`);
    return 2;
  }
  const at = argv.indexOf('--selector');
  const selector = at >= 0 ? argv[at + 1] : '#matrix';
  const full = argv.includes('--full');
  const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--headless=new'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 }, deviceScaleFactor: 1 });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(pathToFileURL(resolve(report)).href);
    await page.waitForFunction(() => document.body.dataset.plotsReady !== undefined || document.getElementById('plot-status')?.className === 'error', null, { timeout: 60_000 });
    const status = await page.locator('#plot-status').textContent();
    if (errors.length || (status && status.trim())) throw new Error(`the report shows an error: ${errors[0] ?? status}`);
    if (full) await page.screenshot({ path: out, fullPage: true });
    else {
      const part = page.locator(selector);
      if ((await part.count()) === 0) throw new Error(`${report} has no ${selector} (the matrix needs two scenes or more)`);
      await part.screenshot({ path: out });
    }
    console.error(`report-picture: ${out} written (${full ? 'the whole page' : selector})`);
    return 0;
  } finally {
    await browser.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    console.error(`report-picture: ${(e as Error).message}`);
    process.exit(1);
  },
);
