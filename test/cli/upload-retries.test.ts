/**
 * The in-pod uploader keeps trying while Vigil is away (issues 13 and 27):
 * refused connections and 5xx answers are retried with capped backoff until
 * the Job's deadline (VIGIL_UPLOAD_DEADLINE) of (injected) time, a 4xx other
 * than 429 is final at once. Real HTTP listeners play Vigil going away and
 * coming back; in the last case the real service on the fake API server,
 * stopped for 45 minutes while its scan's Job finished.
 */
import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { runUploadResult, sendWithRetries, type RetryTime } from '../../src/cli/upload-result.js';
import { scanJobName, uploadTokenSecretName, type Job } from '../../src/runtime/kubernetes/job-manifest.js';
import { FakeKubeApiServer } from '../support/fake-kube-apiserver.js';
import { kubeConfig } from '../support/kubeconfig.js';
import { tempDir } from '../support/temp-dir.js';
import { TestService } from '../support/test-service.js';
import { waitFor } from '../support/wait.js';

const MINUTE = 60_000;

function fakeTime(start = 0, onSleep: (now: number) => Promise<void> = async () => undefined): RetryTime & { elapsed: () => number; attempts: number } {
  let now = start;
  const time = {
    attempts: 0,
    now: () => now,
    sleep: async (ms: number) => {
      now += ms;
      time.attempts += 1;
      await onSleep(now);
    },
    elapsed: () => now - start,
  };
  return time;
}

