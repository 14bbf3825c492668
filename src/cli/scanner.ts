/**
 * `vigil scanner openvas|nessus --output FILE [--timeout SECONDS] -- HOST...`:
 * what a scanner workload of type OPENVAS or NESSUS runs
 * (domain/scanners/vigil-cli.ts). It drives the scanner server's API, prints
 * `vigil-scanner progress N%` lines as the scan advances, and writes the
 * report to FILE atomically, so a reader never sees half a report.
 *
 * Exit codes: 2 for a bad command line; 1 for everything else, including a
 * scanner server that is not configured. That is a SettingsError, which
 * main.ts maps to 2, so it is rethrown as ScannerNotConfiguredError: the
 * command line was right, it is the workload's environment that needs the
 * variables, and the runtime reports exit 1 as a failed scan.
 */
import { randomBytes } from 'node:crypto';
import { open, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { setTimeout as sleepFor } from 'node:timers/promises';
import { SettingsError, loadNessusSettings, loadOpenVasSettings } from '../config/settings.js';
import { systemClock, type Clock } from '../domain/clock.js';
import { checkTargetCount, uniqueHosts } from '../domain/scanners/targets.js';
import { formatVigilProgress } from '../domain/scanners/vigil-cli.js';
import { runNessusScan } from '../scanners/nessus-driver.js';
import { runOpenVasScan } from '../scanners/openvas-driver.js';
import type { ScanPolling } from '../scanners/scanner-polling.js';
import { UsageError, parseCommandArgs, wholeNumber } from './usage.js';

const USAGE = 'vigil scanner openvas|nessus --output FILE [--timeout SECONDS] -- HOST [HOST...]';
/** The default of VIGIL_SCAN_TIMEOUT_SECONDS: the runtime would stop the workload then anyway. */
const DEFAULT_TIMEOUT_SECONDS = 7200;
const MAX_TIMEOUT_SECONDS = 7 * 24 * 3600;
/** Host names and IPv4/IPv6 addresses; a ',' would add targets to the scanner's target list. */
const HOST = /^[A-Za-z0-9._:-]{1,253}$/;

/** The scanner server is not configured or its configuration is invalid: exit 1, see above. */
export class ScannerNotConfiguredError extends Error {
  override name = 'ScannerNotConfiguredError';
}

export interface ScannerCommandDeps {
  /** Default: the process environment (read by config/settings.ts). */
  env?: Record<string, string | undefined>;
  stdout?: { write(text: string): unknown };
  clock?: Clock;
  sleep?(ms: number, signal?: AbortSignal): Promise<void>;
  /** Stops the scan; by default SIGTERM and SIGINT do. */
  signal?: AbortSignal;
}

interface ScannerCommand {
  scanner: 'openvas' | 'nessus';
  output: string;
  timeoutSeconds: number;
  hosts: string[];
}

export async function runScannerCommand(args: string[], deps: ScannerCommandDeps = {}): Promise<number> {
  const command = parseScannerCommand(args);
  await checkOutputDirectory(command.output);
  const stop = deps.signal === undefined ? stopOnSignals() : { signal: deps.signal, release: () => undefined };
  const polling = createPolling(deps, command.timeoutSeconds, stop.signal);
  const onProgress = progressPrinter(deps.stdout ?? process.stdout);
  try {
    if (command.scanner === 'openvas') {
      const settings = scannerSettings(() => loadOpenVasSettings(deps.env));
      await runOpenVasScan({ settings, hosts: command.hosts, polling, onProgress, saveReport: (chunks) => writeFileAtomically(command.output, chunks) });
    } else {
      const settings = scannerSettings(() => loadNessusSettings(deps.env));
      await runNessusScan({ settings, hosts: command.hosts, polling, onProgress, saveReport: (chunks) => writeFileAtomically(command.output, chunks) });
    }
  } catch (error) {
    if (stop.signal.aborted)
      throw new Error(`the ${command.scanner.toUpperCase()} scan was stopped before it finished, and no report was written`, { cause: error });
    throw error;
  } finally {
    stop.release();
  }
  return 0;
}

function parseScannerCommand(args: string[]): ScannerCommand {
  const [scanner, ...rest] = args;
  if (scanner !== 'openvas' && scanner !== 'nessus') {
    throw new UsageError(scanner === undefined ? `name a scanner: ${USAGE}` : `unknown scanner '${scanner}'; use openvas or nessus: ${USAGE}`);
  }
  const separator = rest.indexOf('--');
  if (separator === -1) throw new UsageError(`the hosts to scan follow '--': ${USAGE}`);
  const values = parseCommandArgs(rest.slice(0, separator), { output: { type: 'string' }, timeout: { type: 'string' } });
  if (values.output === undefined || values.output === '') throw new UsageError(`--output is required: ${USAGE}`);
  const timeoutSeconds = wholeNumber('--timeout', values.timeout, MAX_TIMEOUT_SECONDS) ?? DEFAULT_TIMEOUT_SECONDS;
  if (timeoutSeconds === 0) throw new UsageError(`--timeout must be a whole number from 1 to ${MAX_TIMEOUT_SECONDS}`);
  const hosts = uniqueHosts(rest.slice(separator + 1));
  checkTargetCount(scanner === 'openvas' ? 'OPENVAS' : 'NESSUS', hosts);
  const bad = hosts.find((host) => !HOST.test(host));
  if (bad !== undefined) throw new UsageError(`'${bad.slice(0, 80)}' is not a host name or IP address`);
  return { scanner, output: values.output, timeoutSeconds, hosts };
}

/** Fails before a scan of hours, not after it, when the report could not be written. */
async function checkOutputDirectory(output: string): Promise<void> {
  const directory = dirname(output);
  const isDirectory = await stat(directory).then(
    (stats) => stats.isDirectory(),
    () => false,
  );
  if (!isDirectory) throw new UsageError(`--output ${output}: the directory ${directory} does not exist`);
}

function scannerSettings<T>(load: () => T): T {
  try {
    return load();
  } catch (error) {
    if (error instanceof SettingsError) throw new ScannerNotConfiguredError(error.message);
    throw error;
  }
}

function stopOnSignals(): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  // Once: a second signal ends the process at once, also while the driver cleans up.
  const abort = () => controller.abort();
  process.once('SIGTERM', abort);
  process.once('SIGINT', abort);
  return {
    signal: controller.signal,
    release: () => {
      process.off('SIGTERM', abort);
      process.off('SIGINT', abort);
    },
  };
}

