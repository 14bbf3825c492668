import type { NewResultFile, Page, ScanListQuery, ScanRepository, StoredResultFile } from '../app/ports.js';
import type { OutboxEvent, EventType } from '../domain/events/event.js';
import type { ScanType } from '../domain/risks/finding.js';
import type { Scan, ScanState, ScanSummary } from '../domain/scans/scan.js';
import type { Database } from './database.js';
import { PRUNE_DELETIONS, RECORD_DELETION } from './scan-resource-marks.js';
import { JOURNAL_SWEEP } from './scan-sweeps.js';
import { EventPayloads, EventRows, type StoredPayload } from './event-rows.js';
import { newestFirstPage } from './keyset.js';

interface ScanRow {
  seq: number;
  id: string;
  account_id: string;
  name: string;
  type: ScanType;
  state: ScanState;
  progress: number;
  is_authenticated: number;
  requested_targets: string;
  resolved_targets: string;
  skipped_targets: string;
  conditions: string;
  scheduled_by: string | null;
  report_id: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

interface ResultRow {
  id: string;
  scan_id: string;
  account_id: string;
  file_name: string;
  content_type: string;
  size: number;
  sha256: string;
  created_at: string;
}

export type RiskLists = Scan['risks'];

/** scan_risks.list of each list (migration 0025). */
export const RISK_LISTS = ['newOpen', 'stillOpen', 'closed'] as const;

const hasRisks = (scan: Scan): boolean => RISK_LISTS.some((key) => scan.risks[key].length > 0);

const noRisks = (): RiskLists => ({ newOpen: [], stillOpen: [], closed: [] });

function scanFields(row: ScanRow, results: StoredResultFile[]): Omit<Scan, 'risks'> {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    type: row.type,
    state: row.state,
    progress: row.progress,
    isAuthenticated: row.is_authenticated === 1,
    requestedTargets: JSON.parse(row.requested_targets),
    resolvedTargets: JSON.parse(row.resolved_targets),
    skippedTargets: JSON.parse(row.skipped_targets),
    conditions: JSON.parse(row.conditions),
    results: results.map((file) => ({ resultId: file.id, contentType: file.contentType })),
    scheduledBy: row.scheduled_by,
    reportId: row.report_id,
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
  };
}

function toScan(row: ScanRow, results: StoredResultFile[], risks: RiskLists): Scan {
  return { ...scanFields(row, results), risks };
}

function toSummary(row: ScanRow & RiskCounts, results: StoredResultFile[]): ScanSummary {
  return { ...scanFields(row, results), riskCounts: { newOpen: row.new_open_count, stillOpen: row.still_open_count, closed: row.closed_count } };
}

/** A run of one of a scan's risk lists, by the scan's id, the list, and a range of positions, in position order. */
const LIST_RUN = `SELECT risk_id FROM scan_risks
  WHERE scan_seq = (SELECT seq FROM scans WHERE id = ?) AND list = ? AND position >= ? AND position < ? ORDER BY position`;

const RESULT_COLUMNS = 'id, scan_id, account_id, file_name, content_type, size, sha256, created_at';

function resultParams(file: NewResultFile) {
  return {
    id: file.id,
    scanId: file.scanId,
    accountId: file.accountId,
    fileName: file.fileName,
    contentType: file.contentType,
    size: file.size,
    sha256: file.sha256,
    createdAt: file.createdAt,
    content: file.content ?? null,
  };
}

function toResult(row: ResultRow): StoredResultFile {
  return {
    id: row.id,
    scanId: row.scan_id,
    accountId: row.account_id,
    fileName: row.file_name,
    contentType: row.content_type,
    size: row.size,
    sha256: row.sha256,
    createdAt: row.created_at,
  };
}

