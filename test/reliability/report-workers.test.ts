/**
 * Issue 26: no report holds the event loop. A selection too wide is refused
 * by counting it from an index, never by reading it, and (issue 29) that
 * count is made in the worker too; reports are read and
 * rendered in a worker thread on its own read-only connection, so /healthz
 * and other accounts are served while one is made; a worker that dies fails
 * its report with a 503 that says so, and the service goes on; the workers'
 * queue is bounded.
 */
import { expect } from 'chai';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadSettings } from '../../src/config/settings.js';
import type { ReportJob, ReportProducer } from '../../src/app/ports.js';
import { ReportProduction } from '../../src/app/report-production.js';
import { ReportsService } from '../../src/app/reports-service.js';
import { InvalidRequestError, ServiceBusyError } from '../../src/domain/errors.js';
import { REPORT_LIMITS } from '../../src/domain/reports/snapshot.js';
import { composeCore, type Core } from '../../src/main/composition-root.js';
import { ReportWorkers } from '../../src/reports/report-workers.js';
import type { Database } from '../../src/store/database.js';
import { FileSystemReportFiles } from '../../src/store/report-files.js';
import { SqliteReportRepository } from '../../src/store/reports-repository.js';
import { REPORT_WORKER_IN_TEST, reportWorkerMarker } from '../support/report-worker-marker.js';
import { tempDir } from '../support/temp-dir.js';
import { TestService } from '../support/test-service.js';
import { waitFor } from '../support/wait.js';

