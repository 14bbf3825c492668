import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { SqliteTargetRepository } from '../../src/store/targets-repository.js';
import { DEFAULT_ZAP_SETTINGS, type Target, type TargetOrigin } from '../../src/domain/targets/target.js';
import { aTarget } from '../support/targets.js';
import { TestService } from '../support/test-service.js';

describe('HTTP /v1/targets', () => {
  let service: TestService;

  beforeEach(async () => {
    service = await TestService.start();
  });
  afterEach(async () => {
    await service.stop();
  });

  /** Inserts a target of any origin straight into the store: the API only creates MANUAL ones. */
  function seedTarget(origin: TargetOrigin, address: string): Target {
    const target = aTarget(service.accountId, address, { origin, label: 'seeded', tags: ['seeded'] });
    new SqliteTargetRepository(service.vigil.db).insert(target);
    return target;
  }

  describe('create', () => {
    it('creates an FQDN target with lowercase, de-duplicated tags and default scanner settings', async () => {
      const response = await service.post('/v1/targets', { target: 'WWW.Example.COM', label: 'Shop', tags: ['Prod', 'prod', 'EU'] });
      expect(response.status).to.equal(200);
      const target = response.body.data;
      expect(target).to.include({ target: 'www.example.com', label: 'Shop', origin: 'MANUAL', last_scanned_at: null });
      expect(target.tags).to.deep.equal(['prod', 'eu']);
      expect(target.health_score).to.deep.equal({ score: 100, grade: 'A' });
      expect(target.scanner_settings.zap).to.deep.equal(DEFAULT_ZAP_SETTINGS);
      expect(target).not.to.have.property('auth_selenium_file');
    });

    it('gives targets time-ordered ids (UUID v7) that sort in the order the targets were created', async () => {
      const ids: string[] = [];
      for (let n = 1; n <= 20; n++) {
        const response = await service.post('/v1/targets', { target: `host-${n}.example.com` });
        expect(response.status, response.text).to.equal(200);
        ids.push(response.body.data.id);
      }
      for (const id of ids) expect(id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect([...ids].sort()).to.deep.equal(ids);
    });

    for (const address of ['93.184.216.34', 'https://example.com/login?next=%2F', 'http://scanme.nmap.org:8080']) {
      it(`accepts the public target ${address}`, async () => {
        const response = await service.post('/v1/targets', { target: address });
        expect(response.status).to.equal(200);
        expect(response.body.data.target).to.equal(address);
      });
    }

    const refused: Array<[string, string, RegExp]> = [
      ['a private address', '10.1.2.3', /10\.0\.0\.0\/8/],
      ['loopback', '127.0.0.1', /127\.0\.0\.0\/8/],
      ['link-local (cloud metadata)', '169.254.169.254', /169\.254\.0\.0\/16/],
      ['an IPv6 address', '2001:db8::1', /IPv6/],
      ['a CIDR range', '8.8.8.0/24', /CIDR/],
      ['an ftp URL', 'ftp://example.com', /scheme 'ftp'/],
      ['a URL whose host is private', 'http://192.168.1.1/admin', /192\.168\.0\.0\/16/],
      ['a URL whose host is IPv6', 'http://[2001:db8::1]/', /IPv6/],
      ['a single-label name', 'intranet', /fully qualified/],
      ['a target over 2048 characters', `https://example.com/${'a'.repeat(2030)}`, /2048/],
    ];
    for (const [what, address, message] of refused) {
      it(`refuses ${what} with 400 saying why`, async () => {
        const response = await service.post('/v1/targets', { target: address });
        expect(response.status).to.equal(400);
        expect(response.body.error).to.match(message);
        expect(response.body.ref).to.be.a('string');
      });
    }

    const invalidBodies: Array<[string, unknown, RegExp]> = [
      ['no target', { label: 'x' }, /target is required/],
      ['a label of 256 characters', { target: 'example.com', label: 'x'.repeat(256) }, /label/],
      ['11 tags', { target: 'example.com', tags: Array.from({ length: 11 }, (_, i) => `t${i}`) }, /tags/],
      ['a tag of 256 characters', { target: 'example.com', tags: ['x'.repeat(256)] }, /tags/],
      ['a blank tag', { target: 'example.com', tags: ['  '] }, /tags/],
      ['a non-string target', { target: 42 }, /target/],
      ['a seed URL that is not http(s)', { target: 'example.com', scanner_settings: { zap: { seed_urls: ['ftp://example.com'] } } }, /seed_urls/],
      [
        'an excluded URL that is not a valid regular expression',
        { target: 'example.com', scanner_settings: { zap: { excluded_urls: ['(unclosed'] } } },
        /excluded_urls/,
      ],
      ['a header name with a space', { target: 'example.com', scanner_settings: { zap: { headers: [{ key: 'X Bad', value: '1' }] } } }, /headers/],
      ['a header value with a line break', { target: 'example.com', scanner_settings: { zap: { headers: [{ key: 'X-Ok', value: 'a\r\nb' }] } } }, /headers/],
      ['a cookie without a name', { target: 'example.com', scanner_settings: { zap: { cookies: [{ value: 'v' }] } } }, /name/],
      [
        'a cookie with an unknown sameSite',
        { target: 'example.com', scanner_settings: { zap: { cookies: [{ name: 'a', value: 'b', sameSite: 'Sometimes' }] } } },
        /sameSite/,
      ],
      [
        'a cookie expiry that is not an integer',
        { target: 'example.com', scanner_settings: { zap: { cookies: [{ name: 'a', value: 'b', expiry: 1.5 }] } } },
        /expiry/,
      ],
      [
        'a crawl flag that is not a boolean',
        { target: 'example.com', scanner_settings: { zap: { scan_discovered_subdomains: 'yes' } } },
        /scan_discovered_subdomains/,
      ],
    ];
    for (const [what, body, message] of invalidBodies) {
      it(`refuses a body with ${what} with 400 naming the field`, async () => {
        const response = await service.post('/v1/targets', body);
        expect(response.status).to.equal(400);
        expect(response.body.error).to.match(message);
      });
    }

    it('stores valid zap settings field by field', async () => {
      const zap = {
        included_domains: ['api.example.com'],
        excluded_domains: ['cdn.example.com'],
        excluded_urls: ['.*/logout.*'],
        seed_urls: ['https://example.com/start'],
        anti_csrf_tokens: ['csrf_token'],
        scan_discovered_subdomains: true,
        scan_third_party_javascript: true,
        headers: [{ key: 'X-Scanner', value: 'vigil' }],
        cookies: [{ name: 'session', value: 'abc', domain: 'example.com', path: '/', expiry: 1893456000, httpOnly: true, secure: true, sameSite: 'Lax' }],
      };
      const response = await service.post('/v1/targets', { target: 'https://example.com', scanner_settings: { zap } });
      expect(response.status).to.equal(200);
      expect(response.body.data.scanner_settings.zap).to.deep.equal(zap);
    });

    it('ignores undocumented fields in the body', async () => {
      const response = await service.post('/v1/targets', { target: 'example.com', colour: 'blue', id: 'chosen-by-client' });
      expect(response.status).to.equal(200);
      expect(response.body.data).not.to.have.property('colour');
      expect(response.body.data.id).not.to.equal('chosen-by-client');
    });

    it('refuses a target that exists, in any letter case, with 400 saying it already exists', async () => {
      await service.post('/v1/targets', { target: 'example.com' });
      const response = await service.post('/v1/targets', { target: 'EXAMPLE.com' });
      expect(response.status).to.equal(400);
      expect(response.body.error).to.match(/already exists/);
    });

    it('with upsert=true updates the existing target and returns it with the same id', async () => {
      const created = (await service.post('/v1/targets', { target: 'example.com', label: 'old', tags: ['a'] })).body.data;
      const response = await service.post('/v1/targets', { target: 'example.com', label: 'new' }, { query: { upsert: 'true' } });
      expect(response.status).to.equal(200);
      expect(response.body.data).to.include({ id: created.id, label: 'new' });
      expect(response.body.data.tags).to.deep.equal(['a']);
    });

    it('with upsert=true creates the target when it does not exist', async () => {
      const response = await service.post('/v1/targets', { target: 'example.org' }, { query: { upsert: 'true' } });
      expect(response.status).to.equal(200);
      expect((await service.get(`/v1/targets/${response.body.data.id}`)).status).to.equal(200);
    });

    it('with upsert=false behaves like no upsert', async () => {
      await service.post('/v1/targets', { target: 'example.com' });
      expect((await service.post('/v1/targets', { target: 'example.com' }, { query: { upsert: 'false' } })).status).to.equal(400);
    });
  });

  describe('VIGIL_ALLOW_TARGETS', () => {
    it('exempts its ranges only', async () => {
      const lab = await TestService.start({ env: { VIGIL_ALLOW_TARGETS: '127.0.0.0/8' } });
      try {
        expect((await lab.post('/v1/targets', { target: '127.0.0.1' })).status).to.equal(200);
        expect((await lab.post('/v1/targets', { target: 'http://127.0.0.1:8080/' })).status).to.equal(200);
        expect((await lab.post('/v1/targets', { target: '10.0.0.1' })).status).to.equal(400);
        expect((await lab.post('/v1/targets', { target: '::1' })).status).to.equal(400);
      } finally {
        await lab.stop();
      }
    });
  });

  describe('get', () => {
    it('returns the target by id', async () => {
      const created = (await service.post('/v1/targets', { target: 'example.com' })).body.data;
      const response = await service.get(`/v1/targets/${created.id}`);
      expect(response.status).to.equal(200);
      expect(response.body.data).to.deep.equal(created);
    });

    it('gives 404 for an unknown id', async () => {
      const response = await service.get(`/v1/targets/${randomUUID()}`);
      expect(response.status).to.equal(404);
      expect(response.body.error).to.match(/No target/);
    });

    it("gives 404 for another account's target", async () => {
      const other = service.createAccount('other');
      const theirs = (await service.post('/v1/targets', { target: 'example.com' }, { key: other.apiKey })).body.data;
      expect((await service.get(`/v1/targets/${theirs.id}`)).status).to.equal(404);
      expect((await service.put(`/v1/targets/${theirs.id}`, { label: 'mine' })).status).to.equal(404);
      expect((await service.delete(`/v1/targets/${theirs.id}`)).status).to.equal(404);
      expect((await service.get(`/v1/targets/${theirs.id}`, { key: other.apiKey })).body.data.label).to.equal('');
    });
  });

  describe('update', () => {
    for (const method of ['PUT', 'PATCH'] as const) {
      it(`${method} changes sent fields and keeps omitted ones`, async () => {
        const created = (await service.post('/v1/targets', { target: 'example.com', label: 'old', tags: ['a', 'b'] })).body.data;
        const response = await service.request(method, `/v1/targets/${created.id}`, { body: { label: 'new' } });
        expect(response.status).to.equal(200);
        expect(response.body.data).to.include({ label: 'new', target: 'example.com' });
        expect(response.body.data.tags).to.deep.equal(['a', 'b']);
      });
    }

    it('never changes the target address, even when one is sent', async () => {
      const created = (await service.post('/v1/targets', { target: 'example.com' })).body.data;
      const response = await service.put(`/v1/targets/${created.id}`, { target: 'example.org', label: 'x' });
      expect(response.status).to.equal(200);
      expect(response.body.data.target).to.equal('example.com');
    });

    it('removes all tags when sent an empty tags array, and lowercases new ones', async () => {
      const created = (await service.post('/v1/targets', { target: 'example.com', tags: ['a'] })).body.data;
      expect((await service.put(`/v1/targets/${created.id}`, { tags: [] })).body.data.tags).to.deep.equal([]);
      expect((await service.put(`/v1/targets/${created.id}`, { tags: ['NEW'] })).body.data.tags).to.deep.equal(['new']);
    });

    it('replaces all crawl settings when one is sent, and headers and cookies only when sent', async () => {
      const zap = {
        included_domains: ['a.example.com'],
        seed_urls: ['https://example.com/a'],
        scan_discovered_subdomains: true,
        headers: [{ key: 'X-A', value: '1' }],
        cookies: [{ name: 'c', value: '1' }],
      };
      const created = (await service.post('/v1/targets', { target: 'https://example.com', scanner_settings: { zap } })).body.data;
      const crawl = (await service.put(`/v1/targets/${created.id}`, { scanner_settings: { zap: { excluded_domains: ['b.example.com'] } } })).body.data;
      expect(crawl.scanner_settings.zap).to.deep.equal({
        ...DEFAULT_ZAP_SETTINGS,
        excluded_domains: ['b.example.com'],
        headers: zap.headers,
        cookies: zap.cookies,
      });
      const headersOnly = (await service.put(`/v1/targets/${created.id}`, { scanner_settings: { zap: { headers: [] } } })).body.data;
      expect(headersOnly.scanner_settings.zap.excluded_domains).to.deep.equal(['b.example.com']);
      expect(headersOnly.scanner_settings.zap.headers).to.deep.equal([]);
      expect(headersOnly.scanner_settings.zap.cookies).to.deep.equal(zap.cookies);
    });

    it('refuses invalid values with 400', async () => {
      const created = (await service.post('/v1/targets', { target: 'example.com' })).body.data;
      expect((await service.put(`/v1/targets/${created.id}`, { label: 'x'.repeat(256) })).status).to.equal(400);
      expect((await service.put(`/v1/targets/${created.id}`, { tags: 'prod' })).status).to.equal(400);
    });

    it('refuses to update a target created from uploaded results with 400', async () => {
      const uploaded = seedTarget('UPLOADED_RESULTS', '198.51.99.7');
      const response = await service.put(`/v1/targets/${uploaded.id}`, { label: 'x' });
      expect(response.status).to.equal(400);
      expect(response.body.error).to.match(/uploaded scan results/);
    });

    it("keeps a cloud provider's label and tags but applies scanner settings", async () => {
      const cloud = seedTarget('CLOUD_PROVIDER', 'cloud.example.com');
      const response = await service.put(`/v1/targets/${cloud.id}`, {
        label: 'mine',
        tags: ['mine'],
        scanner_settings: { zap: { headers: [{ key: 'X-A', value: '1' }] } },
      });
      expect(response.status).to.equal(200);
      expect(response.body.data).to.include({ label: 'seeded' });
      expect(response.body.data.tags).to.deep.equal(['seeded']);
      expect(response.body.data.scanner_settings.zap.headers).to.deep.equal([{ key: 'X-A', value: '1' }]);
    });

    it('gives 404 for an unknown id', async () => {
      expect((await service.put(`/v1/targets/${randomUUID()}`, { label: 'x' })).status).to.equal(404);
    });
  });

  describe('delete', () => {
    for (const origin of ['MANUAL', 'INTERNAL_SCANNER'] as const) {
      it(`deletes a ${origin} target`, async () => {
        const target = seedTarget(origin, 'deletable.example.com');
        const response = await service.delete(`/v1/targets/${target.id}`);
        expect(response.status).to.equal(200);
        expect(response.body.data).to.deep.equal({ id: target.id, deleted: true });
        expect((await service.get(`/v1/targets/${target.id}`)).status).to.equal(404);
        const tagged = await service.get('/v1/targets', { query: { filters: JSON.stringify({ tags: ['seeded'] }) } });
        expect(tagged.body.data).to.deep.equal([]);
      });
    }

    for (const origin of ['CLOUD_PROVIDER', 'CODE_INTEGRATION', 'UPLOADED_RESULTS'] as const) {
      it(`refuses to delete a ${origin} target with 400 and keeps it`, async () => {
        const target = seedTarget(origin, 'managed.example.com');
        const response = await service.delete(`/v1/targets/${target.id}`);
        expect(response.status).to.equal(400);
        expect(response.body.error).to.match(/cannot be deleted/);
        expect((await service.get(`/v1/targets/${target.id}`)).status).to.equal(200);
      });
    }

    it('gives 404 for an unknown id', async () => {
      expect((await service.delete(`/v1/targets/${randomUUID()}`)).status).to.equal(404);
    });
  });
});
