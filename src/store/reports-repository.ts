import type { Page, ReportListQuery, ReportRecord, ReportRepository, ReportScope, ReportSelection } from '../app/ports.js';
import type { RiskDefinition } from '../domain/risks/finding.js';
import type { RiskStatus } from '../domain/risks/risk.js';
import { reportText, type ReportFilters, type ReportFormat, type ReportRisk, type ReportTarget } from '../domain/reports/snapshot.js';
import type { HealthGrade } from '../domain/targets/health-score.js';
import type { Database } from './database.js';
import { FILTER_SQL, marks, THREAT_RANK } from './risks-repository.js';
import { newestFirstPage } from './keyset.js';

interface ReportRow {
  seq: number;
  id: string;
  account_id: string;
  format: ReportFormat;
  filters: string;
  risk_count: number;
  matched_risks: number;
  target_count: number;
  created_at: string;
}

function toRecord(row: ReportRow): ReportRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    format: row.format,
    filters: JSON.parse(row.filters) as ReportFilters,
    riskCount: row.risk_count,
    matchedRisks: row.matched_risks,
    targetCount: row.target_count,
    createdAt: row.created_at,
  };
}

interface Condition {
  sql: string;
  params: Array<string | number>;
}

/** Conditions on the targets table (alias t) that targets_filter, and the target keys of risks_filter, set. */
function targetConditions(accountId: string, selection: ReportSelection, withRiskKeys: boolean): Condition[] {
  const conditions: Condition[] = [];
  const tagCondition = (tags: string[]) => ({
    sql: `t.seq IN (SELECT target_seq FROM target_tags WHERE account_id = ? AND tag IN (${marks(tags.length)}))`,
    params: [accountId, ...tags.map((tag) => tag.toLowerCase())],
  });
  const { target_ids, tags, label } = selection.targets;
  if (target_ids !== undefined) conditions.push({ sql: `t.id IN (${marks(target_ids.length)})`, params: target_ids });
  if (tags !== undefined) conditions.push(tagCondition(tags));
  if (label !== undefined) conditions.push({ sql: `t.label IN (${marks(label.length)})`, params: label });
  if (withRiskKeys && selection.risks.target_id !== undefined) {
    conditions.push({ sql: `t.id IN (${marks(selection.risks.target_id.length)})`, params: selection.risks.target_id });
  }
  if (withRiskKeys && selection.risks.tags !== undefined) conditions.push(tagCondition(selection.risks.tags));
  return conditions;
}

/** Conditions on risks (alias r): GET /v1/risks's filters on the risk's own fields and its QoD rule (the target keys select targets first). */
function riskConditions(selection: ReportSelection): Condition[] {
  const conditions: Condition[] = [{ sql: "(r.scan_type <> 'OPENVAS' OR r.qod IS NULL OR r.qod >= ?)", params: [selection.minOpenvasQod] }];
  for (const [key, values] of Object.entries(selection.risks) as Array<[string, string[]]>) {
    if (key !== 'tags' && key !== 'target_id') conditions.push({ sql: FILTER_SQL[key]!(values.length), params: values });
  }
  return conditions;
}

function hasTargetConditions(selection: ReportSelection): boolean {
  return Object.keys(selection.targets).length > 0 || selection.risks.target_id !== undefined || selection.risks.tags !== undefined;
}

function where(accountColumn: string, accountId: string, conditions: readonly Condition[]): Condition {
  return {
    sql: [`${accountColumn} = ?`, ...conditions.map((condition) => condition.sql)].join(' AND '),
    params: [accountId, ...conditions.flatMap((condition) => condition.params)],
  };
}

/**
 * Most severe first, then newest: THREAT_RANK is the expression of index
 * risks_by_account_threat (migration 0020), so this order is a walk of that
 * index that stops at the cap. The unary plus keeps a small selection (no
 * more than the cap) on the index of its targets or filters, sorted there.
 */
const SEVERITY_ORDER = `${THREAT_RANK} DESC, r.seq DESC`;
const SEVERITY_SORT = `+${THREAT_RANK} DESC, r.seq DESC`;

export interface ReportTargetRow {
  id: string;
  target: string;
  label: string;
  tags: string;
  health_score: number;
  health_grade: HealthGrade;
  last_scanned_at: string | null;
}

/** A target as a report holds it. */
export function toReportTarget(row: ReportTargetRow): ReportTarget {
  return {
    id: row.id,
    target: row.target,
    label: row.label,
    tags: JSON.parse(row.tags) as string[],
    healthScore: { score: row.health_score, grade: row.health_grade },
    lastScannedAt: row.last_scanned_at,
  };
}

export interface ScopeRiskRow {
  id: string;
  target_id: string;
  status: RiskStatus;
  is_accepted: number;
  first_detected_at: string;
  last_detected_at: string;
  definition: string;
}

export class SqliteReportRepository implements ReportRepository {
  private readonly statements;

  constructor(private readonly db: Database) {
    this.statements = {
      insert: db.prepare(`INSERT INTO reports (id, account_id, format, filters, risk_count, matched_risks, target_count, created_at)
        VALUES (@id, @accountId, @format, @filters, @riskCount, @matchedRisks, @targetCount, @createdAt)`),
      find: db.prepare('SELECT * FROM reports WHERE account_id = ? AND id = ?'),
      recent: db.prepare('SELECT * FROM reports WHERE account_id = ? ORDER BY seq DESC LIMIT ?'),
      delete: db.prepare('DELETE FROM reports WHERE account_id = ? AND id = ?'),
    };
  }

