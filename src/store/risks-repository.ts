import type { ChangedRisk, Page, RiskListQuery, RiskRepository, RiskSortField } from '../app/ports.js';
import type { RiskDefinition, ScanType, ThreatLevel } from '../domain/risks/finding.js';
import type { Acceptance, Coverage, ExistingRisk, Risk, RiskStatus, RiskView } from '../domain/risks/risk.js';
import type { CursorValue } from '../domain/lists/page-token.js';
import type { OpenRiskCounts } from '../domain/targets/health-score.js';
import type { Database } from './database.js';
import { createStagingTables } from './recording-staging.js';
import { RISK_LISTS, type RiskLists } from './scans-repository.js';
import { afterCursor, combinations, MAX_ARMS, orderBy, type Equal, type Equality, type KeysetColumn } from './keyset.js';
import { MERGED_UPTO, RiskTitles } from './risk-titles.js';

interface RiskRow {
  seq: number;
  id: string;
  account_id: string;
  target_id: string;
  scan_type: ScanType;
  fingerprint: string;
  status: RiskStatus;
  first_detected_at: string;
  last_detected_at: string;
  is_accepted: number;
  accepted_by: string;
  definition: string;
  created_at: string;
}

interface RiskViewRow extends RiskRow {
  target: string;
  target_label: string;
  target_tags: string;
  /** The sort field's value, when the list is sorted. */
  sort_key?: CursorValue;
}

function toRisk(row: RiskRow): Risk {
  return {
    id: row.id,
    accountId: row.account_id,
    targetId: row.target_id,
    scanType: row.scan_type,
    fingerprint: row.fingerprint,
    status: row.status,
    firstDetectedAt: row.first_detected_at,
    lastDetectedAt: row.last_detected_at,
    isAccepted: row.is_accepted === 1,
    acceptedBy: JSON.parse(row.accepted_by) as Acceptance[],
    definition: JSON.parse(row.definition) as RiskDefinition,
    createdAt: row.created_at,
  };
}

function toView(row: RiskViewRow): RiskView {
  return { ...toRisk(row), target: row.target, targetLabel: row.target_label, tags: JSON.parse(row.target_tags) as string[] };
}

function toParams(risk: Risk) {
  const qod = risk.definition.additional_info.qod;
  return {
    id: risk.id,
    accountId: risk.accountId,
    targetId: risk.targetId,
    scanType: risk.scanType,
    fingerprint: risk.fingerprint,
    status: risk.status,
    firstDetectedAt: risk.firstDetectedAt,
    lastDetectedAt: risk.lastDetectedAt,
    isAccepted: risk.isAccepted ? 1 : 0,
    acceptedBy: JSON.stringify(risk.acceptedBy),
    title: risk.definition.title,
    threatLevel: risk.definition.threat_level,
    qod: typeof qod === 'number' ? Math.round(qod) : null,
    definition: JSON.stringify(risk.definition),
    createdAt: risk.createdAt,
  };
}

/**
 * A view row's columns, seq first and taken from `seq`: a compound SELECT is
 * merged in seq order without a sort only when each arm's seq is the column
 * its walk is ordered by (risk_titles' for the title filter's merged arm).
 */
const viewColumns = (seq = 'r.seq') =>
  `${seq} AS seq, r.id, r.account_id, r.target_id, r.scan_type, r.fingerprint, r.status, r.first_detected_at, r.last_detected_at, r.is_accepted, ` +
  'r.accepted_by, r.title, r.threat_level, r.qod, r.definition, r.created_at, t.target AS target, t.label AS target_label, t.tags AS target_tags';
const VIEW_COLUMNS = viewColumns();
const VIEW = `SELECT ${VIEW_COLUMNS} FROM risks r JOIN targets t ON t.id = r.target_id`;

/**
 * Severity as a number, CRITICAL highest. Index risks_by_account_threat
 * (migration 0020) holds this same expression: SQLite uses an expression index
 * only for the identical expression, so change both or neither
 * (test/store/risk-sort-plans.test.ts checks the plan).
 */
export const THREAT_RANK = "(CASE r.threat_level WHEN 'CRITICAL' THEN 4 WHEN 'HIGH' THEN 3 WHEN 'MEDIUM' THEN 2 WHEN 'LOW' THEN 1 ELSE 0 END)";

const SORT_EXPRESSIONS: Record<RiskSortField, string> = {
  threat_level: THREAT_RANK,
  first_detected_at: 'r.first_detected_at',
  last_detected_at: 'r.last_detected_at',
  target: 't.target',
};

/**
 * The sort field, then seq in the same direction as the unique tiebreaker
 * (newest first without a sort): each order is then one walk of an index of
 * the account's risks, never a sort of them (test/store/risk-sort-plans.test.ts).
 */
