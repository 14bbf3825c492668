/**
 * The embedded runtime on a machine without the scanner's program: the scan
 * runs in the pinned image through docker (a stand-in that checks the
 * confinement and runs real nmap in place of the image), says exactly how to
 * get the scanner when there is no engine either, and stops its container.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TestService } from '../support/test-service.js';
import { tcpListener, type TcpListener } from '../support/listeners.js';
import { standInDocker, type StandInDocker } from '../support/stand-in-docker.js';
import { tempDir } from '../support/temp-dir.js';
import { waitFor } from '../support/wait.js';

const NMAP = execFileSync('sh', ['-c', 'command -v nmap'], { encoding: 'utf8' }).trim();
const isRoot = process.getuid?.() === 0;

describe('embedded runtime: scanners in containers', function () {
  this.timeout(120_000);
  let dir: ReturnType<typeof tempDir>;
  let docker: StandInDocker;
  let service: TestService | undefined;
  let listener: TcpListener | undefined;

  beforeEach(() => {
    dir = tempDir();
    docker = standInDocker(dir.path, { 'instrumentisto/nmap:7.95': NMAP });
  });
  afterEach(async () => {
    await service?.stop();
    await listener?.close();
    service = undefined;
    listener = undefined;
    dir.remove();
  });

  const start = async (searchPath: string, env: Record<string, string> = {}) => {
    service = await TestService.start({ env: { VIGIL_ALLOW_TARGETS: '127.0.0.0/8', PATH: searchPath, ...env } });
    return service;
  };
  const finished = (id: string) =>
    waitFor(
      async () => (await service!.get(`/v1/scans/${id}`)).body.data,
      (scan) => ['SUCCEEDED', 'FAILED', 'STOPPED'].includes(scan.state),
      'the scan to end',
    );

  it('runs NMAP in its pinned image when nmap is not on the search path, and the findings arrive', async () => {
    listener = await tcpListener();
    await start(docker.binDir);
    const started = await service!.post('/v1/scans', { type: 'NMAP', targets: ['127.0.0.1'] });
    const done = await finished(started.body.data.id);
    expect(done.state, JSON.stringify(done.conditions)).to.equal('SUCCEEDED');
    const file = await service!.get(`/v1/results/${done.results[0].result_id}`);
    expect(file.text).to.include(`portid="${listener.port}"><state state="open"`);

    const [run] = docker.calls();
    expect(run!.slice(0, 4)).to.deep.equal(['run', '--rm', '--name', `vigil-scan-${done.id}`]);
    const user = run![run!.indexOf('--user') + 1];
    expect(user).to.equal(isRoot ? '65532:65532' : `${process.getuid!()}:${process.getgid!()}`);
    expect(run).to.include('instrumentisto/nmap:7.95');
  });

  it('fails with ScannerNotInstalled naming the install command, docker or podman and Kubernetes when neither is there', async () => {
    const empty = join(dir.path, 'empty-bin');
    mkdirSync(empty);
    await start(empty);
    const started = await service!.post('/v1/scans', { type: 'NMAP', targets: ['127.0.0.1'] });
    const done = await finished(started.body.data.id);
    expect(done.state).to.equal('FAILED');
    const failed = done.conditions.find((condition: { reason: string }) => condition.reason === 'ScannerNotInstalled');
    expect(failed.message).to.equal(
      'nmap is not installed on this machine; install it (apt-get install nmap), install docker or podman so that Vigil runs its image instrumentisto/nmap:7.95, or run Vigil on Kubernetes (VIGIL_RUNTIME=kubernetes)',
    );
  });

  it('VIGIL_EMBEDDED_SCANNERS=local keeps to local programs even with docker present', async () => {
    await start(docker.binDir, { VIGIL_EMBEDDED_SCANNERS: 'local' });
    const started = await service!.post('/v1/scans', { type: 'NMAP', targets: ['127.0.0.1'] });
    const done = await finished(started.body.data.id);
    expect(done.state).to.equal('FAILED');
    expect(done.conditions.map((condition: { reason: string }) => condition.reason)).to.include('ScannerNotInstalled');
    expect(docker.calls()).to.deep.equal([]);
  });

  it('says the engine failed, with its words, when docker cannot run the image', async () => {
    // Refused by the stand-in as docker refuses: exit code 125 with a message on stderr.
    const broken = standInDocker(join(dir.path, 'broken'), {});
    await start(broken.binDir);
    const started = await service!.post('/v1/scans', { type: 'NMAP', targets: ['127.0.0.1'] });
    const done = await finished(started.body.data.id);
    expect(done.state).to.equal('FAILED');
    const failed = done.conditions.find((condition: { reason: string }) => condition.reason === 'ContainerEngineFailed');
    expect(failed?.message, JSON.stringify(done.conditions)).to.match(
      /could not run the image instrumentisto\/nmap:7\.95: docker: no pinned image among the arguments$/,
    );
  });

  it('says how to start the engine, or do without it, when docker has no daemon to talk to', async () => {
    const bin = join(dir.path, 'no-daemon');
    mkdirSync(bin, { recursive: true });
    // What the docker client prints and exits with when dockerd is not running.
    writeFileSync(
      join(bin, 'docker'),
      `#!/bin/sh\necho 'docker: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?.' >&2\nexit 125\n`,
    );
    chmodSync(join(bin, 'docker'), 0o755);
    await start(bin);
    const started = await service!.post('/v1/scans', { type: 'NMAP', targets: ['127.0.0.1'] });
    const done = await finished(started.body.data.id);
    const failed = done.conditions.find((condition: { reason: string }) => condition.reason === 'ContainerEngineFailed');
    expect(failed?.message, JSON.stringify(done.conditions)).to.include(
      'docker is installed but its daemon is not reachable: start the docker daemon (sudo systemctl start docker), install the scanner locally (apt-get install nmap) and set VIGIL_EMBEDDED_SCANNERS=local, or run Vigil on Kubernetes (VIGIL_RUNTIME=kubernetes)',
    );
  });

  it('stopping a scan removes its container', async () => {
    docker.hold(true);
    await start(docker.binDir);
    const started = await service!.post('/v1/scans', { type: 'NMAP', targets: ['127.0.0.1'] });
    const id = started.body.data.id as string;
    await waitFor(
      async () => docker.calls().length,
      (count) => count > 0,
      'docker run',
    );
    await waitFor(
      async () => (await service!.get(`/v1/scans/${id}`)).body.data.state,
      (state) => state === 'RUNNING',
      'RUNNING',
    );
    expect((await service!.post(`/v1/scans/${id}/stop`, {})).status).to.equal(200);
    const done = await finished(id);
    expect(done.state).to.equal('STOPPED');
    expect(docker.calls().map((call) => call.slice(0, 3))).to.deep.include(['rm', '--force', `vigil-scan-${id}`]);
  });
});
