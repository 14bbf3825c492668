/**
 * The dispatcher (DESIGN.md): reads the outbox, fans each event out to the
 * endpoints its account had when it was recorded, and delivers it signed,
 * retrying on SPEC.md's schedule. State lives in the database, so a restart
 * resumes where it stopped (a new event's deliveries are read from the
 * outbox and get their row with their first outcome: the store's
 * FIRST_ATTEMPT_WINDOW_MS).
 *
 * Deliveries flow as a pipeline: when one ends, the next due one starts at
 * once. At most `concurrency` are in flight in all and at most `perEndpoint`
 * to one endpoint, so a slow or dead endpoint holds only its own slots while
 * the others keep flowing. Each endpoint's due deliveries are taken from the
 * store a batch at a time, a few slots ahead, by reading alone: the
 * dispatcher is the only one on its database (one `vigil serve`, SQLite's one
 * writer) and holds what it took, in memory, until the attempt's outcome is
 * written, so nothing is taken twice; should the process die, what it held
 * is still PENDING in the store and due at once after the restart
 * (at-least-once). Outcomes are written together, with the fan-out of new
 * events, in one transaction every RECORD_DELAY_MS at most: the attempt log
 * and the delivery states stay complete, and a crash before such a write
 * sends those deliveries again, never loses one.
 */
import type { Clock } from '../domain/clock.js';
import { MAX_DELIVERY_ATTEMPTS, nextAttemptAt } from '../domain/webhooks/retry-schedule.js';
import type { TimerHandle, Timers } from './controller/timer.js';
import type { DeliveryAttempt, DueDelivery, DuePosition, LaneClaim, WebhookDeliveryRepository, WebhookEndpoint } from './ports.js';

export interface DeliveryOutcome {
  ok: boolean;
  status?: number;
  error?: string;
  durationMs: number;
}

/** Sends one signed request; the HTTPS adapter implements it. Never throws for delivery problems. */
export type DeliverWebhook = (endpoint: WebhookEndpoint, body: string, timestampMs: number) => Promise<DeliveryOutcome>;

export interface WebhookDispatcherOptions {
  deliveries: WebhookDeliveryRepository;
  deliver: DeliverWebhook;
  clock: Clock;
  timers: Timers;
  /** Deliveries in flight at once, over all endpoints. */
  concurrency?: number;
  /** Deliveries in flight at once to one endpoint. */
  perEndpoint?: number;
  /** How often the outbox is looked at besides wake(). */
  intervalMs?: number;
  /** A store error; the dispatcher carries on and tries again at its next poll. Without it the error is thrown. */
  onError?: (error: unknown) => void;
}

export const DISPATCHER_DEFAULTS = { concurrency: 32, perEndpoint: 4, intervalMs: 1000 } as const;

/**
 * An endpoint holds (runs or has claimed) up to this many times its slots.
 * Claims are batches, not a row per attempt that ends: they are made when an
 * endpoint is down to one slot's worth, and then every endpoint down to half
 * of what it may hold is topped up in the same pass. All endpoints together
 * hold at most
 * `concurrency * (CLAIM_AHEAD + 1)`: room for every slot, for the batches of
 * endpoints whose slots are all busy, and for more.
 */
const CLAIM_AHEAD = 16;
/**
 * Outcomes wait this long to be written together: every commit is synced to
 * disk, so one per attempt would bound throughput. Should the process die
 * meanwhile, those deliveries are still PENDING and sent again after the restart.
 */
export const RECORD_DELAY_MS = 50;

/** One endpoint's deliveries in hand. */
interface Lane {
  endpointId: string;
  waiting: DueDelivery[];
  running: number;
  /** Its last claim got fewer than it asked for: nothing more is due until a poll says otherwise. */
  drained: boolean;
  /**
   * Where its last claim stopped: the next one reads on from there instead of
   * walking past everything in hand again. Forgotten at every pass (each poll,
   * wake and fan-out) and when a claim drains the queue, so that a delivery
   * that lands before it (a retry written late, an event whose time ties)
   * waits at most until then, and is never skipped.
   */
  after?: DuePosition;
}