function keysetColumns(query: RiskListQuery): KeysetColumn[] {
  const field = query.sort?.[0];
  if (field === undefined) return [{ expression: 'r.seq', direction: 'desc' }];
  return [
    { expression: SORT_EXPRESSIONS[field.field], direction: field.direction },
    { expression: 'r.seq', direction: field.direction },
  ];
}

/**
 * The rows to walk. By target: the account's targets in address order, each
 * target's risks by seq (risks_by_target_seq); CROSS JOIN keeps SQLite
 * from reading risks first and sorting them by their target's address.
 */
function listSource(
  query: RiskListQuery,
  accountId: string,
  byTargets: boolean,
  risksFirst = false,
): { sql: string; accountCondition: string; accountParams: string[] } {
  const sortKey = query.sort?.[0] === undefined ? '' : `, ${SORT_EXPRESSIONS[query.sort[0].field]} AS sort_key`;
  if (query.sort?.[0]?.field === 'target' && !risksFirst) {
    // Both account conditions as parameters: written r.account_id = t.account_id, SQLite walked all the account's risks for each target.
    const sql = `SELECT ${VIEW_COLUMNS}${sortKey} FROM targets t CROSS JOIN risks r ON r.target_id = t.id`;
    return { sql, accountCondition: 't.account_id = ? AND r.account_id = ?', accountParams: [accountId, accountId] };
  }
  // A few targets' risks (a target, tag or text filter): each target's range, then sorted. Left to itself, SQLite
  // walked every risk of the account in page order to avoid that sort, reading each row to test its target.
  const risks = byTargets ? 'risks r INDEXED BY risks_by_target_seq' : 'risks r';
  return {
    sql: `SELECT ${VIEW_COLUMNS}${sortKey} FROM ${risks} JOIN targets t ON t.id = r.target_id`,
    accountCondition: 'r.account_id = ?',
    accountParams: [accountId],
  };
}

const cursorOf = (row: RiskViewRow): CursorValue[] => (row.sort_key === undefined ? [row.seq] : [row.sort_key, row.seq]);

/** Filter keys and the SQL each tests, with '?' placeholders for its values (reports filter risks the same way; tags and targets apart). */
export const FILTER_SQL: Record<string, (count: number) => string> = {
  target_id: (n) => `r.target_id IN (${marks(n)})`,
  status: (n) => `r.status IN (${marks(n)})`,
  'risk_definition.scan_type': (n) => `r.scan_type IN (${marks(n)})`,
  'risk_definition.threat_level': (n) => `r.threat_level IN (${marks(n)})`,
  'risk_definition.title': (n) => `r.title IN (${marks(n)})`,
};

interface Test {
  sql: string;
  params: CursorValue[];
}

interface Selection {
  equalities: Equality[];
  tests: Test[];
  /** A set of targets is asked for: their risks are read target by target. */
  byTargets: boolean;
}

/** The columns of the filters that name values of one column (tags and text are resolved to target ids first). */
const FILTER_COLUMNS: Record<string, string> = {
  status: 'r.status',
  'risk_definition.scan_type': 'r.scan_type',
  // By severity, whose expression numbers the five levels one to one: risks_by_account_threat and, with status,
  // risks_by_account_status_threat (migration 0035) hold it. selectionOf() gives the numbers (SEVERITY).
  'risk_definition.threat_level': THREAT_RANK,
  'risk_definition.title': 'r.title',
};

/** Each threat level's number in THREAT_RANK; a value that names no level matches nothing (-1). */
const SEVERITY: Readonly<Record<string, number>> = { CRITICAL: 4, HIGH: 3, MEDIUM: 2, LOW: 1, INFO: 0 };
const EVERY_SEVERITY = [4, 3, 2, 1, 0];

/** Where a list's rows come from: the FROM clause, the column its walk runs in order of, and the conditions that pick the account's. */
interface Source {
  from: string;
  seq: string;
  where: string[];
  params: CursorValue[];
}

const accountRisks = (accountId: string): Source => ({
  from: 'risks r JOIN targets t ON t.id = r.target_id',
  seq: 'r.seq',
  where: ['r.account_id = ?'],
  params: [accountId],
});

/**
 * A title filter's two sources (migration 0034): the merged risks by
 * risk_titles' key (account, title, seq), and the pending ones, above
 * risk_titles_merged.upto, from the newest end of the account's risks. Each
 * is walked newest first.
 */
