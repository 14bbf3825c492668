/**
 * RecordingStaging on SQLite TEMP tables: a recording's findings (an
 * upload's as they are parsed, a finished scan's before it is recorded), and
 * a whole recording's events until the end of its transaction (a chunked
 * one's go to the outbox with each chunk, held back: holdRiskEvents, and
 * its scan event in parts before its end: holdEvent), held in the store
 * rather than in memory (bench/ingest.ts: the 45,158 findings of a 25 MB nmap
 * file were 4.3-4.6x the file in memory, and the events held to the end as
 * much again). TEMP tables belong to this connection and live in a file that
 * SQLite deletes when the connection closes (or the process dies): no WAL, no
 * disk flush, and nothing a crash could leave behind. A TEMP table takes part
 * in the connection's transactions, so staged events roll back with the
 * chunk that staged them.
 *
 * A staged finding is kept as the columns of the risk it may become (its
 * fingerprint, title, threat level, QoD and its definition as JSON text), so
 * that the risk history reads back only fingerprints and the store copies
 * the rest into new or re-detected risks itself (SqliteRiskRepository's
 * insertStaged and redetectStaged): a definition is serialised once, here,
 * and never parsed again on the way (bench/ingest.ts).
 */
import type { RecordingStaging } from '../app/ports.js';
import type { OutboxEvent } from '../domain/events/event.js';
import type { Finding, FindingSink } from '../domain/risks/finding.js';
import type { StagedFinding } from '../domain/risks/risk.js';
import type { Database } from './database.js';

/** Rows per multi-row INSERT: 7 values a finding, far below SQLite's 32,766. */
const FINDING_ROWS = 500;
const FINDING_WIDTH = 7;

export class SqliteRecordingStaging implements RecordingStaging {
  private readonly statements;
  private readonly partialFindingInserts = new Map<number, ReturnType<Database['prepare']>>();

  constructor(private readonly db: Database) {
    createStagingTables(db);
    this.statements = {
      findings: db.prepare(`INSERT INTO temp.staged_findings (${FINDING_COLUMNS}) VALUES ${rows(FINDING_ROWS, FINDING_WIDTH)}`),
      // Each event's data is its risk as the API presents it, made from the rows here: a large recording's risks are never read back into objects.
      riskEvents: db.prepare(`INSERT INTO temp.staged_events (scan_id, id, account_id, type, payload, created_at)
        SELECT @scanId, ${RISK_EVENT_COLUMNS} ${RISK_EVENT_ROWS} ORDER BY j.key`),
      // A chunked recording's: into the outbox at once, marked as its (held back from delivery while its marker lasts), for an account with a receiver.
      heldEvents: db.prepare(`INSERT INTO main.events (id, account_id, type, payload, created_at, held_by)
        SELECT ${RISK_EVENT_COLUMNS}, @scanId ${RISK_EVENT_ROWS}
        WHERE ${received('r.account_id', '@createdAt')}
        ORDER BY j.key`),
      // A chunked recording's scan event, its data to come in parts (addEventPart), for an account with a receiver as the risk events.
      heldEvent: db.prepare(`INSERT INTO main.events (id, account_id, type, payload, created_at, held_by)
        SELECT @id, @accountId, @type, '', @createdAt, @scanId
        WHERE ${received('@accountId', '@createdAt')}`),
      eventPart: db.prepare('INSERT INTO main.event_parts (event_seq, part, text) SELECT seq, parts, ? FROM main.events WHERE seq = ?'),
      countPart: db.prepare('UPDATE main.events SET parts = parts + 1 WHERE seq = ?'),
      firstHeldSeq: db.prepare('UPDATE main.pending_recordings SET first_event_seq = ? WHERE scan_id = ? AND first_event_seq IS NULL'),
      // Along events_by_account from the recording's first event: the account's other events meanwhile are passed over, not read whole.
      discardHeld: db.prepare(`DELETE FROM main.events WHERE account_id = @accountId AND held_by = @scanId
        AND seq >= (SELECT first_event_seq FROM main.pending_recordings WHERE scan_id = @scanId)`),
      counts: db.prepare('SELECT host, COUNT(*) AS n FROM temp.staged_findings WHERE scan_id = ? GROUP BY host'),
      all: db.prepare('SELECT seq, fingerprint FROM temp.staged_findings WHERE scan_id = ? ORDER BY seq').raw(),
      ofHosts: db
        .prepare(
          `SELECT seq, fingerprint FROM temp.staged_findings
        WHERE scan_id = ? AND host IN (SELECT value FROM json_each(?)) ORDER BY seq`,
        )
        .raw(),
      // Two ranges of the index, so the answer never walks this recording's own rows.
      others: db
        .prepare(
          `SELECT EXISTS (SELECT 1 FROM temp.staged_findings WHERE scan_id < ?)
        OR EXISTS (SELECT 1 FROM temp.staged_findings WHERE scan_id > ?)`,
        )
        .pluck(),
      dropAllFindings: db.prepare('DELETE FROM temp.staged_findings'),
      // An endpoint removed since the chunk staged its events takes its events with it, as if they had never been stored.
      release: db.prepare(`INSERT INTO main.events (id, account_id, type, payload, created_at)
        SELECT s.id, s.account_id, s.type, s.payload, s.created_at FROM temp.staged_events s
        WHERE s.scan_id = ? AND ${received('s.account_id', 's.created_at')}
        ORDER BY s.seq`),
      dropFindings: db.prepare('DELETE FROM temp.staged_findings WHERE scan_id = ?'),
      // The first `limit` of them by the (scan_id, host, seq) index.
      dropSomeFindings: db.prepare('DELETE FROM temp.staged_findings WHERE seq IN (SELECT seq FROM temp.staged_findings WHERE scan_id = ? LIMIT ?)'),
      dropEvents: db.prepare('DELETE FROM temp.staged_events WHERE scan_id = ?'),
    };
  }

