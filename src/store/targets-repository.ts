import type { Page, TargetListQuery, TargetListRow, TargetRepository, TargetSortField } from '../app/ports.js';
import type { CursorValue } from '../domain/lists/page-token.js';
import type { HealthGrade } from '../domain/targets/health-score.js';
import type { Target, TargetOrigin } from '../domain/targets/target.js';
import type { ZapSettingsValue } from '../domain/scanners/zap-settings.js';
import type { Statement } from 'better-sqlite3';
import type { Database } from './database.js';
import { afterCursor, orderBy, type KeysetColumn } from './keyset.js';

interface TargetRow {
  seq: number;
  id: string;
  account_id: string;
  target: string;
  label: string;
  tags: string;
  zap_settings: string;
  origin: TargetOrigin;
  health_score: number;
  health_grade: HealthGrade;
  auth_selenium_file: string | null;
  created_at: string;
  last_scanned_at: string | null;
  os: string | null;
  hostname: string | null;
}

const SORT_EXPRESSIONS: Record<TargetSortField, string> = {
  label: 'label',
  target: 'target',
  created_at: 'seq',
  last_scanned: "COALESCE(last_scanned_at, '')",
};

function toTarget(row: TargetRow): Target {
  return {
    id: row.id,
    accountId: row.account_id,
    target: row.target,
    label: row.label,
    tags: JSON.parse(row.tags) as string[],
    healthScore: { score: row.health_score, grade: row.health_grade },
    authSeleniumFile: row.auth_selenium_file ?? undefined,
    zap: JSON.parse(row.zap_settings) as ZapSettingsValue,
    origin: row.origin,
    createdAt: row.created_at,
    lastScannedAt: row.last_scanned_at,
    ...(row.os === null ? {} : { os: row.os }),
    ...(row.hostname === null ? {} : { hostname: row.hostname }),
  };
}

/** The named parameters of a targets row (bench/support/seed.ts writes rows in bulk with them). */
export function toParams(target: Target) {
  return {
    id: target.id,
    accountId: target.accountId,
    target: target.target,
    label: target.label,
    tags: JSON.stringify(target.tags),
    zapSettings: JSON.stringify(target.zap),
    origin: target.origin,
    healthScore: target.healthScore.score,
    healthGrade: target.healthScore.grade,
    authSeleniumFile: target.authSeleniumFile ?? null,
    createdAt: target.createdAt,
    lastScannedAt: target.lastScannedAt,
    os: target.os ?? null,
    hostname: target.hostname ?? null,
  };
}

const LIST_COLUMNS = [
  'id',
  'target',
  'label',
  'tags',
  'zap_settings',
  'origin',
  'health_score',
  'health_grade',
  'auth_selenium_file',
  'created_at',
  'last_scanned_at',
  'os',
  'hostname',
] as const;

function toListRow(row: unknown[]): TargetListRow {
  return {
    id: row[0] as string,
    target: row[1] as string,
    label: row[2] as string,
    tagsJson: row[3] as string,
    zapSettingsJson: row[4] as string,
    origin: row[5] as TargetOrigin,
    healthScore: row[6] as number,
    healthGrade: row[7] as HealthGrade,
    authSeleniumFile: row[8] as string | null,
    createdAt: row[9] as string,
    lastScannedAt: row[10] as string | null,
    os: row[11] as string | null,
    hostname: row[12] as string | null,
  };
}

/** The columns a list is ordered by: the requested sort fields, then seq (newest first) as the unique tiebreaker. */
function keysetColumns(query: TargetListQuery): KeysetColumn[] {
  const columns = query.sort
    .filter((field) => field.field !== 'created_at')
    .map((field) => ({ expression: SORT_EXPRESSIONS[field.field], direction: field.direction }));
  const createdAt = query.sort.find((field) => field.field === 'created_at');
  columns.push({ expression: 'seq', direction: createdAt?.direction ?? 'desc' });
  return columns;
}

export class SqliteTargetRepository implements TargetRepository {
  private readonly statements;

  constructor(private readonly db: Database) {
    this.statements = {
      insert: db.prepare(`INSERT INTO targets (id, account_id, target, label, tags, zap_settings, origin, health_score, health_grade, auth_selenium_file, created_at, last_scanned_at, os, hostname)
        VALUES (@id, @accountId, @target, @label, @tags, @zapSettings, @origin, @healthScore, @healthGrade, @authSeleniumFile, @createdAt, @lastScannedAt, @os, @hostname)
        ON CONFLICT (account_id, target) DO NOTHING`),
      update: db.prepare(`UPDATE targets SET label = @label, tags = @tags, zap_settings = @zapSettings, health_score = @healthScore,
        health_grade = @healthGrade, auth_selenium_file = @authSeleniumFile, last_scanned_at = @lastScannedAt,
        os = @os, hostname = @hostname
        WHERE id = @id AND account_id = @accountId`),
      byId: db.prepare('SELECT * FROM targets WHERE account_id = ? AND id = ?'),
      byAddress: db.prepare('SELECT * FROM targets WHERE account_id = ? AND target = ?'),
      seqOf: db.prepare('SELECT seq FROM targets WHERE account_id = ? AND id = ?'),
      deleteTags: db.prepare('DELETE FROM target_tags WHERE target_seq = ?'),
      insertTag: db.prepare('INSERT OR IGNORE INTO target_tags (account_id, tag, target_seq) VALUES (?, ?, ?)'),
      delete: db.prepare('DELETE FROM targets WHERE account_id = ? AND id = ?'),
      // Schedules that select the target by id stop selecting it (SPEC.md, Delete a target).
      unscheduleTarget: db.prepare(`UPDATE scheduled_scans
        SET filter_target_ids = (SELECT COALESCE(json_group_array(value), '[]') FROM json_each(scheduled_scans.filter_target_ids) WHERE value <> @id)
        WHERE account_id = @accountId AND EXISTS (SELECT 1 FROM json_each(scheduled_scans.filter_target_ids) WHERE value = @id)`),
    };
  }

