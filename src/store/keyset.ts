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

/** `(a > ?) OR (a = ? AND b < ?) OR ...` with its parameters, for the row after `values`. */
export function afterCursor(columns: readonly KeysetColumn[], values: readonly CursorValue[]): { sql: string; params: CursorValue[] } {
  const disjuncts: string[] = [];
  const params: CursorValue[] = [];
  columns.forEach((column, index) => {
    const equalities = columns.slice(0, index).map((previous) => `${previous.expression} = ?`);
    const comparison = `${column.expression} ${column.direction === 'asc' ? '>' : '<'} ?`;
    disjuncts.push(`(${[...equalities, comparison].join(' AND ')})`);
    params.push(...values.slice(0, index + 1));
  });
  return { sql: `(${disjuncts.join(' OR ')})`, params };
}