/** `count` MANUAL targets of the account, written in one statement. */
function seedTargets(db: Database, accountId: string, count: number): void {
  db.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
    INSERT INTO targets (id, account_id, target, zap_settings, origin, created_at)
    SELECT 'seeded-' || i, ?, '45.1.' || (i / 256) || '.' || (i % 256), '{}', 'MANUAL', '2026-11-01T00:00:00.000Z' FROM n`,
  ).run(count, accountId);
}

/** A renderer the test never reaches. */
const unused = () => expect.fail('nothing is rendered for a refused selection');

const EMPTY_SELECTION = { targets: {}, risks: {}, minOpenvasQod: 70, maxRisks: REPORT_LIMITS.maxRisks, maxTargets: REPORT_LIMITS.maxTargets };

describe('reliability: reports are counted before they are read, and made in a worker thread', function () {
  this.timeout(120_000);

  describe('the refusal of a selection too wide', () => {
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

    it(`refuses ${REPORT_LIMITS.maxTargets + 1} targets by counting them in the producer, without reading the selection`, async () => {
      const { account } = core.accounts.createAccount({ name: 'wide' });
      seedTargets(core.db, account.id, REPORT_LIMITS.maxTargets + 1);
      const repository = new SqliteReportRepository(core.db);
      const read: string[] = [];
      const readScope = repository.readScope.bind(repository);
      repository.readScope = (accountId, selection) => {
        read.push(accountId);
        return readScope(accountId, selection);
      };
      const production = new ReportProduction(repository, new FileSystemReportFiles(join(dir.path, 'reports')), { PDF: unused, HTML: unused, CSV: unused });
      const job = {
        id: 'wide',
        accountId: account.id,
        accountName: account.name,
        createdAt: '2026-11-28T12:00:00.000Z',
        format: 'HTML' as const,
        selection: EMPTY_SELECTION,
      };
      const refused = await production.produce(job).catch((error: unknown) => error);
      expect(refused).to.be.instanceOf(InvalidRequestError);
      expect((refused as Error).message).to.equal(
        'the filters select more than 10000 targets; narrow targets_filter (target_ids, tags or label) and try again',
      );
      expect(read).to.deep.equal([]);
      expect(existsSync(join(dir.path, 'reports'))).to.equal(false);
    });

    it("reads nothing of the selection on the service's thread, not even its count: the producer (the worker) does", async () => {
      const { account } = core.accounts.createAccount({ name: 'counted-elsewhere' });
      const repository = new SqliteReportRepository(core.db);
      repository.countTargets = () => expect.fail('the selection was counted on the service thread');
      repository.readScope = () => expect.fail('the selection was read on the service thread');
      const jobs: ReportJob[] = [];
      const producer: ReportProducer = {
        produce: async (job) => {
          jobs.push(job);
          return { filters: { targets_filter: {}, risks_filter: {} }, riskCount: 0, matchedRisks: 0, targetCount: 0 };
        },
        render: async () => undefined,
      };
      const service = new ReportsService(repository, new FileSystemReportFiles(join(dir.path, 'reports')), producer, {
        now: () => new Date('2026-11-28T12:00:00Z'),
      });
      const id = await service.create(account, { report_format: 'HTML' });
      expect(jobs.map((job) => job.id)).to.deep.equal([id]);
      expect(service.get(account, id).targetCount).to.equal(0);
    });

    it('answers 400 for a selection too wide, counted in the worker thread', async () => {
      const { account } = core.accounts.createAccount({ name: 'wide-in-worker' });
      seedTargets(core.db, account.id, REPORT_LIMITS.maxTargets + 1);
      const refused = await core.reports.create(account, { report_format: 'HTML' }).catch((error: unknown) => error);
      expect(refused).to.be.instanceOf(InvalidRequestError);
      expect((refused as Error).message).to.equal(
        'the filters select more than 10000 targets; narrow targets_filter (target_ids, tags or label) and try again',
      );
      expect(core.reports.recent(account, 10)).to.deep.equal([]);
      await core.reportWorkers.close();
    });

    it("counts no further than asked, from an index of the account's targets", () => {
      const { account } = core.accounts.createAccount({ name: 'counted' });
      seedTargets(core.db, account.id, 50);
      const repository = new SqliteReportRepository(core.db);
      expect(repository.countTargets(account.id, EMPTY_SELECTION, 7)).to.equal(7);
      expect(repository.countTargets(account.id, EMPTY_SELECTION, 100)).to.equal(50);
      expect(repository.countTargets(account.id, { ...EMPTY_SELECTION, targets: { label: ['none'] } }, 100)).to.equal(0);
      const plan = core.db
        .prepare('EXPLAIN QUERY PLAN SELECT count(*) FROM (SELECT 1 FROM targets t WHERE t.account_id = ? LIMIT ?)')
        .all(account.id, 7) as Array<{ detail: string }>;
      expect(plan.map((row) => row.detail).join('; ')).to.match(/SEARCH t USING COVERING INDEX \w+ \(account_id=\?\)/);
    });
  });

  describe('in the service', () => {
    let service: TestService;
    const marker = reportWorkerMarker();
    const clearMarkers = () => {
      for (const suffix of ['.started', '.release']) rmSync(`${marker}${suffix}`, { force: true });
    };

    beforeEach(async () => {
      clearMarkers();
      service = await TestService.start({ reportWorker: REPORT_WORKER_IN_TEST });
    });
    afterEach(async () => {
      // A held worker would keep the service from stopping.
      writeFileSync(`${marker}.release`, '');
      await service.stop();
      clearMarkers();
    });

    it('answers /healthz and another account while a report is being made in the worker', async () => {
      const held = service.createAccount('held-report');
      let finished = false;
      const report = service.post('/v1/reports', { report_format: 'PDF' }, { key: held.apiKey }).then((response) => {
        finished = true;
        return response;
      });
      // The worker holds the report's thread (as a long rendering would) once it has it.
      await waitFor(
        async () => existsSync(`${marker}.started`),
        (started) => started,
        'the worker to take the report',
      );
      const health = await fetch(`${service.baseUrl}/healthz`);
      expect(health.status).to.equal(200);
      const other = await service.get('/v1/targets');
      expect(other.status).to.equal(200);
      expect(finished, 'the report finished before the worker was released').to.equal(false);

      writeFileSync(`${marker}.release`, '');
      const made = await report;
      expect(made.status).to.equal(200);
      const download = await service.request('GET', `/v1/reports/${made.body.data.id}`, { key: held.apiKey });
      expect(download.status).to.equal(200);
      expect(download.headers.get('content-type')).to.equal('application/pdf');
    });

    it('fails a report whose worker dies with a 503 that says so, and makes the next one in a new worker', async () => {
      const crashing = service.createAccount('crashing-report');
      const failed = await service.post('/v1/reports', { report_format: 'HTML' }, { key: crashing.apiKey });
      expect(failed.status).to.equal(503);
      expect(failed.body.error).to.equal('the report could not be made: its worker thread stopped (exit code 70); try again, or narrow the filters');
      expect(service.vigil.reports.recent(crashing.account, 10)).to.deep.equal([]);

      expect((await fetch(`${service.baseUrl}/healthz`)).status).to.equal(200);
      const next = await service.post('/v1/reports', { report_format: 'HTML' });
      expect(next.status).to.equal(200);
      expect((await service.get(`/v1/reports/${next.body.data.id}`)).status).to.equal(200);
    });
  });

  describe("the workers' bounds", () => {
    let dir: ReturnType<typeof tempDir>;
    let core: Core;
    const marker = reportWorkerMarker();

    beforeEach(() => {
      rmSync(`${marker}.started`, { force: true });
      rmSync(`${marker}.release`, { force: true });
      dir = tempDir();
      core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path, LOG_LEVEL: 'silent' }));
    });
    afterEach(() => {
      core.db.close();
      dir.remove();
      rmSync(`${marker}.started`, { force: true });
      rmSync(`${marker}.release`, { force: true });
    });

    it('queues up to its bound behind a busy worker, answers 503 beyond it, and fails what waits when it closes', async () => {
      const { account } = core.accounts.createAccount({ name: 'held-report' });
      const workers = new ReportWorkers({ module: REPORT_WORKER_IN_TEST, dataDir: dir.path, limits: { workers: 1, waiting: 1, heapMb: 512 } });
      const job = (id: string) => ({
        id,
        accountId: account.id,
        accountName: account.name,
        createdAt: '2026-11-28T12:00:00.000Z',
        format: 'CSV' as const,
        selection: EMPTY_SELECTION,
      });
      const first = workers.produce(job('first'));
      const second = workers.produce(job('second'));
      const third = await workers.produce(job('third')).catch((error: unknown) => error);
      expect(third).to.be.instanceOf(ServiceBusyError);
      expect((third as Error).message).to.equal('2 reports are being made or waiting; try again in a minute');

      await waitFor(
        async () => existsSync(`${marker}.started`),
        (started) => started,
        'the worker to take the first report',
      );
      writeFileSync(`${marker}.release`, '');
      expect(await first).to.deep.equal({ filters: { targets_filter: {}, risks_filter: {} }, riskCount: 0, matchedRisks: 0, targetCount: 0 });
      expect(await second).to.include({ targetCount: 0 });

      rmSync(`${marker}.release`, { force: true });
      const held = workers.produce(job('held'));
      const waiting = workers.produce(job('waiting'));
      const outcomes = Promise.allSettled([held, waiting]);
      await workers.close();
      for (const outcome of await outcomes) {
        expect(outcome.status).to.equal('rejected');
        expect(((outcome as PromiseRejectedResult).reason as Error).message).to.equal('the service is stopping; make the report again once it is back');
      }
      expect(await workers.produce(job('after')).catch((error: unknown) => (error as Error).message)).to.equal(
        'the service is stopping; make the report again once it is back',
      );
    });
  });
});
