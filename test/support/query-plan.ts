import type { Database } from '../../src/store/database.js';

/**
 * The EXPLAIN QUERY PLAN of the list statement `run` executes (the first
 * prepared statement with an ORDER BY that it runs, or the first `which`
 * picks), with its own parameters, one plan line per row.
 */
export function planOf(db: Database, run: () => unknown, which: (sql: string) => boolean = (sql) => sql.includes('ORDER BY')): string {
  const seen: Array<{ sql: string; args: unknown[] }> = [];
  const prepare = db.prepare.bind(db);
  db.prepare = ((sql: string) => {
    const statement = prepare(sql);
    for (const method of ['all', 'get', 'iterate'] as const) {
      const original = statement[method].bind(statement);
      statement[method] = ((...args: unknown[]) => {
        seen.push({ sql, args });
        return original(...args);
      }) as never;
    }
    return statement;
  }) as typeof db.prepare;
  try {
    run();
  } finally {
    db.prepare = prepare;
  }
  const list = seen.find((call) => which(call.sql))!;
  return (db.prepare(`EXPLAIN QUERY PLAN ${list.sql}`).all(...list.args) as Array<{ detail: string }>).map((row) => row.detail).join('\n');
}