function toParams(scan: Scan) {
  return {
    id: scan.id,
    accountId: scan.accountId,
    name: scan.name,
    type: scan.type,
    state: scan.state,
    progress: scan.progress,
    isAuthenticated: scan.isAuthenticated ? 1 : 0,
    requestedTargets: JSON.stringify(scan.requestedTargets),
    resolvedTargets: JSON.stringify(scan.resolvedTargets),
    skippedTargets: JSON.stringify(scan.skippedTargets),
    conditions: JSON.stringify(scan.conditions),
    scheduledBy: scan.scheduledBy,
    reportId: scan.reportId,
    createdAt: scan.createdAt,
    startedAt: scan.startedAt,
    finishedAt: scan.finishedAt,
  };
}

export class SqliteScanRepository implements ScanRepository {
  private readonly statements;
  private readonly eventRows: EventRows;
  private readonly payloads: EventPayloads;
  /** idsInStates' statement per list of states (the controller asks for QUEUED ones at every freed slot). */
  private readonly idsInStatesStatements = new Map<string, ReturnType<Database['prepare']>>();

  constructor(private readonly db: Database) {
    this.eventRows = new EventRows(db);
    this.payloads = new EventPayloads(db);
    this.statements = {
      insert: db.prepare(`INSERT INTO scans (id, account_id, name, type, state, progress, is_authenticated, requested_targets, resolved_targets,
          skipped_targets, conditions, scheduled_by, report_id, created_at, started_at, finished_at)
        VALUES (@id, @accountId, @name, @type, @state, @progress, @isAuthenticated, @requestedTargets, @resolvedTargets,
          @skippedTargets, @conditions, @scheduledBy, @reportId, @createdAt, @startedAt, @finishedAt)`),
      save: db.prepare(`UPDATE scans SET state = @state, progress = @progress, resolved_targets = @resolvedTargets, skipped_targets = @skippedTargets,
          conditions = @conditions, report_id = @reportId, started_at = @startedAt, finished_at = @finishedAt
        WHERE id = @id AND account_id = @accountId AND (@expectedState IS NULL OR state = @expectedState)`),
      byId: db.prepare('SELECT * FROM scans WHERE account_id = ? AND id = ?'),
      byIdUnscoped: db.prepare('SELECT * FROM scans WHERE id = ?'),
      byName: db.prepare('SELECT * FROM scans WHERE account_id = ? AND name = ?'),
      // A page's scans by their keys (list), newest first.
      bySeqs: db.prepare('SELECT * FROM scans WHERE seq IN (SELECT value FROM json_each(?)) ORDER BY seq DESC'),
      delete: db.prepare('DELETE FROM scans WHERE account_id = ? AND id = ?'),
      journalSweep: db.prepare(JOURNAL_SWEEP),
      recordDeletion: db.prepare(RECORD_DELETION),
      pruneDeletions: db.prepare(PRUNE_DELETIONS),
      countInState: db.prepare('SELECT COUNT(*) AS n FROM scans WHERE state = ?'),
      usage: db.prepare('SELECT scans FROM scan_usage WHERE account_id = ? AND month = ?'),
      addUsage: db.prepare(`INSERT INTO scan_usage (account_id, month, scans) VALUES (?, ?, ?)
        ON CONFLICT (account_id, month) DO UPDATE SET scans = scans + excluded.scans`),
      eventsFor: db.prepare('SELECT * FROM events WHERE account_id = ? ORDER BY seq'),
      insertResult: db.prepare(`INSERT INTO scan_results (id, scan_id, account_id, file_name, content_type, size, sha256, created_at, content)
        VALUES (@id, @scanId, @accountId, @fileName, @contentType, @size, @sha256, @createdAt, @content)`),
      // Never the content column: a row's bytes are read only to send them (resultContent).
      // In the order they were recorded: the scanner's files, then the scan's PDF.
      resultsOf: db.prepare(`SELECT ${RESULT_COLUMNS} FROM scan_results WHERE scan_id = ? ORDER BY created_at, rowid`),
      result: db.prepare(`SELECT ${RESULT_COLUMNS} FROM scan_results WHERE account_id = ? AND id = ?`),
      resultContent: db.prepare('SELECT content FROM scan_results WHERE id = ?'),
      // Its risk lists, each in recorded order (the key's order, which the grouping walks): one JSON array per list built by SQLite,
      // one string to parse rather than a row per id. An ORDER BY inside the aggregate sorted the ids again
      // (test/store/counters-migration.test.ts keeps the order).
      // Only up to each list's stored length: a chunked recording's entries are written before its lengths (RiskRepository.appendRiskLists).
      riskListsOf: db.prepare(`SELECT list, json_group_array(risk_id) AS ids FROM scan_risks
        WHERE scan_seq = @seq AND position < (CASE list WHEN 0 THEN @newOpen WHEN 1 THEN @stillOpen ELSE @closed END) GROUP BY list`),
      // A run of one list by its key's range, in position order, as the API's JSON (ScansService.listJson sends it as it is).
      riskListJson: db.prepare(`SELECT group_concat('{"risk_id":' || json_quote(risk_id) || '}', ',') FROM (${LIST_RUN})`),
      // The same run as ids, one JSON array to parse (a scan PDF picks the most severe of a list a run at a time).
      riskListIds: db.prepare(`SELECT json_group_array(risk_id) FROM (${LIST_RUN})`),
      storedLength: db
        .prepare('SELECT COALESCE(MAX(position) + 1, 0) FROM scan_risks WHERE scan_seq = (SELECT seq FROM scans WHERE id = ?) AND list = ?')
        .pluck(),
      forgetRiskListFrom: db.prepare('DELETE FROM scan_risks WHERE scan_seq = (SELECT seq FROM scans WHERE id = ?) AND list = ? AND position >= ?'),
      insertRiskList: db.prepare(`INSERT INTO scan_risks (scan_seq, list, position, risk_id)
        SELECT (SELECT seq FROM scans WHERE id = @id), @list, @from + j.key, j.value FROM json_each(@ids) j`),
      setRiskCounts: db.prepare('UPDATE scans SET new_open_count = ?, still_open_count = ?, closed_count = ? WHERE id = ?'),
      insertPendingResult: db.prepare(
        'INSERT INTO pending_result_files (result_id, scan_id, account_id, created_at) VALUES (@id, @scanId, @accountId, @createdAt)',
      ),
    };
  }

