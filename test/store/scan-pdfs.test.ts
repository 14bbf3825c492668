/**
 * ScanPdfs on a real store and data directory (issue 26): a rendering that
 * fails leaves no file under the PDF's name, no temporary file, and the
 * mark, so it is made again; one that succeeds sets the row's size and hash
 * and drops the mark; a scan deleted while its PDF is made leaves no file.
 */
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { ScanPdfs } from '../../src/app/scan-pdfs.js';
import type { ScanPdfRenderer } from '../../src/app/ports.js';
import { loadSettings } from '../../src/config/settings.js';
import type { Account } from '../../src/domain/accounts/account.js';
import type { Scan } from '../../src/domain/scans/scan.js';
import { composeCore } from '../../src/main/composition-root.js';
import { renderScanPdf } from '../../src/reports/pdf/scan-pdf.js';
import type { ScanPdfModel } from '../../src/domain/reports/scan-pdf-model.js';
import { SqliteScanPdfRepository } from '../../src/store/scan-pdfs-repository.js';
import { seedRisks } from '../support/report-data.js';
import { tempDir } from '../support/temp-dir.js';

describe('the PDF of a SUCCEEDED scan on the store and the data directory', function () {
  this.timeout(30_000);
  let dir: ReturnType<typeof tempDir>;
  let core: ReturnType<typeof composeCore>;
  let account: Account;

  beforeEach(() => {
    dir = tempDir();
    core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path }));
    account = core.accounts.createAccount({ name: 'acme' }).account;
  });
  afterEach(() => {
    core.db.close();
    dir.remove();
  });

  function pdfsWith(render: ScanPdfRenderer): ScanPdfs {
    return new ScanPdfs({
      repository: new SqliteScanPdfRepository(core.db),
      scans: core.scanRepository,
      accounts: core.accountRepository,
      resultFiles: core.resultFiles,
      render,
      clock: { now: () => new Date() },
    });
  }

  /** A scan recorded SUCCEEDED with its PDF's row, as the controller records it. */
  function succeededScan(pdfs: ScanPdfs): { scan: Scan; resultId: string } {
    const queued = core.scans.start(account, { type: 'NMAP', targets: ['93.184.216.34'] })[0]!;
    const now = new Date().toISOString();
    const pdf = pdfs.resultFor(queued, now);
    const scan: Scan = { ...queued, state: 'SUCCEEDED', progress: 100, finishedAt: now, results: [{ resultId: pdf.id, contentType: pdf.contentType }] };
    expect(core.scanRepository.saveWithResults(scan, [pdf], [], 'QUEUED')).to.equal(true);
    return { scan, resultId: pdf.id };
  }

  const folderOf = (scan: Scan) => join(dir.path, 'results', scan.id);
  const filesIn = (scan: Scan) => (existsSync(folderOf(scan)) ? readdirSync(folderOf(scan)) : []);

  it('a rendering that fails halfway leaves neither the PDF nor a temporary file, and keeps the mark; the next one makes it whole', async () => {
    const failing = pdfsWith(async (_model, out: Writable) => {
      out.write(Buffer.from('%PDF-1.3 the first half'));
      throw new Error('the renderer failed');
    });
    const { scan, resultId } = succeededScan(failing);
    let thrown: unknown;
    await failing.ensureRendered({ resultId, scanId: scan.id, accountId: account.id }).catch((error: unknown) => (thrown = error));
    expect((thrown as Error).message).to.equal('the renderer failed');
    expect(filesIn(scan)).to.deep.equal([]);
    expect(failing.isPending(resultId)).to.equal(true);

    const working = pdfsWith(renderScanPdf);
    await working.ensureRendered({ resultId, scanId: scan.id, accountId: account.id });
    expect(filesIn(scan)).to.deep.equal(['scan-report.pdf']);
    expect(working.isPending(resultId)).to.equal(false);
    const bytes = readFileSync(join(folderOf(scan), 'scan-report.pdf'));
    const row = core.scanRepository.findResult(account.id, resultId)!;
    expect(row).to.include({
      fileName: 'scan-report.pdf',
      contentType: 'application/pdf',
      size: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    });
    expect(bytes.subarray(0, 5).toString('latin1')).to.equal('%PDF-');
  });

  it('renders once for a download and a start-up that ask at the same time, and not again once made', async () => {
    let renderings = 0;
    const pdfs = pdfsWith(async (model, out) => {
      renderings++;
      await renderScanPdf(model, out);
    });
    const { scan, resultId } = succeededScan(pdfs);
    pdfs.renderPending();
    await pdfs.ensureRendered({ resultId, scanId: scan.id, accountId: account.id });
    await pdfs.ensureRendered({ resultId, scanId: scan.id, accountId: account.id });
    expect(renderings).to.equal(1);
  });

  it('picks the most severe of a list longer than one read (5,000 entries a turn), wherever they are in it', async () => {
    let model: ScanPdfModel | undefined;
    const pdfs = new ScanPdfs({
      repository: new SqliteScanPdfRepository(core.db),
      scans: core.scanRepository,
      accounts: core.accountRepository,
      resultFiles: core.resultFiles,
      render: async (made, out) => {
        model = made;
        out.end(Buffer.from('%PDF-'));
      },
      clock: { now: () => new Date() },
      maxRisks: 3,
    });
    const queued = core.scans.start(account, { type: 'NMAP', targets: ['93.184.216.34'] })[0]!;
    const targetId = queued.requestedTargets[0]!.targetId;
    const seeds = Array.from({ length: 12_005 }, (_, index) => ({
      accountId: account.id,
      targetId,
      threatLevel: [2, 7_003, 12_003].includes(index) ? ('CRITICAL' as const) : ('INFO' as const),
    }));
    const ids = seedRisks(core.db, seeds).map((risk) => risk.id);
    const now = new Date().toISOString();
    const pdf = pdfs.resultFor(queued, now);
    const scan: Scan = {
      ...queued,
      state: 'SUCCEEDED',
      progress: 100,
      finishedAt: now,
      results: [{ resultId: pdf.id, contentType: pdf.contentType }],
      risks: { newOpen: ids, stillOpen: [], closed: [] },
    };
    expect(core.scanRepository.saveWithResults(scan, [pdf], [], 'QUEUED')).to.equal(true);
    await pdfs.ensureRendered({ resultId: pdf.id, scanId: scan.id, accountId: account.id });
    expect(model!.snapshot.counts).to.deep.equal({ newOpen: 12_005, stillOpen: 0, closed: 0 });
    // The three CRITICAL ones, one in each read.
    expect(model!.snapshot.risks.newOpen.map((risk) => risk.id)).to.have.members([ids[2], ids[7_003], ids[12_003]]);
  });

  for (const [when, deleteAt] of [
    ['before its first byte is written', 'start'],
    ['while its file is being written (the deletion removes the folder under it)', 'midway'],
  ] as const) {
    it(`a scan deleted ${when} leaves no file behind and reports no failure`, async () => {
      const pdfs = pdfsWith(async (model, out) => {
        if (deleteAt === 'midway') {
          out.write(Buffer.from('%PDF-1.3 first piece'));
          await new Promise((resolve) => setImmediate(resolve));
        }
        await core.scans.delete(account, model.snapshot.scan.id);
        // The deletion's removal of the folder runs in the thread pool: let it finish under the open file.
        if (deleteAt === 'midway') await new Promise((resolve) => setTimeout(resolve, 50));
        await renderScanPdf(model, out);
      });
      const { scan, resultId } = succeededScan(pdfs);
      await pdfs.ensureRendered({ resultId, scanId: scan.id, accountId: account.id });
      expect(existsSync(folderOf(scan))).to.equal(false);
      expect(core.db.prepare('SELECT COUNT(*) AS n FROM pending_result_files').get()).to.deep.equal({ n: 0 });
    });
  }
});
