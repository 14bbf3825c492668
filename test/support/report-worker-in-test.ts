/**
 * The report worker (src/main/report-worker.ts) with two behaviours tests
 * ask for by account name, run once the real worker has begun the job (its
 * listener comes first, and has read the selection when it yields):
 * 'held-report' writes `<marker>.started`, then holds the thread,
 * synchronously as a long rendering would, until `<marker>.release` exists;
 * 'crashing-report' ends the thread as a crash would. The marker is
 * reportWorkerMarker(), named after the process, which the thread shares.
 */
import '../../src/main/report-worker.js';
import { existsSync, writeFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import type { ReportWorkerRequest } from '../../src/reports/report-workers.js';
import { reportWorkerMarker } from './report-worker-marker.js';

const pause = new Int32Array(new SharedArrayBuffer(4));

parentPort!.on('message', (request: ReportWorkerRequest) => {
  if (request.kind !== 'produce') return;
  if (request.job.accountName === 'crashing-report') process.exit(70);
  if (request.job.accountName !== 'held-report') return;
  writeFileSync(`${reportWorkerMarker()}.started`, '');
  while (!existsSync(`${reportWorkerMarker()}.release`)) Atomics.wait(pause, 0, 0, 20);
});
