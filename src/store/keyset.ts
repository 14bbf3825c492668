/**
 * Keyset pagination in SQL: ORDER BY the sort columns plus seq, and a WHERE
 * clause that starts strictly after the last row of the previous page. Unlike
 * OFFSET, pages stay correct while rows are inserted, and page N costs the
 * same as page 1.
 */
import type { CursorValue } from '../domain/lists/page-token.js';
import type { SortDirection } from '../domain/lists/list-query.js';

export interface KeysetColumn {
  /** A non-null SQL expression (wrap nullable columns in COALESCE). */
  expression: string;
  direction: SortDirection;
}

export function orderBy(columns: readonly KeysetColumn[]): string {
  return columns.map((column) => `${column.expression} ${column.direction.toUpperCase()}`).join(', ');
}

/**
 * `a >= ? AND ((a > ?) OR (a = ? AND b < ?) OR ...)` with its parameters, for
 * the row after `values`. The leading bound says nothing new, but it is one
 * range SQLite can start an index walk at; the disjunction alone, over a join
 * (risks by target), became a MULTI-INDEX OR whose rows were then sorted.
 */
export function afterCursor(columns: readonly KeysetColumn[], values: readonly CursorValue[]): { sql: string; params: CursorValue[] } {
  const disjuncts: string[] = [];
  const first = columns[0]!;
  const bound = columns.length > 1 ? `${first.expression} ${first.direction === 'asc' ? '>=' : '<='} ? AND ` : '';
  const params: CursorValue[] = bound === '' ? [] : [values[0]!];
  columns.forEach((column, index) => {
    const equalities = columns.slice(0, index).map((previous) => `${previous.expression} = ?`);
    const comparison = `${column.expression} ${column.direction === 'asc' ? '>' : '<'} ?`;
    disjuncts.push(`(${[...equalities, comparison].join(' AND ')})`);
    params.push(...values.slice(0, index + 1));
  });
  return { sql: `(${bound}(${disjuncts.join(' OR ')}))`, params };
}

/**
 * A newest-first page of one account's rows filtered by exact column values:
 * the shape of every list ordered by seq alone (scans, sources, risks use
 * their own joins). Reads one row more than the page to know whether more follow.
 */
export function newestFirstPage<Row extends { seq: number }>(
  db: { prepare(sql: string): { all(...params: unknown[]): unknown[] } },
  table: string,
  accountId: string,
  filters: ReadonlyArray<[column: string, values: readonly string[] | undefined]>,
  pageSize: number,
  after: readonly CursorValue[] | undefined,
): { rows: Row[]; nextCursor: CursorValue[] | undefined } {
  const where = ['account_id = ?'];
  const params: CursorValue[] = [accountId];
  for (const [column, values] of filters) {
    if (values === undefined) continue;
    where.push(`${column} IN (${values.map(() => '?').join(', ')})`);
    params.push(...values);
  }
  if (after !== undefined) {
    where.push('seq < ?');
    params.push(after[0]!);
  }
  const rows = db.prepare(`SELECT * FROM ${table} WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT ?`).all(...params, pageSize + 1) as Row[];
  const more = rows.length > pageSize;
  const page = more ? rows.slice(0, pageSize) : rows;
  return { rows: page, nextCursor: more ? [page.at(-1)!.seq] : undefined };
}
