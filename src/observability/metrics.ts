/**
 * Prometheus metrics, one registry per service instance (tests run several).
 * Besides HTTP and process figures, the domain's: the controllers' work
 * queues and reconciles, scans by state and type, the Kubernetes API
 * requests and informer restarts, webhook deliveries, and uploads. Figures
 * kept elsewhere (queue depths, counts in the record) are read at scrape
 * time through the sources given to `watch*`, so nothing here polls.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { QueueObserver } from '../app/controller/work-queue.js';

/** A controller's work queue as the metrics read it (WorkQueue has these). */
export interface QueueFigures {
  readonly depth: number;
  readonly inFlight: number;
  readonly waiting: number;
}

export interface RecordFigures {
  scansByStateAndType(): Array<{ state: string; type: string; count: number }>;
  pendingWebhookDeliveries(): number;
}

export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests = new Counter({
    name: 'vigil_http_requests_total',
    help: 'HTTP requests by operation (route) and status code.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'vigil_http_request_duration_seconds',
    help: 'HTTP request latency by operation (route).',
    labelNames: ['method', 'route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly queueAdds = new Counter({
    name: 'vigil_workqueue_adds_total',
    help: "Keys added to a controller's work queue (a key already queued counts once).",
    labelNames: ['controller'] as const,
    registers: [this.registry],
  });
  readonly queueRetries = new Counter({
    name: 'vigil_workqueue_retries_total',
    help: 'Keys requeued with error backoff after a failed reconcile.',
    labelNames: ['controller'] as const,
    registers: [this.registry],
  });
  readonly reconcileDuration = new Histogram({
    name: 'vigil_reconcile_duration_seconds',
    help: 'Time one reconcile of one key took, by controller and result (success, error).',
    labelNames: ['controller', 'result'] as const,
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30],
    registers: [this.registry],
  });
  readonly reconcileErrors = new Counter({
    name: 'vigil_reconcile_errors_total',
    help: 'Reconciles that threw, by controller.',
    labelNames: ['controller'] as const,
    registers: [this.registry],
  });
  readonly informerRestarts = new Counter({
    name: 'vigil_informer_restarts_total',
    help: 'Informers restarted after an error, by the resource they watch.',
    labelNames: ['resource'] as const,
    registers: [this.registry],
  });
  readonly kubernetesRequests = new Counter({
    name: 'vigil_kubernetes_requests_total',
    help: 'Requests to the Kubernetes API server by verb (list: a page of a list) and status code (200 for every success, 0: no answer).',
    labelNames: ['verb', 'code'] as const,
    registers: [this.registry],
  });
  readonly walCheckpointDuration = new Histogram({
    name: 'vigil_wal_checkpoint_duration_seconds',
    help: "Time one checkpoint of SQLite's write-ahead log held the event loop (a PASSIVE checkpoint every 50 ms).",
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [this.registry],
  });
  readonly walBacklog = new Gauge({
    name: 'vigil_wal_uncheckpointed_frames',
    help: "Frames of SQLite's write-ahead log not yet copied into the database file after the last checkpoint (a reader's snapshot holds them).",
    registers: [this.registry],
  });
  readonly webhookDeliveries = new Counter({
    name: 'vigil_webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome (delivered, failed).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly uploadBytes = new Counter({
    name: 'vigil_upload_bytes_total',
    help: 'Bytes of scanner result files received, by source (scan: a scanner pod or process, import: POST /v1 uploads).',
    labelNames: ['source'] as const,
    registers: [this.registry],
  });
  readonly uploadFindings = new Counter({
    name: 'vigil_upload_findings_total',
    help: 'Findings recorded from scanner results, by scan type.',
    labelNames: ['scan_type'] as const,
    registers: [this.registry],
  });
  private readonly queues = new Map<string, QueueFigures>();

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: 'vigil_' });
    this.queueGauge('vigil_workqueue_depth', 'Keys waiting for a worker, by controller.', (queue) => queue.depth);
    this.queueGauge('vigil_workqueue_in_flight', 'Keys a worker holds, by controller.', (queue) => queue.inFlight);
    this.queueGauge('vigil_workqueue_waiting', 'Keys waiting for a timed or backoff requeue, by controller.', (queue) => queue.waiting);
  }

  /** What a controller's work queue tells (adds, retries, reconciles), counted under its name. */
  queueObserver(controller: string): QueueObserver {
    return {
      added: () => this.queueAdds.inc({ controller }),
      retried: () => this.queueRetries.inc({ controller }),
      reconciled: (seconds, ok) => {
        this.reconcileDuration.observe({ controller, result: ok ? 'success' : 'error' }, seconds);
        if (!ok) this.reconcileErrors.inc({ controller });
      },
    };
  }

  /** A checkpoint of the write-ahead log (WalCheckpointer's onCheckpoint): how long it took, the log's frames and how many are copied. */
  readonly checkpointed = (checkpoint: { ms: number; logFrames: number; checkpointedFrames: number }): void => {
    this.walCheckpointDuration.observe(checkpoint.ms / 1000);
    this.walBacklog.set(Math.max(0, checkpoint.logFrames - checkpoint.checkpointedFrames));
  };

  /** A controller's queue, its depths read at each scrape under its name. */
  watchQueue(controller: string, queue: QueueFigures): void {
    this.queues.set(controller, queue);
  }

  /** Counts in the record, read at each scrape. */
  watchRecord(record: RecordFigures): void {
    const scans = new Gauge({
      name: 'vigil_scans',
      help: 'Scans in the record by state and type, across accounts.',
      labelNames: ['state', 'type'] as const,
      registers: [this.registry],
      collect() {
        scans.reset();
        for (const row of record.scansByStateAndType()) scans.set({ state: row.state, type: row.type }, row.count);
      },
    });
    const pending = new Gauge({
      name: 'vigil_webhook_deliveries_pending',
      help: 'Webhook deliveries waiting for a retry (the backlog).',
      registers: [this.registry],
      collect() {
        pending.set(record.pendingWebhookDeliveries());
      },
    });
  }

  private queueGauge(name: string, help: string, read: (queue: QueueFigures) => number): void {
    const queues = this.queues;
    const gauge = new Gauge({
      name,
      help,
      labelNames: ['controller'] as const,
      registers: [this.registry],
      collect() {
        gauge.reset();
        for (const [controller, queue] of queues) gauge.set({ controller }, read(queue));
      },
    });
  }
}
