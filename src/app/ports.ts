/**
 * The interfaces the middle ring depends on. Adapters (the SQLite store, the
 * Kubernetes client, the embedded runner) implement them; only the
 * composition root knows which.
 */
import type { Account } from '../domain/accounts/account.js';
import type { CursorValue } from '../domain/lists/page-token.js';
import type { Filters, SortField } from '../domain/lists/list-query.js';
import type { Readable } from 'node:stream';
import type { OutboxEvent } from '../domain/events/event.js';
import type { ScanType } from '../domain/risks/finding.js';
import type { ResolvedTarget, Scan, ScanState } from '../domain/scans/scan.js';
import type { HealthGrade, OpenRiskCounts } from '../domain/targets/health-score.js';
import type { Coverage, Risk, RiskView } from '../domain/risks/risk.js';
import type { Target, TargetOrigin } from '../domain/targets/target.js';
import type { Source } from '../domain/sources/source.js';
import type { Writable } from 'node:stream';
import type { ReportModel } from '../domain/reports/report-model.js';
import type { ReportFilters, ReportFormat, ReportRisk, ReportSnapshot, ReportTarget, ReportTargetFilterKey } from '../domain/reports/snapshot.js';
import type { EmailNotification } from '../domain/schedules/scheduled-scan-resource.js';
import type { ScheduleKind } from '../domain/schedules/schedule.js';
import type { DailyChanges } from '../domain/trends/weekly-changes.js';

export interface StoredApiKey {
  id: string;
  accountId: string;
  name: string;
  hash: Buffer;
  createdAt: string;
  revokedAt: string | null;
}

export interface AccountRepository {
  insert(account: Account): void;
  findById(id: string): Account | undefined;
  findByName(name: string): Account | undefined;
  findByNamespace(namespace: string): Account | undefined;
  /** Every account, oldest first (operators' listing; accounts are few). */
  list(): Account[];
  count(): number;
  insertApiKey(key: { id: string; accountId: string; name: string; lookup: string; hash: Buffer; createdAt: string }): void;
  /** Active (not revoked) keys whose hash starts with the lookup prefix, with their accounts. */
  findActiveKeysByLookup(lookup: string): Array<{ key: StoredApiKey; account: Account }>;
  listApiKeys(accountId: string): StoredApiKey[];
  revokeApiKey(accountId: string, keyId: string, at: string): boolean;
  /** Runs fn in one transaction. */
  transaction<T>(fn: () => T): T;
}

export interface Page<T> {
  items: T[];
  /** Sort key values of the last item when more items follow. */
  nextCursor: CursorValue[] | undefined;
  /**
   * Sort key values of any item: lists whose items can be large give it, so
   * that a page can end early at its byte budget and continue after that item.
   */
  cursorAt?: (index: number) => CursorValue[];
}

export const TARGET_FILTER_KEYS = ['tags', 'label', 'target'] as const;
export type TargetFilterKey = (typeof TARGET_FILTER_KEYS)[number];
export const TARGET_SORT_FIELDS = ['label', 'target', 'created_at', 'last_scanned'] as const;
export type TargetSortField = (typeof TARGET_SORT_FIELDS)[number];

export interface TargetListQuery {
  filters: Filters<TargetFilterKey>;
  sort: Array<SortField<TargetSortField>>;
  pageSize: number;
  after: CursorValue[] | undefined;
  /** Only targets whose address or label contains this text, ignoring case (the dashboard's search box). */
  textContains?: string | undefined;
}

/**
 * A target as a list reads it: the read model of the hot list path. Its JSON
 * fields stay as the stored text so that a page can be rendered without
 * parsing and re-serialising them.
 */
export interface TargetListRow {
  id: string;
  target: string;
  label: string;
  tagsJson: string;
  zapSettingsJson: string;
  origin: TargetOrigin;
  healthScore: number;
  healthGrade: HealthGrade;
  authSeleniumFile: string | null;
  createdAt: string;
  lastScannedAt: string | null;
  os: string | null;
  hostname: string | null;
}

