/**
 * Checks an uploaded API definition in a worker thread: parsing and
 * validating 1 MiB of YAML takes most of a second and a few hundred MiB
 * (bench/login-replay.ts), which would otherwise hold the event loop for every
 * other request. The worker has a memory cap and a time limit; either ends
 * it with a 400 that says so.
 */
import { InvalidRequestError, RateLimitedError } from '../domain/errors.js';
import type { ApiDefinitionSummary } from './api-definition.js';
import { siblingModule, startWorker } from './worker-thread.js';

/** At most `concurrent` checks run at once (each may take its heap limit); further uploads wait their turn, at most `waiting` of them, then 429. */
const API_DEFINITION_CHECK_LIMITS = { timeMs: 15_000, heapMb: 512, concurrent: 2, waiting: 20 } as const;

type Answer = { ok: true; summary: ApiDefinitionSummary } | { ok: false; invalid: boolean; message: string };

let running = 0;
const queue: Array<() => void> = [];

/** Waits for a free check slot; the slot passes straight from a finished check to the next waiting one. */
async function turn(): Promise<() => void> {
  const release = () => {
    const next = queue.shift();
    if (next === undefined) running--;
    else next();
  };
  if (running < API_DEFINITION_CHECK_LIMITS.concurrent) {
    running++;
    return release;
  }
  if (queue.length >= API_DEFINITION_CHECK_LIMITS.waiting) throw new RateLimitedError(5);
  await new Promise<void>((resolve) => queue.push(resolve));
  return release;
}

const WORKER = siblingModule('api-definition-worker', import.meta.url);

export async function checkApiDefinition(fileName: string, content: Buffer): Promise<ApiDefinitionSummary> {
  const done = await turn();
  try {
    return await checkInWorker(fileName, content);
  } finally {
    done();
  }
}

function checkInWorker(fileName: string, content: Buffer): Promise<ApiDefinitionSummary> {
  return new Promise((resolve, reject) => {
    const worker = startWorker(WORKER, {
      workerData: { fileName, content: new Uint8Array(content) },
      resourceLimits: { maxOldGenerationSizeMb: API_DEFINITION_CHECK_LIMITS.heapMb },
    });
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      outcome();
    };
    const timer = setTimeout(
      () =>
        settle(() =>
          reject(
            new InvalidRequestError(
              `checking the API definition took longer than ${API_DEFINITION_CHECK_LIMITS.timeMs / 1000} s; upload a smaller or simpler definition`,
            ),
          ),
        ),
      API_DEFINITION_CHECK_LIMITS.timeMs,
    );
    worker.once('message', (answer: Answer) =>
      settle(() => {
        if (answer.ok) resolve(answer.summary);
        else reject(answer.invalid ? new InvalidRequestError(answer.message) : new Error(`the API definition check failed: ${answer.message}`));
      }),
    );
    worker.once('error', (error: Error & { code?: string }) =>
      settle(() =>
        reject(
          error.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? new InvalidRequestError(
                `checking the API definition needed more than ${API_DEFINITION_CHECK_LIMITS.heapMb} MiB; upload a smaller or simpler definition`,
              )
            : error,
        ),
      ),
    );
    worker.once('exit', (code) => settle(() => reject(new Error(`the API definition check stopped (exit ${code})`))));
  });
}
