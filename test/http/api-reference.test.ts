/**
 * /docs (issue 30): the API reference rendered by Swagger UI from the
 * document /v1/openapi.json serves, every asset from Vigil itself, under a
 * policy that allows scripts from Vigil's origin only. Checked in Debian's
 * Chromium with every request outside the service refused, as offline.
 */
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { TestService } from '../support/test-service.js';
import { buildOpenApiDocument } from '../../src/api/openapi.js';

const CHROMIUM = '/usr/bin/chromium';

describe('the API reference at /docs', function () {
  this.timeout(120_000);
  let service: TestService;
  let browser: Browser;

  before(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`Chromium is not installed at ${CHROMIUM}; install it with \`make system-deps\``);
    service = await TestService.start();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--headless', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update'],
    });
  });
  after(async () => {
    await browser?.close();
    await service?.stop();
  });

  it('serves a page without a key, with no inline script, under a policy allowing scripts from Vigil only', async () => {
    const response = await service.get('/docs', { key: null });
    expect(response.status).to.equal(200);
    expect(response.headers.get('content-security-policy')).to.include("script-src 'self'").and.not.include("'unsafe-eval'");
    const scripts = [...response.text.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts).to.have.length(2);
    for (const [, attributes, body] of scripts) {
      expect(attributes).to.match(/ src="\/docs\/assets\/[a-z-]+\.[0-9a-f]{12}\.js"/);
      expect(body).to.equal('');
    }
  });

  it('serves its assets under content-hashed names, cacheable for a year', async () => {
    const page = (await service.get('/docs', { key: null })).text;
    for (const [path] of page.matchAll(/\/docs\/assets\/[a-z-]+\.[0-9a-f]{12}\.(js|css|png)/g)) {
      const asset = await fetch(`${service.baseUrl}${path}`);
      expect(asset.status, path).to.equal(200);
      expect(asset.headers.get('cache-control'), path).to.include('immutable');
    }
    expect((await fetch(`${service.baseUrl}/docs/assets/swagger-ui-bundle.000000000000.js`)).status).to.equal(404);
  });

  it('renders every operation of the document in Chromium, with no request leaving the service and no policy violation', async () => {
    const page = await browser.newPage();
    const outside: string[] = [];
    const errors: string[] = [];
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(service.baseUrl) || url.startsWith('data:')) return route.continue();
      outside.push(url);
      return route.abort();
    });
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    await page.goto(`${service.baseUrl}/docs`);
    await page.locator('.opblock').first().waitFor({ timeout: 30_000 });
    const document = buildOpenApiDocument();
    const operations = Object.values(document.paths).reduce((sum, item) => sum + Object.keys(item as object).length, 0);
    expect(await page.locator('.opblock').count()).to.equal(operations);
    expect(await page.locator('.info .title').innerText()).to.include(document.info.title);
    expect(outside).to.deep.equal([]);
    expect(errors).to.deep.equal([]);
    await page.close();
  });
});
