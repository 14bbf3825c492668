/**
 * Counts turns of the event loop, one setImmediate each, until stopped: the
 * turn a piece of work ran in, or how many turns other work had while it ran.
 */
export class TurnCounter {
  turn = 0;
  private counting = true;

  constructor() {
    const count = (): void => {
      if (!this.counting) return;
      this.turn++;
      setImmediate(count);
    };
    setImmediate(count);
  }

  stop(): number {
    this.counting = false;
    return this.turn;
  }
}
