/**
 * The account's saved reports (README, API decisions): listing them
 * (GET /v1/reports) and deleting one (DELETE /v1/reports/{id}). Creating
 * and downloading a report stay with ReportsService.
 */
import type { Account } from '../domain/accounts/account.js';
import { NotFoundError } from '../domain/errors.js';
import { pageSizeFrom, parseFilters } from '../domain/lists/list-query.js';
import type { ListParams, ListResult, Paginator } from './pagination.js';
import { REPORT_LIST_FILTER_KEYS, type ReportFiles, type ReportRecord, type ReportRepository } from './ports.js';

/** A report as the list shows it: its row, and the size of its file in the format it was created in (null when that file is missing). */
export interface SavedReport {
  record: ReportRecord;
  size: number | null;
}

export class SavedReportsService {
  constructor(
    private readonly reports: ReportRepository,
    private readonly files: ReportFiles,
    private readonly paginator: Paginator,
  ) {}

  /** A page of the account's reports, newest first, each with its file's size. */
  async list<R>(account: Account, params: ListParams, present: (report: SavedReport) => R): Promise<ListResult<R>> {
    const scope = `${account.id}:reports`;
    const order = 'created_at:desc';
    const after = this.paginator.cursorFrom(scope, order, params.page_token);
    const page = this.reports.list(account.id, {
      filters: parseFilters(params.filters, REPORT_LIST_FILTER_KEYS),
      pageSize: pageSizeFrom(params.page_size),
      after,
    });
    const sizes = new Map(
      await Promise.all(page.items.map(async (record) => [record.id, (await this.files.sizeOf(record.id, record.format)) ?? null] as const)),
    );
    return this.paginator.resultOf(scope, order, page, (record) => present({ record, size: sizes.get(record.id) ?? null }));
  }

  /**
   * Deletes the report: its row first, so that it leaves lists and downloads
   * at once, then its files. A download already streaming keeps its open file
   * until it ends.
   */
  async delete(account: Account, id: string): Promise<void> {
    if (!this.reports.delete(account.id, id)) throw new NotFoundError('report', id);
    await this.files.remove(id);
  }
}