export class WebhookDispatcher {
  private readonly concurrency: number;
  private readonly perEndpoint: number;
  private readonly lanes = new Map<string, Lane>();
  /** How many deliveries are in hand, waiting or running. */
  private held = 0;
  /**
   * Every delivery taken and not yet recorded (waiting, running, or ended with
   * its outcome not yet written), by endpoint id, then event id, with its
   * position when taken. The store leaves them out of every claim.
   */
  private readonly taken = new Map<string, Map<string, string>>();
  /** The attempts running, by the delivery they attempt (each one taken once). */
  private readonly inFlight = new Map<DueDelivery, Promise<void>>();
  private unrecorded: DeliveryAttempt[] = [];
  /** The last endpoint that got a claim when they did not go round: the next turns start after it. */
  private resumeAfter = '';
  /** The last claims did not go round: an ended attempt makes room for the endpoints left waiting before its own gets more. */
  private starved = false;
  private pollTimer: TimerHandle | undefined;
  private wakeTimer: TimerHandle | undefined;
  private flushTimer: TimerHandle | undefined;
  private polling = false;
  /** A wake waits for the outcomes' write: it makes a whole pass. */
  private passOnFlush = false;
  /**
   * The last write failed (the disk full, say, while reads still work): no
   * claims until one succeeds, so that outcomes waiting in memory stay
   * within what the dispatcher may hold.
   */
  private writeFailed = false;
  private stopping = false;

  constructor(private readonly options: WebhookDispatcherOptions) {
    this.concurrency = options.concurrency ?? DISPATCHER_DEFAULTS.concurrency;
    this.perEndpoint = options.perEndpoint ?? DISPATCHER_DEFAULTS.perEndpoint;
  }

  start(): void {
    this.stopping = false;
    this.polling = true;
    this.schedulePoll(0);
  }

  /**
   * New events were recorded: look at the outbox now rather than at the next
   * poll, once the recording transaction has committed. While deliveries
   * are in flight and outcomes wait to be written, the new events are fanned
   * out in that write, due within RECORD_DELAY_MS, rather than in a commit of
   * their own: under load every commit saved is throughput, and a lone event
   * finds the dispatcher idle and goes at once.
   */
  wake(): void {
    if (!this.polling || this.wakeTimer !== undefined) return;
    if (this.flushTimer !== undefined && this.inFlight.size > 0) {
      this.passOnFlush = true;
      return;
    }
    this.wakeTimer = this.options.timers.setTimeout(() => {
      this.wakeTimer = undefined;
      this.pass();
    }, 0);
  }

  /** Lets the attempts in flight end and records them; claimed deliveries not yet attempted stay due, untouched in the store. */
  async stop(): Promise<void> {
    this.polling = false;
    this.stopping = true;
    for (const handle of [this.pollTimer, this.wakeTimer]) if (handle !== undefined) this.options.timers.clearTimeout(handle);
    this.pollTimer = this.wakeTimer = undefined;
    await Promise.all(this.inFlight.values());
    for (const delivery of [...this.lanes.values()].flatMap((lane) => lane.waiting.splice(0))) {
      this.held -= 1;
      this.untake(delivery.endpoint.id, delivery.eventId);
    }
    this.lanes.clear();
    this.flush();
  }

  /** Fans new events out and delivers everything due now, then records the outcomes; tests drive the dispatcher with it. */
  async tick(): Promise<void> {
    this.pass();
    while (this.inFlight.size > 0) await Promise.race(this.inFlight.values());
    this.flush();
  }

  private schedulePoll(delayMs: number): void {
    this.pollTimer = this.options.timers.setTimeout(() => {
      this.pollTimer = undefined;
      this.pass();
      if (this.polling) this.schedulePoll(this.options.intervalMs ?? DISPATCHER_DEFAULTS.intervalMs);
    }, delayMs);
  }

  /** Records the outcomes so far and fans new events out (one transaction), claims for the endpoints with deliveries due, and starts what fits. */
  private pass(): void {
    if (this.stopping) return;
    this.passOnFlush = false;
    for (const lane of this.lanes.values()) lane.after = undefined;
    this.guard(() => {
      this.write(true);
      this.claimForAll();
    });
    this.startWaiting();
  }

