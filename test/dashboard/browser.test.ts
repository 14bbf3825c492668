/**
 * The dashboard in a real browser: Debian's Chromium driven by
 * playwright-core through a whole session. Elements are found by role and
 * label, as assistive technology finds them, so markup that loses its labels
 * or landmarks fails here. Every page is checked with axe-core (no serious
 * or critical violation), and screenshots of each go to
 * test-artifacts/screenshots for CI to keep.
 */
import { expect } from 'chai';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { seriousViolations } from '../support/axe.js';
import { importNmapReport, nmapReport } from '../support/dashboard-client.js';
import { makeCertificates, startReceiver, type Receiver } from '../support/https-receiver.js';
import { tempDir } from '../support/temp-dir.js';
import { TestService } from '../support/test-service.js';

const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOTS = 'test-artifacts/screenshots';
const BOUND_MS = 30_000;

describe('dashboard in a real browser (Chromium)', function () {
  this.timeout(120_000);

  let browser: Browser;
  let page: Page;
  let service: TestService;
  let receiver: Receiver;
  let certs: ReturnType<typeof tempDir>;
  const problems: string[] = [];

  before(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `Chromium is not installed at ${CHROMIUM}; install it with \`make system-deps\` (scripts/install-system-deps.sh) or \`apt-get install chromium\``,
      );
    }
    certs = tempDir();
    const pems = makeCertificates(certs.path);
    const caFile = join(certs.path, 'ca.pem');
    writeFileSync(caFile, pems.caCert);
    receiver = await startReceiver(pems.serverKey, pems.serverCert, (_request, response) => {
      response.writeHead(204);
      response.end();
    });
    // Local scanners only: a type not installed here fails at once, with the condition the scan page explains.
    service = await TestService.start({ env: { VIGIL_ALLOW_TARGETS: '127.0.0.0/8', VIGIL_WEBHOOK_CA_FILE: caFile, VIGIL_EMBEDDED_SCANNERS: 'local' } });
    await importNmapReport(
      service,
      service.apiKey,
      nmapReport('93.184.216.34', [
        {
          port: 22,
          product: 'OpenSSH 7.4',
          cves: [
            { id: 'CVE-2024-6387', cvss: '9.8' },
            { id: 'CVE-2018-15919', cvss: '5.0' },
          ],
        },
        { port: 80, product: 'nginx 1.18.0' },
        { port: 443, product: 'nginx 1.18.0' },
      ]),
    );
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--headless',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    // A CSP violation or a script error is a bug in the pages; 4xx answers to wrong input are not.
    page.on('console', (message) => {
      if (message.type() === 'error' && !/^Failed to load resource: the server responded with a status of 40[01]/.test(message.text()))
        problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    mkdirSync(SCREENSHOTS, { recursive: true });
  });

  after(async () => {
    await browser?.close();
    await service?.stop();
    await receiver?.close();
    certs?.remove();
  });

  /** Keeps a screenshot of the page and fails on any serious or critical accessibility violation in it. */
  async function screenshot(name: string): Promise<void> {
    await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
    expect(await seriousViolations(page), `axe-core on ${name} (${page.url()})`).to.deep.equal([]);
  }
  const main = () => page.getByRole('main');
  const navLink = (name: string) => page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name, exact: true });
  const status = () => page.getByRole('status');

  /** Reloads the page until the locator shows up: the dispatcher delivers on its own schedule. */
  async function reloadUntilVisible(locator: Locator, what: string): Promise<void> {
    const giveUpAt = Date.now() + BOUND_MS;
    while ((await locator.count()) === 0) {
      if (Date.now() > giveUpAt) throw new Error(`gave up waiting for ${what}`);
      await page.waitForTimeout(250);
      await page.reload();
    }
  }

  it('signs in with the API key, behind a skip link and labelled fields', async () => {
    await page.goto(`${service.baseUrl}/dashboard`);
    expect(new URL(page.url()).pathname).to.equal('/dashboard/sign-in');
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.textContent')).to.equal('Skip to main content');
    await screenshot('01-sign-in');

    await page.getByLabel('API key').fill('vgl_not-the-right-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    expect(await page.getByRole('alert').textContent()).to.equal('That API key is not valid, or it has been revoked.');

    await page.getByLabel('API key').fill(service.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/dashboard$/);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).to.equal('Overview');
    expect(await navLink('Overview').getAttribute('aria-current')).to.equal('page');
    expect(await page.getByRole('banner').getByText('test-account').count()).to.equal(1);
  });

  it('opens on the overview: the navigation in order, risk by level and by week as charts with tables', async () => {
    const links = page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link');
    expect(await links.allTextContents()).to.deep.equal(['Overview', 'Targets', 'Scans', 'Scheduled scans', 'Reports', 'Risks', 'Webhooks', 'API keys']);
    expect(await main().getByRole('img', { name: 'Open risks by threat level' }).count()).to.equal(1);
    expect(await main().getByRole('img', { name: 'Risks opened and closed per week' }).count()).to.equal(1);
    const byLevel = main().getByRole('table', { name: 'Open risks by threat level' });
    expect(
      await byLevel
        .getByRole('row', { name: /Critical/ })
        .getByRole('cell')
        .textContent(),
    ).to.equal('1 critical risks');
    expect(await byLevel.getByRole('row', { name: /Info/ }).getByRole('cell').textContent()).to.equal('3 info risks');
    expect(
      await main()
        .getByRole('table', { name: /per week/ })
        .getByRole('row')
        .count(),
    ).to.equal(1 + 12);
    await screenshot('02-overview');
    await byLevel.getByRole('link', { name: '1 critical risks' }).click();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).to.equal('Risks');
    expect(await navLink('Risks').getAttribute('aria-current')).to.equal('page');
    expect(await main().getByRole('table').getByRole('row').count()).to.equal(1 + 1); // header and the one critical risk
    await navLink('Risks').click();
    expect(await main().getByRole('row').count()).to.equal(1 + 5); // header and five risks
    await screenshot('02-risks');
  });

  it('finds a target by text, edits its label and tags, and follows it to its risks and scans', async () => {
    await service.post('/v1/targets', { target: '127.0.0.1', label: 'Lab box', tags: ['lab'] });
    // The overview counts a target no scan has looked at as not scanned yet, not as a healthy A.
    await navLink('Overview').click();
    const grades = main().getByRole('region', { name: 'Targets by health grade' });
    const countOf = async (term: string) => grades.locator('dt', { hasText: term }).locator('xpath=following-sibling::dd[1]').textContent();
    expect(await countOf('not scanned yet')).to.equal('1');
    expect(await countOf('A grade')).to.equal('0');
    expect(await countOf('C grade')).to.equal('1');
    await navLink('Targets').click();
    expect(await main().getByRole('table', { name: 'Targets, newest first' }).getByRole('row').count()).to.equal(1 + 2);
    await screenshot('08-targets');
    await page.getByLabel('Address or label contains').fill('93.184');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    const rows = main().getByRole('table').getByRole('row');
    expect(await rows.count()).to.equal(2);
    expect(await rows.nth(1).getByText('1 critical').count()).to.equal(1);
    await rows.nth(1).getByRole('link').first().click();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).to.equal('93.184.216.34');
    expect(
      await main()
        .getByRole('table', { name: /Risks of this target/ })
        .getByRole('row')
        .count(),
    ).to.equal(1 + 5);
    expect(
      await main()
        .getByRole('table', { name: /Latest scans of this target/ })
        .getByRole('row')
        .count(),
    ).to.equal(1 + 1);
    await screenshot('09-target');

    await navLink('Targets').click();
    await main()
      .getByRole('link', { name: /Lab box/ })
      .click();
    await page.getByRole('textbox', { name: 'Label' }).fill('Lab box (loopback)');
    await page.getByRole('textbox', { name: 'Tags' }).fill('lab, loopback');
    await page.getByRole('button', { name: 'Save target' }).click();
    expect(await status().textContent()).to.equal('Target saved.');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).to.equal('Lab box (loopback)');
    expect(await main().getByRole('link', { name: 'loopback' }).count()).to.equal(1);
  });

  it('starts a scan from a target, follows it until it fails, and reads why', async () => {
    await page.getByLabel('Scan type').selectOption('SSLYZE');
    await page.getByRole('button', { name: 'Start scan' }).click();
    expect(await status().textContent()).to.match(/^Scan started\./);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).to.equal('SSLYZE scan');
    await reloadUntilVisible(main().getByText('The scan failed.', { exact: false }), 'the scan to fail');
    const why = main().getByRole('region', { name: 'What happened' });
    expect(await why.getByText('ScannerNotInstalled').count()).to.equal(1);
    expect(await main().getByRole('table', { name: 'Targets of this scan' }).getByRole('link', { name: '127.0.0.1' }).count()).to.equal(1);
    await screenshot('10-scan-failed');

    await navLink('Scans').click();
    await page.getByLabel('State').selectOption('FAILED');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    const failed = main().getByRole('table').getByRole('row');
    expect(await failed.count()).to.equal(2);
    expect(await failed.nth(1).getByRole('link').textContent()).to.match(/^SSLYZE/);
    await page.getByLabel('State').selectOption('');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await screenshot('11-scans');
    await main().getByRole('link', { name: /^NMAP/ }).click();
    // The scanner's file, and the PDF of the scan (issue 26).
    const resultLinks = main().getByRole('region', { name: 'Result files' }).getByRole('link');
    expect(await resultLinks.count()).to.equal(2);
    expect(await resultLinks.nth(1).textContent()).to.match(/pdf/i);
    await screenshot('12-scan-succeeded');
  });

  it('creates a scheduled scan, is told what is wrong with a bad one, disables and deletes it', async () => {
    await navLink('Scheduled scans').click();
    await screenshot('13-scheduled-scans-empty');
    await main().getByRole('link', { name: 'New scheduled scan' }).click();
    await page.getByLabel('Name').fill('Nightly lab sweep');
    await page.getByLabel('Schedule', { exact: true }).selectOption('CUSTOM');
    await page.getByLabel('Tags').fill('lab');
    await page.getByRole('button', { name: 'Create scheduled scan' }).click();
    expect(await page.getByRole('alert').textContent()).to.match(/^Schedule_dates must list 1 to 100 date-times when schedule is CUSTOM/);
    expect(await page.getByLabel('Name').inputValue()).to.equal('Nightly lab sweep');
    await screenshot('14-scheduled-scan-refused');

    await page.getByLabel('Schedule', { exact: true }).selectOption('DAILY');
    await page.getByRole('group', { name: 'Scan types' }).getByLabel('SSLYZE').check();
    await page.getByLabel('Start time').fill('2099-01-01T02:00:00Z');
    await page.getByLabel('E-mail a summary').selectOption('ALWAYS');
    await page.getByLabel('Recipients').fill('security@example.com');
    await page.getByRole('button', { name: 'Create scheduled scan' }).click();
    expect(await status().textContent()).to.equal('Scheduled scan created.');
    expect(await main().getByText('2099-01-01 02:00 UTC').count()).to.be.greaterThan(0);
    await screenshot('15-scheduled-scan');
    await page.getByRole('button', { name: 'Disable scheduled scan' }).click();
    expect(await status().textContent()).to.match(/^Scheduled scan disabled\./);

    await navLink('Scheduled scans').click();
    const row = main().getByRole('row', { name: /Nightly lab sweep/ });
    expect(await row.getByText('Disabled').count()).to.equal(1);
    expect(await row.getByRole('cell').nth(1).textContent()).to.equal('NMAP, SSLYZE');
    await screenshot('16-scheduled-scans');
    await row.getByRole('link').click();
    await page.getByRole('button', { name: 'Delete scheduled scan' }).click();
    expect(await status().textContent()).to.match(/^Scheduled scan deleted\./);
    expect(await main().getByText('No scheduled scans yet.').count()).to.equal(1);
  });

  it('creates a report on the Reports page and downloads it as HTML', async () => {
    await navLink('Reports').click();
    await page.waitForURL('**/dashboard/reports');
    expect(await navLink('Reports').getAttribute('aria-current')).to.equal('page');
    await page.getByLabel('Format').selectOption('HTML');
    await page.getByRole('button', { name: 'Create report' }).click();
    expect(await status().textContent()).to.include('Report created.');
    await screenshot('02-reports');
    const link = main().getByRole('link', { name: /HTML/ }).first();
    const href = await link.getAttribute('href');
    const download = await page.request.get(new URL(href!, page.url()).href);
    expect(download.status()).to.equal(200);
    expect(download.headers()['content-type']).to.match(/text\/html/);
    expect(download.headers()['content-disposition']).to.match(/^attachment; filename="[^"]+\.html"$/);
  });

  it('creates an API key, shows it once, and revokes it', async () => {
    await navLink('API keys').click();
    await page.waitForURL('**/dashboard/keys');
    expect(await navLink('API keys').getAttribute('aria-current')).to.equal('page');
    await page.getByLabel('Key name').fill('browser test key');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = await page.getByLabel('New API key').inputValue();
    expect(shown).to.match(/^vgl_[A-Za-z0-9_-]{43}$/);
    expect((await service.get('/v1/risks', { key: shown })).status).to.equal(200);
    await screenshot('03-api-key-created');

    await navLink('API keys').click();
    expect(await page.getByLabel('New API key').count(), 'the key is shown only once').to.equal(0);
    const row = main().getByRole('row', { name: /browser test key/ });
    await row.getByRole('button', { name: 'Revoke key browser test key' }).click();
    expect(await status().textContent()).to.include('The key is revoked.');
    expect(
      await main()
        .getByRole('row', { name: /browser test key/ })
        .getByText('Revoked')
        .count(),
    ).to.equal(1);
    expect((await service.get('/v1/risks', { key: shown })).status).to.equal(401);
    await screenshot('04-api-keys');
  });

  it('adds a webhook endpoint, reveals its secret, sends a test event and sees it in the delivery log', async () => {
    await navLink('Webhooks').click();
    await page.getByLabel('Endpoint URL').fill('http://hooks.example.com/vigil');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    expect(await page.getByRole('alert').textContent()).to.match(/https/);

    await page.getByLabel('Endpoint URL').fill(receiver.url);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).to.equal('Webhook endpoint');
    expect(await status().textContent()).to.include('Endpoint added.');
    expect(await page.getByRole('textbox', { name: 'Signing secret' }).count()).to.equal(0);
    await page.getByRole('button', { name: 'Reveal signing secret' }).click();
    const secret = await page.getByRole('textbox', { name: 'Signing secret' }).inputValue();
    expect(secret).to.match(/^whsec_/);

    await page.getByRole('button', { name: 'Send test event' }).click();
    expect(await status().textContent()).to.include('Test event queued.');
    const delivered = main().getByRole('table').getByRole('row').filter({ hasText: 'HTTP 204' });
    await reloadUntilVisible(delivered, 'the test event in the delivery log');
    expect(await delivered.first().textContent()).to.include('webhook.test');
    const received = receiver.requests.map((request) => JSON.parse(request.body));
    expect(received.map((event) => event.type)).to.deep.equal(['webhook.test']);
    expect(await delivered.first().textContent()).to.include(received[0].id);
    await screenshot('05-webhook-endpoint');

    await navLink('Webhooks').click();
    expect(await main().getByRole('link', { name: receiver.url }).count()).to.equal(1);
    await screenshot('06-webhooks');
  });

  it('filters risks, accepts one with a note, and un-accepts it', async () => {
    await navLink('Risks').click();
    await page.getByLabel('Threat level').selectOption('CRITICAL');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    const rows = main().getByRole('table').getByRole('row');
    expect(await rows.count()).to.equal(2);
    await rows.nth(1).getByRole('link').first().click();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).to.match(/^CVE-2024-6387/);
    expect(
      await main()
        .getByRole('table', { name: /Scans that detected this risk/ })
        .getByRole('row')
        .count(),
    ).to.equal(1 + 1);
    // The evidence reads as labelled fields, as in the reports, not as the JSON the API returns.
    expect(await main().getByRole('heading', { name: 'Evidence' }).count()).to.equal(1);
    const evidence = main().locator('dl.evidence');
    const fields = Object.fromEntries(
      await evidence.locator('dt').evaluateAll((terms) => terms.map((term) => [term.textContent, term.nextElementSibling?.textContent])),
    );
    expect(fields).to.deep.include({ CVEs: 'CVE-2024-6387', Port: '22', Protocol: 'tcp' });
    expect(await main().locator('pre').count(), 'no raw JSON block').to.equal(0);
    expect(await evidence.textContent()).not.to.match(/[{}"]/);

    await page.getByRole('button', { name: 'Accept risk' }).click();
    const missing = await page.getByLabel('Note').evaluate((element) => (element as unknown as { validity: { valueMissing: boolean } }).validity.valueMissing);
    expect(missing, 'the browser asks for the note first').to.equal(true);
    await page.getByLabel('Note').fill('Compensating control: SSH only reachable over the VPN.');
    await page.getByRole('button', { name: 'Accept risk' }).click();
    expect(await status().textContent()).to.equal('Risk accepted.');
    expect(await main().getByText('This risk is accepted.').count()).to.equal(1);
    expect(await main().getByRole('cell', { name: 'Compensating control: SSH only reachable over the VPN.' }).count()).to.equal(1);
    await screenshot('07-risk-accepted');

    await page.getByRole('button', { name: 'Un-accept risk' }).click();
    expect(await status().textContent()).to.equal('Risk no longer accepted.');
    expect(await main().getByText('This risk is not accepted.').count()).to.equal(1);

    await navLink('Risks').click();
    await page.getByLabel('Accepted').selectOption('no');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    expect(await main().getByRole('table').getByRole('row').count()).to.equal(1 + 5);

    // The Threat level header sorts the table by severity, from the keyboard, keeping the filter.
    const header = main().getByRole('columnheader', { name: /Threat level/ });
    expect(await header.getAttribute('aria-sort')).to.equal('none');
    await header.getByRole('link').focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(/sort=threat_level\+desc/);
    expect(
      await main()
        .getByRole('columnheader', { name: /Threat level/ })
        .getAttribute('aria-sort'),
    ).to.equal('descending');
    const severity = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFO'];
    const levels = (await main().getByRole('table').locator('tbody td:nth-of-type(1)').allTextContents()).map((text) => text.trim());
    expect(levels).to.have.length(5);
    expect(levels).to.deep.equal([...levels].sort((a, b) => severity.indexOf(a) - severity.indexOf(b)));
    expect(new URL(page.url()).searchParams.get('accepted')).to.equal('no');
    await screenshot('08-risks-by-threat-level');
  });

  it('signs out, and the pages ran without script errors or CSP violations', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/dashboard/sign-in?notice=signed-out');
    expect(await status().textContent()).to.equal('You are signed out.');
    await page.goto(`${service.baseUrl}/dashboard/keys`);
    expect(new URL(page.url()).pathname).to.equal('/dashboard/sign-in');
    expect(problems).to.deep.equal([]);
  });
});
