/**
 * What a controller's work queue tells the metrics (issue 28): adds counted
 * once per queued key, reconciles timed by result, errors and retries
 * counted, and the depths read at each scrape, each under the controller's name.
 */
import { expect } from 'chai';
import { WorkQueue } from '../../src/app/controller/work-queue.js';
import { Metrics } from '../../src/observability/metrics.js';
import { FakeTimers } from '../support/fake-timers.js';

function flushPromises(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** One sample by its series name (a histogram's `_count` included) and labels. */
async function value(metrics: Metrics, series: string, labels: Record<string, string>): Promise<number | undefined> {
  const samples = (await metrics.registry.getMetricsAsJSON()).flatMap((metric) =>
    metric.values.map((sample) => ({ ...sample, series: (sample as { metricName?: string }).metricName ?? metric.name })),
  );
  const entry = samples.find((sample) => sample.series === series && Object.entries(labels).every(([key, wanted]) => String(sample.labels[key]) === wanted));
  return entry?.value;
}

describe('work queue metrics', () => {
  it("counts adds, reconciles by result, errors and retries, and reads the queue's depths, under the controller's name", async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    const timers = new FakeTimers();
    const queue = new WorkQueue({ timers, onError: () => undefined, observer: metrics.queueObserver('scan') });
    metrics.watchQueue('scan', queue);
    queue.add('a');
    queue.add('a');
    queue.add('b');
    queue.add('c');
    expect(await value(metrics, 'vigil_workqueue_adds_total', { controller: 'scan' })).to.equal(3);
    expect(await value(metrics, 'vigil_workqueue_depth', { controller: 'scan' })).to.equal(3);

    const failing = new Set(['b']);
    const running = queue.run(1, async (key) => {
      if (failing.has(key)) throw new Error(`reconcile of ${key} failed`);
    });
    await flushPromises();
    expect(await value(metrics, 'vigil_reconcile_duration_seconds_count', { controller: 'scan', result: 'success' })).to.equal(2);
    expect(await value(metrics, 'vigil_reconcile_duration_seconds_count', { controller: 'scan', result: 'error' })).to.equal(1);
    expect(await value(metrics, 'vigil_reconcile_errors_total', { controller: 'scan' })).to.equal(1);
    expect(await value(metrics, 'vigil_workqueue_retries_total', { controller: 'scan' })).to.equal(1);
    expect(await value(metrics, 'vigil_workqueue_depth', { controller: 'scan' })).to.equal(0);
    expect(await value(metrics, 'vigil_workqueue_waiting', { controller: 'scan' }), 'b waits for its backoff').to.equal(1);
    await queue.shutDown();
    await running;
  });
});
