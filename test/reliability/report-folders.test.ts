/**
 * Issue 26: a report's database row is written after its snapshot and its
 * rendering, so `kill -9` during a report leaves a folder (and a '.partial'
 * file) that no row names. Start-up removes such folders, and temporary files
 * in the folders of recorded reports, and keeps every recorded report.
 */
import { expect } from 'chai';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../support/temp-dir.js';
import { TestService } from '../support/test-service.js';

describe('reliability: report folders a crash left at start-up', function () {
  this.timeout(60_000);
  let dir: ReturnType<typeof tempDir>;

  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => dir.remove());

  it('removes a report folder without a row and temporary files, and keeps a recorded report whole', async () => {
    let service = await TestService.start({ dataDir: dir.path });
    const created = await service.post('/v1/reports', { report_format: 'HTML' });
    expect(created.status).to.equal(200);
    const id = created.body.data.id as string;
    const firstKey = service.apiKey;
    await service.stop();

    const reports = join(dir.path, 'reports');
    // As kill -9 during a PDF leaves it: the snapshot, the rendering under its temporary name, no row.
    mkdirSync(join(reports, 'cut-short'));
    writeFileSync(join(reports, 'cut-short', 'snapshot.json.gz'), 'x');
    writeFileSync(join(reports, 'cut-short', 'report.pdf.0a1b2c3d4e5f.partial'), 'x');
    // A recorded report whose second format was being rendered.
    writeFileSync(join(reports, id, 'report.pdf.0a1b2c3d4e5f.partial'), 'x');

    service = await TestService.start({ dataDir: dir.path, accountName: 'after-restart' });
    try {
      expect(readdirSync(reports)).to.deep.equal([id]);
      expect(readdirSync(join(reports, id)).sort()).to.deep.equal(['report.html', 'snapshot.json.gz']);
      const download = await service.request('GET', `/v1/reports/${id}`, { key: firstKey });
      expect(download.status).to.equal(200);
      expect(download.text).to.include('<html');
    } finally {
      await service.stop();
    }
  });
});
