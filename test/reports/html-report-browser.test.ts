/**
 * The HTML report in a real browser (Debian's Chromium through
 * playwright-core): it renders, runs nothing, and asks for nothing beyond
 * its own file, even with scanner text that tries. A screenshot goes to
 * test-artifacts/screenshots to look at.
 */
import { expect } from 'chai';
import { createWriteStream, existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { buildReportModel } from '../../src/domain/reports/report-model.js';
import { renderHtmlReport } from '../../src/reports/html-report.js';
import { HOSTILE } from '../support/report-data.js';
import { reportSnapshot } from '../support/report-snapshot.js';

const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOTS = 'test-artifacts/screenshots';

describe('HTML report in a real browser (Chromium)', function () {
  this.timeout(60_000);
  let browser: Browser;

  before(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`Chromium is not installed at ${CHROMIUM}; install it with \`make system-deps\``);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
    });
  });
  after(async () => {
    await browser?.close();
  });

  it('shows the report, runs no script and requests nothing but its own file', async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    const path = resolve('test-artifacts/reports/browser-report.html');
    mkdirSync('test-artifacts/reports', { recursive: true });
    const out = createWriteStream(path);
    await renderHtmlReport(buildReportModel(reportSnapshot()), out);
    await new Promise<void>((done) => out.once('close', () => done()));

    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    const requests: string[] = [];
    const dialogs: string[] = [];
    const errors: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    page.on('pageerror', (error) => errors.push(error.message));
    const url = pathToFileURL(path).href;
    await page.goto(url);
    await page.waitForLoadState('load');

    await page.screenshot({ path: join(SCREENSHOTS, 'report-html.png'), fullPage: false });
    expect(requests).to.deep.equal([url]);
    expect(dialogs).to.deep.equal([]);
    expect(errors).to.deep.equal([]);
    expect(await page.locator('script').count()).to.equal(0);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).to.equal('Security findings for acme & <partners>');
    // The hostile title is shown as text, not run or parsed as markup.
    expect(await page.getByRole('heading', { name: HOSTILE.title }).count()).to.equal(1);
    expect(await page.locator('svg[role="img"]').count()).to.equal(2);
    expect(await page.locator('a[href^="javascript:"]').count()).to.equal(0);
    await page.close();
  });
});
