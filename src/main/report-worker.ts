/**
 * The report worker thread (src/reports/report-workers.ts), with its own
 * wiring as a composition root: a read-only connection to the service's
 * database, the report files and the renderers. It makes the reports the
 * service sends, one at a time, and answers each with what its row records
 * or with the error, its kind kept so the service answers the same status.
 */
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { ReportProduction } from '../app/report-production.js';
import { VigilError } from '../domain/errors.js';
import type { ReportWorkerAnswer, ReportWorkerRequest } from '../reports/report-workers.js';
import { renderCsvReport } from '../reports/csv-report.js';
import { renderHtmlReport } from '../reports/html-report.js';
import { renderPdfReport } from '../reports/pdf/pdf-report.js';
import { openReadOnlyDatabase } from '../store/database.js';
import { FileSystemReportFiles } from '../store/report-files.js';
import { SqliteReportRepository } from '../store/reports-repository.js';

const { dataDir } = workerData as { dataDir: string };
const db = openReadOnlyDatabase(dataDir);
const production = new ReportProduction(new SqliteReportRepository(db), new FileSystemReportFiles(join(dataDir, 'reports')), {
  PDF: renderPdfReport,
  HTML: renderHtmlReport,
  CSV: renderCsvReport,
});

async function answer(request: ReportWorkerRequest): Promise<ReportWorkerAnswer> {
  try {
    const value = request.kind === 'produce' ? await production.produce(request.job) : await production.render(request.reportId, request.format);
    return { id: request.id, ok: true, value };
  } catch (error) {
    return { id: request.id, ok: false, kind: error instanceof VigilError ? error.kind : undefined, message: (error as Error)?.message ?? String(error) };
  }
}

parentPort!.on('message', (request: ReportWorkerRequest) => {
  void answer(request).then((reply) => parentPort!.postMessage(reply));
});