export interface TargetRepository {
  /** Inserts a new target; returns false when the account already has this target address. */
  insert(target: Target): boolean;
  findById(accountId: string, id: string): Target | undefined;
  findByAddress(accountId: string, address: string): Target | undefined;
  update(target: Target): void;
  /** Deletes the target and everything that hangs off it, in one transaction. */
  deleteCascade(accountId: string, id: string): void;
  list(accountId: string, query: TargetListQuery): Page<TargetListRow>;
  findByIds(accountId: string, ids: readonly string[]): Target[];
  /** Targets carrying any of the (lowercase) tags, oldest first. */
  findByTags(accountId: string, tags: readonly string[]): Target[];
}

export const SCAN_FILTER_KEYS = ['state', 'type', 'scheduled_by'] as const;
export type ScanFilterKey = (typeof SCAN_FILTER_KEYS)[number];

export interface ScanListQuery {
  filters: Filters<ScanFilterKey>;
  pageSize: number;
  after: CursorValue[] | undefined;
}

export interface StoredResultFile {
  id: string;
  scanId: string;
  accountId: string;
  fileName: string;
  contentType: string;
  size: number;
  sha256: string;
  createdAt: string;
}

/**
 * Where Scan objects live in the embedded runtime. Every write that changes
 * what the API shows also records its events, in the same transaction.
 */
export interface ScanRepository {
  /** Inserts scans with their events, adding the non-OVER_LIMIT ones to the month's usage, in one transaction. */
  insert(scans: readonly Scan[], events: readonly OutboxEvent[]): void;
  /** Inserts a Scan that ran elsewhere (an uploaded result) with its result files; it does not count against the monthly usage. */
  insertImported(scan: Scan, files: readonly StoredResultFile[]): void;
  findById(accountId: string, id: string): Scan | undefined;
  findByName(accountId: string, name: string): Scan | undefined;
  /** For the controller, which reconciles by id across accounts. */
  findByIdUnscoped(id: string): Scan | undefined;
  /**
   * Writes the scan's mutable fields and its events; returns false when the
   * row is gone or, with `expectedState`, when its state changed meanwhile
   * (a compare-and-set, so a stop request is never overwritten).
   */
  save(scan: Scan, events: readonly OutboxEvent[], expectedState?: ScanState): boolean;
  delete(accountId: string, id: string): boolean;
  list(accountId: string, query: ScanListQuery): Page<Scan>;
  /** Ids of scans in the states, oldest first, at most `limit` of them. */
  idsInStates(states: readonly ScanState[], limit?: number): string[];
  countInState(state: ScanState): number;
  /** Scans started in the month (YYYY-MM, UTC) that count against the monthly limit; deleting a scan does not lower it. */
  monthlyUsage(accountId: string, month: string): number;
  /** Records the scan's result files together with its new state and events, in one transaction. */
  saveWithResults(scan: Scan, files: readonly StoredResultFile[], events: readonly OutboxEvent[], expectedState: ScanState): boolean;
  findResult(accountId: string, id: string): StoredResultFile | undefined;
  eventsFor(accountId: string): OutboxEvent[];
}

export type RecordingKind = 'IMPORT' | 'SCAN';

export interface PendingRecording {
  scanId: string;
  accountId: string;
  kind: RecordingKind;
}

/** Risk recordings in several transactions; what is left at start-up was cut short by a crash. */
export interface PendingRecordings {
  begin(scanId: string, accountId: string, kind: RecordingKind, at: string): void;
  end(scanId: string): void;
  list(): PendingRecording[];
}

/** Where raw scanner output files live (the data directory, in both runtimes). */
export interface ResultFileStore {
  save(scanId: string, fileName: string, content: Uint8Array): Promise<{ size: number; sha256: string }>;
  open(scanId: string, fileName: string): Readable;
  /** The whole file, or undefined when it does not exist. */
  read(scanId: string, fileName: string): Promise<Uint8Array | undefined>;
  removeScan(scanId: string): Promise<void>;
}