function titleSources(accountId: string, titles: readonly CursorValue[]): Source[] {
  return [
    {
      from: 'risk_titles k CROSS JOIN risks r ON r.seq = k.seq JOIN targets t ON t.id = r.target_id',
      seq: 'k.seq',
      where: ['k.account_id = ?', `k.title IN (${marks(titles.length)})`],
      params: [accountId, ...titles],
    },
    {
      ...accountRisks(accountId),
      where: [`r.seq > ${MERGED_UPTO}`, 'r.account_id = ?', `r.title IN (${marks(titles.length)})`],
      params: [accountId, ...titles],
    },
  ];
}

/** The title filter's values, when they choose the rows to read: not with a set of targets, whose ranges are read instead. */
function titleOf<T extends { column: string }>(equalities: readonly T[]): T | undefined {
  return equalities.some((equality) => equality.column === 'r.target_id') ? undefined : equalities.find((equality) => equality.column === 'r.title');
}

/** Up to this many targets matching a text or tags filter are looked up by id; SQLite allows 32,766 parameters. */
const FEW_TARGETS = 500;

/**
 * Tags carried by many targets: a risk's target (t, joined for the view)
 * looked up in target_tags' key, one seek per risk walked, so the walk stops
 * at the page. `r.target_id IN (SELECT ...)` first read every tagged target's
 * row to list their ids, and named no account, so it scanned the tags of
 * every account: its first run after a start held the event loop 52-74 ms
 * for a tag on 10,000 targets (bench/scale.ts).
 */
const TAGGED_TARGET_SQL = (tags: number) =>
  `EXISTS (SELECT 1 FROM target_tags g WHERE g.account_id = r.account_id AND g.tag IN (${marks(tags)}) AND g.target_seq = t.seq)`;

/** The filters' values as SQL conditions (a column IN its values) and their parameters. */
function filterConditions(equalities: readonly Equality[]): { where: string[]; params: CursorValue[] } {
  return {
    where: equalities.map((equality) => `${equality.column} IN (${marks(equality.values.length)})`),
    params: equalities.flatMap((equality) => equality.values),
  };
}

/** A sorted list whose filters match at most this many risks reads them and sorts them (fewMatch). */
export const FEW_MATCHES = 2000;

export function marks(count: number): string {
  return Array.from({ length: count }, () => '?').join(', ');
}

/** A column of the staged finding whose key is the parameter (insertStaged). */
const STAGED = (column: string) => `SELECT ${column} FROM temp.staged_findings WHERE seq = ?`;

/**
 * Open risks to add to the overview's counters, by counter row: threat level
 * and the OpenVAS quality gate (an OpenVAS risk with a quality of detection is
 * counted under it, read at or above the account's minimum), as migration
 * 0026's triggers key them.
 */
class OpenCounts {
  private readonly counts = new Map<string, [ThreatLevel, number, number, number]>();

  add(level: ThreatLevel, scanType: ScanType, qod: number | null, n = 1): this {
    const gated = scanType === 'OPENVAS' && qod !== null ? 1 : 0;
    const gate = gated === 1 ? qod! : 0;
    const key = `${level} ${gated} ${gate}`;
    const row = this.counts.get(key);
    if (row === undefined) this.counts.set(key, [level, gated, gate, n]);
    else row[3] += n;
    return this;
  }

  rows(): IterableIterator<[ThreatLevel, number, number, number]> {
    return this.counts.values();
  }
}

export class SqliteRiskRepository implements RiskRepository {
  private readonly statements;

