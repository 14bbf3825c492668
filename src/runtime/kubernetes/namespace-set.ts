/**
 * The namespaces an install acts in: those bound to its accounts. Vigil
 * lists, watches and writes there and nowhere else, so two installs with
 * different accounts share a cluster without touching each other's objects.
 *
 * An account may be created while the service runs, by `vigil accounts
 * create` in another process on the same data directory. The set learns of
 * it without asking the API server anything: every `checkEveryMs` it reads
 * `version()` from the local database (SQLite's data_version, which moves
 * when another connection commits, and the number of accounts, which moves
 * when this process adds one), and only when that moved re-reads the
 * accounts' namespaces. A namespace new to the set is told to every
 * listener at once (the informers open a watch there). Accounts are never
 * deleted, so the set only grows.
 */
import type { TimerHandle, Timers } from '../../app/controller/timer.js';

export interface NamespaceSetOptions {
  /** The namespaces bound to accounts now. */
  read: () => Iterable<string>;
  /** Moves whenever the accounts may have changed; read every `checkEveryMs`. */
  version: () => string;
  timers: Timers;
  checkEveryMs?: number;
  onError: (error: unknown) => void;
}

/** A read of a local SQLite file's header and one small table: cheap enough for every second. */
export const NAMESPACE_CHECK_MS = 1000;

export class NamespaceSet {
  private readonly known = new Set<string>();
  private readonly listeners: Array<(namespace: string) => void> = [];
  private seenVersion: string | undefined;
  private timer: TimerHandle | undefined;
  private running = false;

  constructor(private readonly options: NamespaceSetOptions) {}

  /** Every namespace in the set now. */
  current(): readonly string[] {
    return [...this.known];
  }

  has(namespace: string): boolean {
    return this.known.has(namespace);
  }

  /** Told each namespace added from now on (those in the set already are in current()). */
  onAdded(listener: (namespace: string) => void): void {
    this.listeners.push(listener);
  }

  /** Reads the accounts now when they may have changed; tells the listeners of each namespace new to the set. */
  refresh(): void {
    const version = this.options.version();
    if (version === this.seenVersion) return;
    const namespaces = [...this.options.read()];
    this.seenVersion = version;
    for (const namespace of namespaces) {
      if (this.known.has(namespace)) continue;
      this.known.add(namespace);
      for (const listener of this.listeners) listener(namespace);
    }
  }

  /** The first read, then a check every `checkEveryMs` until stop(). */
  start(): void {
    this.running = true;
    this.check();
    this.schedule();
  }

  stop(): void {
    this.running = false;
    if (this.timer !== undefined) this.options.timers.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    if (!this.running) return;
    this.timer = this.options.timers.setTimeout(() => {
      this.check();
      this.schedule();
    }, this.options.checkEveryMs ?? NAMESPACE_CHECK_MS);
  }

  private check(): void {
    try {
      this.refresh();
    } catch (error) {
      this.options.onError(error); // the database busy or closing: the next check reads again
    }
  }
}

/** A set that never changes: tests and tools that know their namespaces. */
export function fixedNamespaces(namespaces: readonly string[], timers: Timers): NamespaceSet {
  const set = new NamespaceSet({ read: () => namespaces, version: () => 'fixed', timers, onError: () => undefined });
  set.refresh();
  return set;
}