  private hydrate(row: (ScanRow & RiskCounts) | undefined): Scan | undefined {
    if (row === undefined) return undefined;
    return toScan(row, (this.statements.resultsOf.all(row.id) as ResultRow[]).map(toResult), this.riskListsOf(row));
  }

  private summarize(row: ScanRow & RiskCounts): ScanSummary {
    return toSummary(row, (this.statements.resultsOf.all(row.id) as ResultRow[]).map(toResult));
  }

  private riskListsOf(row: ScanRow & RiskCounts): RiskLists {
    const lists = noRisks();
    const lengths = { seq: row.seq, newOpen: row.new_open_count, stillOpen: row.still_open_count, closed: row.closed_count };
    for (const [list, ids] of this.statements.riskListsOf.raw(true).all(lengths) as Array<[number, string]>)
      lists[RISK_LISTS[list]!] = JSON.parse(ids) as string[];
    return lists;
  }

  /**
   * Stores the scan's risk lists and their lengths, which show them. Only
   * the writes that record what a scan found (insert, insertImported,
   * saveWithResults) call it: save() leaves them, so a progress or state
   * change never rewrites a scan's million ids. The entries a chunked
   * recording appended already (RiskRepository.appendRiskLists, the same
   * ids from the start of each list) are kept; only the rest is written,
   * and anything stored past a list's end goes.
   */
  private writeRiskLists(scan: Scan): void {
    for (const [list, key] of RISK_LISTS.entries()) {
      const ids = scan.risks[key];
      const stored = this.statements.storedLength.get(scan.id, list) as number;
      if (stored > ids.length) this.statements.forgetRiskListFrom.run(scan.id, list, ids.length);
      if (ids.length > stored) this.statements.insertRiskList.run({ id: scan.id, list, from: stored, ids: JSON.stringify(ids.slice(stored)) });
    }
    this.statements.setRiskCounts.run(scan.risks.newOpen.length, scan.risks.stillOpen.length, scan.risks.closed.length, scan.id);
  }

