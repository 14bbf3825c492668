import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TestService } from '../support/test-service.js';
import { tempDir } from '../support/temp-dir.js';
import { outputBytes } from '../support/workload-output.js';
import { probeUntil } from '../support/wait.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('scanner result uploads (internal endpoint and vigil upload-result)', () => {
  let service: TestService;
  let scanId: string;
  let token: string;

  beforeEach(async () => {
    service = await TestService.start({ env: { VIGIL_RESULT_FILE_MAX_MB: '1' } });
    // A scan that never runs (the account has no scans left), so nothing else touches its files.
    const capped = service.createAccount('capped', { monthlyScanLimit: 0 });
    scanId = (await service.post('/v1/scans', { type: 'NMAP', targets: ['example.com'] }, { key: capped.apiKey })).body.data.id;
    token = service.vigil.uploads.issueToken(scanId);
  });
  afterEach(async () => {
    await service.stop();
  });

  const put = (path: string, body: string | Uint8Array, auth?: string) =>
    fetch(`${service.baseUrl}${path}`, { method: 'PUT', body, headers: auth === undefined ? {} : { Authorization: `Bearer ${auth}` } });

  it('stores a file sent with the scan token and hands it back as a workload output', async () => {
    const response = await put(`/internal/v1/scans/${scanId}/results/nmap.xml`, '<nmaprun/>', token);
    expect(response.status).to.equal(200);
    expect(((await response.json()) as { data: object }).data).to.include({ scan_id: scanId, file: 'nmap.xml', size: 10 });
    const staged = await service.vigil.uploads.staged(scanId, [{ file: 'nmap.xml', contentType: 'application/xml' }]);
    expect('outputs' in staged && (await outputBytes(staged.outputs[0]!)).toString()).to.equal('<nmaprun/>');
  });

  it('reports the first expected file that was never uploaded', async () => {
    expect(await service.vigil.uploads.staged(scanId, [{ file: 'nmap.xml', contentType: 'application/xml' }])).to.deep.equal({ missing: 'nmap.xml' });
  });

  it("refuses a missing, wrong or other scan's token with 401", async () => {
    const otherCapped = service.createAccount('other', { monthlyScanLimit: 0 });
    const otherScan = (await service.post('/v1/scans', { type: 'NMAP', targets: ['example.org'] }, { key: otherCapped.apiKey })).body.data.id;
    const otherToken = service.vigil.uploads.issueToken(otherScan);
    for (const auth of [undefined, 'wrong', otherToken]) {
      const response = await put(`/internal/v1/scans/${scanId}/results/nmap.xml`, 'x', auth);
      expect(response.status, String(auth)).to.equal(401);
    }
    expect(await service.vigil.uploads.staged(scanId, [{ file: 'nmap.xml', contentType: 'x' }])).to.deep.equal({ missing: 'nmap.xml' });
  });

  it('refuses file names that could leave the scan folder or hide', async () => {
    for (const name of ['..', '.hidden', '%2e%2e%2fetc', 'a%2Fb']) {
      const response = await put(`/internal/v1/scans/${scanId}/results/${name}`, 'x', token);
      expect([400, 404], name).to.include(response.status);
    }
  });

  it('refuses a file over the size cap with 400 and keeps nothing of it', async () => {
    const response = await put(`/internal/v1/scans/${scanId}/results/big.xml`, new Uint8Array(1024 * 1024 + 1), token);
    expect(response.status).to.equal(400);
    expect(((await response.json()) as { error: string }).error).to.match(/larger than 1 MiB/);
    expect(await service.vigil.uploads.staged(scanId, [{ file: 'big.xml', contentType: 'x' }])).to.deep.equal({ missing: 'big.xml' });
  });

  const uploadFolder = () => join(service.settings.dataDir, 'uploads', scanId);
  const filesIn = (folder: string) => (existsSync(folder) ? readdirSync(folder).sort() : []);

  it('appends the file to a temporary file as it arrives, and a client that goes away mid-upload leaves only the files uploaded before', async function () {
    this.timeout(60_000);
    expect((await put(`/internal/v1/scans/${scanId}/results/nmap.xml`, '<nmaprun/>', token)).status).to.equal(200);
    const req = request(`${service.baseUrl}/internal/v1/scans/${scanId}/results/zap.json`, { method: 'PUT', headers: { Authorization: `Bearer ${token}` } });
    req.on('error', () => {});
    for (let index = 0; index < 4; index++) req.write(Buffer.alloc(128 * 1024, 0x20));
    // The 512 KiB sent are on disk under a temporary name while the request is still open.
    const partial = await probeUntil(() => {
      const name = filesIn(uploadFolder()).find((file) => /^zap\.json\.[0-9a-f]{12}\.partial$/.test(file));
      return name !== undefined && statSync(join(uploadFolder(), name)).size >= 512 * 1024 ? name : undefined;
    });
    expect(partial, 'the temporary file holds what was sent').to.not.equal(undefined);
    req.destroy();
    expect(await probeUntil(() => (filesIn(uploadFolder()).length === 1 ? true : undefined)), 'the temporary file is removed').to.equal(true);
    expect(filesIn(uploadFolder())).to.deep.equal(['nmap.xml']);
    const staged = await service.vigil.uploads.staged(scanId, [{ file: 'nmap.xml', contentType: 'application/xml' }]);
    expect('outputs' in staged && (await outputBytes(staged.outputs[0]!)).toString()).to.equal('<nmaprun/>');
  });

  it('leaves no folder behind when the only upload of the scan is refused', async () => {
    const response = await put(`/internal/v1/scans/${scanId}/results/big.xml`, new Uint8Array(1024 * 1024 + 1), token);
    expect(response.status).to.equal(400);
    expect(existsSync(uploadFolder())).to.equal(false);
  });

  it('replaces a file uploaded again (a retried upload) whole, with one file under its name', async () => {
    expect((await put(`/internal/v1/scans/${scanId}/results/nmap.xml`, '<nmaprun>first, longer</nmaprun>', token)).status).to.equal(200);
    const again = await put(`/internal/v1/scans/${scanId}/results/nmap.xml`, '<nmaprun/>', token);
    expect(again.status).to.equal(200);
    expect(((await again.json()) as { data: object }).data).to.include({ size: 10 });
    expect(filesIn(uploadFolder())).to.deep.equal(['nmap.xml']);
    const staged = await service.vigil.uploads.staged(scanId, [{ file: 'nmap.xml', contentType: 'application/xml' }]);
    expect('outputs' in staged && (await outputBytes(staged.outputs[0]!)).toString()).to.equal('<nmaprun/>');
  });

  describe('vigil upload-result', function () {
    this.timeout(30_000);
    // Asynchronous: the service under test runs in this process and must keep answering.
    const run = async (args: string[], env: Record<string, string>) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'upload-result', ...args], { cwd: ROOT, env: { ...process.env, ...env } });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      child.stderr.on('data', (chunk) => (stderr += chunk));
      const [status] = (await once(child, 'close')) as [number];
      return { status, stdout, stderr };
    };

    it('uploads only the listed result files, not the inputs beside them', async () => {
      const dir = tempDir();
      try {
        mkdirSync(join(dir.path, 'out'));
        writeFileSync(join(dir.path, 'out', 'nmap.xml'), '<nmaprun>real</nmaprun>');
        writeFileSync(join(dir.path, 'out', 'login.side'), 'secret login recording');
        const result = await run(['--scan', scanId, '--url', service.baseUrl, '--dir', join(dir.path, 'out')], {
          VIGIL_UPLOAD_TOKEN: token,
          VIGIL_RESULT_FILES: 'nmap.xml',
        });
        expect(result.status, result.stderr).to.equal(0);
        expect(result.stdout).to.equal('uploaded nmap.xml\n');
        const staged = await service.vigil.uploads.staged(scanId, [{ file: 'nmap.xml', contentType: 'application/xml' }]);
        expect('outputs' in staged && (await outputBytes(staged.outputs[0]!)).toString()).to.equal('<nmaprun>real</nmaprun>');
        expect(await service.vigil.uploads.staged(scanId, [{ file: 'login.side', contentType: 'x' }])).to.deep.equal({ missing: 'login.side' });
      } finally {
        dir.remove();
      }
    });

    it('exits non-zero with one sentence when the token is refused, without retrying forever', async () => {
      const dir = tempDir();
      try {
        writeFileSync(join(dir.path, 'nmap.xml'), 'x');
        const result = await run(['--scan', scanId, '--url', service.baseUrl, '--dir', dir.path], {
          VIGIL_UPLOAD_TOKEN: 'wrong',
          VIGIL_RESULT_FILES: 'nmap.xml',
        });
        expect(result.status).to.equal(1);
        expect(result.stderr).to.match(/^vigil: the collector answered 401/);
      } finally {
        dir.remove();
      }
    });

    it('exits 2 naming what is missing', async () => {
      const noToken = await run(['--scan', scanId, '--url', service.baseUrl, '--dir', '/tmp'], { VIGIL_UPLOAD_TOKEN: '', VIGIL_RESULT_FILES: 'nmap.xml' });
      expect(noToken.status).to.equal(2);
      expect(noToken.stderr).to.match(/VIGIL_UPLOAD_TOKEN/);
      const noUrl = await run(['--scan', scanId, '--dir', '/tmp'], { VIGIL_UPLOAD_TOKEN: 't', VIGIL_RESULT_FILES: 'nmap.xml' });
      expect(noUrl.status).to.equal(2);
      expect(noUrl.stderr).to.match(/--url/);
    });
  });
});
