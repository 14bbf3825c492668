import type { AttachmentKind, Page, RenderedPage, TargetAttachment, TargetListQuery, TargetListRow, TargetRepository, TargetSortField } from '../app/ports.js';
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
  openapi_file: string | null;
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
    ...(row.openapi_file === null ? {} : { openApiFile: row.openapi_file }),
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
  'openapi_file',
] as const;

/**
 * A target's SPEC JSON (the shape of presentTarget, key for key, as
 * presentTarget returns it) built by SQLite from one row: json_quote
 * escapes exactly as JSON.stringify does for text SQLite can hold, and the
 * stored tags and zap settings are already JSON written by JSON.stringify,
 * so they are spliced in as they are. test/http/presenters.test.ts keeps it
 * equal to presentTarget. Migration 0017 indexes this very expression
 * (targets_list_json), so that a page in created_at order reads each row's
 * JSON from the index instead of computing it: a change here needs a
 * migration that replaces that index (the same test fails until then; the
 * results stay right either way, only slower).
 */
export const TARGET_JSON_SQL = `'{"id":' || json_quote(id) || ',"target":' || json_quote(target) || ',"label":' || json_quote(label)
  || ',"tags":' || tags || ',"health_score":{"score":' || health_score || ',"grade":' || json_quote(health_grade) || '}'
  || iif(auth_selenium_file IS NULL, '', ',"auth_selenium_file":' || json_quote(auth_selenium_file))
  || iif(openapi_file IS NULL, '', ',"openapi_file":' || json_quote(openapi_file))
  || ',"scanner_settings":{"zap":' || zap_settings || '},"origin":' || json_quote(origin)
  || ',"created_at":' || json_quote(created_at) || ',"last_scanned_at":' || json_quote(last_scanned_at)
  || iif(os IS NULL, '', ',"os":' || json_quote(os)) || iif(hostname IS NULL, '', ',"hostname":' || json_quote(hostname)) || '}'`;

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
    openApiFile: row[13] as string | null,
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
      insert:
        db.prepare(`INSERT INTO targets (id, account_id, target, label, tags, zap_settings, origin, health_score, health_grade, auth_selenium_file, created_at, last_scanned_at, os, hostname)
        VALUES (@id, @accountId, @target, @label, @tags, @zapSettings, @origin, @healthScore, @healthGrade, @authSeleniumFile, @createdAt, @lastScannedAt, @os, @hostname)
        ON CONFLICT (account_id, target) DO NOTHING`),
      update: db.prepare(`UPDATE targets SET label = @label, tags = @tags, zap_settings = @zapSettings, health_score = @healthScore,
        health_grade = @healthGrade, last_scanned_at = @lastScannedAt,
        os = @os, hostname = @hostname
        WHERE id = @id AND account_id = @accountId`),
      // A recording's refresh: update() rewrote every column and the target's tags, which touched every index of targets and target_tags.
      refresh: db.prepare(`UPDATE targets SET health_score = @healthScore, health_grade = @healthGrade, last_scanned_at = @lastScannedAt
        WHERE id = @id AND account_id = @accountId`),
      byId: db.prepare('SELECT * FROM targets WHERE account_id = ? AND id = ?'),
      upsertAttachment: db.prepare(`INSERT INTO target_attachments (target_seq, account_id, kind, file_name, content, updated_at)
        VALUES (@seq, @accountId, @kind, @fileName, @content, @updatedAt)
        ON CONFLICT (target_seq, kind) DO UPDATE SET file_name = excluded.file_name, content = excluded.content, updated_at = excluded.updated_at`),
      setSeleniumFile: db.prepare('UPDATE targets SET auth_selenium_file = ? WHERE seq = ?'),
      setOpenApiFile: db.prepare('UPDATE targets SET openapi_file = ? WHERE seq = ?'),
      attachmentOf: db.prepare(`SELECT a.file_name, a.content, a.updated_at FROM target_attachments a JOIN targets t ON t.seq = a.target_seq
        WHERE t.account_id = ? AND t.id = ? AND a.kind = ?`),
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

  attach(accountId: string, targetId: string, attachment: TargetAttachment): boolean {
    return this.db.transaction(() => {
      const row = this.statements.seqOf.get(accountId, targetId) as { seq: number } | undefined;
      if (row === undefined) return false;
      this.statements.upsertAttachment.run({
        seq: row.seq,
        accountId,
        kind: attachment.kind,
        fileName: attachment.fileName,
        content: attachment.content,
        updatedAt: attachment.updatedAt,
      });
      const name = attachment.kind === 'selenium' ? this.statements.setSeleniumFile : this.statements.setOpenApiFile;
      name.run(attachment.fileName, row.seq);
      return true;
    })();
  }

  attachment(accountId: string, targetId: string, kind: AttachmentKind): TargetAttachment | undefined {
    const row = this.statements.attachmentOf.get(accountId, targetId, kind) as { file_name: string; content: Buffer; updated_at: string } | undefined;
    return row === undefined ? undefined : { kind, fileName: row.file_name, content: row.content, updatedAt: row.updated_at };
  }

  update(target: Target): void {
    this.db.transaction(() => {
      this.statements.update.run(toParams(target));
      const row = this.statements.seqOf.get(target.accountId, target.id) as { seq: number } | undefined;
      if (row) this.writeTags(target.accountId, row.seq, target.tags);
    })();
  }

  refresh(target: Target): void {
    const { id, accountId, healthScore, lastScannedAt } = target;
    this.statements.refresh.run({ id, accountId, healthScore: healthScore.score, healthGrade: healthScore.grade, lastScannedAt });
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
    const rows = this.db
      .prepare(`SELECT * FROM targets WHERE +account_id = ? AND id IN (${placeholders(ids)}) ORDER BY seq`)
      .all(accountId, ...ids) as TargetRow[];
    return rows.map(toTarget);
  }

  findByTags(accountId: string, tags: readonly string[]): Target[] {
    if (tags.length === 0) return [];
    const rows = this.db
      .prepare(
        `SELECT * FROM targets WHERE account_id = ? AND seq IN (SELECT target_seq FROM target_tags WHERE account_id = ? AND tag IN (${placeholders(tags)})) ORDER BY seq`,
      )
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
    return this.page(accountId, query, LIST_COLUMNS.join(', '), LIST_COLUMNS.length, toListRow);
  }

  /**
   * The API's list page as one piece of JSON text, the inside of its `data`
   * array: SQLite renders each target (TARGET_JSON_SQL) and joins them in
   * page order into one BLOB, so the page reaches JS as bytes ready to send,
   * with no string per row, no join and no re-encoding (bench/targets-list.ts).
   * The rows are joined in the order the subquery yields them: a FROM-clause
   * subquery with ORDER BY and LIMIT is run as a co-routine that hands its
   * rows on in that order, and SQLite keeps such an ORDER BY (it only drops
   * one from a subquery without LIMIT). group_concat(... ORDER BY ...) said
   * the same thing at the cost of a sort of the rendered rows, a third or
   * more of the query's time; test/http/presenters.test.ts holds the order
   * to every sort the API offers. The next cursor and whether more rows follow
   * come from a second query reading only the keys of the page's last row
   * and the one after it (LIMIT 2 OFFSET pageSize - 1): reading the keys of
   * all 501 rows made ~30 KB of short-lived JS arrays per page, the largest
   * share of what a list request allocated. Both read in one transaction, so
   * they agree. When the rows would pass the byte budget, the page is cut row
   * by row instead.
   */
  listJson(accountId: string, query: TargetListQuery, byteBudget: number): RenderedPage {
    const { columns, where, params } = listWhere(accountId, query);
    const order = orderBy(columns);
    const keys = columns.map((column) => column.expression).join(', ');
    const tailSql = `SELECT ${keys} FROM targets WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT 2 OFFSET ?`;
    const bodySql = `SELECT CAST(group_concat(j, ',') AS BLOB), SUM(octet_length(j)), count(*) FROM (
        SELECT ${TARGET_JSON_SQL} AS j FROM targets WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT ?)`;
    return this.db.transaction((): RenderedPage => {
      const [body, bytes, count] = this.prepareCached(bodySql)
        .raw(true)
        .get(...params, query.pageSize) as [Uint8Array | null, number | null, number];
      if (count === 0) return { body: new Uint8Array(0), count: 0, nextCursor: undefined };
      if (count > 1 && bytes! > byteBudget) return this.listJsonWithinBudget(accountId, query, byteBudget);
      // The page's last row and the one after it: a cursor only when there is one after it.
      const tail =
        count < query.pageSize
          ? []
          : (this.prepareCached(tailSql)
              .raw(true)
              .all(...params, query.pageSize - 1) as CursorValue[][]);
      return { body: body!, count, nextCursor: tail.length > 1 ? tail[0] : undefined };
    })();
  }

  /** listJson() for a page whose rows pass the byte budget: at least one row, then as many as fit. */
  private listJsonWithinBudget(accountId: string, query: TargetListQuery, byteBudget: number): RenderedPage {
    const page = this.page(accountId, query, TARGET_JSON_SQL, 1, (row) => row[0] as string);
    const kept: string[] = [];
    let bytes = 0;
    for (const [index, json] of page.items.entries()) {
      bytes += Buffer.byteLength(json, 'utf8') + (index === 0 ? 0 : 1);
      if (kept.length > 0 && bytes > byteBudget)
        return { body: Buffer.from(kept.join(','), 'utf8'), count: kept.length, nextCursor: page.cursorAt!(index - 1) };
      kept.push(json);
    }
    return { body: Buffer.from(kept.join(','), 'utf8'), count: kept.length, nextCursor: page.nextCursor };
  }

  private page<T>(accountId: string, query: TargetListQuery, select: string, width: number, toItem: (row: unknown[]) => T): Page<T> {
    const { columns, where, params } = listWhere(accountId, query);
    // Raw rows (arrays) of named columns: building one JS object per row with
    // every column was the largest cost of a 500-row page (bench/targets-list.ts).
    const sql = `SELECT ${select}, ${columns.map((column) => column.expression).join(', ')}
      FROM targets WHERE ${where.join(' AND ')} ORDER BY ${orderBy(columns)} LIMIT ?`;
    const rows = this.prepareCached(sql)
      .raw(true)
      .all(...params, query.pageSize + 1) as unknown[][];
    const more = rows.length > query.pageSize;
    const pageRows = more ? rows.slice(0, query.pageSize) : rows;
    const last = pageRows.at(-1);
    return {
      items: pageRows.map(toItem),
      nextCursor: more && last ? (last.slice(width) as CursorValue[]) : undefined,
      // Targets can carry up to 1 MiB of scanner settings each: their pages have a byte budget too.
      cursorAt: (index) => pageRows[index]!.slice(width) as CursorValue[],
    };
  }
}

/** The keyset columns and the WHERE clause (with its parameters) of a targets list query. */
function listWhere(accountId: string, query: TargetListQuery): { columns: KeysetColumn[]; where: string[]; params: CursorValue[] } {
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
  return { columns, where, params };
}

function placeholders(values: readonly unknown[]): string {
  return values.map(() => '?').join(', ');
}
