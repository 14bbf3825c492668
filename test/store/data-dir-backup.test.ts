/**
 * `vigil backup DIR` (issue 28) in a child process, while the real service in
 * this process imports results (scans, risks, result files in rows and on
 * disk) and renders reports; then an instance started on the copy passes
 * SQLite's integrity check and serves every object of the copy. Bad
 * arguments exit 2 with one sentence.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import BetterSqlite3 from 'better-sqlite3';
import { RESULT_IN_ROW_MAX_BYTES } from '../../src/domain/scans/result-file.js';
import { nmapReport } from '../support/nmap-report.js';
import { tempDir } from '../support/temp-dir.js';
import { TestService } from '../support/test-service.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

async function vigilBackup(args: string[], dataDir: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'backup', ...args], {
    cwd: ROOT,
    env: { ...process.env, VIGIL_DATA_DIR: dataDir },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const [status] = (await once(child, 'close')) as [number];
  return { status, stdout, stderr };
}

/** An nmap report of a few hosts, padded with a comment past the size a result keeps in its row when `large`. */
function nmapImport(round: number, large: boolean): Blob {
  const report = nmapReport(2 + (round % 3), 2);
  const padding = large ? `<!--${'x'.repeat(RESULT_IN_ROW_MAX_BYTES + 1024)}-->` : '';
  return new Blob([report.replace('</nmaprun>', `${padding}</nmaprun>`)]);
}

describe('vigil backup', function () {
  this.timeout(120_000);
  const data = tempDir();
  const backups = tempDir();
  let service: TestService | undefined;
  let restored: TestService | undefined;

  after(async () => {
    await service?.stop();
    await restored?.stop();
    data.remove();
    backups.remove();
  });

  it('copies the data directory while scans, uploads and reports are written, and an instance started on the copy serves every object in it', async () => {
    service = await TestService.start({ dataDir: data.path });
    const key = service.apiKey;
    const source = (await service.post('/v1/sources', { source_type: 'IMPORTED', name: 'lab' })).body.data.id as string;
    const importOne = async (round: number) => {
      const form = new FormData();
      form.append('source_id', source);
      form.append('scan_type', 'NMAP');
      form.append('file', nmapImport(round, round % 2 === 0), 'nmap.xml');
      const response = await service!.request('POST', '/v1/results', { formData: form });
      expect(response.status, response.text).to.equal(200);
    };
    const reportOne = async () => {
      const id = (await service!.post('/v1/reports', { report_format: 'HTML' })).body.data.id as string;
      expect((await fetch(`${service!.baseUrl}/v1/reports/${id}`, { headers: { 'X-SERVICE-API-KEY': key } })).status).to.equal(200);
    };
    for (let round = 0; round < 4; round++) await importOne(round);
    await reportOne();

    // Writes go on, two at a time, for as long as the backup runs.
    let backingUp = true;
    let written = 0;
    const writer = async (lane: number) => {
      for (let round = lane; backingUp; round += 2) {
        await (round % 5 === 0 ? reportOne() : importOne(round));
        written += 1;
      }
    };
    const writers = [writer(0), writer(1)];
    const target = join(backups.path, 'copy');
    const backup = await vigilBackup([target], data.path);
    backingUp = false;
    await Promise.all(writers);
    expect(backup.status, backup.stderr).to.equal(0);
    expect(JSON.parse(backup.stdout)).to.include({ backup: target });
    expect(written, 'writes happened while the backup ran').to.be.greaterThan(0);
    await service.stop();
    service = undefined;

    const check = new BetterSqlite3(join(target, 'vigil.db'), { readonly: true });
    expect(check.pragma('integrity_check')).to.deep.equal([{ integrity_check: 'ok' }]);
    check.close();

    restored = await TestService.start({ dataDir: target, accountName: 'after-restore' });
    const db = restored.vigil.db;
    const ids = (sql: string) => (db.prepare(sql).all() as Array<{ id: string }>).map((row) => row.id);
    const results = db.prepare('SELECT id, sha256, content IS NULL AS on_disk FROM scan_results').all() as Array<{
      id: string;
      sha256: string;
      on_disk: number;
    }>;
    expect(
      results.filter((result) => result.on_disk === 1),
      'result files on disk as well as in rows',
    ).to.not.be.empty;
    for (const result of results) {
      const response = await fetch(`${restored.baseUrl}/v1/results/${result.id}`, { headers: { 'X-SERVICE-API-KEY': key } });
      expect(response.status, `result ${result.id}`).to.equal(200);
      const body = Buffer.from(await response.arrayBuffer());
      // A scan's PDF still marked to be made when the copy was taken has no hash yet: the restored instance renders it.
      if (result.sha256 === '') expect(body.subarray(0, 5).toString(), `result ${result.id}`).to.equal('%PDF-');
      else expect(createHash('sha256').update(body).digest('hex')).to.equal(result.sha256);
    }
    for (const [path, sql] of [
      ['targets', 'SELECT id FROM targets'],
      ['scans', 'SELECT id FROM scans'],
      ['risks', 'SELECT id FROM risks'],
    ] as const) {
      const all = ids(sql);
      expect(all, path).to.not.be.empty;
      for (const id of all) expect((await restored.get(`/v1/${path}/${id}`, { key })).status, `${path}/${id}`).to.equal(200);
    }
    const reports = ids('SELECT id FROM reports');
    expect(reports).to.not.be.empty;
    for (const id of reports)
      expect((await fetch(`${restored.baseUrl}/v1/reports/${id}`, { headers: { 'X-SERVICE-API-KEY': key } })).status, `report ${id}`).to.equal(200);
  });

  for (const [what, args] of [
    ['a folder that is not empty', ['not-empty']],
    ['no folder', []],
    ['two folders', ['a', 'b']],
    ['a folder inside the data directory', ['inside']],
  ] as const) {
    it(`exits 2 with one sentence for ${what}`, async () => {
      const notEmpty = join(backups.path, 'not-empty');
      mkdirSync(notEmpty, { recursive: true });
      writeFileSync(join(notEmpty, 'keep.txt'), 'not mine');
      const resolved = args.map((arg) => (arg === 'inside' ? join(data.path, 'backup') : join(backups.path, arg)));
      const result = await vigilBackup(resolved, data.path);
      expect(result.status).to.equal(2);
      expect(result.stderr.trim().split('\n')).to.have.length(1);
      expect(result.stderr).to.match(/^vigil: /);
    });
  }

  it('exits 1 with one sentence when the data directory holds no database', async () => {
    const empty = tempDir();
    try {
      const result = await vigilBackup([join(backups.path, 'from-nothing')], empty.path);
      expect(result.status).to.equal(1);
      expect(result.stderr).to.match(/^vigil: there is no Vigil database at .*; set VIGIL_DATA_DIR/);
    } finally {
      empty.remove();
    }
  });
});
