/**
 * /metrics (issue 28): on its own port when VIGIL_METRICS_PORT is set (and
 * then not on the API's port, which an Ingress may expose), and the domain's
 * figures read from the record at each scrape.
 */
import { expect } from 'chai';
import { createServer, type AddressInfo } from 'node:net';
import { TestService } from '../support/test-service.js';
import { importNmapReport, nmapReport } from '../support/dashboard-client.js';

/** A port free a moment ago on loopback. */
async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The value of one sample in Prometheus text, or undefined when it is not there. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('metrics', () => {
  describe('on a port of their own (VIGIL_METRICS_PORT)', () => {
    let service: TestService;
    let metricsUrl: string;
    before(async () => {
      const port = await freePort();
      service = await TestService.start({ env: { VIGIL_METRICS_PORT: String(port) } });
      metricsUrl = `http://127.0.0.1:${port}`;
    });
    after(async () => service.stop());

    it('serves /metrics there and nothing else', async () => {
      const response = await fetch(`${metricsUrl}/metrics`);
      expect(response.status).to.equal(200);
      expect(response.headers.get('content-type')).to.match(/^text\/plain/);
      expect(await response.text()).to.include('vigil_http_requests_total');
      expect((await fetch(`${metricsUrl}/v1/targets`)).status).to.equal(404);
    });

    it("no longer serves /metrics on the API's port", async () => {
      expect((await service.get('/metrics', { key: null })).status).to.equal(404);
    });
  });

  describe("the record's figures", () => {
    let service: TestService;
    before(async () => {
      service = await TestService.start();
    });
    after(async () => service.stop());

    it('counts scans by state and type across accounts at each scrape', async () => {
      const before = (await service.get('/metrics', { key: null })).text;
      expect(before).to.not.match(/^vigil_scans\{/m);
      const other = service.createAccount('other');
      for (const key of [service.apiKey, other.apiKey]) {
        const target = await service.post('/v1/targets', { target: 'example.com' }, { key });
        expect(target.status, target.text).to.equal(200);
        const scan = await service.post('/v1/scans', { type: 'SSLYZE', target_ids: [target.body.data.id] }, { key });
        expect(scan.status, scan.text).to.equal(200);
      }
      const text = (await service.get('/metrics', { key: null })).text;
      const sslyze = text.split('\n').filter((line) => line.startsWith('vigil_scans{') && line.includes('type="SSLYZE"'));
      expect(sslyze.reduce((sum, line) => sum + Number(line.split(' ')[1]), 0)).to.equal(2);
    });

    it("counts an import's bytes and findings, and the scan controller's work queue", async () => {
      const report = nmapReport('93.184.216.34', [
        { port: 22, product: 'OpenSSH 7.4' },
        { port: 443, product: 'nginx 1.18.0' },
      ]);
      await importNmapReport(service, service.apiKey, report);
      const text = (await service.get('/metrics', { key: null })).text;
      expect(sample(text, 'vigil_upload_findings_total{scan_type="NMAP"}')).to.equal(2);
      expect(sample(text, 'vigil_upload_bytes_total{source="import"}')).to.be.above(report.length);
      expect(sample(text, 'vigil_workqueue_adds_total{controller="scan"}'), 'the SSLYZE scans above').to.be.at.least(2);
      expect(sample(text, 'vigil_workqueue_depth{controller="scheduled-scan"}')).to.equal(0);
    });

    it('reports the webhook backlog, zero with no endpoint', async () => {
      expect(sample((await service.get('/metrics', { key: null })).text, 'vigil_webhook_deliveries_pending')).to.equal(0);
    });
  });
});