  insert(target: Target): boolean {
    return this.db.transaction(() => {
      const result = this.statements.insert.run(toParams(target));
      if (result.changes === 0) return false;
      this.writeTags(target.accountId, Number(result.lastInsertRowid), target.tags);
      return true;
    })();
  }

  update(target: Target): void {
    this.db.transaction(() => {
      this.statements.update.run(toParams(target));
      const row = this.statements.seqOf.get(target.accountId, target.id) as { seq: number } | undefined;
      if (row) this.writeTags(target.accountId, row.seq, target.tags);
    })();
  }

  private readonly listStatements = new Map<string, Statement<unknown[]>>();

  /** List queries vary only by which filters and sort fields are present, so a handful of shapes cover all calls. */
  private prepareCached(sql: string): Statement<unknown[]> {
    let statement = this.listStatements.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare<unknown[]>(sql);
      if (this.listStatements.size < 256) this.listStatements.set(sql, statement);
    }
    return statement;
  }

  private writeTags(accountId: string, seq: number, tags: readonly string[]): void {
    this.statements.deleteTags.run(seq);
    for (const tag of tags) this.statements.insertTag.run(accountId, tag, seq);
  }

  findById(accountId: string, id: string): Target | undefined {
    const row = this.statements.byId.get(accountId, id) as TargetRow | undefined;
    return row && toTarget(row);
  }

  findByIds(accountId: string, ids: readonly string[]): Target[] {
    if (ids.length === 0) return [];
    const rows = this.db.prepare(`SELECT * FROM targets WHERE account_id = ? AND id IN (${placeholders(ids)}) ORDER BY seq`).all(accountId, ...ids) as TargetRow[];
    return rows.map(toTarget);
  }

  findByTags(accountId: string, tags: readonly string[]): Target[] {
    if (tags.length === 0) return [];
    const rows = this.db
      .prepare(`SELECT * FROM targets WHERE account_id = ? AND seq IN (SELECT target_seq FROM target_tags WHERE account_id = ? AND tag IN (${placeholders(tags)})) ORDER BY seq`)
      .all(accountId, accountId, ...tags) as TargetRow[];
    return rows.map(toTarget);
  }

  findByAddress(accountId: string, address: string): Target | undefined {
    const row = this.statements.byAddress.get(accountId, address) as TargetRow | undefined;
    return row && toTarget(row);
  }

  /**
   * The one place a target's deletion happens. Later resources that hang off
   * a target (risks, scheduled-scan references) are removed here too, in the
   * same transaction.
   */
  deleteCascade(accountId: string, id: string): void {
    this.db.transaction(() => {
      this.statements.delete.run(accountId, id);
      this.statements.unscheduleTarget.run({ accountId, id });
    })();
  }

  list(accountId: string, query: TargetListQuery): Page<TargetListRow> {
    const columns = keysetColumns(query);
    const where: string[] = ['account_id = ?'];
    const params: CursorValue[] = [accountId];
    const { tags, label, target } = query.filters;
    if (tags !== undefined) {
      where.push(`seq IN (SELECT target_seq FROM target_tags WHERE account_id = ? AND tag IN (${placeholders(tags)}))`);
      params.push(accountId, ...tags.map((tag) => tag.toLowerCase()));
    }
    if (label !== undefined) {
      where.push(`label IN (${placeholders(label)})`);
      params.push(...label);
    }
    if (target !== undefined) {
      where.push(`target IN (${placeholders(target)})`);
      params.push(...target);
    }
    if (query.textContains !== undefined && query.textContains !== '') {
      where.push('(instr(lower(target), ?) > 0 OR instr(lower(label), ?) > 0)');
      params.push(query.textContains.toLowerCase(), query.textContains.toLowerCase());
    }
    if (query.after !== undefined) {
      const after = afterCursor(columns, query.after);
      where.push(after.sql);
      params.push(...after.params);
    }
    // Raw rows (arrays) of named columns: building one JS object per row with
    // every column was the largest cost of a 500-row page (bench/targets-list.ts).
    const sql = `SELECT ${LIST_COLUMNS.join(', ')}, ${columns.map((column) => column.expression).join(', ')}
      FROM targets WHERE ${where.join(' AND ')} ORDER BY ${orderBy(columns)} LIMIT ?`;
    const rows = this.prepareCached(sql).raw(true).all(...params, query.pageSize + 1) as unknown[][];
    const more = rows.length > query.pageSize;
    const pageRows = more ? rows.slice(0, query.pageSize) : rows;
    const last = pageRows.at(-1);
    return {
      items: pageRows.map(toListRow),
      nextCursor: more && last ? (last.slice(LIST_COLUMNS.length) as CursorValue[]) : undefined,
      // Targets can carry up to 1 MiB of scanner settings each: their pages have a byte budget too.
      cursorAt: (index) => pageRows[index]!.slice(LIST_COLUMNS.length) as CursorValue[],
    };
  }
}

function placeholders(values: readonly unknown[]): string {
  return values.map(() => '?').join(', ');
}
