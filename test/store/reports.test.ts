/**
 * Reports on a real SQLite database with every migration applied
 * (migration 0012): the reports table, the scope a report reads, and the
 * bounds: risks beyond the cap are left out with a note on the report, too
 * many targets is a 400.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadSettings } from '../../src/config/settings.js';
import { InvalidRequestError } from '../../src/domain/errors.js';
import { ReportsService } from '../../src/app/reports-service.js';
import { composeCore, type Core } from '../../src/main/composition-root.js';
import { renderCsvReport } from '../../src/reports/csv-report.js';
import { renderHtmlReport } from '../../src/reports/html-report.js';
import { renderPdfReport } from '../../src/reports/pdf/pdf-report.js';
import { FileSystemReportFiles } from '../../src/store/report-files.js';
import { SqliteReportRepository } from '../../src/store/reports-repository.js';
import { seedRisks } from '../support/report-data.js';
import { tempDir } from '../support/temp-dir.js';

describe('store: reports (migration 0012)', () => {
  let dir: ReturnType<typeof tempDir>;
  let core: Core;

  beforeEach(() => {
    dir = tempDir();
    core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path, LOG_LEVEL: 'silent', VIGIL_ALLOW_TARGETS: '127.0.0.0/8' }));
  });
  afterEach(() => {
    core.db.close();
    dir.remove();
  });

  it('creates the reports table, whose rows go with their account', () => {
    const { account } = core.accounts.createAccount({ name: 'gone' });
    const repository = new SqliteReportRepository(core.db);
    repository.insert({ id: 'r1', accountId: account.id, format: 'PDF', filters: { targets_filter: {}, risks_filter: {} }, riskCount: 0, matchedRisks: 0, targetCount: 0, createdAt: '2026-01-01T00:00:00.000Z' });
    expect(repository.find(account.id, 'r1')?.format).to.equal('PDF');
    expect(repository.find('another-account', 'r1')).to.equal(undefined);
    expect(() => core.db.prepare("INSERT INTO reports (id, account_id, format, filters, risk_count, matched_risks, target_count, created_at) VALUES ('r2', ?, 'DOCX', '{}', 0, 0, 0, 'x')").run(account.id)).to.throw(/CHECK/);
    core.db.prepare('DELETE FROM accounts WHERE id = ?').run(account.id);
    expect(core.db.prepare('SELECT COUNT(*) AS n FROM reports').get()).to.deep.equal({ n: 0 });
  });

  function smallService(maxRisks: number, maxTargets: number): ReportsService {
    const renderers = { PDF: renderPdfReport, HTML: renderHtmlReport, CSV: renderCsvReport };
    return new ReportsService(new SqliteReportRepository(core.db), new FileSystemReportFiles(join(dir.path, 'reports')), renderers, { now: () => new Date('2026-11-25T10:00:00Z') }, { maxRisks, maxTargets });
  }

  it('keeps the most severe risks beyond the cap and says on the report how many matched', async () => {
    const { account } = core.accounts.createAccount({ name: 'capped', features: ['csv_export'] });
    const one = core.targets.create(account, { target: '127.0.0.7' }, false);
    const two = core.targets.create(account, { target: '127.0.0.8' }, false);
    const risks = seedRisks(core.db, [
      { accountId: account.id, targetId: one.id, title: 'info', threatLevel: 'INFO' },
      { accountId: account.id, targetId: two.id, title: 'critical', threatLevel: 'CRITICAL' },
      { accountId: account.id, targetId: one.id, title: 'low', threatLevel: 'LOW' },
      { accountId: account.id, targetId: two.id, title: 'high', threatLevel: 'HIGH' },
      { accountId: account.id, targetId: one.id, title: 'medium', threatLevel: 'MEDIUM' },
    ]);
    const service = smallService(3, 10);
    const id = await service.create(account, { report_format: 'HTML' });
    expect(service.get(account, id)).to.include({ riskCount: 3, matchedRisks: 5, targetCount: 2 });
    const page = readFileSync(join(dir.path, 'reports', id, 'report.html'), 'utf8');
    expect(page).to.include('5 risks matched the filters; this report holds the 3 most severe.');
    const csv = await service.download(account, id, { format: 'CSV' });
    const text = await new Response(csv.content as unknown as ReadableStream).text();
    expect(text).to.include(risks[1]!.id).and.include(risks[3]!.id).and.include(risks[4]!.id);
    expect(text).to.not.include(risks[0]!.id);
    expect(text).to.not.include(risks[2]!.id);
  });

  it('refuses a report over more targets than the limit', async () => {
    const { account } = core.accounts.createAccount({ name: 'wide' });
    for (const address of ['127.0.0.7', '127.0.0.8', '127.0.0.9']) core.targets.create(account, { target: address }, false);
    const service = smallService(10, 2);
    let refused: unknown;
    try {
      await service.create(account, { report_format: 'PDF' });
    } catch (error) {
      refused = error;
    }
    expect(refused).to.be.instanceOf(InvalidRequestError);
    expect((refused as Error).message).to.match(/more than 2 targets; narrow targets_filter/);
    expect(await service.create(account, { report_format: 'PDF', targets_filter: { target_ids: [] }, risks_filter: {} }).catch(() => 'refused')).to.equal('refused');
  });
});
