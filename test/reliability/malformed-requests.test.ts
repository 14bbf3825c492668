/**
 * Issue 16, item 3: no request, however malformed, gets a 5xx. A corpus of
 * broken requests goes to every path of the OpenAPI document (and the
 * internal upload path and the dashboard), with and without a valid key.
 */
import { expect } from 'chai';
import { deflateSync, gzipSync } from 'node:zlib';
import { TestService } from '../support/test-service.js';

interface Probe {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}

const BAD_SEGMENTS = ['%ff', '%', '%E0%A4%A', '%c0%af', '%00', 'x'.repeat(5000), '%ED%A0%80'];
const BAD_QUERIES = [
  'page_size=Infinity',
  'page_size=',
  'page_size=1e3',
  'page_size=-0',
  'filters={',
  'filters=%ff',
  '%ff=1',
  'sort=%ff',
  'page_token=%ff',
  'filters={"tags":["%ED%A0%80"]}',
];

/** Every way a body can be broken. */
function bodyProbes(method: string, path: string): Probe[] {
  const json = { 'Content-Type': 'application/json' };
  return [
    { method, path, headers: { ...json, 'Content-Encoding': 'gzip' }, body: 'not gzip at all' },
    { method, path, headers: { ...json, 'Content-Encoding': 'deflate' }, body: 'not deflate' },
    { method, path, headers: { ...json, 'Content-Encoding': 'br' }, body: '{}' },
    { method, path, headers: { ...json, 'Content-Encoding': 'x-unknown' }, body: '{}' },
    { method, path, headers: { ...json, 'Content-Encoding': 'gzip' }, body: gzipSync('{"a":').subarray(0, 12) },
    { method, path, headers: { ...json, 'Content-Encoding': 'deflate' }, body: deflateSync('{"label": "\\ud800"}') },
    { method, path, headers: json, body: '{"label": "\\ud800", "name": "\\udfff", "target": "a\\ud800.example.com"}' },
    { method, path, headers: json, body: '{' },
    { method, path, headers: json, body: '[]' },
    { method, path, headers: json, body: 'null' },
    { method, path, headers: { 'Content-Type': 'application/json; charset=utf-16' }, body: '{}' },
    { method, path, headers: { 'Content-Type': 'multipart/form-data' }, body: '--x\r\n' },
    {
      method,
      path,
      headers: { 'Content-Type': 'multipart/form-data; boundary=x' },
      body: '--x\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\n<nmaprun',
    },
    { method, path, headers: { 'Content-Type': 'text/plain' }, body: '\u0000\u0001' },
  ];
}

function probesFor(template: string, methods: readonly string[]): Probe[] {
  const probes: Probe[] = [];
  const concrete = template.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000');
  for (const method of [...methods, 'OPTIONS']) {
    for (const segment of BAD_SEGMENTS) {
      const path = template.includes('{') ? template.replace(/\{[^}]+\}/g, segment) : `${template}/${segment}`;
      probes.push({ method, path });
    }
    for (const query of BAD_QUERIES) probes.push({ method, path: `${concrete}?${query}` });
    if (method === 'POST' || method === 'PUT' || method === 'PATCH') probes.push(...bodyProbes(method, concrete));
  }
  return probes;
}

/** Paths outside the document: the pods' upload path and the dashboard. */
const OUTSIDE_DOCUMENT: Array<[string, string[]]> = [
  ['/internal/v1/scans/{scanId}/results/{file}', ['PUT']],
  ['/dashboard', ['GET']],
  ['/dashboard/risks/{id}', ['GET']],
  ['/dashboard/webhooks/{id}', ['GET', 'POST']],
  ['/dashboard/sign-in', ['GET', 'POST']],
  ['/healthz', ['GET']],
];

async function send(service: TestService, probe: Probe, key: string | undefined): Promise<number> {
  const headers: Record<string, string> = { ...probe.headers };
  if (key !== undefined) headers['X-SERVICE-API-KEY'] = key;
  const body = probe.method === 'GET' || probe.method === 'OPTIONS' ? undefined : probe.body;
  const response = await fetch(`${service.baseUrl}${probe.path}`, { method: probe.method, headers, body, redirect: 'manual' });
  await response.arrayBuffer();
  return response.status;
}

describe('reliability: malformed requests to every route', function () {
  this.timeout(60_000);
  let service: TestService;

  before(async () => {
    service = await TestService.start({ env: { VIGIL_RATE_LIMIT_BURST: '100000', VIGIL_RATE_LIMIT_PER_SECOND: '100000' } });
  });
  after(async () => {
    await service.stop();
  });

  it('answers every probe of the corpus with a status below 500, with and without a valid key', async () => {
    const document = (await (await fetch(`${service.baseUrl}/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const routes: Array<[string, string[]]> = [
      ...Object.entries(document.paths).map(([path, item]) => [path, Object.keys(item).map((method) => method.toUpperCase())] as [string, string[]]),
      ...OUTSIDE_DOCUMENT,
    ];
    expect(routes.length).to.be.greaterThan(15);
    const failures: string[] = [];
    let sent = 0;
    for (const [template, methods] of routes) {
      for (const probe of probesFor(template, methods)) {
        for (const key of [undefined, service.apiKey]) {
          const status = await send(service, probe, key);
          sent += 1;
          if (status >= 500)
            failures.push(`${status} ${probe.method} ${probe.path.slice(0, 80)} ${JSON.stringify(probe.headers ?? {})} key=${key !== undefined}`);
        }
      }
    }
    expect(sent).to.be.greaterThan(1000);
    expect(failures, failures.slice(0, 30).join('\n')).to.deep.equal([]);
  });
});