function createPolling(deps: ScannerCommandDeps, timeoutSeconds: number, signal: AbortSignal): ScanPolling {
  const clock = deps.clock ?? systemClock;
  const sleep = deps.sleep ?? ((ms: number, abort?: AbortSignal) => sleepFor(ms, undefined, { signal: abort }));
  const deadline = clock.now().getTime() + timeoutSeconds * 1000;
  return {
    now: () => clock.now(),
    signal,
    async waitBeforeNextPoll(delayMs, what) {
      const remaining = deadline - clock.now().getTime();
      if (remaining <= 0) throw new Error(`${what} did not finish within ${timeoutSeconds} s (--timeout)`);
      await sleep(Math.min(delayMs, remaining), signal);
    },
  };
}

/** Prints a progress line when the whole percentage changes. */
function progressPrinter(stdout: { write(text: string): unknown }): (percent: number) => void {
  let last: number | undefined;
  return (percent) => {
    const rounded = Math.round(Math.min(100, Math.max(0, percent)));
    if (rounded === last) return;
    last = rounded;
    stdout.write(`${formatVigilProgress(rounded)}\n`);
  };
}

/** Writes beside the target and renames: the file appears whole or not at all. */
async function writeFileAtomically(path: string, chunks: Iterable<Uint8Array> | AsyncIterable<Uint8Array>): Promise<void> {
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  const file = await open(temporary, 'wx');
  try {
    for await (const chunk of chunks) {
      for (let offset = 0; offset < chunk.byteLength;) offset += (await file.write(chunk, offset)).bytesWritten;
    }
    await file.sync();
    await file.close();
    await rename(temporary, path);
  } catch (error) {
    await file.close().catch(() => undefined);
    await rm(temporary, { force: true });
    throw error;
  }
}
