import type { Filters, SortField } from '../../domain/lists/list-query.js';
import type { CursorValue } from '../../domain/lists/page-token.js';
import type { ScanType } from '../../domain/risks/finding.js';
import type { Coverage, ExistingRisk, Risk, RiskView } from '../../domain/risks/risk.js';
import type { Scan } from '../../domain/scans/scan.js';
import type { RunRisk } from '../../domain/schedules/scheduled-run.js';
import type { OpenRiskCounts } from '../../domain/targets/health-score.js';
import type { Page } from './lists.js';

export const RISK_FILTER_KEYS = ['target_id', 'status', 'tags', 'risk_definition.scan_type', 'risk_definition.threat_level', 'risk_definition.title'] as const;
export type RiskFilterKey = (typeof RISK_FILTER_KEYS)[number];

/** threat_level sorts by severity (CRITICAL highest), target by the target's address. */
export const RISK_SORT_FIELDS = ['threat_level', 'first_detected_at', 'last_detected_at', 'target'] as const;
export type RiskSortField = (typeof RISK_SORT_FIELDS)[number];

export interface RiskListQuery {
  filters: Filters<RiskFilterKey>;
  /** At most one field; ties, and no sort at all, go by creation (seq), newest first unless the field is sorted asc. */
  sort?: Array<SortField<RiskSortField>> | undefined;
  pageSize: number;
  after: CursorValue[] | undefined;
  /** OpenVAS risks below this Quality of Detection are left out (the account's setting). */
  minOpenvasQod: number;
  /** Only accepted (true) or only unaccepted (false) risks. */
  accepted?: boolean | undefined;
  /** Only risks whose target address or label contains this text, ignoring case. */
  targetContains?: string | undefined;
}

/** A risk a scheduled run opened or closed, with its target. */
export interface ChangedRisk extends RunRisk {
  targetId: string;
  target: string;
  label: string;
}

/** Risks, their detections and which scans covered which targets. Every method runs in the caller's transaction when there is one. */
export interface RiskRepository {
  transaction<T>(fn: () => T): T;
  risksOf(targetId: string, scanType: ScanType): Risk[];
  /**
   * The id, fingerprint and status of each risk of the target and type, oldest first: what a recording compares its findings with, without their
   * definitions.
   */
  keysOf(targetId: string, scanType: ScanType): ExistingRisk[];
  /** These risks, in the order given (ids that are not risks are left out). */
  findMany(riskIds: readonly string[]): Risk[];
  insert(risk: Risk): void;
  /**
   * New OPEN risks made from staged findings (RecordingStaging), one per
   * [staged seq, new risk id, target id], in that order: fingerprint, title,
   * threat level, QoD and definition are copied from the staged finding in
   * the store, first and last detected at `at`.
   */
  insertStaged(accountId: string, scanType: ScanType, at: string, rows: ReadonlyArray<readonly [seq: number, riskId: string, targetId: string]>): void;
  /** Risks detected again, one per [staged seq, risk id]: OPEN, last detected at `at`, their definition (and title, level, QoD) the staged finding's. */
  redetectStaged(at: string, rows: ReadonlyArray<readonly [seq: number, riskId: string]>): void;
  /** These risks CLOSED. */
  close(riskIds: readonly string[]): void;
  update(risk: Risk): void;
  /** update() of the risk's status and first and last detection only (a recompute changes nothing else). */
  updateHistory(risk: Risk): void;
  delete(riskId: string): void;
  recordCoverage(scanId: string, targetId: string, scanType: ScanType, coveredAt: string): void;
  recordDetection(scanId: string, riskId: string): void;
  /** recordDetection() for many risks in one statement. */
  recordDetections(scanId: string, riskIds: readonly string[]): void;
  /** Every scan that covered the target for the type, oldest first, with what each detected. */
  coverageOf(targetId: string, scanType: ScanType): Coverage[];
  /** The (target, type) pairs a scan covered: their risks' histories change when it is deleted. */
  coveredBy(scanId: string): Array<{ targetId: string; scanType: ScanType }>;
  /** Removes what a scan recorded in the history (its coverage, detections and risk list entries), keeping the scan itself. */
  forgetCoverage(scanId: string): void;
  /**
   * Appends a chunk of a recording's risk lists to the scan's stored ones,
   * each list's ids from position `from`: a scan shows its lists only up to
   * the lengths its own write stores (ScanRepository), so they stay hidden
   * until the recording's last transaction. Nothing for a scan deleted meanwhile.
   */
  appendRiskLists(scanId: string, lists: Scan['risks'], from: { [list in keyof Scan['risks']]: number }): void;
  findView(accountId: string, id: string): RiskView | undefined;
  /** Of the ids, the account's risks that still exist, with what a scheduled run's e-mail shows of each (RunNotifier); in no order. */
  changedRisks(accountId: string, ids: readonly string[]): ChangedRisk[];
  list(accountId: string, query: RiskListQuery): Page<RiskView>;
  /** Open, unaccepted risks of the target by threat level, for its health score. */
  openCounts(targetId: string): OpenRiskCounts;
}
