import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where the test report worker (report-worker-in-test.ts) and its test meet: one name per test process. */
export function reportWorkerMarker(): string {
  return join(tmpdir(), `vigil-report-worker-${process.pid}`);
}

/** The test report worker's module. */
export const REPORT_WORKER_IN_TEST = new URL('./report-worker-in-test.ts', import.meta.url);