export type WorkloadPhase = 'Running' | 'Succeeded' | 'Failed' | 'Missing';

export interface WorkloadOutput {
  file: string;
  contentType: string;
  content: Uint8Array;
}

export interface WorkloadStatus {
  phase: WorkloadPhase;
  /** The scanner's latest progress report, 0..100, when it reports one. */
  progress?: number;
  /** Failed: a CamelCase reason and a sentence saying what happened and what to do. */
  reason?: string;
  message?: string;
  /** Succeeded: the files the scanner wrote. */
  outputs?: WorkloadOutput[];
  /** Succeeded: what the scanner ran with that shapes its findings (nuclei's templates version), for the Scan's condition. */
  detail?: string;
  /** Running: look again after this long even without a change notice (a grace period that ends). */
  recheckAfterMs?: number;
}

/**
 * Thrown by WorkloadRunner.start when the platform refuses the workload for a
 * reason no retry can fix (the service may not write where the Scan must run):
 * the Scan fails with this reason and message instead of being retried.
 */
export class WorkloadRefusedError extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Where scanner workloads run: child processes in the embedded runtime,
 * Jobs on Kubernetes. Start is idempotent; a workload the runner does not
 * know (lost in a restart) is Missing.
 */
export interface WorkloadRunner {
  /** Starts the scanner on the resolved targets, which it reaches at their checked addresses only. */
  start(scan: Scan, targets: readonly ResolvedTarget[]): Promise<void>;
  observe(scanId: string): Promise<WorkloadStatus>;
  stop(scanId: string): Promise<void>;
  /** Frees what the workload left behind once its outputs are stored. */
  release(scanId: string): Promise<void>;
  /** Tells the controller that a workload changed (progress, exit) so it reconciles without waiting for a poll. */
  onChange(listener: (scanId: string) => void): void;
}

/** DNS, as the controller needs it: the IPv4 addresses of a host name. */
export interface HostResolver {
  resolve4(host: string): Promise<string[]>;
}

export interface UploadTokenRepository {
  save(scanId: string, hash: Buffer, createdAt: string): void;
  find(scanId: string): Buffer | undefined;
  /** The scan ended: its token opens nothing any more. */
  revoke(scanId: string): void;
}

/** The transactional outbox (DESIGN.md 8): events written in the caller's transaction. */
export interface EventOutbox {
  append(events: readonly OutboxEvent[]): void;
}

export const RISK_FILTER_KEYS = [
  'target_id',
  'status',
  'tags',
  'risk_definition.scan_type',
  'risk_definition.threat_level',
  'risk_definition.title',
] as const;
export type RiskFilterKey = (typeof RISK_FILTER_KEYS)[number];

export interface RiskListQuery {
  filters: Filters<RiskFilterKey>;
  pageSize: number;
  after: CursorValue[] | undefined;
  /** OpenVAS risks below this Quality of Detection are left out (the account's setting). */
  minOpenvasQod: number;
  /** Only accepted (true) or only unaccepted (false) risks. */
  accepted?: boolean | undefined;
  /** Only risks whose target address or label contains this text, ignoring case. */
  targetContains?: string | undefined;
}

/** Risks, their detections and which scans covered which targets. Every method runs in the caller's transaction when there is one. */
export interface RiskRepository {
  transaction<T>(fn: () => T): T;
  risksOf(targetId: string, scanType: ScanType): Risk[];
  insert(risk: Risk): void;
  update(risk: Risk): void;
  delete(riskId: string): void;
  recordCoverage(scanId: string, targetId: string, scanType: ScanType, coveredAt: string): void;
  recordDetection(scanId: string, riskId: string): void;
  /** Every scan that covered the target for the type, oldest first, with what each detected. */
  coverageOf(targetId: string, scanType: ScanType): Coverage[];
  /** The (target, type) pairs a scan covered: their risks' histories change when it is deleted. */
  coveredBy(scanId: string): Array<{ targetId: string; scanType: ScanType }>;
  /** Removes what a scan recorded in the history (its coverage and detections), keeping the scan itself. */
  forgetCoverage(scanId: string): void;
  findView(accountId: string, id: string): RiskView | undefined;
  list(accountId: string, query: RiskListQuery): Page<RiskView>;
  /** Open, unaccepted risks of the target by threat level, for its health score. */
  openCounts(targetId: string): OpenRiskCounts;
}

