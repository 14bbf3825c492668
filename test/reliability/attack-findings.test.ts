/**
 * Issue 26, findings of an attack run on loopback, each as requests against
 * the real service: ZAP settings that name private hosts, deeply nested
 * JSON, multipart parts without a name, and guessed upload tokens.
 */
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { MAX_JSON_NESTING } from '../../src/http/request-guards.js';
import { NON_PUBLIC_URLS } from '../support/non-public-urls.js';
import { TestService } from '../support/test-service.js';
import { waitFor } from '../support/wait.js';

/** A PUT of the internal upload endpoint from a given loopback address. */
function putFrom(localAddress: string, url: string, token: string): Promise<{ status: number; retryAfter: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'PUT', localAddress, headers: { Authorization: `Bearer ${token}` } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] as string | undefined }));
    });
    req.on('error', reject);
    req.end('<nmaprun/>');
  });
}

function nested(depth: number): string {
  return `${'['.repeat(depth)}${']'.repeat(depth)}`;
}

describe('reliability: the findings of issue 26 stay fixed', function () {
  this.timeout(60_000);
  let service: TestService;

  beforeEach(async () => {
    service = await TestService.start({ env: { VIGIL_RATE_LIMIT_BURST: '100000', VIGIL_RATE_LIMIT_PER_SECOND: '100000' } });
  });
  afterEach(async () => {
    await service.stop();
  });

  describe('hosts in scanner_settings.zap obey the target address rules', () => {
    const metadataSeed = {
      target: 'http://8.8.4.4/',
      scanner_settings: { zap: { seed_urls: ['http://169.254.169.254/latest/meta-data/'], included_domains: ['169.254.169.254'] } },
    };

    it("refuses the attack run's request (a seed URL and included domain on the metadata address) with 400 naming the rule and VIGIL_ALLOW_TARGETS, storing nothing", async () => {
      const response = await service.post('/v1/targets?upsert=true', metadataSeed);
      expect(response.status).to.equal(400);
      expect(response.body.error).to.equal(
        "scanner_settings.zap.seed_urls 'http://169.254.169.254/latest/meta-data/' is in the 169.254.0.0/16 link-local (RFC 3927) range; only public IPv4 addresses can be used (an operator can allow a lab range with VIGIL_ALLOW_TARGETS)",
      );
      expect((await service.get('/v1/targets')).body.data).to.deep.equal([]);
    });

    describe('every non-public URL form as a seed URL, and every such host as an included domain', () => {
      // One service for the whole table; each case leaves nothing behind, since every write is refused.
      let forms: TestService;
      let existing: string;
      before(async () => {
        forms = await TestService.start();
        existing = (await forms.post('/v1/targets?upsert=true', { target: 'https://shop.example.com/' })).body.data.id as string;
      });
      after(async () => {
        await forms.stop();
      });

      for (const { name, input, message } of NON_PUBLIC_URLS) {
        it(`refuses ${name.replace(/ is refused.*$/, '')} as a seed URL on create, upsert and update`, async () => {
          const zap = { seed_urls: [input] };
          const responses = [
            await forms.post('/v1/targets', { target: 'https://new.example.com/', scanner_settings: { zap } }),
            await forms.post('/v1/targets?upsert=true', { target: 'https://shop.example.com/', scanner_settings: { zap } }),
            await forms.request('PUT', `/v1/targets/${existing}`, { body: { scanner_settings: { zap } } }),
            await forms.request('PATCH', `/v1/targets/${existing}`, { body: { scanner_settings: { zap } } }),
          ];
          for (const response of responses) {
            expect(response.status).to.equal(400);
            expect(response.body.error).to.match(/^scanner_settings\.zap\.seed_urls '/);
            expect(response.body.error).to.include(message);
          }
          expect((await forms.get(`/v1/targets/${existing}`)).body.data.scanner_settings.zap.seed_urls).to.deep.equal([]);
        });
      }

      const includedForms: ReadonlyArray<[string, string]> = [
        ['169.254.169.254', '169.254.0.0/16'],
        ['*.169.254.169.254', '169.254.0.0/16'],
        ['0xa9.0xfe.0xa9.0xfe', '169.254.0.0/16'],
        ['2130706433', '127.0.0.0/8'],
        ['0177.0.0.1', '127.0.0.0/8'],
        ['10.1.2.3', '10.0.0.0/8'],
        ['[::1]', 'not a domain name'],
        ['::ffff:127.0.0.1', 'not a domain name'],
        ['localhost', 'fully qualified'],
        ['metadata.google.internal', '.internal'],
      ];
      for (const [domain, message] of includedForms) {
        it(`refuses the included domain ${domain} with 400`, async () => {
          const response = await forms.request('PUT', `/v1/targets/${existing}`, { body: { scanner_settings: { zap: { included_domains: [domain] } } } });
          expect(response.status).to.equal(400);
          expect(response.body.error).to.match(/^scanner_settings\.zap\.included_domains/);
          expect(response.body.error).to.include(message);
        });
      }
    });

    it('takes public hosts, and excluded domains (which only narrow the scope) whatever they name', async () => {
      const zap = {
        seed_urls: ['https://cdn.example.com/start', 'http://8.8.4.4/x'],
        included_domains: ['*.api.example.com', '8.8.8.8'],
        excluded_domains: ['169.254.169.254', 'localhost'],
      };
      const response = await service.post('/v1/targets', { target: 'https://shop.example.com/', scanner_settings: { zap } });
      expect(response.status).to.equal(200);
      expect(response.body.data.scanner_settings.zap).to.deep.include(zap);
    });

    it('fails a scan whose stored settings name a refused host (written before this rule) before ZAP starts: no plan is written', async () => {
      const target = (await service.post('/v1/targets', { target: 'http://8.8.4.4/' })).body.data.id as string;
      service.vigil.db
        .prepare('UPDATE targets SET zap_settings = json_set(zap_settings, ?, json(?)) WHERE id = ?')
        .run('$.seed_urls', '["http://169.254.169.254/latest/meta-data/"]', target);
      const scanId = (await service.post('/v1/scans', { type: 'OWASP_ZAP', target_ids: [target] })).body.data.id as string;
      const scan = await waitFor(
        async () => (await service.get(`/v1/scans/${scanId}`)).body.data,
        (data) => data.state !== 'QUEUED' && data.state !== 'RUNNING',
        'the scan to end',
      );
      expect(scan.state).to.equal('FAILED');
      expect(scan.skipped_targets).to.deep.equal([
        {
          target_id: target,
          skipped_reason:
            "scanner_settings.zap.seed_urls '169.254.169.254' is in the 169.254.0.0/16 link-local (RFC 3927) range; only public IPv4 addresses can be used (an operator can allow a lab range with VIGIL_ALLOW_TARGETS)",
        },
      ]);
      expect(existsSync(join(service.settings.dataDir, 'work', scanId, 'zap-plan.yaml'))).to.equal(false);
    });
  });

  describe('hosts in scanner_settings.zap inside VIGIL_ALLOW_TARGETS', () => {
    it('are taken when the operator allows their range', async () => {
      const lab = await TestService.start({ env: { VIGIL_ALLOW_TARGETS: '169.254.0.0/16,127.0.0.0/8' } });
      try {
        const zap = { seed_urls: ['http://169.254.169.254/latest/meta-data/', 'http://0x7f.1/'], included_domains: ['169.254.169.254', '2130706433'] };
        const response = await lab.post('/v1/targets?upsert=true', { target: 'http://8.8.4.4/', scanner_settings: { zap } });
        expect(response.status).to.equal(200);
        expect(response.body.data.scanner_settings.zap.seed_urls).to.deep.equal(zap.seed_urls);
        // Still refused: names that cannot be public, and IPv6, which no range covers.
        expect((await lab.post('/v1/targets', { target: 'http://8.8.4.4/', scanner_settings: { zap: { seed_urls: ['http://[::1]/'] } } })).status).to.equal(
          400,
        );
      } finally {
        await lab.stop();
      }
    });
  });

  describe('JSON nesting', () => {
    it('refuses a body nested 4,000 deep (8 KB) with 400 naming the bound, with and without a key', async () => {
      for (const key of [null, service.apiKey]) {
        for (const rawBody of [nested(4000), `{"target":"example.com","label":${nested(4000)}}`, `{"a":${'{"a":'.repeat(4000)}1${'}'.repeat(4001)}`]) {
          const response = await service.request('POST', '/v1/targets', { rawBody, key });
          expect(response.status).to.equal(400);
          expect(response.body.error).to.equal(
            `the request body nests JSON arrays or objects more than ${MAX_JSON_NESTING} levels deep; no Vigil request needs more than a few levels`,
          );
        }
      }
    });

    it('counts only brackets outside strings, so brackets in text are not nesting', async () => {
      const label = `${'['.repeat(200)}\\"{`;
      const response = await service.post('/v1/targets', { target: 'brackets.example.com', label });
      expect(response.status).to.equal(200);
      expect(response.body.data.label).to.equal(label);
    });

    it(`takes a body nested exactly ${MAX_JSON_NESTING} levels to validation (not refused for depth)`, async () => {
      const response = await service.request('POST', '/v1/targets', { rawBody: `{"target":"example.com","label":${nested(MAX_JSON_NESTING - 1)}}` });
      expect(response.status).to.equal(400);
      expect(response.body.error).not.to.match(/nests JSON/);
    });

    it('reads a UTF-16 body with the same bound', async () => {
      const rawBody = new Uint8Array(Buffer.from(nested(4000), 'utf16le'));
      const response = await service.request('POST', '/v1/targets', { rawBody, contentType: 'application/json; charset=utf-16le' });
      expect(response.status).to.equal(400);
      expect(response.body.error).to.match(/nests JSON arrays or objects more than 64 levels/);
    });
  });

  describe('multipart parts without a name', () => {
    const noName = (filename: boolean) =>
      ['--x', `Content-Disposition: form-data${filename ? '; filename="login.side"' : ''}`, '', '{}', '--x--', ''].join('\r\n');

    for (const path of ['auth/selenium', 'openapi']) {
      for (const filename of [false, true]) {
        it(`answers a ${filename ? 'file' : 'field'} part with no name on /${path} with 400 saying to name it`, async () => {
          const target = (await service.post('/v1/targets', { target: 'https://app.example.com/' })).body.data.id as string;
          const response = await service.request('POST', `/v1/targets/${target}/${path}`, {
            rawBody: noName(filename),
            contentType: 'multipart/form-data; boundary=x',
          });
          expect(response.status).to.equal(400);
          expect(response.body.error).to.match(/has no name; give every part one in its header: Content-Disposition: form-data; name=/);
        });
      }
    }

    it('answers a part with no name on /v1/results with 400 too', async () => {
      const response = await service.request('POST', '/v1/results', {
        rawBody: ['--x', 'Content-Disposition: form-data', '', 'NMAP', '--x--', ''].join('\r\n'),
        contentType: 'multipart/form-data; boundary=x',
      });
      expect(response.status).to.equal(400);
      expect(response.body.error).to.match(/has no name/);
    });
  });

  describe('upload tokens', () => {
    it('are throttled per client address as wrong API keys are: 429 with Retry-After, while the right token from another address still works', async () => {
      // A clock that stands still: the bucket refills by the clock, never while the test runs slowly.
      await service.stop();
      const frozen = new Date();
      service = await TestService.start({ clock: { now: () => new Date(frozen) } });
      const capped = service.createAccount('capped', { monthlyScanLimit: 0 });
      const scanId = (await service.post('/v1/scans', { type: 'NMAP', targets: ['example.com'] }, { key: capped.apiKey })).body.data.id as string;
      const token = service.vigil.uploads.issueToken(scanId);
      const url = `${service.baseUrl}/internal/v1/scans/${scanId}/results/nmap.xml`;
      const statuses: number[] = [];
      let retryAfter: string | undefined;
      for (let attempt = 0; attempt < 25; attempt++) {
        const response = await putFrom('127.0.0.1', url, `wrong-token-${attempt}`);
        statuses.push(response.status);
        retryAfter ??= response.retryAfter;
      }
      expect(statuses.slice(0, 20)).to.deep.equal(Array(20).fill(401));
      expect(statuses.slice(20)).to.deep.equal(Array(5).fill(429));
      expect(Number(retryAfter)).to.be.at.least(1);
      // As with API keys, the address that guessed is refused before its token is looked at; another address is not.
      expect((await putFrom('127.0.0.1', url, token)).status).to.equal(429);
      expect((await putFrom('127.0.0.3', url, token)).status).to.equal(200);
      // The API keys of the guessing address have a bucket of their own.
      expect((await service.get('/v1/targets')).status).to.equal(200);
    });
  });
});
