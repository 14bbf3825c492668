/**
 * Reports (SPEC.md, Reports; CONTRACT.md): creating one takes a snapshot of
 * the selected targets and risks and renders it before answering; a download
 * serves that rendering, or renders the same snapshot in another format.
 * Reading and rendering happen in the ReportProducer (worker threads in the
 * service), never in a request's own turn of the event loop.
 */
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { hasFeature, type Account } from '../domain/accounts/account.js';
import type { Clock } from '../domain/clock.js';
import { FeatureNotEnabledError, InvalidRequestError, NotFoundError } from '../domain/errors.js';
import { filtersFrom } from '../domain/lists/list-query.js';
import { CONTENT_TYPES, REPORT_FORMATS, REPORT_LIMITS, REPORT_TARGET_FILTER_KEYS, downloadFileName, type ReportFormat } from '../domain/reports/snapshot.js';
import {
  RISK_FILTER_KEYS,
  type ReportFiles,
  type ReportJob,
  type ReportProducer,
  type ReportRecord,
  type ReportRenderers,
  type ReportRepository,
  type ReportSelection,
} from './ports.js';
import { ReportProduction } from './report-production.js';

export interface ReportRequest {
  report_format: string;
  /** As the request sent them: checked here, so that errors name the allowed keys. */
  targets_filter?: unknown;
  risks_filter?: unknown;
}

export interface ReportDownload {
  content: Readable;
  size: number;
  contentType: string;
  fileName: string;
}

export class ReportsService {
  constructor(
    private readonly reports: ReportRepository,
    private readonly files: ReportFiles,
    /** Where reports are read and rendered (the service's worker threads), or the renderers to make them in this thread with (tests). */
    maker: ReportProducer | ReportRenderers,
    private readonly clock: Clock,
    /** REPORT_LIMITS; tests pass smaller ones. */
    private readonly limits: { maxRisks: number; maxTargets: number } = REPORT_LIMITS,
  ) {
    this.producer = 'produce' in maker ? maker : new ReportProduction(reports, files, maker);
  }

  private readonly producer: ReportProducer;

  /**
   * Creates the report and renders it in its format before returning its id.
   * Nothing of the selection is read here, not even its count: the producer
   * counts and reads it off this thread (a report of every risk of a large
   * account reads a million rows).
   */
  async create(account: Account, request: ReportRequest): Promise<string> {
    const format = this.formatFor(account, request.report_format, 'report_format');
    const selection = { ...selectionOf(account, request), maxRisks: this.limits.maxRisks, maxTargets: this.limits.maxTargets };
    const job: ReportJob = { id: randomUUID(), accountId: account.id, accountName: account.name, createdAt: this.clock.now().toISOString(), format, selection };
    const made = await this.producer.produce(job);
    // Last: a report is recorded only once its files are whole (start-up removes a folder without a row).
    this.reports.insert({ id: job.id, accountId: account.id, format, createdAt: job.createdAt, ...made });
    return job.id;
  }

  /** The report's file in its own format, or (with `format`) the same snapshot in another. */
  async download(account: Account, id: string, options: { format?: string | undefined; filename?: string | undefined }): Promise<ReportDownload> {
    const record = this.get(account, id);
    const format = options.format === undefined ? record.format : this.formatFor(account, options.format, 'format');
    let file = await this.files.openRendering(record.id, format);
    if (file === undefined) {
      await this.producer.render(record.id, format);
      file = (await this.files.openRendering(record.id, format))!;
    }
    return { ...file, contentType: CONTENT_TYPES[format], fileName: downloadFileName(options.filename, format, record.createdAt) };
  }

  get(account: Account, id: string): ReportRecord {
    const record = this.reports.find(account.id, id);
    if (record === undefined) throw new NotFoundError('report', id);
    return record;
  }

  /** The account's latest reports, newest first (the dashboard's list). */
  recent(account: Account, limit: number): ReportRecord[] {
    return this.reports.listRecent(account.id, limit);
  }

  /** The formats this account may download: CSV only with the csv_export feature. */
  formatsFor(account: Account): ReportFormat[] {
    return REPORT_FORMATS.filter((format) => format !== 'CSV' || hasFeature(account, 'csv_export'));
  }

  private formatFor(account: Account, value: string, field: string): ReportFormat {
    if (!(REPORT_FORMATS as readonly string[]).includes(value)) {
      throw new InvalidRequestError(`${field} must be one of: ${REPORT_FORMATS.join(', ')}`);
    }
    if (value === 'CSV' && !hasFeature(account, 'csv_export')) {
      throw new FeatureNotEnabledError('CSV reports need CSV export enabled on the account (feature csv_export); ask your administrator, or use PDF or HTML.');
    }
    return value as ReportFormat;
  }
}

function selectionOf(account: Account, request: ReportRequest): ReportSelection {
  const targets = request.targets_filter === undefined ? {} : filtersFrom(request.targets_filter, REPORT_TARGET_FILTER_KEYS, 'targets_filter');
  const risks = request.risks_filter === undefined ? {} : filtersFrom(request.risks_filter, RISK_FILTER_KEYS, 'risks_filter');
  for (const [name, filter] of [
    ['targets_filter', targets],
    ['risks_filter', risks],
  ] as const) {
    for (const [key, values] of Object.entries(filter) as Array<[string, string[]]>) {
      if (values.some((value) => value.length > REPORT_LIMITS.maxFilterValueLength)) {
        throw new InvalidRequestError(`${name}.${key} values may be at most ${REPORT_LIMITS.maxFilterValueLength} characters`);
      }
    }
  }
  return { targets, risks, minOpenvasQod: account.minOpenvasQod, maxRisks: REPORT_LIMITS.maxRisks, maxTargets: REPORT_LIMITS.maxTargets };
}
