import type { Page, SourceListQuery, SourceRepository } from '../app/ports.js';
import type { CursorValue } from '../domain/lists/page-token.js';
import type { Source, SourceType } from '../domain/sources/source.js';
import type { Database } from './database.js';

interface SourceRow {
  seq: number;
  id: string;
  account_id: string;
  source_type: SourceType;
  name: string;
  created_at: string;
}

function toSource(row: SourceRow): Source {
  return { id: row.id, accountId: row.account_id, sourceType: row.source_type, name: row.name, createdAt: row.created_at };
}

export class SqliteSourceRepository implements SourceRepository {
  private readonly statements;

  constructor(private readonly db: Database) {
    this.statements = {
      insert: db.prepare(`INSERT INTO sources (id, account_id, source_type, name, created_at)
        VALUES (@id, @accountId, @sourceType, @name, @createdAt)`),
      byId: db.prepare('SELECT * FROM sources WHERE account_id = ? AND id = ?'),
      linkScan: db.prepare('INSERT INTO imported_scans (scan_id, source_id) VALUES (?, ?)'),
    };
  }

  insert(source: Source): void {
    this.statements.insert.run(source);
  }

  findById(accountId: string, id: string): Source | undefined {
    const row = this.statements.byId.get(accountId, id) as SourceRow | undefined;
    return row && toSource(row);
  }

  list(accountId: string, query: SourceListQuery): Page<Source> {
    const where = ['account_id = ?'];
    const params: CursorValue[] = [accountId];
    const columns = { source_type: 'source_type', name: 'name' } as const;
    for (const [key, column] of Object.entries(columns) as Array<[keyof typeof columns, string]>) {
      const values = query.filters[key];
      if (values === undefined) continue;
      where.push(`${column} IN (${values.map(() => '?').join(', ')})`);
      params.push(...values);
    }
    if (query.after !== undefined) {
      where.push('seq < ?');
      params.push(query.after[0]!);
    }
    const rows = this.db
      .prepare(`SELECT * FROM sources WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT ?`)
      .all(...params, query.pageSize + 1) as SourceRow[];
    const more = rows.length > query.pageSize;
    const page = more ? rows.slice(0, query.pageSize) : rows;
    return { items: page.map(toSource), nextCursor: more ? [page.at(-1)!.seq] : undefined };
  }

  linkScan(scanId: string, sourceId: string): void {
    this.statements.linkScan.run(scanId, sourceId);
  }
}
