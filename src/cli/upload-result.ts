/**
 * `vigil upload-result --scan ID --url URL --dir DIR`: the main container of
 * a scanner Job. Sends each result file the scanner wrote (VIGIL_RESULT_FILES)
 * to the collector with the Scan's upload token (VIGIL_UPLOAD_TOKEN), retrying
 * transient failures (refused connections, 5xx, 429) with capped backoff
 * until the Job's deadline (VIGIL_UPLOAD_DEADLINE, the Job's creation plus its
 * activeDeadlineSeconds), so an outage of Vigil (a node failure with volume
 * re-attach takes about 11 minutes) does not fail the scans that finished
 * meanwhile, and exits non-zero when any file could not be sent, so the Job,
 * and with it the Scan, fails visibly.
 */
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { loadUploadSettings, type Env } from '../config/settings.js';
import { UsageError, parseCommandArgs } from './usage.js';
import { backoffDelay } from '../app/controller/backoff.js';

/** How long the files are retried for when no deadline is given (a run by hand): longer than a rollout of Vigil's single pod takes. */
const UPLOAD_RETRY_WINDOW_MS = 10 * 60_000;
const FIRST_DELAY_MS = 1_000;
const LONGEST_DELAY_MS = 30_000;

export interface RetryTime {
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  /** Where a failed attempt is reported (the container's stderr, so `kubectl logs` shows it). */
  report?: (line: string) => void;
}

const realTime: RetryTime = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  report: (line) => process.stderr.write(line),
};

async function sendFile(url: string, token: string, path: string): Promise<void> {
  const file = await open(path);
  let response: Response;
  try {
    const size = (await file.stat()).size;
    // A Node stream of Buffers: FileHandle.readableWebStream yields ArrayBuffers, which fetch refuses on Node 20.
    response = await fetch(url, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/octet-stream', 'Content-Length': String(size) },
      body: file.createReadStream({ autoClose: false }) as unknown as RequestInit['body'],
      duplex: 'half',
    } as RequestInit);
  } finally {
    // A refused connection never reads the stream: closed here, not left open by each attempt of an hour of retries.
    await file.close();
  }
  if (!response.ok) {
    const text = (await response.text()).slice(0, 300);
    const error = new Error(`the collector answered ${response.status}: ${text}`);
    Object.assign(error, { permanent: response.status >= 400 && response.status < 500 && response.status !== 429 });
    throw error;
  }
}

/**
 * Sends one file, retrying what may heal (exponential backoff with jitter)
 * until `giveUpAt` (ms since the epoch on `time`): an attempt that would
 * start after it is not made. A 4xx other than 429 is final at once.
 */
export async function sendWithRetries(url: string, token: string, path: string, giveUpAt: number, time: RetryTime = realTime): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    try {
      await sendFile(url, token, path);
      return attempt;
    } catch (error) {
      const delay = backoffDelay(attempt - 1, { baseMs: FIRST_DELAY_MS, maxMs: LONGEST_DELAY_MS }) * (0.5 + Math.random() / 2);
      if ((error as { permanent?: boolean }).permanent === true) throw error;
      if (time.now() + delay > giveUpAt)
        throw new Error(`gave up at the deadline ${new Date(giveUpAt).toISOString()} after ${attempt} attempt(s): ${(error as Error).message}`, {
          cause: error,
        });
      time.report?.(`upload of ${path} failed (attempt ${attempt}: ${(error as Error).message}); retrying in ${Math.round(delay / 1000)} s\n`);
      await time.sleep(delay);
    }
  }
}

/** `env` (settings.ts reads it) and `time` are the process's own unless a test injects them. */
export async function runUploadResult(args: string[], env?: Env, time: RetryTime = realTime): Promise<number> {
  const values = parseCommandArgs(args, { scan: { type: 'string' }, url: { type: 'string' }, dir: { type: 'string' } });
  if (values.scan === undefined || values.url === undefined || values.dir === undefined) {
    throw new UsageError('--scan, --url and --dir are required');
  }
  if (!URL.canParse(values.url)) throw new UsageError(`--url '${values.url}' is not a URL`);
  const { token, resultFiles, deadline } = loadUploadSettings(env);
  // One deadline for every file: past the Job's, Kubernetes kills the pod anyway.
  const giveUpAt = deadline?.getTime() ?? time.now() + UPLOAD_RETRY_WINDOW_MS;
  for (const file of resultFiles) {
    const target = new URL(`internal/v1/scans/${encodeURIComponent(values.scan)}/results/${encodeURIComponent(file)}`, values.url.replace(/\/?$/, '/'));
    await sendWithRetries(target.toString(), token, join(values.dir, file), giveUpAt, time);
    process.stdout.write(`uploaded ${file}\n`);
  }
  return 0;
}
