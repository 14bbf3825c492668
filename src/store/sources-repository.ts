import type { Page, SourceListQuery, SourceRepository } from '../app/ports.js';
import type { Source, SourceType } from '../domain/sources/source.js';
import type { Database } from './database.js';
import { newestFirstPage } from './keyset.js';

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
    const page = newestFirstPage<SourceRow>(
      this.db,
      'sources',
      accountId,
      [
        ['source_type', query.filters.source_type],
        ['name', query.filters.name],
      ],
      query.pageSize,
      query.after,
    );
    return { items: page.rows.map(toSource), nextCursor: page.nextCursor };
  }

  linkScan(scanId: string, sourceId: string): void {
    this.statements.linkScan.run(scanId, sourceId);
  }
}
