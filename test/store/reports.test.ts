/**
 * Reports on a real SQLite database with every migration applied
 * (migration 0012): the reports table, the scope a report reads, and the
 * bounds: risks beyond the cap are left out with a note on the report, too
 * many targets is a 400.
 */
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { loadSettings } from '../../src/config/settings.js';
import { InvalidRequestError } from '../../src/domain/errors.js';
import { ReportsService } from '../../src/app/reports-service.js';
import { composeCore, type Core } from '../../src/main/composition-root.js';
import { renderCsvReport } from '../../src/reports/csv-report.js';
import { renderHtmlReport } from '../../src/reports/html-report.js';
import { renderPdfReport } from '../../src/reports/pdf/pdf-report.js';
import { FileSystemReportFiles, snapshotJson } from '../../src/store/report-files.js';
import { SqliteReportRepository } from '../../src/store/reports-repository.js';
import { seedRisks } from '../support/report-data.js';
import { reportSnapshot } from '../support/report-snapshot.js';
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
    repository.insert({
      id: 'r1',
      accountId: account.id,
      format: 'PDF',
      filters: { targets_filter: {}, risks_filter: {} },
      riskCount: 0,
      matchedRisks: 0,
      targetCount: 0,
      createdAt: '2026-01-01T00:00:00.000Z',
    });
    expect(repository.find(account.id, 'r1')?.format).to.equal('PDF');
    expect(repository.find('another-account', 'r1')).to.equal(undefined);
    expect(() =>
      core.db
        .prepare(
          "INSERT INTO reports (id, account_id, format, filters, risk_count, matched_risks, target_count, created_at) VALUES ('r2', ?, 'DOCX', '{}', 0, 0, 0, 'x')",
        )
        .run(account.id),
    ).to.throw(/CHECK/);
    core.db.prepare('DELETE FROM accounts WHERE id = ?').run(account.id);
    expect(core.db.prepare('SELECT COUNT(*) AS n FROM reports').get()).to.deep.equal({ n: 0 });
  });

  function smallService(maxRisks: number, maxTargets: number): ReportsService {
    const renderers = { PDF: renderPdfReport, HTML: renderHtmlReport, CSV: renderCsvReport };
    return new ReportsService(
      new SqliteReportRepository(core.db),
      new FileSystemReportFiles(join(dir.path, 'reports')),
      renderers,
      { now: () => new Date('2026-11-25T10:00:00Z') },
      { maxRisks, maxTargets },
    );
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
    // Matches are counted to one past the cap: 4 says "more than 3".
    expect(service.get(account, id)).to.include({ riskCount: 3, matchedRisks: 4, targetCount: 2 });
    const page = readFileSync(join(dir.path, 'reports', id, 'report.html'), 'utf8');
    expect(page).to.include('More than 3 risks matched the filters; this report holds the 3 most severe.');
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
    expect(await service.create(account, { report_format: 'PDF', targets_filter: { target_ids: [] }, risks_filter: {} }).catch(() => 'refused')).to.equal(
      'refused',
    );
  });
});

describe('report files: snapshots', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => dir.remove());

  it('streams a snapshot to its file and reads back the same snapshot, with many risks, with none, and with text JSON must escape', async () => {
    const files = new FileSystemReportFiles(join(dir.path, 'reports'));
    const base = reportSnapshot();
    // Enough risks for many pieces of the stream (each about 64 KiB), and text that JSON must escape.
    const many = Array.from({ length: 400 }, (_, index) => ({
      ...base.risks[index % base.risks.length]!,
      id: `risk-${index}`,
      definition: { ...base.risks[index % base.risks.length]!.definition, description: `"quoted" \\ back\nslash ${'é東'.repeat(100)} ${index}` },
    }));
    for (const snapshot of [{ ...base, risks: many }, { ...base, risks: [] }, base]) {
      await files.saveSnapshot(snapshot.id, snapshot);
      expect(await files.loadSnapshot(snapshot.id)).to.deep.equal(snapshot);
    }
    expect([...snapshotJson({ ...base, risks: many })].length).to.be.greaterThan(2);
    // Only the finished file is left in the report's folder.
    expect(readdirSync(join(dir.path, 'reports', base.id))).to.deep.equal(['snapshot.json.gz']);
  });
});

describe('reports service: renderings', () => {
  let dir: ReturnType<typeof tempDir>;
  let core: Core;

  beforeEach(() => {
    dir = tempDir();
    core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path, LOG_LEVEL: 'silent' }));
  });
  afterEach(() => {
    core.db.close();
    dir.remove();
  });

  it('renders one report at a time, and goes on after a failed one', async () => {
    const { account } = core.accounts.createAccount({ name: 'queued' });
    const events: string[] = [];
    let running = 0;
    let snapshotsSaved = 0;
    const files = new FileSystemReportFiles(join(dir.path, 'reports'));
    const saveSnapshot = files.saveSnapshot.bind(files);
    files.saveSnapshot = async (id, snapshot) => {
      await saveSnapshot(id, snapshot);
      snapshotsSaved++;
    };
    const slow =
      (name: string, fail = false) =>
      async (_report: unknown, out: Writable) => {
        running++;
        events.push(`start ${name} (${running} running)`);
        // The first rendering lasts until the second report is ready to render, and a while after: long enough for it to start, were it allowed to.
        for (let turn = 0; turn < 500 && (snapshotsSaved < 2 || turn < 200) && !events.some((event) => event.startsWith('start html')); turn++) {
          await new Promise((resolve) => setImmediate(resolve));
        }
        running--;
        events.push(`end ${name}`);
        if (fail) throw new Error('renderer failed');
        out.end('x');
      };
    const service = new ReportsService(
      new SqliteReportRepository(core.db),
      files,
      { PDF: slow('pdf', true), HTML: slow('html'), CSV: slow('csv') },
      { now: () => new Date('2026-11-25T10:00:00Z') },
    );
    const results = await Promise.allSettled([service.create(account, { report_format: 'PDF' }), service.create(account, { report_format: 'HTML' })]);
    expect(results.map((result) => result.status)).to.deep.equal(['rejected', 'fulfilled']);
    // Which snapshot is saved first is up to the file system; no rendering may start while another runs.
    expect(events).to.have.length(4);
    expect(events.filter((event) => event.startsWith('start'))).to.have.members(['start pdf (1 running)', 'start html (1 running)']);
    expect(events[1]!.replace('end', 'start')).to.equal(events[0]!.replace(' (1 running)', ''));
    expect(service.recent(account, 10).map((record) => record.format)).to.deep.equal(['HTML']);
  });
});