  private recordEvents(events: readonly OutboxEvent[]): void {
    this.eventRows.insert(events);
  }

  insert(scans: readonly Scan[], events: readonly OutboxEvent[]): void {
    this.db.transaction(() => {
      for (const scan of scans) {
        this.statements.insert.run(toParams(scan));
        if (hasRisks(scan)) this.writeRiskLists(scan);
        if (scan.state !== 'OVER_LIMIT') this.statements.addUsage.run(scan.accountId, scan.createdAt.slice(0, 7), 1);
      }
      this.recordEvents(events);
    })();
  }

  insertImported(scan: Scan, files: readonly StoredResultFile[]): void {
    this.db.transaction(() => {
      this.statements.insert.run(toParams(scan));
      if (hasRisks(scan)) this.writeRiskLists(scan);
      for (const file of files) this.statements.insertResult.run(resultParams(file));
    })();
  }

  save(scan: Scan, events: readonly OutboxEvent[], expectedState?: ScanState): boolean {
    return this.db.transaction(() => {
      if (this.statements.save.run({ ...toParams(scan), expectedState: expectedState ?? null }).changes === 0) return false;
      this.recordEvents(events);
      return true;
    })();
  }

  findById(accountId: string, id: string): Scan | undefined {
    return this.hydrate(this.statements.byId.get(accountId, id) as (ScanRow & RiskCounts) | undefined);
  }

  findSummary(accountId: string, id: string): ScanSummary | undefined {
    const row = this.statements.byId.get(accountId, id) as (ScanRow & RiskCounts) | undefined;
    return row && this.summarize(row);
  }

  findByName(accountId: string, name: string): Scan | undefined {
    return this.hydrate(this.statements.byName.get(accountId, name) as (ScanRow & RiskCounts) | undefined);
  }

  findByIdUnscoped(id: string): Scan | undefined {
    return this.hydrate(this.statements.byIdUnscoped.get(id) as (ScanRow & RiskCounts) | undefined);
  }

  delete(accountId: string, id: string): boolean {
    return this.db.transaction(() => {
      // Its detections and risk lists stay, for the sweep (ScanSweeps): deleting them here held the event loop.
      this.statements.journalSweep.run(accountId, id);
      if (this.statements.delete.run(accountId, id).changes === 0) return false;
      // Its Scan resource goes after it (scan-resource-marks.ts); an entry is written even where none exists (embedded), bounded.
      this.statements.recordDeletion.run(id, new Date().toISOString());
      this.statements.pruneDeletions.run();
      return true;
    })();
  }

  /**
   * A page of scans in two reads: the page's keys and sizes first (no JSON
   * column read), then whole rows only for the scans the page holds. A
   * budgeted page (GET /v1/scans) of a million-risk account holds two or
   * three scans of a 500-scan page size; reading and parsing every row's
   * targets first made each request allocate 4.6 MB, which ten clients
   * promoted to the old generation faster than it was collected (a heap of
   * 250 MB; bench/scale.ts).
   */
  list(accountId: string, query: ScanListQuery): Page<ScanSummary> {
    const { filters, budget } = query;
    const keys = newestFirstPage<ScanKey>(
      this.db,
      'scans',
      accountId,
      [
        ['state', filters.state],
        ['type', filters.type],
        ['scheduled_by', filters.scheduled_by],
      ],
      query.pageSize,
      query.after,
      SCAN_KEY_COLUMNS,
    );
    let chosen = keys.rows;
    let nextCursor = keys.nextCursor;
    if (budget !== undefined) {
      let chars = 0;
      const last = chosen.findIndex((key) => (chars += budget.sizeOf({ riskIds: key.risk_ids, storedChars: key.stored_chars })) > budget.chars);
      if (last !== -1 && last < chosen.length - 1) {
        chosen = chosen.slice(0, last + 1);
        nextCursor = [chosen.at(-1)!.seq];
      }
    }
    const rows = this.statements.bySeqs.all(JSON.stringify(chosen.map((key) => key.seq))) as Array<ScanRow & RiskCounts>;
    return {
      items: rows.map((row) => this.summarize(row)),
      nextCursor,
      cursorAt: (index) => [rows[index]!.seq],
    };
  }

