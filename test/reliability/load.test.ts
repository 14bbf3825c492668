/**
 * Issue 16, item 9: a short, bounded load run on loopback (3,000 requests
 * over 8 connections) mixing valid reads, writes, wrong keys, malformed
 * paths and health checks. Throughput is the benchmarks' business; this
 * asserts only that nothing answers 5xx and no connection fails.
 */
import autocannon from 'autocannon';
import { expect } from 'chai';
import { TestService } from '../support/test-service.js';

const REQUESTS = 3000;

interface Shot {
  method: 'GET' | 'POST';
  path: string;
  key?: string;
  body?: string;
}

describe('reliability: a bounded load run', function () {
  this.timeout(60_000);
  let service: TestService;

  before(async () => {
    service = await TestService.start({ env: { VIGIL_RATE_LIMIT_BURST: '500', VIGIL_RATE_LIMIT_PER_SECOND: '500' } });
    for (let index = 0; index < 50; index++) await service.post('/v1/targets', { target: `load-${index}.example.com`, tags: ['load'] });
  });
  after(async () => {
    await service.stop();
  });

  it(`answers ${REQUESTS} mixed requests without a 5xx or a failed connection`, async () => {
    const key = service.apiKey;
    const shots: Shot[] = [
      { method: 'GET', path: '/v1/targets?page_size=100', key },
      { method: 'GET', path: '/v1/risks', key },
      { method: 'GET', path: '/v1/scans', key },
      { method: 'GET', path: '/v1/scans/scheduled?filters={', key },
      { method: 'GET', path: '/v1/targets/%ff', key },
      { method: 'GET', path: '/v1/targets', key: 'wrong-key' },
      { method: 'GET', path: '/healthz' },
      { method: 'POST', path: '/v1/targets', key, body: JSON.stringify({ target: 'load-1.example.com' }) },
      { method: 'POST', path: '/v1/targets?upsert=true', key, body: JSON.stringify({ target: 'load-2.example.com', label: 'x' }) },
    ];
    let next = 0;
    const statuses = new Map<number, number>();
    const result = await new Promise<autocannon.Result>((resolve, reject) => {
      const instance = autocannon(
        {
          url: service.baseUrl,
          connections: 8,
          amount: REQUESTS,
          duration: 30,
          requests: [
            {
              setupRequest: (request) => {
                const shot = shots[next++ % shots.length]!;
                const headers: Record<string, string> = {
                  'Content-Type': 'application/json',
                  ...(shot.key === undefined ? {} : { 'X-SERVICE-API-KEY': shot.key }),
                };
                return { ...request, method: shot.method, path: shot.path, headers, body: shot.body };
              },
            },
          ],
        },
        (error: unknown, done) => (error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(done)),
      );
      instance.on('response', (_client, status) => statuses.set(status, (statuses.get(status) ?? 0) + 1));
    });
    const answered = [...statuses.values()].reduce((sum, n) => sum + n, 0);
    expect(answered).to.equal(REQUESTS);
    expect(result.errors + result.timeouts, 'failed connections').to.equal(0);
    expect(
      [...statuses.keys()].filter((status) => status >= 500),
      JSON.stringify(Object.fromEntries(statuses)),
    ).to.deep.equal([]);
    expect(statuses.get(200) ?? 0).to.be.greaterThan(0);
  });
});