  constructor(
    private readonly db: Database,
    /** FEW_MATCHES unless a test sets it (a small fixture is all "few"). */
    private readonly fewMatches = FEW_MATCHES,
    /** FEW_TARGETS unless a test sets it (to walk the risks of a tag on "many" targets). */
    private readonly fewTargets = FEW_TARGETS,
    private readonly titles = new RiskTitles(db),
  ) {
    createStagingTables(db);
    this.statements = {
      of: db.prepare('SELECT * FROM risks WHERE target_id = ? AND scan_type = ? ORDER BY seq'),
      insert: db.prepare(`INSERT INTO risks (id, account_id, target_id, scan_type, fingerprint, status, first_detected_at, last_detected_at,
          is_accepted, accepted_by, title, threat_level, qod, definition, created_at)
        VALUES (@id, @accountId, @targetId, @scanType, @fingerprint, @status, @firstDetectedAt, @lastDetectedAt,
          @isAccepted, @acceptedBy, @title, @threatLevel, @qod, @definition, @createdAt)`),
      update: db.prepare(`UPDATE risks SET status = @status, first_detected_at = @firstDetectedAt, last_detected_at = @lastDetectedAt,
          is_accepted = @isAccepted, accepted_by = @acceptedBy, title = @title, threat_level = @threatLevel, qod = @qod, definition = @definition
        WHERE id = @id AND account_id = @accountId`),
      // Only the history's columns: SQLite rewrites the entries of the indexes whose columns a SET names, and the full
      // update names those of nine of them (threat level, title, ...) for a recompute that changes none.
      updateHistory: db.prepare(`UPDATE risks SET status = @status, first_detected_at = @firstDetectedAt, last_detected_at = @lastDetectedAt
        WHERE id = @id AND account_id = @accountId`),
      keysOf: db.prepare('SELECT id, fingerprint, status FROM risks WHERE target_id = ? AND scan_type = ? ORDER BY seq'),
      findMany: db.prepare('SELECT r.* FROM json_each(?) j JOIN risks r ON r.id = j.value ORDER BY j.key'),
      // A new risk from its staged finding (insertStaged): the finding's columns read by SQLite itself, by the staged row's key.
      insertStaged: db.prepare(`INSERT INTO risks (id, account_id, target_id, scan_type, fingerprint, status, first_detected_at, last_detected_at,
          is_accepted, accepted_by, title, threat_level, qod, definition, created_at)
        VALUES (?, ?, ?, ?, (${STAGED('fingerprint')}), 'OPEN', ?, ?, 0, '[]',
          (${STAGED('title')}), (${STAGED('threat_level')}), (${STAGED('qod')}), (${STAGED('definition')}), ?)`),
      // What the counters need of the staged findings inserted (insertStaged): how many of each level and quality of detection.
      stagedLevels: db
        .prepare(
          `SELECT s.threat_level, s.qod, COUNT(*) FROM json_each(?) j JOIN temp.staged_findings s ON s.seq = j.value ->> 0
          GROUP BY s.threat_level, s.qod`,
        )
        .raw(),
      // Migration 0033: inserts count themselves (the update and delete triggers of 0026 and 0030 keep the rest).
      countOpen: db.prepare(`INSERT INTO open_risk_counts (account_id, threat_level, gated, qod, n) VALUES (?, ?, ?, ?, ?)
        ON CONFLICT (account_id, threat_level, gated, qod) DO UPDATE SET n = n + excluded.n`),
      redetectStaged: db.prepare(`UPDATE risks SET status = 'OPEN', last_detected_at = ?,
          title = s.title, threat_level = s.threat_level, qod = s.qod, definition = s.definition
        FROM json_each(?) j JOIN temp.staged_findings s ON s.seq = j.value ->> 0
        WHERE risks.id = j.value ->> 1`),
      close: db.prepare(`UPDATE risks SET status = 'CLOSED' WHERE id IN (SELECT value FROM json_each(?))`),
      delete: db.prepare('DELETE FROM risks WHERE id = ?'),
      coverage: db.prepare('INSERT OR REPLACE INTO scan_coverage (scan_id, target_id, scan_type, covered_at) VALUES (?, ?, ?, ?)'),
      detection: db.prepare('INSERT OR IGNORE INTO detections (scan_id, risk_id) VALUES (?, ?)'),
      coverageOf: db.prepare('SELECT scan_id, covered_at FROM scan_coverage WHERE target_id = ? AND scan_type = ? ORDER BY covered_at, scan_id'),
      // From the pair's risks to the scans that detected them (detections_by_risk), not from each covering scan to all
      // its detections: a scan of 40,020 risks made each of its 400 pairs read 40,020 rows (a deletion took 95 s, bench/scale.ts).
      detectionsOf: db.prepare(`SELECT d.scan_id, r.fingerprint FROM risks r JOIN detections d ON d.risk_id = r.id
        WHERE r.target_id = ? AND r.scan_type = ?`),
      coveredBy: db.prepare('SELECT target_id, scan_type FROM scan_coverage WHERE scan_id = ?'),
      forgetDetections: db.prepare('DELETE FROM detections WHERE scan_id = ?'),
      forgetCoverage: db.prepare('DELETE FROM scan_coverage WHERE scan_id = ?'),
      // scan_risks belongs to the scans' repository, which reads it; a chunked recording writes its entries from here (appendRiskLists).
      appendRiskList: db.prepare(`INSERT INTO scan_risks (scan_seq, list, position, risk_id)
        SELECT s.seq, @list, @from + j.key, j.value FROM scans s, json_each(@ids) j WHERE s.id = @scanId`),
      forgetRiskLists: db.prepare('DELETE FROM scan_risks WHERE scan_seq = (SELECT seq FROM scans WHERE id = ?)'),
      view: db.prepare(`${VIEW} WHERE r.account_id = ? AND r.id = ?`),
      ownTargets: db.prepare('SELECT id FROM targets WHERE account_id = ? AND id IN (SELECT value FROM json_each(?))').pluck(),
      targetsContaining: db.prepare('SELECT id FROM targets WHERE account_id = ? AND (instr(lower(target), ?) > 0 OR instr(lower(label), ?) > 0) LIMIT ?'),
      openCounts: db.prepare(`SELECT threat_level, COUNT(*) AS n FROM risks WHERE target_id = ? AND status = 'OPEN' AND is_accepted = 0 GROUP BY threat_level`),
    };
  }

  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  risksOf(targetId: string, scanType: ScanType): Risk[] {
    return (this.statements.of.all(targetId, scanType) as RiskRow[]).map(toRisk);
  }