  /** Claims for every endpoint with deliveries due and room for more. */
  private claimForAll(): void {
    if (this.writeFailed) return;
    // One time for both reads: the store then knows which endpoints have PENDING rows due.
    const now = this.now().toISOString();
    const due = this.options.deliveries.endpointsWithDue(now);
    const dueNow = new Set(due);
    for (const [endpointId, lane] of this.lanes) if (!dueNow.has(endpointId)) lane.drained = true;
    this.claim(this.roomsFor(due), now);
  }

  /** How many each endpoint may claim: its batch, in turns, within what all endpoints together may hold. */
  private roomsFor(endpointIds: readonly string[]): Map<string, number> {
    const rooms = new Map<string, number>();
    let budget = this.concurrency * (CLAIM_AHEAD + 1) - this.held;
    const from = endpointIds.findIndex((id) => id > this.resumeAfter);
    const turns = from <= 0 ? endpointIds : [...endpointIds.slice(from), ...endpointIds.slice(0, from)];
    this.starved = false;
    for (const endpointId of turns) {
      const room = this.roomOf(endpointId);
      if (room === 0) continue;
      if (budget <= 0) {
        this.starved = true;
        break;
      }
      rooms.set(endpointId, Math.min(room, budget));
      budget -= room;
      this.resumeAfter = endpointId;
    }
    if (!this.starved) this.resumeAfter = '';
    return rooms;
  }

  /** Enough to hold CLAIM_AHEAD times its slots, once it holds no more than `atMost`. */
  private roomOf(endpointId: string, atMost = (this.perEndpoint * CLAIM_AHEAD) / 2): number {
    const lane = this.lanes.get(endpointId);
    const holding = lane === undefined ? 0 : lane.waiting.length + lane.running;
    return holding > atMost ? 0 : this.perEndpoint * CLAIM_AHEAD - holding;
  }

  private claim(rooms: ReadonlyMap<string, number>, now: string): void {
    if (rooms.size === 0) return;
    const lanes = new Map<string, LaneClaim>();
    for (const [endpointId, room] of rooms) {
      const after = this.lanes.get(endpointId)?.after;
      const inHand = () => this.inHand(endpointId, after);
      lanes.set(endpointId, after === undefined ? { room, inHand } : { room, after, inHand });
    }
    const claimed = this.options.deliveries.due({ now, lanes });
    const counts = new Map<string, number>();
    for (const delivery of claimed) {
      const endpointId = delivery.endpoint.id;
      counts.set(endpointId, (counts.get(endpointId) ?? 0) + 1);
      this.held += 1;
      let events = this.taken.get(endpointId);
      if (events === undefined) this.taken.set(endpointId, (events = new Map()));
      events.set(delivery.eventId, delivery.dueAt);
      const lane = this.laneOf(endpointId);
      lane.waiting.push(delivery);
      // Its dueAt and eventId: where the lane's next claim reads on from.
      lane.after = delivery;
    }
    for (const [endpointId, room] of rooms) {
      const lane = this.lanes.get(endpointId);
      if (lane === undefined) continue;
      lane.drained = (counts.get(endpointId) ?? 0) < room;
      if (lane.drained) lane.after = undefined;
    }
  }

  /** The event ids of the endpoint's deliveries taken and not yet recorded, past `after` (all, without it). */
  private inHand(endpointId: string, after: DuePosition | undefined): string[] {
    const inHand: string[] = [];
    for (const [eventId, dueAt] of this.taken.get(endpointId) ?? []) if (after === undefined || isPast(dueAt, eventId, after)) inHand.push(eventId);
    return inHand;
  }

  private laneOf(endpointId: string): Lane {
    let lane = this.lanes.get(endpointId);
    if (lane === undefined) {
      lane = { endpointId, waiting: [], running: 0, drained: false };
      this.lanes.set(endpointId, lane);
    }
    return lane;
  }

  /** Starts waiting deliveries while slots are free, one endpoint after another so that each gets its turn. */
  private startWaiting(): void {
    while (!this.stopping && this.inFlight.size < this.concurrency) {
      let lane: Lane | undefined;
      for (const candidate of this.lanes.values()) {
        if (candidate.waiting.length > 0 && candidate.running < this.perEndpoint) {
          lane = candidate;
          break;
        }
      }
      if (lane === undefined) return;
      // To the back of the line.
      this.lanes.delete(lane.endpointId);
      this.lanes.set(lane.endpointId, lane);
      this.run(lane.waiting.shift()!, lane);
    }
  }

