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

/** A filter's column and the values it may hold (any of them). */
export interface Equality {
  column: string;
  values: readonly CursorValue[];
}

/** One of those values: an arm of a merged list holds one per filtered column. */
export interface Equal {
  column: string;
  value: CursorValue;
}

/** At most this many arms in a merged list (SQLite refuses a compound SELECT of more than 500); beyond, one walk tests the values. */
export const MAX_ARMS = 256;

/**
 * Every combination of one value per column, or undefined when there are
 * more than MAX_ARMS: a list filtered by several values of a field reads one
 * index range per combination, merged in page order (a compound SELECT,
 * which SQLite runs as a MERGE that stops at the page), where `IN (...)`
 * sorted every matching row in a temporary B-tree or walked all the
 * account's rows testing each.
 */
export function combinations(equalities: readonly Equality[], maxArms = MAX_ARMS): Equal[][] | undefined {
  let arms: Equal[][] = [[]];
  for (const { column, values } of equalities) {
    if (arms.length * values.length > maxArms) return undefined;
    arms = arms.flatMap((arm) => values.map((value) => [...arm, { column, value }]));
  }
  return arms;
}

/**
 * A newest-first page of one account's rows filtered by exact column values:
 * the shape of every list ordered by seq alone (scans, sources, risks use
 * their own joins). Several values of a column are merged (combinations()),
 * one index range each. Reads one row more than the page to know whether more follow.
 * `columns`: what each row holds (SQL; seq among them), every column unless named.
 */
export function newestFirstPage<Row extends { seq: number }>(
  db: { prepare(sql: string): { all(...params: unknown[]): unknown[] } },
  table: string,
  accountId: string,
  filters: ReadonlyArray<[column: string, values: readonly string[] | undefined]>,
  pageSize: number,
  after: readonly CursorValue[] | undefined,
  columns = '*',
): { rows: Row[]; nextCursor: CursorValue[] | undefined } {
  const equalities = filters.flatMap(([column, values]) => (values === undefined ? [] : [{ column, values: [...new Set(values)] }]));
  // Beyond MAX_ARMS combinations, one walk of the account's rows tests every value.
  const arms: Equality[][] = combinations(equalities)?.map((arm) => arm.map(({ column, value }) => ({ column, values: [value] }))) ?? [equalities];
  const sqls: string[] = [];
  const params: CursorValue[] = [];
  for (const arm of arms) {
    const where = ['account_id = ?'];
    params.push(accountId);
    for (const { column, values } of arm) {
      where.push(`${column} IN (${values.map(() => '?').join(', ')})`);
      params.push(...values);
    }
    if (after !== undefined) {
      where.push('seq < ?');
      params.push(after[0]!);
    }
    sqls.push(`SELECT ${columns} FROM ${table} WHERE ${where.join(' AND ')}`);
  }
  const rows = db.prepare(`${sqls.join(' UNION ALL ')} ORDER BY seq DESC LIMIT ?`).all(...params, pageSize + 1) as Row[];
  const more = rows.length > pageSize;
  const page = more ? rows.slice(0, pageSize) : rows;
  return { rows: page, nextCursor: more ? [page.at(-1)!.seq] : undefined };
}