  insert(risk: Risk): void {
    const params = toParams(risk);
    const { lastInsertRowid } = this.statements.insert.run(params);
    if (risk.status === 'OPEN' && !risk.isAccepted)
      this.countOpen(risk.accountId, new OpenCounts().add(risk.definition.threat_level, risk.scanType, params.qod));
    this.titles.mergeIfPast(Number(lastInsertRowid));
  }

  keysOf(targetId: string, scanType: ScanType): ExistingRisk[] {
    return this.statements.keysOf.all(targetId, scanType) as ExistingRisk[];
  }

  findMany(riskIds: readonly string[]): Risk[] {
    if (riskIds.length === 0) return [];
    return (this.statements.findMany.all(JSON.stringify(riskIds)) as RiskRow[]).map(toRisk);
  }

  /**
   * New risks from staged findings, each row in a statement of its own: a
   * single-row INSERT ... VALUES, whose columns SQLite reads from the staged
   * row by its key (scalar subqueries), so the definition text never comes
   * into JS and goes back, and is never parsed; then what the counters need
   * of them, counted by SQLite. A single INSERT ... SELECT of the chunk's
   * rows, a RETURNING clause or a trigger on risks makes SQLite keep a
   * statement journal of every page the statement changes, which it spills
   * to a temporary file past 64 KiB (migration 0033; bench/ingest.ts under
   * strace: 792 MB written with INSERT ... SELECT, 3.3 GB with RETURNING,
   * against 485 MB this way and 509 MB when the columns were read into JS
   * and bound back; the CPU time was the same within the runs' spread).
   */
  insertStaged(accountId: string, scanType: ScanType, at: string, rows: ReadonlyArray<readonly [number, string, string]>): void {
    if (rows.length === 0) return;
    let lastSeq = 0;
    const insert = this.statements.insertStaged;
    for (const [staged, id, targetId] of rows) {
      lastSeq = Number(insert.run(id, accountId, targetId, scanType, staged, at, at, staged, staged, staged, staged, at).lastInsertRowid);
    }
    const counts = new OpenCounts();
    for (const [level, qod, n] of this.statements.stagedLevels.all(JSON.stringify(rows)) as Array<[ThreatLevel, number | null, number]>) {
      counts.add(level, scanType, qod, n);
    }
    this.countOpen(accountId, counts);
    this.titles.mergeIfPast(lastSeq);
  }

  private countOpen(accountId: string, counts: OpenCounts): void {
    for (const [level, gated, qod, n] of counts.rows()) this.statements.countOpen.run(accountId, level, gated, qod, n);
  }

  redetectStaged(at: string, rows: ReadonlyArray<readonly [number, string]>): void {
    if (rows.length > 0) this.statements.redetectStaged.run(at, JSON.stringify(rows));
  }

  close(riskIds: readonly string[]): void {
    if (riskIds.length > 0) this.statements.close.run(JSON.stringify(riskIds));
  }

  update(risk: Risk): void {
    this.statements.update.run(toParams(risk));
  }

  updateHistory(risk: Risk): void {
    const { id, accountId, status, firstDetectedAt, lastDetectedAt } = risk;
    this.statements.updateHistory.run({ id, accountId, status, firstDetectedAt, lastDetectedAt });
  }

  delete(riskId: string): void {
    this.statements.delete.run(riskId);
  }

  recordCoverage(scanId: string, targetId: string, scanType: ScanType, coveredAt: string): void {
    this.statements.coverage.run(scanId, targetId, scanType, coveredAt);
  }

  recordDetection(scanId: string, riskId: string): void {
    this.statements.detection.run(scanId, riskId);
  }

  /**
   * Every risk the scan detected on a target, in one call from the history.
   * One prepared INSERT per row: measured faster here than a single INSERT
   * ... SELECT FROM json_each of the ids (bench/ingest.ts: ~0.25-0.3 s
   * against ~0.42 s for 45,000 detections).
   */
  recordDetections(scanId: string, riskIds: readonly string[]): void {
    for (const riskId of riskIds) this.statements.detection.run(scanId, riskId);
  }