  private run(delivery: DueDelivery, lane: Lane): void {
    lane.running += 1;
    this.inFlight.set(delivery, this.attempt(delivery, lane));
  }

  private async attempt(delivery: DueDelivery, lane: Lane): Promise<void> {
    let outcome: DeliveryOutcome;
    try {
      outcome = await this.options.deliver(delivery.endpoint, delivery.body, this.now().getTime());
    } catch (error) {
      outcome = { ok: false, error: error instanceof Error ? error.message : String(error), durationMs: 0 };
    }
    this.unrecorded.push(attemptRecord(delivery, outcome, this.now()));
    this.scheduleFlush();
    lane.running -= 1;
    this.held -= 1;
    this.inFlight.delete(delivery);
    this.afterAttempt(delivery.endpoint.id, lane);
  }

  /** The slot passes on: claims go round again when the endpoint runs low or others were left waiting, then the next delivery starts. */
  private afterAttempt(endpointId: string, lane: Lane): void {
    if (this.stopping) return;
    const runningLow = !lane.drained && this.roomOf(endpointId, this.perEndpoint) > 0;
    if (lane.waiting.length === 0 && lane.running === 0) this.lanes.delete(endpointId);
    if (runningLow || this.starved) this.guard(() => this.claimForAll());
    this.startWaiting();
  }

  private scheduleFlush(): void {
    if (this.flushTimer !== undefined) return;
    this.flushTimer = this.options.timers.setTimeout(() => {
      this.flushTimer = undefined;
      if (this.passOnFlush) this.pass();
      else this.flush();
    }, RECORD_DELAY_MS);
  }

  private flush(): void {
    if (this.unrecorded.length > 0) this.guard(() => this.write(false));
  }

  /** Writes the outcomes of the attempts that ended since the last write and, with `fanOut`, the deliveries of new events, in one transaction. */
  private write(fanOut: boolean): void {
    if (this.flushTimer !== undefined) this.options.timers.clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const attempts = this.unrecorded;
    this.unrecorded = [];
    try {
      this.options.deliveries.record(attempts, fanOut);
    } catch (error) {
      // Kept, and still taken, for the next write: until then nothing sends them again.
      this.unrecorded.unshift(...attempts);
      this.writeFailed = true;
      throw error;
    }
    this.writeFailed = false;
    for (const attempt of attempts) this.untake(attempt.endpointId, attempt.eventId);
  }

  /** The delivery may be taken again: its outcome is written, or it was never attempted. */
  private untake(endpointId: string, eventId: string): void {
    const events = this.taken.get(endpointId);
    if (events === undefined) return;
    events.delete(eventId);
    if (events.size === 0) this.taken.delete(endpointId);
  }

  private guard(work: () => void): void {
    try {
      work();
    } catch (error) {
      if (this.options.onError === undefined) throw error;
      this.options.onError(error);
    }
  }

  private now(): Date {
    return this.options.clock.now();
  }
}

function attemptRecord(delivery: DueDelivery, outcome: DeliveryOutcome, at: Date): DeliveryAttempt {
  const attemptNumber = delivery.attempts + 1;
  const retryAt = outcome.ok ? undefined : nextAttemptAt(at, attemptNumber);
  const attemptedAt = at.toISOString();
  return {
    eventId: delivery.eventId,
    endpointId: delivery.endpoint.id,
    attemptedAt,
    status: outcome.status ?? null,
    error: outcome.error ?? null,
    durationMs: Math.round(outcome.durationMs),
    state: outcome.ok ? 'DELIVERED' : retryAt === undefined || attemptNumber >= MAX_DELIVERY_ATTEMPTS ? 'FAILED' : 'PENDING',
    nextAttemptAt: retryAt === undefined ? attemptedAt : retryAt.toISOString(),
    rowless: delivery.rowless,
  };
}

/** Whether the position (`dueAt`, `eventId`) comes after `after` in an endpoint's queue, as the store orders it. */
function isPast(dueAt: string, eventId: string, after: DuePosition): boolean {
  return dueAt > after.dueAt || (dueAt === after.dueAt && eventId > after.eventId);
}