  findingSink(scanId: string, key?: string): FindingSink {
    return { add: (findings) => this.addFindings(scanId, findings, key) };
  }

  private addFindings(scanId: string, findings: readonly Finding[], key: string | undefined): void {
    const insert = (start: number, count: number): void => {
      const values: unknown[] = [];
      for (let index = start; index < start + count; index++) {
        const finding = findings[index]!;
        const { definition } = finding;
        const qod = definition.additional_info.qod;
        values.push(
          scanId,
          key ?? finding.location.host,
          finding.fingerprint,
          definition.title,
          definition.threat_level,
          typeof qod === 'number' ? Math.round(qod) : null,
          JSON.stringify(definition),
        );
      }
      this.findingInsert(count).run(values);
    };
    this.db.transaction(() => {
      let start = 0;
      for (; start + FINDING_ROWS <= findings.length; start += FINDING_ROWS) insert(start, FINDING_ROWS);
      if (start < findings.length) insert(start, findings.length - start);
    })();
  }

  /**
   * The INSERT of `count` staged findings, prepared once per count: the parser hands them over 100 at a time (SINK_BATCH), and preparing each time
   * was a twentieth of an upload.
   */
  private findingInsert(count: number) {
    if (count === FINDING_ROWS) return this.statements.findings;
    let statement = this.partialFindingInserts.get(count);
    if (statement === undefined) {
      statement = this.db.prepare(`INSERT INTO temp.staged_findings (${FINDING_COLUMNS}) VALUES ${rows(count, FINDING_WIDTH)}`);
      this.partialFindingInserts.set(count, statement);
    }
    return statement;
  }

  findingCounts(scanId: string): Map<string, number> {
    const counts = new Map<string, number>();
    for (const row of this.statements.counts.all(scanId) as Array<{ host: string; n: number }>) counts.set(row.host, row.n);
    return counts;
  }

  findings(scanId: string, hosts: readonly string[] | undefined): StagedFinding[] {
    const rows = (hosts === undefined ? this.statements.all.all(scanId) : this.statements.ofHosts.all(scanId, JSON.stringify(hosts))) as Array<
      [number, string]
    >;
    return rows.map(([seq, fingerprint]) => ({ seq, fingerprint }));
  }

  stageRiskEvents(scanId: string, createdAt: string, events: ReadonlyArray<readonly [riskId: string, eventId: string, type: string]>): void {
    if (events.length > 0) this.statements.riskEvents.run({ scanId, createdAt, events: JSON.stringify(events) });
  }

  holdRiskEvents(scanId: string, createdAt: string, events: ReadonlyArray<readonly [riskId: string, eventId: string, type: string]>): void {
    if (events.length === 0) return;
    const { changes, lastInsertRowid } = this.statements.heldEvents.run({ scanId, createdAt, events: JSON.stringify(events) });
    // One statement's rows take consecutive seqs: delivery stops short of the recording's first while it is pending.
    if (changes > 0) this.statements.firstHeldSeq.run(Number(lastInsertRowid) - changes + 1, scanId);
  }

  holdEvent(scanId: string, event: Omit<OutboxEvent, 'data'>): number | undefined {
    const { changes, lastInsertRowid } = this.statements.heldEvent.run({
      id: event.id,
      accountId: event.accountId,
      type: event.type,
      createdAt: event.createdAt.toISOString(),
      scanId,
    });
    if (changes === 0) return undefined;
    this.statements.firstHeldSeq.run(Number(lastInsertRowid), scanId);
    return Number(lastInsertRowid);
  }

  addEventPart(seq: number, text: string): void {
    this.statements.eventPart.run(text, seq);
    this.statements.countPart.run(seq);
  }

  discardHeldEvents(accountId: string, scanId: string): void {
    this.statements.discardHeld.run({ accountId, scanId });
  }

