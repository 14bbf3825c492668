/**
 * Group commit: work items submitted in the same turn of the event loop run
 * one after another in a single store transaction, each in a savepoint of
 * its own, and every item's promise settles only once that transaction is
 * committed. One durable commit (one disk flush) then serves many
 * concurrent requests instead of one each, and a caller is never told of a
 * write that a crash could still lose.
 *
 * An item that throws is rolled back alone (its savepoint) and its promise
 * rejects with its error; the others commit. If the commit itself fails,
 * every item of the batch rejects with that error. Items run in submission
 * order, so each sees the writes of those before it (a monthly limit counts
 * the scans admitted just before, as it would one commit at a time).
 */
export type Transaction = <T>(fn: () => T) => T;

interface Pending {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export class GroupCommit {
  private pending: Pending[] = [];

  /**
   * @param transaction runs a function in a store transaction; called inside
   *   one, it must nest as a savepoint (better-sqlite3's db.transaction does).
   * @param inTransaction whether the store is still in that transaction: an
   *   error that made SQLite abort it (a full disk) fails the whole batch,
   *   rather than letting the items after it commit on their own.
   * @param defer schedules the batch's flush: after the current turn's I/O
   *   callbacks, so that requests read in the same turn share it.
   */
  constructor(
    private readonly transaction: Transaction,
    private readonly inTransaction: () => boolean,
    private readonly defer: (flush: () => void) => void = (flush) => setImmediate(flush),
  ) {}

  /** Runs `work` in the next batch's transaction; resolves with its result once the batch is committed. */
  run<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (this.pending.length === 1) this.defer(() => this.flush());
    });
  }

  private flush(): void {
    const batch = this.pending;
    this.pending = [];
    let outcomes: Outcome[];
    try {
      outcomes = this.transaction(() =>
        batch.map((item): Outcome => {
          try {
            return { ok: true, value: this.transaction(item.work) };
          } catch (error) {
            if (!this.inTransaction()) throw error;
            return { ok: false, error };
          }
        }),
      );
    } catch (error) {
      for (const item of batch) item.reject(error);
      return;
    }
    batch.forEach((item, index) => {
      const outcome = outcomes[index]!;
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.error);
    });
  }
}
