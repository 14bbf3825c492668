/**
 * The title filter's table (migration 0034): risk_titles holds (account,
 * title, seq) for every risk up to risk_titles_merged.upto; the newer ones
 * are pending. Whoever inserts risks calls mergeIfPast() in the same
 * transaction: once PENDING_TITLES have come in since the last batch, the
 * pending risks' entries are written sorted by title, so each page of the
 * table is written once per batch. An index on risks' title was written at
 * every chunk's commit, a page per title a chunk held (a quarter of an
 * upload's writes, bench/ingest.ts). A title filter reads both sources
 * (merged, pending), each newest first: see SqliteRiskRepository.
 */
import type { Database } from './database.js';

/**
 * How many risks may be pending before a batch is written. The title filter
 * reads them from the newest end of the account's risks (risks_by_account),
 * testing each one's title: a title's list took 5.4-7.8 ms p99 on an
 * account of a million risks (bench/scale.ts, four runs). A batch of 4,096
 * sorted entries takes about 5 ms; 45,158 risks of an upload wrote 3,012
 * pages of the table where an index on risks' title took 16,052.
 */
export const PENDING_TITLES = 4096;

/** The highest seq whose risk's title is in risk_titles, as SQL: risks above it are pending. */
export const MERGED_UPTO = '(SELECT upto FROM risk_titles_merged)';

export class RiskTitles {
  private readonly statements;

  constructor(
    db: Database,
    /** PENDING_TITLES unless a test sets it, to see batches written from a few risks. */
    private readonly pendingLimit = PENDING_TITLES,
  ) {
    this.statements = {
      upto: db.prepare('SELECT upto FROM risk_titles_merged').pluck(),
      // One statement, sorted as the table's key so that each page is visited once, in order. OR IGNORE: a statement that cannot
      // fail part-way keeps no statement journal (migration 0033); a risk above upto has no entry, so none is ever ignored.
      merge: db.prepare(`INSERT OR IGNORE INTO risk_titles (account_id, title, seq)
        SELECT account_id, title, seq FROM risks WHERE seq > ${MERGED_UPTO} ORDER BY account_id, title, seq`),
      merged: db.prepare('UPDATE risk_titles_merged SET upto = max(upto, COALESCE((SELECT MAX(seq) FROM risks), 0))'),
    };
  }

  /** Inside the transaction that inserted risks up to `lastSeq`: writes the pending entries once they reach the limit. */
  mergeIfPast(lastSeq: number): void {
    if (lastSeq - (this.statements.upto.get() as number) >= this.pendingLimit) this.merge();
  }

  /** Writes every pending risk's entry (inside the caller's transaction, or as one of its own). */
  merge(): void {
    this.statements.merge.run();
    this.statements.merged.run();
  }
}
