/**
 * End to end in the embedded runtime: the real service, real nmap, real
 * listeners on loopback (VIGIL_ALLOW_TARGETS=127.0.0.0/8).
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { TestService } from '../support/test-service.js';
import { tcpListener, udpEchoListener, type TcpListener } from '../support/listeners.js';
import { tempDir } from '../support/temp-dir.js';
import { waitFor } from '../support/wait.js';
import { receiveEvents } from '../support/event-receiver.js';

const LAB = { VIGIL_ALLOW_TARGETS: '127.0.0.0/8' };
const isRoot = process.getuid?.() === 0;

function nmapProcessesFor(scanId: string): string[] {
  try {
    return execFileSync('pgrep', ['-af', `nmap .*${scanId}`], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter(Boolean);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

describe('embedded runtime, end to end with real nmap', function () {
  this.timeout(120_000);
  let service: TestService;
  let listener: TcpListener | undefined;

  beforeEach(async () => {
    service = await TestService.start({ env: LAB });
    // Events are stored only for their receivers.
    receiveEvents(service.vigil.webhookEndpoints, service.accountId);
  });
  afterEach(async () => {
    await service.stop();
    await listener?.close();
    listener = undefined;
  });

  const scanState = async (id: string) => (await service.get(`/v1/scans/${id}`)).body.data;
  const statesSeen = (id: string) =>
    service.vigil.db
      .prepare("SELECT json_extract(payload, '$.state') AS state FROM events WHERE json_extract(payload, '$.id') = ? ORDER BY seq")
      .all(id)
      .map((row) => (row as { state: string }).state);

  it('runs an NMAP scan of a TCP listener: QUEUED, RUNNING, SUCCEEDED, and the nmap XML can be downloaded', async () => {
    listener = await tcpListener();
    const started = await service.post('/v1/scans', { type: 'NMAP', targets: ['127.0.0.1'] });
    expect(started.status, started.text).to.equal(200);
    expect(started.body.data).to.include({ type: 'NMAP', state: 'QUEUED', progress: 0 });
    const id = started.body.data.id as string;

    const done = await waitFor(
      () => scanState(id),
      (scan) => scan.state === 'SUCCEEDED' || scan.state === 'FAILED',
      'the scan to finish',
    );
    expect(done.state, JSON.stringify(done.conditions)).to.equal('SUCCEEDED');
    expect(done.progress).to.equal(100);
    expect(done.resolved_targets).to.deep.equal([{ target_id: done.requested_targets[0].target_id, target: '127.0.0.1', addresses: ['127.0.0.1'] }]);
    // scan.created QUEUED, then scan.updated RUNNING (once more per progress step), then SUCCEEDED.
    const seen = statesSeen(id);
    expect(seen[0]).to.equal('QUEUED');
    expect(seen[1]).to.equal('RUNNING');
    expect(seen.at(-1)).to.equal('SUCCEEDED');
    expect(seen.slice(1, -1).every((state) => state === 'RUNNING')).to.equal(true);

    // The scanner's file, then the scan's PDF (test/e2e/scan-pdf.test.ts).
    expect(done.results.map((result: { content_type: string }) => result.content_type)).to.deep.equal(['application/xml', 'application/pdf']);
    const file = await service.get(`/v1/results/${done.results[0].result_id}`);
    expect(file.status).to.equal(200);
    expect(file.headers.get('content-type')).to.match(/application\/xml/);
    expect(file.text).to.match(/<nmaprun/);
    expect(file.text).to.include(`portid="${listener.port}"><state state="open"`);
  });

  it('runs an NMAP_UDP scan of a UDP listener', async function () {
    if (!isRoot) this.skip(); // nmap refuses UDP scans without root; CI runs as root
    const udp = await udpEchoListener();
    try {
      const started = await service.post('/v1/scans', { type: 'NMAP_UDP', targets: ['127.0.0.1'] });
      const done = await waitFor(
        () => scanState(started.body.data.id),
        (scan) => ['SUCCEEDED', 'FAILED'].includes(scan.state),
        'the UDP scan to finish',
      );
      expect(done.state, JSON.stringify(done.conditions)).to.equal('SUCCEEDED');
      const file = await service.get(`/v1/results/${done.results[0].result_id}`);
      expect(file.text).to.include(`protocol="udp" portid="${udp.port}"><state state="open"`);
    } finally {
      await udp.close();
    }
  });

  it('stops a RUNNING scan: STOPPING, then STOPPED once nmap is gone', async () => {
    listener = await tcpListener({ silent: true });
    const id = (await service.post('/v1/scans', { type: 'NMAP', targets: ['127.0.0.1'] })).body.data.id as string;
    await waitFor(
      () => scanState(id),
      (scan) => scan.state === 'RUNNING',
      'the scan to run',
    );
    expect(nmapProcessesFor(id)).to.have.length(1);
    const stopping = await service.post(`/v1/scans/${id}/stop`);
    expect(stopping.status).to.equal(200);
    expect(stopping.body.data.state).to.equal('STOPPING');
    const stopped = await waitFor(
      () => scanState(id),
      (scan) => scan.state === 'STOPPED',
      'the scan to stop',
    );
    expect(stopped.results).to.deep.equal([]);
    expect(nmapProcessesFor(id)).to.deep.equal([]);
    expect((await service.post(`/v1/scans/${id}/stop`)).status).to.equal(400);
    expect((await service.delete(`/v1/scans/${id}`)).status).to.equal(200);
  });

  it('after a restart, fails a scan whose scanner process was lost instead of leaving it RUNNING', async () => {
    const dir = tempDir();
    const first = await TestService.start({ env: LAB, dataDir: dir.path });
    listener = await tcpListener({ silent: true });
    try {
      const id = (await first.post('/v1/scans', { type: 'NMAP', targets: ['127.0.0.1'] })).body.data.id as string;
      await waitFor(
        async () => (await first.get(`/v1/scans/${id}`)).body.data,
        (scan) => scan.state === 'RUNNING',
        'the scan to run',
      );
      await first.stop();
      expect(nmapProcessesFor(id)).to.deep.equal([]);
      const second = await TestService.start({ env: LAB, dataDir: dir.path, accountName: 'after-restart' });
      try {
        const account = second.vigil.accounts.authenticate(first.apiKey).account;
        const after = await waitFor(
          async () => second.vigil.scans.get(account, id),
          (found) => found.state !== 'RUNNING',
          'the lost scan to be failed',
        );
        expect(after.state).to.equal('FAILED');
        expect(after.conditions.at(-1)).to.include({ reason: 'WorkloadLost' });
      } finally {
        await second.stop();
      }
    } finally {
      dir.remove();
    }
  });
});