  insert(record: ReportRecord): void {
    this.statements.insert.run({ ...record, filters: JSON.stringify(record.filters) });
  }

  find(accountId: string, id: string): ReportRecord | undefined {
    const row = this.statements.find.get(accountId, id) as ReportRow | undefined;
    return row && toRecord(row);
  }

  listRecent(accountId: string, limit: number): ReportRecord[] {
    return (this.statements.recent.all(accountId, limit) as ReportRow[]).map(toRecord);
  }

  list(accountId: string, query: ReportListQuery): Page<ReportRecord> {
    const page = newestFirstPage<ReportRow>(this.db, 'reports', accountId, [['format', query.filters.format]], query.pageSize, query.after);
    return { items: page.rows.map(toRecord), nextCursor: page.nextCursor, cursorAt: (index) => [page.rows[index]!.seq] };
  }

  delete(accountId: string, id: string): boolean {
    return this.statements.delete.run(accountId, id).changes > 0;
  }

  readScope(accountId: string, selection: ReportSelection): ReportScope {
    return this.db.transaction(() => ({
      targets: this.scopeTargets(accountId, selection),
      ...this.scopeRisks(accountId, selection),
    }))();
  }

  countTargets(accountId: string, selection: ReportSelection, cap: number): number {
    const clause = where('t.account_id', accountId, targetConditions(accountId, selection, true));
    // LIMIT inside: the count stops at cap, walking index entries (targets_by_account and the filters' own), never the rows.
    return this.db
      .prepare(`SELECT count(*) FROM (SELECT 1 FROM targets t WHERE ${clause.sql} LIMIT ?)`)
      .pluck()
      .get(...clause.params, cap) as number;
  }

  private scopeTargets(accountId: string, selection: ReportSelection): ReportTarget[] {
    const clause = where('t.account_id', accountId, targetConditions(accountId, selection, true));
    const rows = this.db
      .prepare(
        `SELECT t.id, t.target, t.label, t.tags, t.health_score, t.health_grade, t.last_scanned_at FROM targets t WHERE ${clause.sql} ORDER BY t.seq LIMIT ?`,
      )
      .all(...clause.params, selection.maxTargets + 1) as ReportTargetRow[];
    return rows.map(toReportTarget);
  }

  /**
   * The risks a report holds: the cap's most severe, and how many matched,
   * counted up to one more than the cap (a count stops there, where counting
   * every match read every risk of an account of a million). The targets are
   * selected first (their keys, target_tags' by tag), then their risks read
   * by target. More matches than the cap: the severity index is walked in
   * order and stops at the cap; no more: they are sorted, at most cap rows,
   * never every row of the account with its definition text.
   */
  private scopeRisks(accountId: string, selection: ReportSelection): Pick<ReportScope, 'risks' | 'matchedRisks'> {
    const conditions = riskConditions(selection);
    const byTargets = hasTargetConditions(selection);
    if (byTargets) {
      const targetIds = this.selectedTargetIds(accountId, selection);
      if (targetIds.length === 0) return { risks: [], matchedRisks: 0 };
      conditions.unshift({ sql: `r.target_id IN (${marks(targetIds.length)})`, params: targetIds });
    }
    const clause = where('r.account_id', accountId, conditions);
    // The targets' ranges of risks_by_target_seq (the account's targets, selected above): left to itself, SQLite walked every risk of the
    // account testing its target.
    const byTargetIndex = `FROM risks r${byTargets ? ' INDEXED BY risks_by_target_seq' : ''} WHERE ${clause.sql}`;
    const matched = this.db
      .prepare(`SELECT count(*) FROM (SELECT 1 ${byTargetIndex} LIMIT ?)`)
      .pluck()
      .get(...clause.params, selection.maxRisks + 1) as number;
    const capped = matched > selection.maxRisks;
    const from = capped ? `FROM risks r WHERE ${clause.sql}` : byTargetIndex;
    const order = capped ? SEVERITY_ORDER : SEVERITY_SORT;
    // Row by row: each row's JSON text is parsed as it comes, rather than all rows' text held beside all risks parsed.
    const rows = this.db
      .prepare(`SELECT r.id, r.target_id, r.status, r.is_accepted, r.first_detected_at, r.last_detected_at, r.definition ${from} ORDER BY ${order} LIMIT ?`)
      .iterate(...clause.params, selection.maxRisks) as IterableIterator<ScopeRiskRow>;
    return { risks: Array.from(rows, toReportRisk), matchedRisks: matched };
  }

  /** The ids of the targets the selection names (countTargets has kept them to maxTargets). */
  private selectedTargetIds(accountId: string, selection: ReportSelection): string[] {
    const clause = where('t.account_id', accountId, targetConditions(accountId, selection, true));
    return this.db
      .prepare(`SELECT t.id FROM targets t WHERE ${clause.sql} LIMIT ?`)
      .pluck()
      .all(...clause.params, selection.maxTargets + 1) as string[];
  }
}

/** A risk as a report holds it: its description and solution bounded (REPORT_LIMITS.maxTextChars). */
export function toReportRisk(row: ScopeRiskRow): ReportRisk {
  const definition = JSON.parse(row.definition) as RiskDefinition;
  return {
    id: row.id,
    targetId: row.target_id,
    status: row.status,
    isAccepted: row.is_accepted === 1,
    firstDetectedAt: row.first_detected_at,
    lastDetectedAt: row.last_detected_at,
    definition: { ...definition, description: reportText(definition.description), solution: reportText(definition.solution) },
  };
}
