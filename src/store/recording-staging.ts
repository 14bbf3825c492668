/**
 * RecordingStaging on SQLite TEMP tables: an upload's findings as they are
 * parsed, and a chunked recording's events until its last transaction, held
 * in the store rather than in memory (bench/ingest.ts: the 45,158 findings of
 * a 25 MB nmap file were 4.3-4.6x the file in memory, and the events held to
 * the end as much again). TEMP tables belong to this connection and live in
 * a file that SQLite deletes when the connection closes (or the process
 * dies): no WAL, no disk flush, and nothing a crash could leave behind. A
 * TEMP table takes part in the connection's transactions, so staged events
 * roll back with the chunk that staged them.
 */
import type { RecordingStaging } from '../app/ports.js';
import type { OutboxEvent } from '../domain/events/event.js';
import type { Finding, FindingSink } from '../domain/risks/finding.js';
import type { Database } from './database.js';

/** Rows per multi-row INSERT: 3 values a finding, 7 an event, far below SQLite's 32,766. */
const FINDING_ROWS = 500;
const EVENT_ROWS = 200;

export class SqliteRecordingStaging implements RecordingStaging {
  private readonly statements;
  private readonly partialFindingInserts = new Map<number, ReturnType<Database['prepare']>>();

  constructor(private readonly db: Database) {
    db.exec(`
      CREATE TEMP TABLE IF NOT EXISTS staged_findings (
        seq     INTEGER PRIMARY KEY,
        scan_id TEXT NOT NULL,
        host    TEXT NOT NULL,
        finding TEXT NOT NULL
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
    this.statements = {
      findings: db.prepare(`INSERT INTO temp.staged_findings (scan_id, host, finding) VALUES ${rows(FINDING_ROWS, 3)}`),
      events: db.prepare(`INSERT INTO temp.staged_events (scan_id, id, account_id, type, payload, created_at) VALUES ${rows(EVENT_ROWS, 6)}`),
      counts: db.prepare('SELECT host, COUNT(*) AS n FROM temp.staged_findings WHERE scan_id = ? GROUP BY host'),
      all: db.prepare('SELECT finding FROM temp.staged_findings WHERE scan_id = ? ORDER BY seq').pluck(),
      ofHosts: db.prepare(`SELECT finding FROM temp.staged_findings
        WHERE scan_id = ? AND host IN (SELECT value FROM json_each(?)) ORDER BY seq`).pluck(),
      // An endpoint removed since the chunk staged its events takes its events with it, as if they had never been stored.
      release: db.prepare(`INSERT INTO main.events (id, account_id, type, payload, created_at)
        SELECT s.id, s.account_id, s.type, s.payload, s.created_at FROM temp.staged_events s
        WHERE s.scan_id = ? AND EXISTS (SELECT 1 FROM main.webhook_endpoints w WHERE w.account_id = s.account_id AND w.created_at <= s.created_at)
        ORDER BY s.seq`),
      dropFindings: db.prepare('DELETE FROM temp.staged_findings WHERE scan_id = ?'),
      dropEvents: db.prepare('DELETE FROM temp.staged_events WHERE scan_id = ?'),
    };
  }

  findingSink(scanId: string): FindingSink {
    return { add: (findings) => this.addFindings(scanId, findings) };
  }

  private addFindings(scanId: string, findings: readonly Finding[]): void {
    const insert = (start: number, count: number): void => {
      const values: unknown[] = [];
      for (let index = start; index < start + count; index++) {
        const finding = findings[index]!;
        values.push(scanId, finding.location.host, JSON.stringify(finding));
      }
      this.findingInsert(count).run(values);
    };
    this.db.transaction(() => {
      let start = 0;
      for (; start + FINDING_ROWS <= findings.length; start += FINDING_ROWS) insert(start, FINDING_ROWS);
      if (start < findings.length) insert(start, findings.length - start);
    })();
  }

  /** The INSERT of `count` staged findings, prepared once per count: the parser hands them over 100 at a time (SINK_BATCH), and preparing each time was a twentieth of an upload. */
  private findingInsert(count: number) {
    if (count === FINDING_ROWS) return this.statements.findings;
    let statement = this.partialFindingInserts.get(count);
    if (statement === undefined) {
      statement = this.db.prepare(`INSERT INTO temp.staged_findings (scan_id, host, finding) VALUES ${rows(count, 3)}`);
      this.partialFindingInserts.set(count, statement);
    }
    return statement;
  }

  findingCounts(scanId: string): Map<string, number> {
    const counts = new Map<string, number>();
    for (const row of this.statements.counts.all(scanId) as Array<{ host: string; n: number }>) counts.set(row.host, row.n);
    return counts;
  }

  findings(scanId: string, hosts: readonly string[] | undefined): Finding[] {
    const texts = (hosts === undefined ? this.statements.all.all(scanId) : this.statements.ofHosts.all(scanId, JSON.stringify(hosts))) as string[];
    return texts.map((text) => JSON.parse(text) as Finding);
  }

  stageEvents(scanId: string, events: readonly OutboxEvent[]): void {
    let start = 0;
    const insert = (count: number): void => {
      const values: unknown[] = [];
      for (let index = start; index < start + count; index++) {
        const event = events[index]!;
        values.push(scanId, event.id, event.accountId, event.type, JSON.stringify(event.data), event.createdAt.toISOString());
      }
      const statement = count === EVENT_ROWS ? this.statements.events : this.db.prepare(`INSERT INTO temp.staged_events (scan_id, id, account_id, type, payload, created_at) VALUES ${rows(count, 6)}`);
      statement.run(values);
      start += count;
    };
    while (events.length - start >= EVENT_ROWS) insert(EVENT_ROWS);
    if (start < events.length) insert(events.length - start);
  }

  releaseEvents(scanId: string): void {
    this.statements.release.run(scanId);
    this.statements.dropEvents.run(scanId);
  }

  drop(scanId: string): void {
    this.statements.dropFindings.run(scanId);
    this.statements.dropEvents.run(scanId);
  }
}

function rows(count: number, width: number): string {
  const row = `(${Array.from({ length: width }, () => '?').join(', ')})`;
  return Array.from({ length: count }, () => row).join(', ');
}