  coverageOf(targetId: string, scanType: ScanType): Coverage[] {
    const byScan = new Map<string, Coverage & { fingerprints: Set<string> }>();
    for (const row of this.statements.coverageOf.all(targetId, scanType) as Array<{ scan_id: string; covered_at: string }>)
      byScan.set(row.scan_id, { scanId: row.scan_id, coveredAt: row.covered_at, fingerprints: new Set<string>() });
    // A detection whose scan no longer covers the pair (a deleted scan's, not yet swept) counts for nothing.
    for (const row of this.statements.detectionsOf.all(targetId, scanType) as Array<{ scan_id: string; fingerprint: string }>)
      byScan.get(row.scan_id)?.fingerprints.add(row.fingerprint);
    return [...byScan.values()];
  }

  coveredBy(scanId: string): Array<{ targetId: string; scanType: ScanType }> {
    return (this.statements.coveredBy.all(scanId) as Array<{ target_id: string; scan_type: ScanType }>).map((row) => ({
      targetId: row.target_id,
      scanType: row.scan_type,
    }));
  }

  forgetCoverage(scanId: string): void {
    this.statements.forgetDetections.run(scanId);
    this.statements.forgetCoverage.run(scanId);
    this.statements.forgetRiskLists.run(scanId);
  }

  appendRiskLists(scanId: string, lists: RiskLists, from: { [list in keyof RiskLists]: number }): void {
    for (const [list, key] of RISK_LISTS.entries()) {
      if (lists[key].length > 0) this.statements.appendRiskList.run({ scanId, list, from: from[key], ids: JSON.stringify(lists[key]) });
    }
  }

  findView(accountId: string, id: string): RiskView | undefined {
    const row = this.statements.view.get(accountId, id) as RiskViewRow | undefined;
    return row && toView(row);
  }

  changedRisks(accountId: string, ids: readonly string[]): ChangedRisk[] {
    if (ids.length === 0) return [];
    return this.db
      .prepare(
        `SELECT r.id, r.target_id AS targetId, t.target, t.label, r.title, r.threat_level AS threatLevel, r.scan_type AS scanType
          FROM risks r JOIN targets t ON t.id = r.target_id WHERE +r.account_id = ? AND r.id IN (${marks(ids.length)})`,
      )
      .all(accountId, ...ids) as ChangedRisk[];
  }

  list(accountId: string, query: RiskListQuery): Page<RiskView> {
    const selection = this.selectionOf(accountId, query);
    if (selection === undefined) return { items: [], nextCursor: undefined };
    const columns = keysetColumns(query);
    if (query.after !== undefined) selection.tests.push(afterCursor(columns, query.after));
    const titled = titleOf(selection.equalities) !== undefined;
    // A title's arm is two SELECTs (titleSources): half as many arms, within SQLite's 500 terms of a compound SELECT.
    const arms = query.sort?.[0] === undefined ? combinations(selection.equalities, titled ? MAX_ARMS / 2 : MAX_ARMS) : undefined;
    const rows =
      arms !== undefined && (arms.length > 1 || titled)
        ? this.merge(accountId, query, arms, selection.tests)
        : this.fewMatch(accountId, query, selection)
          ? this.walk(accountId, query, selection, columns, true)
          : this.walk(accountId, query, selection, columns);
    const more = rows.length > query.pageSize;
    const page = more ? rows.slice(0, query.pageSize) : rows;
    return { items: page.map(toView), nextCursor: more ? cursorOf(page.at(-1)!) : undefined, cursorAt: (index) => cursorOf(page[index]!) };
  }

