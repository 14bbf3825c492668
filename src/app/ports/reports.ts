import type { Filters } from '../../domain/lists/list-query.js';
import type { CursorValue } from '../../domain/lists/page-token.js';
import type { Page } from './lists.js';
import type { ReportModel } from '../../domain/reports/report-model.js';
import type { ReportFormat, ReportRisk, ReportSnapshot, ReportTarget, ReportTargetFilterKey } from '../../domain/reports/snapshot.js';
import type { Readable, Writable } from 'node:stream';
import type { RiskFilterKey } from './risks.js';
import type { ReportRecord } from '../../domain/reports/report-record.js';
export type { ReportRecord } from '../../domain/reports/report-record.js';

/** Which targets and risks a report covers: GET /v1/risks's meaning for risks_filter, targets_filter on their targets. */
export interface ReportSelection {
  targets: Filters<ReportTargetFilterKey>;
  risks: Filters<RiskFilterKey>;
  minOpenvasQod: number;
  maxRisks: number;
  maxTargets: number;
}

export interface ReportScope {
  /** At most maxTargets + 1 of them: one more means the selection is too wide. */
  targets: ReportTarget[];
  /** The most severe first (threat level, then newest), at most maxRisks. */
  risks: ReportRisk[];
  /** How many risks matched, counted no further than maxRisks + 1 (more than maxRisks: the report left some out). */
  matchedRisks: number;
}

export const REPORT_LIST_FILTER_KEYS = ['format'] as const;
export type ReportListFilterKey = (typeof REPORT_LIST_FILTER_KEYS)[number];

export interface ReportListQuery {
  filters: Filters<ReportListFilterKey>;
  pageSize: number;
  after: CursorValue[] | undefined;
}

export interface ReportRepository {
  insert(record: ReportRecord): void;
  find(accountId: string, id: string): ReportRecord | undefined;
  /** The account's reports, newest first. */
  listRecent(accountId: string, limit: number): ReportRecord[];
  /** A page of the account's reports, newest first (GET /v1/reports). */
  list(accountId: string, query: ReportListQuery): Page<ReportRecord>;
  /** Removes the report's row; false when the account has no such report. */
  delete(accountId: string, id: string): boolean;
  /** Reads the selected targets and risks in one read transaction, so counts and rows agree. */
  readScope(accountId: string, selection: ReportSelection): ReportScope;
  /** How many targets the selection holds, counting no further than `cap` (from an index, reading no target). */
  countTargets(accountId: string, selection: ReportSelection, cap: number): number;
}

/** A report to make: its selection read into a snapshot, saved, and rendered in its format. */
export interface ReportJob {
  id: string;
  accountId: string;
  accountName: string;
  createdAt: string;
  format: ReportFormat;
  selection: ReportSelection;
}

/** What a made report's row records of its snapshot. */
export type MadeReport = Pick<ReportRecord, 'filters' | 'riskCount' | 'matchedRisks' | 'targetCount'>;

/**
 * Where reports are made: reading a selection and rendering it hold a
 * thread for seconds (bench/reports.ts), so the service makes them in a
 * worker thread with its own read-only connection (src/reports/report-workers.ts);
 * ReportProduction makes them in the caller's thread.
 */
export interface ReportProducer {
  produce(job: ReportJob): Promise<MadeReport>;
  /** Renders a saved report's snapshot in another format. */
  render(reportId: string, format: ReportFormat): Promise<void>;
}

/** A report's snapshot and rendered files (VIGIL_DATA_DIR/reports/<id>/), each written to a temporary name and renamed into place. */
export interface ReportFiles {
  saveSnapshot(reportId: string, snapshot: ReportSnapshot): Promise<void>;
  loadSnapshot(reportId: string): Promise<ReportSnapshot | undefined>;
  /** Writes the rendering through `write`, which ends the stream; only a complete file appears under its name. */
  saveRendering(reportId: string, format: ReportFormat, write: (out: Writable) => Promise<void>): Promise<void>;
  /** The size in bytes of the rendered file, or undefined when that format has not been rendered. */
  sizeOf(reportId: string, format: ReportFormat): Promise<number | undefined>;
  /** Removes the report's snapshot and every rendering; nothing to remove is not an error. */
  remove(reportId: string): Promise<void>;
  /** The rendered file and its size, or undefined when that format has not been rendered yet. */
  openRendering(reportId: string, format: ReportFormat): Promise<{ content: Readable; size: number } | undefined>;
}

/** Writes a report in one format and ends `out` (the renderers are adapters: PDF on pdfkit, HTML, CSV on csv-stringify). */
export type ReportRenderer = (report: ReportModel, out: Writable) => Promise<void>;
export type ReportRenderers = Readonly<Record<ReportFormat, ReportRenderer>>;