export interface WebhookEndpoint {
  id: string;
  accountId: string;
  url: string;
  secret: string;
  createdAt: string;
}

export interface WebhookEndpointRepository {
  insert(endpoint: WebhookEndpoint): void;
  find(accountId: string, id: string): WebhookEndpoint | undefined;
  listFor(accountId: string): WebhookEndpoint[];
  delete(accountId: string, id: string): boolean;
}

export interface DueDelivery {
  eventId: string;
  /** The serialized Event object: the same bytes to every endpoint and on every attempt. */
  body: string;
  endpoint: WebhookEndpoint;
  attempts: number;
  /** Its next_attempt_at before it was claimed: where `release` puts it back. */
  dueAt: string;
}

export interface DeliveryAttempt {
  eventId: string;
  endpointId: string;
  attemptedAt: string;
  status: number | null;
  error: string | null;
  durationMs: number;
  /** The delivery's state after this attempt, and when to try again while PENDING. */
  state: 'PENDING' | 'DELIVERED' | 'FAILED';
  nextAttemptAt: string;
}

/** Delivery state of webhook events, kept in the database so that a restart loses nothing (DESIGN.md 8). */
export interface WebhookDeliveryRepository {
  /** Creates a PENDING delivery for every new outbox event and every endpoint its account had when it was recorded. */
  fanOut(): number;
  /** The endpoints that have a PENDING delivery due at `now` or earlier. */
  endpointsWithDue(now: string): string[];
  /**
   * In one transaction, as each commit waits for the disk: records `attempts`,
   * then, given a claim, takes up to `rooms.get(endpoint)` due deliveries of
   * each endpoint, oldest first, and moves their next_attempt_at to `until`,
   * so that no later claim selects them while their attempt runs; should the
   * process die, they are due again at `until`. An attempt recorded, or
   * `release`, ends the claim.
   */
  recordAndClaim(attempts: readonly DeliveryAttempt[], claim?: DueClaim): DueDelivery[];
  /** Gives claimed deliveries that were never attempted their due time back. */
  release(deliveries: readonly DueDelivery[]): void;
}

export interface DueClaim {
  now: string;
  until: string;
  rooms: ReadonlyMap<string, number>;
}

/** One delivery attempt as the dashboard's delivery log shows it. */
export interface LoggedAttempt {
  eventId: string;
  eventType: string;
  attemptedAt: string;
  status: number | null;
  error: string | null;
  durationMs: number;
}

export interface DeliveryCounts {
  pending: number;
  delivered: number;
  failed: number;
}

/** The read side of delivery state, per endpoint: what the dashboard shows. */
export interface WebhookDeliveryLog {
  /** The endpoint's latest attempts, newest first. */
  attemptsFor(endpointId: string, limit: number): LoggedAttempt[];
  countsFor(endpointId: string): DeliveryCounts;
}

/** A dashboard sign-in; only the SHA-256 hash of its token is stored. */
export interface DashboardSession {
  tokenHash: Buffer;
  accountId: string;
  apiKeyId: string;
  csrfToken: string;
  createdAt: string;
  expiresAt: string;
}

export interface DashboardSessionRepository {
  insert(session: DashboardSession): void;
  /** The session when it has not expired and the API key it was opened with is not revoked. */
  findLive(tokenHash: Buffer, now: string): DashboardSession | undefined;
  delete(tokenHash: Buffer): void;
  /** Removes expired sessions and those of revoked keys; returns how many. */
  deleteEnded(now: string): number;
}