  releaseEvents(scanId: string): void {
    this.statements.release.run(scanId);
    this.statements.dropEvents.run(scanId);
  }

  drop(scanId: string): void {
    // The only recording staged (the usual case): the whole table goes, which SQLite does without visiting its rows.
    if (this.statements.others.get(scanId, scanId) === 0) this.statements.dropAllFindings.run();
    else this.statements.dropFindings.run(scanId);
    this.statements.dropEvents.run(scanId);
  }

  dropSome(scanId: string, limit: number): boolean {
    this.statements.dropEvents.run(scanId);
    // The only recording staged (the usual case): the whole table at once, its pages freed without deleting row by row, which
    // took 5-7 times as long (bench/ingest.ts: 45,158 rows 20-25 ms at once, 140 ms in turns of 2,000). Else `limit` rows a turn.
    if (this.statements.others.get(scanId, scanId) === 0) {
      this.statements.dropAllFindings.run();
      return false;
    }
    return this.statements.dropSomeFindings.run(scanId, limit).changes > 0;
  }
}

/**
 * The connection's TEMP staging tables (idempotent). The risk repository's
 * set-based writes read staged findings too, so whichever is made first
 * creates them.
 */
export function createStagingTables(db: Database): void {
  // A small page cache for the TEMP schema: past it, pages go to the temp file a few at a time. With better-sqlite3's 16 MB
  // default, the first spill wrote 16 MB in one commit, and the event loop waited 47-66 ms (bench/scale.ts, an upload of
  // 40,020 findings); at 2 MB no commit took over 5 ms, and the process holds 14 MB less.
  db.pragma('temp.cache_size = -2000');
  db.exec(`
      CREATE TEMP TABLE IF NOT EXISTS staged_findings (
        seq          INTEGER PRIMARY KEY,
        scan_id      TEXT NOT NULL,
        host         TEXT NOT NULL,
        fingerprint  TEXT NOT NULL,
        title        TEXT NOT NULL,
        threat_level TEXT NOT NULL,
        qod          INTEGER,
        definition   TEXT NOT NULL
      );
      CREATE INDEX IF NOT EXISTS temp.staged_findings_by_host ON staged_findings (scan_id, host, seq);
      CREATE TEMP TABLE IF NOT EXISTS staged_events (
        seq        INTEGER PRIMARY KEY,
        scan_id    TEXT NOT NULL,
        id         TEXT NOT NULL,
        account_id TEXT NOT NULL,
        type       TEXT NOT NULL,
        payload    TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE INDEX IF NOT EXISTS temp.staged_events_by_scan ON staged_events (scan_id, seq);`);
}

/** The rows risk events are made from: each [risk id, event id, type] entry `j` of the JSON array @events, with its risk `r` and target `t`. */
const RISK_EVENT_ROWS = 'FROM json_each(@events) j JOIN main.risks r ON r.id = j.value ->> 0 JOIN main.targets t ON t.id = r.target_id';

/**
 * A risk as the API presents it (src/app/present/risk.ts, presentRisk), as
 * JSON text made from its row `r` and its target's `t`: the stored JSON
 * columns (tags, acceptances, definition) go in as they are, without being
 * parsed. test/store/staged-recording.test.ts checks it against presentRisk.
 */
const PRESENTED_RISK = `'{"id":' || json_quote(r.id) || ',"target_id":' || json_quote(r.target_id)
  || ',"target":' || json_quote(t.target) || ',"target_label":' || json_quote(t.label) || ',"tags":' || t.tags
  || ',"status":' || json_quote(r.status) || ',"first_detected_at":' || json_quote(r.first_detected_at)
  || ',"last_detected_at":' || json_quote(r.last_detected_at) || ',"is_accepted":' || iif(r.is_accepted, 'true', 'false')
  || ',"accepted_by":' || r.accepted_by || ',"risk_definition":' || r.definition || '}'`;

/** SQL: the account has a webhook endpoint made by the event's time, one that would receive it (as SqliteEventReceivers decides for other events). */
function received(accountId: string, createdAt: string): string {
  return `EXISTS (SELECT 1 FROM main.webhook_endpoints w WHERE w.account_id = ${accountId} AND w.created_at <= ${createdAt})`;
}

const FINDING_COLUMNS = 'scan_id, host, fingerprint, title, threat_level, qod, definition';

function rows(count: number, width: number): string {
  const row = `(${Array.from({ length: width }, () => '?').join(', ')})`;
  return Array.from({ length: count }, () => row).join(', ');
}

/** A risk event's columns from RISK_EVENT_ROWS: id, account, type, payload (PRESENTED_RISK), time. */
const RISK_EVENT_COLUMNS = `j.value ->> 1, r.account_id, j.value ->> 2, ${PRESENTED_RISK}, @createdAt`;