  riskListIds(scanId: string, list: keyof RiskLists, position: number, count: number): string[] {
    const json = this.statements.riskListIds.raw(true).get(scanId, RISK_LISTS.indexOf(list), position, position + count) as [string];
    return JSON.parse(json[0]) as string[];
  }

  riskListJson(scanId: string, list: keyof RiskLists, position: number, count: number): string {
    const json = this.statements.riskListJson.raw(true).get(scanId, RISK_LISTS.indexOf(list), position, position + count) as [string | null];
    return json[0] ?? '';
  }

  idsInStates(states: readonly ScanState[], limit = -1): string[] {
    const key = states.join(',');
    let statement = this.idsInStatesStatements.get(key);
    if (statement === undefined) {
      statement = this.db.prepare(`SELECT id FROM scans WHERE state IN (${states.map(() => '?').join(', ')}) ORDER BY seq LIMIT ?`);
      this.idsInStatesStatements.set(key, statement);
    }
    const rows = statement.all([...states, limit]) as Array<{ id: string }>;
    return rows.map((row) => row.id);
  }

  countInState(state: ScanState): number {
    return (this.statements.countInState.get(state) as { n: number }).n;
  }

  monthlyUsage(accountId: string, month: string): number {
    return (this.statements.usage.get(accountId, month) as { scans: number } | undefined)?.scans ?? 0;
  }

  saveWithResults(scan: Scan, files: readonly NewResultFile[], events: readonly OutboxEvent[], expectedState: ScanState): boolean {
    return this.db.transaction(() => {
      if (!this.save(scan, events, expectedState)) return false;
      this.writeRiskLists(scan);
      for (const file of files) {
        this.statements.insertResult.run(resultParams(file));
        if (file.rendersLater === true)
          this.statements.insertPendingResult.run({ id: file.id, scanId: file.scanId, accountId: file.accountId, createdAt: file.createdAt });
      }
      return true;
    })();
  }

  findResult(accountId: string, id: string): StoredResultFile | undefined {
    const row = this.statements.result.get(accountId, id) as ResultRow | undefined;
    return row && toResult(row);
  }

  resultContent(id: string): Uint8Array | undefined {
    const row = this.statements.resultContent.get(id) as { content: Buffer | null } | undefined;
    return row?.content ?? undefined;
  }

  eventsFor(accountId: string): OutboxEvent[] {
    const rows = this.statements.eventsFor.all(accountId) as Array<StoredPayload & { id: string; account_id: string; type: EventType; created_at: string }>;
    return rows.map((row) => ({
      id: row.id,
      accountId: row.account_id,
      type: row.type,
      data: JSON.parse(this.payloads.of(row)),
      createdAt: new Date(row.created_at),
    }));
  }
}

/** What a page of scans is chosen by (ScanRepository.list): its key, and the size of what it would send. */
interface ScanKey {
  seq: number;
  risk_ids: number;
  stored_chars: number;
}

const SCAN_KEY_COLUMNS = `seq, new_open_count + still_open_count + closed_count AS risk_ids,
  length(requested_targets) + length(resolved_targets) + length(skipped_targets) + length(conditions) AS stored_chars`;

interface RiskCounts {
  new_open_count: number;
  still_open_count: number;
  closed_count: number;
}