export type { ScanType };

export const SOURCE_FILTER_KEYS = ['source_type', 'name'] as const;
export type SourceFilterKey = (typeof SOURCE_FILTER_KEYS)[number];

export interface SourceListQuery {
  filters: Filters<SourceFilterKey>;
  pageSize: number;
  after: CursorValue[] | undefined;
}

/** Sources of uploaded results, and which import Scan came from which source. */
export interface SourceRepository {
  insert(source: Source): void;
  findById(accountId: string, id: string): Source | undefined;
  list(accountId: string, query: SourceListQuery): Page<Source>;
  /** Records that the Scan was uploaded into the source; runs in the caller's transaction. */
  linkScan(scanId: string, sourceId: string): void;
}

export interface ScheduledScan {
  id: string;
  accountId: string;
  /** The object name: the custom resource's on Kubernetes; the stem of the names of the Scans its runs create. */
  objectName: string;
  name: string | null;
  schedule: ScheduleKind;
  scanTypes: ScanType[];
  filterTargetIds: string[];
  filterTags: string[];
  emailNotification: EmailNotification;
  emailTo: string[];
  /** The first run (ONCE to MONTHLY) or the earliest moment a run may happen (QUARTERLY, CUSTOM). */
  startTime: string;
  scheduleDates: string[] | null;
  timeZone: string | null;
  disabled: boolean;
  /** Null when no run is left (disabled, ONCE already ran, CUSTOM dates used up). */
  nextRun: string | null;
  lastRan: string | null;
  createdAt: string;
}

export interface ScheduledScanRepository {
  insert(scheduledScan: ScheduledScan): void;
  update(scheduledScan: ScheduledScan): void;
  findById(accountId: string, id: string): ScheduledScan | undefined;
  delete(accountId: string, id: string): boolean;
  list(accountId: string, pageSize: number, after: readonly CursorValue[] | undefined): Page<ScheduledScan>;
  /** For the controller, which reconciles by id across accounts. */
  findByIdUnscoped(id: string): ScheduledScan | undefined;
  /** The one with this object name: a ScheduledScan custom resource's row (names are unique per account). */
  findByObjectName(accountId: string, objectName: string): ScheduledScan | undefined;
  /** Ids of the schedules that have a run left (next_run set), for the controller's start. */
  idsWithNextRun(): string[];
  /**
   * Records that a run happened: sets last_ran and next_run only when next_run
   * is still `expectedNextRun` (a compare-and-set, so two controllers never
   * record the same run twice); false when it changed meanwhile or the row is gone.
   */
  recordRun(id: string, expectedNextRun: string, lastRan: string, nextRun: string | null): boolean;
}

export type RunNotificationState = 'PENDING' | 'SENT' | 'NOT_NEEDED' | 'FAILED';

/** One run of a ScheduledScan: the Scans it created and the e-mail it owes once they are all finished. */
export interface ScheduledRun {
  scheduledScanId: string;
  /** The scheduled instant this run stands for (the key, with the schedule's id). */
  runAt: string;
  accountId: string;
  /** The schedule's name, or its object name when it has none, as it was at run time. */
  scheduleName: string;
  startedAt: string;
  scanIds: string[];
  /** Scan types that created no Scan, and why (no target selected, the plan does not include the type). */
  skipped: Array<{ scanType: ScanType; reason: string }>;
  emailNotification: EmailNotification;
  emailTo: string[];
  notification: RunNotificationState;
  emailAttempts: number;
  nextEmailAt: string;
  lastError: string | null;
}

