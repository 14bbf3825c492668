import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import addFormats from 'ajv-formats';
import { OpenAPIBackend } from 'openapi-backend';
import { buildOpenApiDocument } from '../../src/api/openapi.js';
import { TestService } from '../support/test-service.js';

describe('HTTP edge: authentication, errors, rate limits, health, metrics, OpenAPI', () => {
  let service: TestService;

  beforeEach(async () => {
    service = await TestService.start();
  });
  afterEach(async () => {
    await service.stop();
  });

  describe('authentication', () => {
    for (const [what, key] of [
      ['a missing', null],
      ['an empty', ''],
      ['a wrong', 'vgl_not-a-real-key'],
    ] as const) {
      it(`gives 401 with { error, ref } for ${what} X-SERVICE-API-KEY`, async () => {
        const response = await service.get('/v1/targets', { key });
        expect(response.status).to.equal(401);
        expect(response.body.error).to.match(/API key/);
        expect(response.body.ref).to.equal(response.headers.get('x-request-id'));
      });
    }

    it('answers 401 before validating the body, so strangers learn nothing about the API', async () => {
      const response = await service.post('/v1/targets', { target: 42 }, { key: null });
      expect(response.status).to.equal(401);
    });

    it('stops accepting a key once it is revoked, while other keys of the account keep working', async () => {
      const second = service.vigil.accounts.createApiKey(service.accountId, 'second');
      expect((await service.get('/v1/targets', { key: second.apiKey })).status).to.equal(200);
      expect(service.vigil.accounts.revokeApiKey(service.accountId, second.id)).to.equal(true);
      expect((await service.get('/v1/targets', { key: second.apiKey })).status).to.equal(401);
      expect((await service.get('/v1/targets')).status).to.equal(200);
    });

    it('stores keys only as hashes', async () => {
      const rows = service.vigil.db.prepare('SELECT * FROM api_keys').all() as Array<Record<string, unknown>>;
      const stored = JSON.stringify(rows.map((row) => ({ ...row, hash: (row.hash as Buffer).toString('hex') })));
      expect(stored).not.to.include(service.apiKey);
      expect(stored).not.to.include(service.apiKey.slice(4, 24));
    });
  });

  describe('errors', () => {
    it('gives 404 with { error, ref } for an unknown /v1 path, with or without a key', async () => {
      for (const key of [undefined, null]) {
        const response = await service.get('/v1/nothing-here', { key });
        expect(response.status).to.equal(404);
        expect(response.body.error).to.match(/No API operation/);
        expect(response.body.ref).to.be.a('string');
      }
    });

    it('gives 404 for an unknown path outside /v1', async () => {
      const response = await service.get('/elsewhere');
      expect(response.status).to.equal(404);
      expect(response.body.error).to.be.a('string');
    });

    it('gives 405 for a method the path does not have', async () => {
      const response = await service.request('DELETE', '/v1/targets');
      expect(response.status).to.equal(405);
    });

    it('refuses malformed JSON with 400 saying so', async () => {
      const response = await service.request('POST', '/v1/targets', { rawBody: '{"target": "example.com"' });
      expect(response.status).to.equal(400);
      expect(response.body.error).to.match(/not valid JSON/);
    });

    it('refuses a missing body with 400', async () => {
      const response = await service.request('POST', '/v1/targets');
      expect(response.status).to.equal(400);
      expect(response.body.error).to.match(/request body is required/);
    });

    it('refuses a JSON body over 1 MiB with 413 without reading it all into a target', async () => {
      const response = await service.request('POST', '/v1/targets', { rawBody: JSON.stringify({ target: 'example.com', label: 'x'.repeat(1_200_000) }) });
      expect(response.status).to.equal(413);
      expect(response.body.error).to.match(/too large/);
    });

    it('puts the same ref in the error body, the X-Request-Id header and the log line', async () => {
      const response = await service.get('/v1/targets/unknown-id');
      expect(response.status).to.equal(404);
      const ref = response.body.ref as string;
      expect(response.headers.get('x-request-id')).to.equal(ref);
      const line = service.logLines.map((l) => JSON.parse(l)).find((entry) => entry.req_id === ref);
      expect(line).to.include({ status: 404, route: 'getTarget', msg: 'request completed' });
    });
  });

  describe('logs', () => {
    it('never contain API keys, even when a request sends one in odd places', async () => {
      await service.post('/v1/targets', { target: 'example.com', label: 'x' });
      await service.get('/v1/targets', { key: 'vgl_wrong-secret-value' });
      await service.get('/v1/targets', { headers: { Authorization: `Bearer ${service.apiKey}` } });
      const logs = service.logLines.join('\n');
      expect(service.logLines.length).to.be.greaterThan(2);
      expect(logs).not.to.include(service.apiKey);
      expect(logs).not.to.include('wrong-secret-value');
    });
  });

  describe('rate limiting', () => {
    it('gives 429 with Retry-After once a key spends its burst, and leaves other keys alone', async () => {
      // A clock that stands still: no token comes back however slowly the requests go.
      const stopped = new Date();
      const limited = await TestService.start({
        env: { VIGIL_RATE_LIMIT_PER_SECOND: '1', VIGIL_RATE_LIMIT_BURST: '3' },
        clock: { now: () => new Date(stopped) },
      });
      try {
        for (let i = 0; i < 3; i++) expect((await limited.get('/v1/targets')).status).to.equal(200);
        const response = await limited.get('/v1/targets');
        expect(response.status).to.equal(429);
        expect(Number(response.headers.get('retry-after'))).to.equal(1);
        expect(response.body.error).to.match(/Rate limit/);
        const other = limited.createAccount('other');
        expect((await limited.get('/v1/targets', { key: other.apiKey })).status).to.equal(200);
      } finally {
        await limited.stop();
      }
    });
  });

  describe('health and metrics', () => {
    it('GET /healthz answers 200 without a key', async () => {
      const response = await service.get('/healthz', { key: null });
      expect(response.status).to.equal(200);
      expect(response.body).to.deep.equal({ status: 'ok' });
    });

    it('GET /metrics counts requests by route and status and records latency', async () => {
      await service.post('/v1/targets', { target: 'example.com' });
      await service.post('/v1/targets', { target: '10.0.0.1' });
      const metrics = (await service.get('/metrics', { key: null })).text;
      expect(metrics).to.match(/vigil_http_requests_total\{method="POST",route="createTarget",status="200"\} 1/);
      expect(metrics).to.match(/vigil_http_requests_total\{method="POST",route="createTarget",status="400"\} 1/);
      expect(metrics).to.match(/vigil_http_request_duration_seconds_count\{method="POST",route="createTarget"\} 2/);
    });

    it('labels unmatched paths with one fixed route so metrics stay bounded', async () => {
      await service.get('/v1/random-1');
      await service.get('/v1/random-2');
      const metrics = (await service.get('/metrics', { key: null })).text;
      expect(metrics).to.match(/route="unmatched",status="404"\} 2/);
      expect(metrics).not.to.include('random-1');
    });
  });

  describe('OpenAPI document', () => {
    it('is served at /v1/openapi.json without a key and equals the committed src/api/openapi.json', async () => {
      const served = await service.get('/v1/openapi.json', { key: null });
      expect(served.status).to.equal(200);
      const committed = JSON.parse(readFileSync(new URL('../../src/api/openapi.json', import.meta.url), 'utf8'));
      expect(served.body).to.deep.equal(committed, 'src/api/openapi.json drifted from the zod schemas: run `make openapi`');
      expect(buildOpenApiDocument()).to.deep.equal(committed);
    });

    it('names its license and describes every tag its operations use, each operation tagged', () => {
      const document = buildOpenApiDocument();
      expect(document.info.license).to.deep.equal({ name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' });
      const declared = new Map((document.tags ?? []).map((tag) => [tag.name, tag.description]));
      for (const [path, item] of Object.entries(document.paths)) {
        for (const [method, operation] of Object.entries(item as Record<string, { tags?: string[] }>)) {
          expect(operation.tags, `${method} ${path}`).to.have.length(1);
          expect(declared.get(operation.tags![0]!), `${method} ${path}: tag ${operation.tags![0]}`).to.be.a('string').that.is.not.empty;
        }
      }
    });

    it('is a valid OpenAPI 3.0.3 document that declares the API key scheme', async function () {
      // Compiling every schema with ajv takes seconds on a loaded 2-core machine.
      this.timeout(90_000);
      const document = buildOpenApiDocument();
      expect(document.openapi).to.equal('3.0.3');
      const api = new OpenAPIBackend({
        definition: document as never,
        quick: false,
        strict: true,
        customizeAjv: (ajv) => {
          addFormats.default(ajv);
          return ajv;
        },
      });
      await api.init(); // validates the definition against the OpenAPI 3.0 schema
      expect(document.components?.securitySchemes?.ApiKeyAuth).to.deep.equal({ type: 'apiKey', in: 'header', name: 'X-SERVICE-API-KEY' });
    });

    it('gives every operation an id and documents its error responses', () => {
      const document = buildOpenApiDocument();
      for (const [path, item] of Object.entries(document.paths)) {
        for (const [method, operation] of Object.entries(
          item as Record<string, { operationId?: string; responses: Record<string, unknown>; security?: unknown[] }>,
        )) {
          expect(operation.operationId, `${method} ${path}`).to.be.a('string');
          expect(operation.responses, `${method} ${path}`).to.have.property('200');
          if (operation.security?.length !== 0) expect(operation.responses, `${method} ${path}`).to.include.keys('400', '401', '404', '429', '500');
        }
      }
    });
  });
});
