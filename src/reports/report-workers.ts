/**
 * Reports made in worker threads (the ReportProducer of the service): reading
 * a selection of 10,000 risks and rendering its PDF hold a thread for seconds
 * (bench/reports.ts), and better-sqlite3 is synchronous, so on the service's
 * own thread one report would stall every request of every account. Each
 * worker (src/main/report-worker.ts) has its own read-only connection to the
 * database and makes one report at a time.
 *
 * Bounded: `workers` threads (started when first needed), each with a heap
 * cap, and at most `waiting` reports queued behind them; one more is a 503.
 * A worker that dies (out of memory, a crash) fails its report with a 503
 * saying so, and the next report starts a new one; the service goes on.
 */
import type { Worker } from 'node:worker_threads';
import { InvalidRequestError, ServiceBusyError, VigilError, type ErrorKind } from '../domain/errors.js';
import type { ReportFormat } from '../domain/reports/snapshot.js';
import type { MadeReport, ReportJob, ReportProducer } from '../app/ports.js';
import { startWorker } from '../app/worker-thread.js';

/** One worker: renderings ran one at a time before they moved here, for memory (a 10,000-risk PDF holds 100-140 MB). */
const REPORT_WORKER_LIMITS = { workers: 1, waiting: 16, heapMb: 1024 } as const;

type Work = { kind: 'produce'; job: ReportJob } | { kind: 'render'; reportId: string; format: ReportFormat };
export type ReportWorkerRequest = Work & { id: number };
export type ReportWorkerAnswer = { id: number } & ({ ok: true; value: unknown } | { ok: false; kind: ErrorKind | undefined; message: string });

interface Task {
  work: Work;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Worker | undefined;
  task: Task | undefined;
}

export interface ReportWorkersOptions {
  /** The worker's module (src/main/report-worker.ts; tests pass one that wraps it). */
  module: URL;
  dataDir: string;
  limits?: { workers: number; waiting: number; heapMb: number };
}

export class ReportWorkers implements ReportProducer {
  private readonly slots: Slot[];
  private readonly queue: Task[] = [];
  private readonly limits: { workers: number; waiting: number; heapMb: number };
  private nextId = 1;
  private closing = false;

  constructor(private readonly options: ReportWorkersOptions) {
    this.limits = options.limits ?? REPORT_WORKER_LIMITS;
    this.slots = Array.from({ length: this.limits.workers }, () => ({ worker: undefined, task: undefined }));
  }

  produce(job: ReportJob): Promise<MadeReport> {
    return this.submit({ kind: 'produce', job }) as Promise<MadeReport>;
  }

  async render(reportId: string, format: ReportFormat): Promise<void> {
    await this.submit({ kind: 'render', reportId, format });
  }

  /** Stops every worker; reports in progress or waiting fail with a 503. */
  async close(): Promise<void> {
    this.closing = true;
    for (const task of this.queue.splice(0)) task.reject(stopping());
    await Promise.all(this.slots.map((slot) => slot.worker?.terminate()));
  }

  private submit(work: Work): Promise<unknown> {
    if (this.closing) return Promise.reject(stopping());
    return new Promise((resolve, reject) => {
      const task = { work, resolve, reject };
      const free = this.slots.find((slot) => slot.task === undefined);
      if (free !== undefined) return this.run(free, task);
      if (this.queue.length >= this.limits.waiting) {
        return reject(new ServiceBusyError(`${this.limits.workers + this.limits.waiting} reports are being made or waiting; try again in a minute`));
      }
      this.queue.push(task);
    });
  }

  private run(slot: Slot, task: Task): void {
    slot.task = task;
    const worker = slot.worker ?? this.start(slot);
    // Only a worker at work keeps the process alive.
    worker.ref();
    worker.postMessage({ ...task.work, id: this.nextId++ } satisfies ReportWorkerRequest);
  }

  private start(slot: Slot): Worker {
    const worker = startWorker(this.options.module, {
      workerData: { dataDir: this.options.dataDir },
      resourceLimits: { maxOldGenerationSizeMb: this.limits.heapMb },
    });
    slot.worker = worker;
    worker.on('message', (answer: ReportWorkerAnswer) => {
      const task = slot.task;
      slot.task = undefined;
      worker.unref();
      if (task !== undefined) settle(task, answer);
      this.next(slot);
    });
    let lost = false;
    const die = (reason: string) => {
      if (lost) return;
      lost = true;
      if (slot.worker === worker) slot.worker = undefined;
      const task = slot.task;
      slot.task = undefined;
      task?.reject(
        this.closing
          ? stopping()
          : new ServiceBusyError(`the report could not be made: its worker thread stopped (${reason}); try again, or narrow the filters`),
      );
      if (!this.closing) this.next(slot);
    };
    worker.once('error', (error: Error & { code?: string }) =>
      die(error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? `it needed more than ${this.limits.heapMb} MiB` : error.message),
    );
    worker.once('exit', (code) => die(`exit code ${code}`));
    return worker;
  }

  private next(slot: Slot): void {
    const task = this.queue.shift();
    if (task !== undefined) this.run(slot, task);
  }
}

function settle(task: Task, answer: ReportWorkerAnswer): void {
  if (answer.ok) task.resolve(answer.value);
  else if (answer.kind === 'invalid') task.reject(new InvalidRequestError(answer.message));
  else task.reject(answer.kind === undefined ? new Error(`making the report failed: ${answer.message}`) : new VigilError(answer.kind, answer.message));
}

function stopping(): ServiceBusyError {
  return new ServiceBusyError('the service is stopping; make the report again once it is back');
}