export interface ScheduledRunRepository {
  /** Runs `fn` in one immediate transaction: a run's record, its Scans and the schedule's new next_run commit together. */
  transaction<T>(fn: () => T): T;
  /** Inserts the run; false when a run of this schedule at this instant exists already. */
  insert(run: ScheduledRun): boolean;
  /** Runs whose notification is PENDING and due at `now`, oldest first. */
  pendingNotifications(now: string, limit: number): ScheduledRun[];
  /** Records the outcome of a notification attempt. */
  saveNotification(run: Pick<ScheduledRun, 'scheduledScanId' | 'runAt' | 'notification' | 'emailAttempts' | 'nextEmailAt' | 'lastError'>): void;
  runsOf(scheduledScanId: string): ScheduledRun[];
}

export interface EmailMessage {
  to: string[];
  subject: string;
  text: string;
  html: string;
}

/** Sends e-mail (SMTP through nodemailer; or the log, when no server is set). Throws when the message was not accepted. */
export interface Mailer {
  send(message: EmailMessage): Promise<void>;
}

/** A report's row: what it was made from; its snapshot and files are in ReportFiles. */
export interface ReportRecord {
  id: string;
  accountId: string;
  format: ReportFormat;
  filters: ReportFilters;
  riskCount: number;
  matchedRisks: number;
  targetCount: number;
  createdAt: string;
}

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
  matchedRisks: number;
}

export interface ReportRepository {
  insert(record: ReportRecord): void;
  find(accountId: string, id: string): ReportRecord | undefined;
  /** The account's reports, newest first. */
  listRecent(accountId: string, limit: number): ReportRecord[];
  /** Reads the selected targets and risks in one read transaction, so counts and rows agree. */
  readScope(accountId: string, selection: ReportSelection): ReportScope;
}

/** A report's snapshot and rendered files (VIGIL_DATA_DIR/reports/<id>/), each written to a temporary name and renamed into place. */
export interface ReportFiles {
  saveSnapshot(reportId: string, snapshot: ReportSnapshot): Promise<void>;
  loadSnapshot(reportId: string): Promise<ReportSnapshot | undefined>;
  /** Writes the rendering through `write`, which ends the stream; only a complete file appears under its name. */
  saveRendering(reportId: string, format: ReportFormat, write: (out: Writable) => Promise<void>): Promise<void>;
  /** The rendered file and its size, or undefined when that format has not been rendered yet. */
  openRendering(reportId: string, format: ReportFormat): Promise<{ content: Readable; size: number } | undefined>;
}

/** Writes a report in one format and ends `out` (the renderers are adapters: PDF on pdfkit, HTML, CSV on csv-stringify). */
export type ReportRenderer = (report: ReportModel, out: Writable) => Promise<void>;
export type ReportRenderers = Readonly<Record<ReportFormat, ReportRenderer>>;
/**
 * What the dashboard reads across resources: account-wide counts and the
 * links between targets, scans and risks. Every query is scoped by account
 * and bounded (a limit, or a group by a handful of values) so that pages stay
 * fast on large accounts.
 */
export interface DashboardReadRepository {
  /** Open, unaccepted risks by threat level; OpenVAS risks below the QoD left out, as the risk list does. */
  openRisksByLevel(accountId: string, minOpenvasQod: number): OpenRiskCounts;
  /** Per UTC day since `since`: the risks scans saw for the first time (new_open) and the risks they closed. */
  dailyRiskChanges(accountId: string, since: string): DailyChanges[];
  targetsByGrade(accountId: string): Partial<Record<HealthGrade, number>>;
  /** Open, unaccepted risks of each of the targets, by threat level (targets without any are left out). */
  openRisksOfTargets(accountId: string, targetIds: readonly string[], minOpenvasQod: number): Map<string, OpenRiskCounts>;
  /** The newest scans that were asked to scan the target, newest first. */
  scanIdsOfTarget(accountId: string, targetId: string, limit: number): string[];
  /** The scans that detected the risk, newest first. */
  scanIdsDetecting(accountId: string, riskId: string, limit: number): string[];
  /** Enabled schedules with a run left, soonest first. */
  nextScheduledIds(accountId: string, limit: number): string[];
}