  /**
   * What the filters ask for: the values each column must hold, and the tests
   * rows must pass. A target_id filter, the targets of tags and those whose
   * text matches narrow one set of target ids. Undefined: nothing can match.
   */
  private selectionOf(accountId: string, query: RiskListQuery): Selection | undefined {
    const equalities: Equality[] = [];
    const tests: Test[] = [{ sql: "(r.scan_type <> 'OPENVAS' OR r.qod IS NULL OR r.qod >= ?)", params: [query.minOpenvasQod] }];
    // Only the account's own targets: their risks are read by target_id alone (risks_by_target_seq), the account tested on each row.
    let targetIds = query.filters.target_id === undefined ? undefined : this.ownTargets(accountId, query.filters.target_id);
    const narrow = (ids: readonly string[]) => (targetIds = targetIds === undefined ? [...ids] : targetIds.filter((id) => ids.includes(id)));
    for (const [key, values] of Object.entries(query.filters) as Array<[string, string[]]>) {
      if (key === 'target_id') continue;
      if (key !== 'tags') {
        const distinct = [...new Set(values)];
        equalities.push({
          column: FILTER_COLUMNS[key]!,
          values: key === 'risk_definition.threat_level' ? distinct.map((level) => SEVERITY[level] ?? -1) : distinct,
        });
        continue;
      }
      const tagged = this.targetsTagged(accountId, values);
      if (tagged === undefined) tests.push({ sql: TAGGED_TARGET_SQL(values.length), params: values.map((value) => value.toLowerCase()) });
      else narrow(tagged);
    }
    if (query.accepted !== undefined) tests.push({ sql: 'r.is_accepted = ?', params: [query.accepted ? 1 : 0] });
    if (query.targetContains !== undefined && query.targetContains !== '') {
      const text = query.targetContains.toLowerCase();
      const matching = this.targetsContaining(accountId, text);
      if (matching === undefined) tests.push({ sql: '(instr(lower(t.target), ?) > 0 OR instr(lower(t.label), ?) > 0)', params: [text, text] });
      else narrow(matching);
    }
    if (targetIds !== undefined) {
      if (targetIds.length === 0) return undefined;
      equalities.push({ column: 'r.target_id', values: [...new Set(targetIds)] });
    } else if (query.sort?.[0] === undefined && titleOf(equalities) === undefined) {
      // Newest first by status, without a threat level: risks_by_account_status_threat read one severity at a time, merged
      // (unless that makes more arms than a merge takes: the combinations of values stay one arm each, as without it).
      const columns = equalities.map((equality) => equality.column);
      const arms = equalities.reduce((product, equality) => product * equality.values.length, EVERY_SEVERITY.length);
      if (columns.includes('r.status') && !columns.includes(THREAT_RANK) && arms <= MAX_ARMS) equalities.push({ column: THREAT_RANK, values: EVERY_SEVERITY });
    }
    return { equalities, tests, byTargets: targetIds !== undefined };
  }

  /** One statement walking the rows in page order: an index range for the sort or the filters' values, or each target's rows sorted (byTargets). */
  /**
   * `few`: the few matching risks (fewMatch) are read by their filters'
   * index range and sorted, a temporary B-tree of FEW_MATCHES rows at most;
   * the unary + keeps SQLite from walking the sort's index instead.
   */
  private walk(accountId: string, query: RiskListQuery, selection: Selection, columns: KeysetColumn[], few = false): RiskViewRow[] {
    // A title's risks (few, or too many values to merge newest first) from its two sources, sorted; else the sort's index is walked.
    const title = few || query.sort?.[0] === undefined ? titleOf(selection.equalities) : undefined;
    if (title !== undefined) return this.titled(accountId, query, selection, title, columns);
    const source = listSource(query, accountId, selection.byTargets, few);
    const filters = filterConditions(selection.equalities);
    const where = [source.accountCondition, ...filters.where];
    const params: CursorValue[] = [...source.accountParams, ...filters.params];
    for (const test of selection.tests) {
      where.push(test.sql);
      params.push(...test.params);
    }
    const order = orderBy(few ? columns.map((column) => ({ ...column, expression: `+${column.expression}` })) : columns);
    return this.db.prepare(`${source.sql} WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT ?`).all(...params, query.pageSize + 1) as RiskViewRow[];
  }

  /**
   * Whether a sorted list's filters match so few of the account's risks
   * (FEW_MATCHES at most, counted along their index range, stopping one
   * past) that reading them and sorting them beats walking the sort's
   * index and testing every risk of the account: HIGH among a million INFO
   * risks, sorted by target, read 1.4 s of rows for a page (bench/scale.ts).
   */
  private fewMatch(accountId: string, query: RiskListQuery, selection: Selection): boolean {
    if (query.sort?.[0] === undefined || selection.equalities.length === 0 || selection.byTargets) return false;
    const title = titleOf(selection.equalities);
    const filters = filterConditions(selection.equalities.filter((equality) => equality !== title));
    let n = 0;
    for (const source of title === undefined ? [accountRisks(accountId)] : titleSources(accountId, title.values)) {
      const where = [...source.where, ...filters.where].join(' AND ');
      n += this.db
        .prepare(`SELECT COUNT(*) FROM (SELECT 1 FROM ${source.from} WHERE ${where} LIMIT ?)`)
        .pluck()
        .get(...source.params, ...filters.params, this.fewMatches + 1 - n) as number;
    }
    return n <= this.fewMatches;
  }