describe('vigil upload-result retries', () => {
  let server: Server;
  let url: string;
  let answers: number[];
  let received: number;
  /** Answers 503 while this says Vigil is away (a Service with no ready pod behind it). */
  let away: () => boolean;
  const dir = tempDir();
  const file = join(dir.path, 'nmap.xml');
  writeFileSync(file, '<nmaprun/>');

  beforeEach(async () => {
    answers = [];
    received = 0;
    away = () => false;
    server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        received += 1;
        response.writeHead(away() ? 503 : (answers.shift() ?? 204)).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/internal/v1/scans/s/results/nmap.xml`;
  });
  afterEach(() => new Promise<void>((resolve) => server.close(() => resolve())));
  after(() => dir.remove());

  it('keeps retrying through 45 minutes of 503s (longer than a node failure and volume re-attach) and then succeeds, the waits capped at 30 s', async () => {
    const time = fakeTime();
    away = () => time.elapsed() < 45 * MINUTE;
    const waits: number[] = [];
    const sleep = time.sleep;
    time.sleep = (ms) => (waits.push(ms), sleep(ms));
    const attempts = await sendWithRetries(url, 'token', file, 2 * 60 * MINUTE, time);
    expect(attempts).to.equal(received).and.to.be.greaterThan(90);
    expect(time.elapsed())
      .to.be.at.least(45 * MINUTE)
      .and.at.most(45 * MINUTE + 30_000);
    expect(Math.max(...waits)).to.be.at.most(30_000);
    expect(
      waits.slice(0, 3).every((wait, index) => wait >= 500 * 2 ** index && wait <= 1000 * 2 ** index),
      'exponential, with jitter',
    ).to.equal(true);
  });

  it('retries refused connections (Vigil not listening) and gives up only at the deadline, saying so', async () => {
    const closedUrl = url.replace(/:\d+\//, ':1/');
    const deadline = 2 * 60 * MINUTE;
    const time = fakeTime();
    let thrown: unknown;
    await sendWithRetries(closedUrl, 'token', file, deadline, time).catch((error: unknown) => (thrown = error));
    expect(String(thrown)).to.include('gave up at the deadline 1970-01-01T02:00:00.000Z');
    expect(time.elapsed())
      .to.be.greaterThan(deadline - 30_000)
      .and.at.most(deadline);
  });

  it('does not retry a refused token (401): the answer is final', async () => {
    answers = [401];
    const time = fakeTime();
    let thrown: unknown;
    await sendWithRetries(url, 'token', file, 2 * 60 * MINUTE, time).catch((error: unknown) => (thrown = error));
    expect(String(thrown)).to.include('401');
    expect(received).to.equal(1);
    expect(time.elapsed()).to.equal(0);
  });

  it('shares the deadline of VIGIL_UPLOAD_DEADLINE between the files, and without one retries for ten minutes (a run by hand)', async () => {
    const out = tempDir();
    try {
      for (const name of ['a.json', 'b.json']) writeFileSync(join(out.path, name), '{}');
      const closed = url.replace(/:\d+\/.*$/, ':1/');
      const env = { VIGIL_UPLOAD_TOKEN: 'token', VIGIL_RESULT_FILES: 'a.json,b.json' };
      const withDeadline = fakeTime(Date.parse('2026-11-28T10:00:00.000Z'));
      const failed = await runUploadResult(
        ['--scan', 's', '--url', closed, '--dir', out.path],
        { ...env, VIGIL_UPLOAD_DEADLINE: '2026-11-28T11:00:00.000Z' },
        withDeadline,
      ).catch((error: unknown) => error);
      expect(String(failed)).to.include('gave up at the deadline 2026-11-28T11:00:00.000Z');
      expect(withDeadline.elapsed())
        .to.be.greaterThan(60 * MINUTE - 30_000)
        .and.at.most(60 * MINUTE);
      const byHand = fakeTime();
      await runUploadResult(['--scan', 's', '--url', closed, '--dir', out.path], env, byHand).catch(() => undefined);
      expect(byHand.elapsed())
        .to.be.greaterThan(10 * MINUTE - 30_000)
        .and.at.most(10 * MINUTE);
    } finally {
      out.remove();
    }
  });
});

/** What the scanner Job's nmap wrote: one open port on the scanned host. */
const NMAP_REPORT =
  '<?xml version="1.0"?><nmaprun scanner="nmap"><host><status state="up"/><address addr="127.0.0.1" addrtype="ipv4"/>' +
  '<ports><port protocol="tcp" portid="22"><state state="open"/><service name="ssh"/></port></ports></host></nmaprun>';

describe('a scan whose Job finishes while Vigil is down for 45 minutes (issue 27)', function () {
  this.timeout(60_000);
  let api: FakeKubeApiServer;
  let service: TestService | undefined;
  const data = tempDir();
  const output = tempDir();

  afterEach(async () => {
    await service?.stop();
    await api.stop();
    data.remove();
    output.remove();
  });

  it("succeeds with its risks once Vigil is back: the uploader retried with the Job's own settings, the Job waited, and is deleted once collected", async () => {
    api = new FakeKubeApiServer();
    await api.start();
    const env = { VIGIL_RUNTIME: 'kubernetes', VIGIL_ALLOW_TARGETS: '127.0.0.0/8', LOG_LEVEL: 'error' };
    service = await TestService.start({ env, kubeConfig: kubeConfig(api), dataDir: data.path });
    const port = new URL(service.baseUrl).port;
    const key = service.apiKey;
    const scan = (await service.post('/v1/scans', { type: 'NMAP', targets: ['127.0.0.1'] })).body.data as { id: string };
    const namespace = 'vigil-test-account';
    const jobRef = { apiVersion: 'batch/v1', kind: 'Job', namespace, name: scanJobName(`scan-${scan.id}`) };
    const job = (await waitFor(
      async () => api.getObject(jobRef),
      (found) => found !== undefined,
      'the scanner Job',
    )) as unknown as Job;
    expect(job.spec).not.to.have.property('ttlSecondsAfterFinished');
    const upload = job.spec.template.spec.containers.find((container) => container.name === 'upload')!;
    const secret = api.getObject({ apiVersion: 'v1', kind: 'Secret', namespace, name: uploadTokenSecretName(`scan-${scan.id}`) }) as unknown as {
      stringData: { token: string };
    };
    // The upload container's environment, as the pod would have it (the token from its Secret).
    const podEnv = Object.fromEntries(upload.env!.map((variable) => [variable.name, variable.value ?? secret.stringData.token]));
    mkdirSync(join(output.path, 'out'));
    writeFileSync(join(output.path, 'out', 'nmap.xml'), NMAP_REPORT);
    const args = upload.args!.map((arg) => (arg === '/vigil/output' ? join(output.path, 'out') : arg.startsWith('http://') ? `http://127.0.0.1:${port}` : arg));

    // Vigil goes down; the scanner finishes and its uploader meets refused connections for 45 minutes, then Vigil is back on its port.
    await service.stop();
    service = undefined;
    const time = fakeTime(Date.now(), async (now) => {
      if (service === undefined && now - start >= 45 * MINUTE)
        service = await TestService.start({ env: { ...env, VIGIL_PORT: port }, kubeConfig: kubeConfig(api), dataDir: data.path, accountName: 'after-restart' });
    });
    const start = time.now();
    expect(await runUploadResult(args.slice(1), podEnv, time)).to.equal(0);
    expect(time.elapsed()).to.be.at.least(45 * MINUTE);
    expect(time.attempts, 'retried all along').to.be.greaterThan(45 * 2);

    api.setObject({ ...api.getObject(jobRef)!, status: { conditions: [{ type: 'Complete', status: 'True' }] } } as never);
    const done = await waitFor(
      async () => (await service!.get(`/v1/scans/${scan.id}`, { key })).body.data,
      (found) => found.state === 'SUCCEEDED',
      'the Scan to succeed',
    );
    expect(done.risks.new_open).to.have.length(1);
    expect((await service!.get(`/v1/results/${done.results[0].result_id}`, { key })).text).to.equal(NMAP_REPORT);
    await waitFor(
      async () => api.getObject(jobRef),
      (found) => found === undefined,
      'the collected Job deleted',
    );
    expect(api.deletions.filter((deletion) => deletion.kind === 'Job').map((deletion) => [deletion.name, deletion.propagationPolicy])).to.deep.equal([
      [jobRef.name, 'Background'],
    ]);
    expect(
      api.getObject({ apiVersion: 'v1', kind: 'Secret', namespace, name: uploadTokenSecretName(`scan-${scan.id}`) }),
      'the Secret, gone with its Job',
    ).to.equal(undefined);
    expect(
      api.requests.filter((request) => request.method === 'DELETE' && request.path.includes('/secrets')),
      'no deletion of its own',
    ).to.deep.equal([]);
  });
});