  /** walk() of a title filter's risks: both its sources' matches, sorted (in a temporary B-tree: few of them, or for too many values to merge). */
  private titled(accountId: string, query: RiskListQuery, selection: Selection, title: Equality, columns: KeysetColumn[]): RiskViewRow[] {
    const filters = filterConditions(selection.equalities.filter((equality) => equality !== title));
    const sort = query.sort?.[0];
    const sortKey = sort === undefined ? '' : `, ${SORT_EXPRESSIONS[sort.field]} AS sort_key`;
    const sqls: string[] = [];
    const params: CursorValue[] = [];
    for (const source of titleSources(accountId, title.values)) {
      sqls.push(
        `SELECT ${viewColumns(source.seq)}${sortKey} FROM ${source.from} WHERE ${[...source.where, ...filters.where, ...selection.tests.map((test) => test.sql)].join(' AND ')}`,
      );
      params.push(...source.params, ...filters.params, ...selection.tests.flatMap((test) => test.params));
    }
    // A compound SELECT is ordered by its result columns: the sort's value, then seq.
    const order = orderBy(columns.map((column) => ({ ...column, expression: column.expression === 'r.seq' ? 'seq' : 'sort_key' })));
    return this.db.prepare(`${sqls.join(' UNION ALL ')} ORDER BY ${order} LIMIT ?`).all(...params, query.pageSize + 1) as RiskViewRow[];
  }

  /**
   * Newest first with several values in a filter, or a title: one arm per
   * combination of values, each one index range walked newest first (the
   * value's index, a target's range of risks_by_target_seq, a title's two
   * sources: titleSources), merged by SQLite in seq order (a compound
   * SELECT's MERGE), which stops at the page. A status without a threat level
   * is one arm per severity (selectionOf). `IN (...)` instead sorted every
   * matching row of the account in a temporary B-tree, or walked all of its
   * risks testing each.
   */
  private merge(accountId: string, query: RiskListQuery, arms: ReadonlyArray<readonly Equal[]>, tests: readonly Test[]): RiskViewRow[] {
    const sqls: string[] = [];
    const params: CursorValue[] = [];
    for (const arm of arms) {
      const title = titleOf(arm);
      const rest = arm.filter((equal) => equal !== title);
      for (const source of title === undefined ? [accountRisks(accountId)] : titleSources(accountId, [title.value])) {
        const where = [...source.where, ...rest.map((equal) => `${equal.column} = ?`), ...tests.map((test) => test.sql)];
        params.push(...source.params, ...rest.map((equal) => equal.value), ...tests.flatMap((test) => test.params));
        // The cursor on risk_titles' own seq too, so that its walk starts there rather than at the title's newest entry.
        if (source.seq !== 'r.seq' && query.after !== undefined) {
          where.push(`${source.seq} < ?`);
          params.push(query.after[0]!);
        }
        sqls.push(`SELECT ${viewColumns(source.seq)} FROM ${source.from} WHERE ${where.join(' AND ')}`);
      }
    }
    return this.db.prepare(`${sqls.join(' UNION ALL ')} ORDER BY seq DESC LIMIT ?`).all(...params, query.pageSize + 1) as RiskViewRow[];
  }

  /**
   * Those of the ids that name the account's targets. Another account's
   * target would otherwise have all its risks read by risks_by_target_seq
   * and each one passed over for its account.
   */
  private ownTargets(accountId: string, ids: readonly string[]): string[] {
    return this.statements.ownTargets.all(accountId, JSON.stringify(ids)) as string[];
  }

  /**
   * The ids of the account's targets whose address or label contains the
   * text, when there are few. Their risks are then read by target (an index
   * range each) instead of walking every risk of the account newest first and
   * testing its target, which for a text that matches one target out of
   * 10,000 read all 100,000 risks (bench/dashboard.ts). Undefined when many
   * targets match: the walk then finds a page of matches quickly.
   */
  private targetsContaining(accountId: string, text: string): string[] | undefined {
    const rows = this.statements.targetsContaining.all(accountId, text, text, this.fewTargets + 1) as Array<{ id: string }>;
    return rows.length > this.fewTargets ? undefined : rows.map((row) => row.id);
  }

  /**
   * The ids of the account's targets carrying any of the tags, when there are
   * few: read from target_tags' primary key (account, tag), then their risks
   * by target (risks_by_target_seq), as the target_id filter reads them.
   * Undefined when many targets carry them: a walk of the account's risks
   * testing each one's target (TAGGED_TARGET_SQL) then finds a page quickly.
   */
  private targetsTagged(accountId: string, tags: readonly string[]): string[] | undefined {
    const rows = this.db
      .prepare(`SELECT t.id FROM target_tags g JOIN targets t ON t.seq = g.target_seq WHERE g.account_id = ? AND g.tag IN (${marks(tags.length)}) LIMIT ?`)
      .all(accountId, ...tags.map((tag) => tag.toLowerCase()), this.fewTargets + 1) as Array<{ id: string }>;
    return rows.length > this.fewTargets ? undefined : [...new Set(rows.map((row) => row.id))];
  }

  openCounts(targetId: string): OpenRiskCounts {
    const counts: OpenRiskCounts = {};
    for (const row of this.statements.openCounts.all(targetId) as Array<{ threat_level: ThreatLevel; n: number }>) counts[row.threat_level] = row.n;
    return counts;
  }
}
