/**
 * The embedded runtime's WorkloadRunner: each Scan's scanner runs as a child
 * process, started by the service's scanner spawner (spawner.ts: a small
 * process of its own, so that starting one costs the service's event loop
 * little), in its own work directory under the data dir.
 * Progress comes from the scanner's output lines; results are the files it
 * writes. A process that cannot start, exits with a code its definition
 * does not list as complete (completeExitCodes), outlives its deadline or is
 * unknown after a restart is a failed workload. A scanner whose program is
 * not installed runs from its pinned image in docker or podman instead
 * (scanner-launch.ts).
 */
import { spawn } from 'node:child_process';
import { createReadStream, mkdirSync, readFileSync, statSync } from 'node:fs';
import { access, chown, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { WorkloadInputs, WorkloadOutput, WorkloadRunner, WorkloadStatus } from '../../app/ports.js';
import { formatBytes } from '../../domain/bytes.js';
import type { ResolvedTarget, Scan } from '../../domain/scans/scan.js';
import { scannerTargets } from '../../domain/scans/resolve-targets.js';
import { exitedComplete, type ScannerDefinition, type ScannerInput } from '../../domain/scanners/definition.js';
import type { ScanType } from '../../domain/risks/finding.js';
import { decideLaunch, engineFailureHint, type Launch, type LaunchOptions } from './scanner-launch.js';
import { ScannerSpawner, SPAWNER_LOST, type SpawnedProcess } from './spawner.js';

export interface ProcessRunnerOptions {
  workDir: string;
  scannerFor: (type: ScanType) => ScannerDefinition;
  /** A scanner still running after this long is killed and its Scan fails. */
  deadlineMs: number;
  /** Path of the vigil CLI, for the types Vigil drives itself (OPENVAS, NESSUS). */
  cliPath?: string;
  /** Local programs or containers, where to look for them, and as whom containers run. */
  launch: LaunchOptions;
  /**
   * The environment a scanner that sets variables of its own starts from
   * (scannerEnvironment() in config/settings.ts). Required: without it such a
   * scanner would start without PATH, or without the variables that pin it.
   */
  environment: Readonly<Record<string, string | undefined>>;
  /** Embedded NUCLEI: the templates directory (VIGIL_NUCLEI_TEMPLATES). */
  nucleiTemplatesDir?: string;
  /**
   * VIGIL_RESULT_FILE_MAX_MB: an output file larger than this fails the Scan
   * (OutputTooLarge) instead of being read into memory, as a scanner pod's
   * upload over it is refused on Kubernetes. Unbounded when not given.
   */
  maxOutputBytes?: number;
  /** A released workload's directory could not be removed (logged by the service; the scan's outcome stands). */
  onCleanupError?: (scanId: string, error: unknown) => void;
}

type Outcome = { phase: 'Succeeded' } | { phase: 'Failed'; reason: string; message: string };

interface Workload {
  definition: ScannerDefinition;
  dir: string;
  launch?: Launch;
  child?: SpawnedProcess;
  /** How the process ended, once it has. */
  exit?: { code: number | null; signal: NodeJS.Signals | null };
  progress?: number;
  stderrTail: string[];
  outcome?: Outcome;
  deadline?: NodeJS.Timeout;
  exited: Promise<void>;
}

const STDERR_LINES_KEPT = 20;
/** Output files up to this size are read into memory whole when the scanner exits (the collector's parse slice is 1 MiB too). */
export const IN_MEMORY_OUTPUT_BYTES = 1024 * 1024;
const KILL_GRACE_MS = 5000;
/** docker and podman run exit with 125 when the engine itself failed (no daemon, image not pulled, bad option). */
const ENGINE_FAILED_EXIT = 125;

export class ProcessWorkloadRunner implements WorkloadRunner {
  private readonly workloads = new Map<string, Workload>();
  private readonly listeners: Array<(scanId: string) => void> = [];
  /** Scanners start from a small process of their own, not from the service's large one (spawner.ts). */
  private readonly spawner = new ScannerSpawner();
  /** Work directories being removed (release). */
  private readonly removals = new Set<Promise<void>>();

  constructor(private readonly options: ProcessRunnerOptions) {}

  /** Service start: the scanner spawner is forked now rather than at the first scan (ScannerSpawner.start). */
  async prepare(): Promise<void> {
    await this.spawner.start();
  }

  onChange(listener: (scanId: string) => void): void {
    this.listeners.push(listener);
  }

  private changed(scanId: string): void {
    for (const listener of this.listeners) listener(scanId);
  }

  async start(scan: Scan, resolved: readonly ResolvedTarget[], inputs: WorkloadInputs = {}): Promise<void> {
    if (this.workloads.has(scan.id)) return;
    const definition = this.options.scannerFor(scan.type);
    const dir = join(this.options.workDir, scan.id);
    let markExited: () => void = () => undefined;
    const workload: Workload = { definition, dir, stderrTail: [], exited: new Promise((resolve) => (markExited = resolve)) };
    this.workloads.set(scan.id, workload);
    // Synchronous (one local directory: microseconds): one trip through the thread pool fewer before the spawn.
    mkdirSync(dir, { recursive: true });
    const input: ScannerInput = {
      ...scannerTargets(resolved, inputs.settingsHostAddresses),
      outputDir: dir,
      cliPath: this.options.cliPath,
      nucleiTemplatesDir: this.options.nucleiTemplatesDir,
      ...scannerInputsOf(inputs),
    };
    for (const file of definition.inputs?.(input) ?? []) await writeFile(join(dir, file.file), file.content);
    const launched = await this.chooseLaunch(scan, definition, input);
    if ('phase' in launched) {
      this.finish(scan.id, workload, launched);
      markExited();
      return;
    }
    workload.launch = launched;
    await this.handOverWorkDir(launched, dir);
    await this.spawnScanner(scan.id, workload, launched, markExited);
  }

  /** The local program or the container to start, or the failure that says why there is none. */
  private async chooseLaunch(scan: Scan, definition: ScannerDefinition, input: ScannerInput): Promise<Launch | Outcome> {
    const local = definition.local(input);
    if (local === undefined) {
      return {
        phase: 'Failed',
        reason: 'NotRunnableLocally',
        message: `${scan.type} scans cannot run in the embedded runtime; run Vigil with VIGIL_RUNTIME=kubernetes`,
      };
    }
    const decision = decideLaunch({
      definition,
      local,
      container: definition.container(input),
      scanId: scan.id,
      workDir: input.outputDir,
      options: this.options.launch,
    });
    if ('missing' in decision) return { phase: 'Failed', reason: 'ScannerNotInstalled', message: decision.missing };
    if (decision.launch.container !== undefined) return decision.launch;
    // What a local program needs beside it (nuclei's templates); an image carries its own.
    const missing = await firstMissing(local.requires ?? []);
    return missing === undefined ? decision.launch : { phase: 'Failed', reason: 'ScannerPrerequisiteMissing', message: missing };
  }

  /** A container user other than the service's own (65532 when the service is root) must be able to write the work directory. */
  private async handOverWorkDir(launch: Launch, dir: string): Promise<void> {
    const user = launch.container?.user;
    if (user === undefined || user.uid === this.options.launch.uid || this.options.launch.uid !== 0) return;
    await chown(dir, user.uid, user.gid);
    for (const entry of await readdir(dir)) await chown(join(dir, entry), user.uid, user.gid);
  }

  /** Resolves once the process exists (or failed to start), as a direct spawn would: a RUNNING scan has its scanner. */
  private async spawnScanner(scanId: string, workload: Workload, launch: Launch, markExited: () => void): Promise<void> {
    const env = launch.env === undefined ? undefined : { ...this.options.environment, ...launch.env };
    workload.deadline = setTimeout(
      () =>
        this.kill(scanId, workload, {
          phase: 'Failed',
          reason: 'DeadlineExceeded',
          message: `the scanner ran longer than ${Math.round(this.options.deadlineMs / 1000)} s and was stopped`,
        }),
      this.options.deadlineMs,
    );
    workload.child = this.spawner.spawn(launch.program, launch.args, {
      cwd: workload.dir,
      ...(env === undefined ? {} : { env }),
      onLine: (line, stream) => this.onLine(scanId, workload, line, stream === 'stderr'),
      onError: (error) => {
        if (error.code === SPAWNER_LOST)
          this.finish(scanId, workload, {
            phase: 'Failed',
            reason: 'WorkloadLost',
            message: `the scanner process was lost (${error.message}); start the scan again`,
          });
        else this.finish(scanId, workload, { phase: 'Failed', reason: 'ScannerNotStarted', message: `${launch.name} could not start: ${error.message}` });
      },
      onClose: (code, signal) => {
        workload.exit = { code, signal };
        this.finish(scanId, workload, this.outcomeOfExit(launch, workload, code, signal));
        markExited();
      },
    });
    await workload.child.started;
  }

  private outcomeOfExit(launch: Launch, workload: Workload, code: number | null, signal: NodeJS.Signals | null): Outcome {
    if (exitedComplete(workload.definition, code)) return { phase: 'Succeeded' };
    const tail = workload.stderrTail.slice(-3).join(' | ');
    const said = tail === '' ? '' : `: ${tail}`;
    const container = launch.container;
    if (container !== undefined && code === ENGINE_FAILED_EXIT) {
      const hint = engineFailureHint(container.engine, workload.stderrTail.join('\n'), workload.definition);
      return { phase: 'Failed', reason: 'ContainerEngineFailed', message: `${container.engine} could not run the image ${container.image}${said}${hint}` };
    }
    const how = signal !== null ? `was killed by ${signal}` : `exited with code ${code}`;
    const program = container === undefined ? launch.name : `${container.image} (in ${container.engine})`;
    return { phase: 'Failed', reason: 'ScannerExited', message: `${program} ${how}${said}` };
  }

  private onLine(scanId: string, workload: Workload, line: string, isStderr: boolean): void {
    const progress = workload.definition.progressFrom(line);
    if (progress !== undefined && progress !== workload.progress) {
      workload.progress = progress;
      this.changed(scanId);
    }
    if (isStderr && line.trim() !== '') workload.stderrTail = [...workload.stderrTail, line.trim()].slice(-STDERR_LINES_KEPT);
  }

  /** The first outcome wins: a kill for the deadline stays a deadline failure when the process then exits. */
  private finish(scanId: string, workload: Workload, outcome: Outcome): void {
    if (workload.outcome !== undefined) return;
    workload.outcome = outcome;
    clearTimeout(workload.deadline);
    this.changed(scanId);
  }

  private kill(scanId: string, workload: Workload, outcome: Outcome): void {
    this.finish(scanId, workload, outcome);
    const child = workload.child;
    if (child === undefined || !child.running) return;
    child.kill('SIGTERM');
    setTimeout(() => child.running && child.kill('SIGKILL'), KILL_GRACE_MS).unref();
  }

  async observe(scanId: string): Promise<WorkloadStatus> {
    const workload = this.workloads.get(scanId);
    if (workload === undefined) return { phase: 'Missing' };
    const outcome = workload.outcome;
    if (outcome === undefined) return { phase: 'Running', progress: workload.progress };
    if (outcome.phase === 'Failed') return { phase: 'Failed', reason: outcome.reason, message: outcome.message };
    return this.collectOutputs(workload);
  }

  private async collectOutputs(workload: Workload): Promise<WorkloadStatus> {
    const outputs: WorkloadOutput[] = [];
    for (const output of workload.definition.outputs) {
      const path = join(workload.dir, output.file);
      const size = sizeOf(path);
      if (size === undefined) return { phase: 'Failed', reason: 'OutputMissing', message: `the scanner exited cleanly but did not write ${output.file}` };
      const max = this.options.maxOutputBytes;
      if (max !== undefined && size > max) {
        return {
          phase: 'Failed',
          reason: 'OutputTooLarge',
          message: `the scanner wrote ${formatBytes(size)} to ${output.file}, over the ${formatBytes(max)} limit (VIGIL_RESULT_FILE_MAX_MB); scan fewer targets at a time or raise the limit`,
        };
      }
      // A small file (nmap's XML of a few hosts) is read now, once, in one step: parsed and stored from memory, it costs
      // no trips through the thread pool (each waits behind the other scans' file steps) and no second read.
      // A larger one is read in pieces when parsed and stored (before release removes the work directory), never whole.
      outputs.push({ ...output, content: size <= IN_MEMORY_OUTPUT_BYTES ? readFileSync(path) : () => createReadStream(path) });
    }
    const detail = await this.contentOf(workload);
    return { phase: 'Succeeded', outputs, ...(detail === undefined ? {} : { detail }) };
  }

  /** What the scanner ran with that shapes its findings: the local templates' version file, or what the pinned image carries. */
  private async contentOf(workload: Workload): Promise<string | undefined> {
    const launch = workload.launch;
    if (launch?.container === undefined) return contentVersionOf(launch?.contentVersion);
    const content = workload.definition.imageContent;
    return content !== undefined && content.image === launch.container.image ? content.description : undefined;
  }

  async stop(scanId: string): Promise<void> {
    const workload = this.workloads.get(scanId);
    if (workload === undefined) return;
    this.kill(scanId, workload, { phase: 'Failed', reason: 'Stopped', message: 'the scan was stopped' });
    await Promise.all([workload.exited, this.removeContainer(workload)]);
  }

  /**
   * The engine's client forwards SIGTERM to the container, but a client
   * killed for good (or lost) leaves it running: `rm -f` makes sure.
   */
  private async removeContainer(workload: Workload): Promise<void> {
    const container = workload.launch?.container;
    if (container === undefined || (workload.exit !== undefined && workload.exit.code !== null)) return;
    await new Promise<void>((resolve) => {
      const remover = spawn(container.engine, ['rm', '--force', container.name], { stdio: 'ignore' });
      remover.once('error', () => resolve());
      remover.once('close', () => resolve());
    });
  }

  /**
   * Forgets the workload at once and removes its work directory in the
   * background: a finished scan's reconcile (and the controller worker it
   * holds, which the next scan's start may be waiting for) does not wait for
   * the removal's trips through the thread pool (bench/scans.ts). stopAll()
   * waits for removals still under way; a failed one goes to onCleanupError.
   */
  async release(scanId: string): Promise<void> {
    const workload = this.workloads.get(scanId);
    this.workloads.delete(scanId);
    if (workload === undefined) return;
    const removal: Promise<void> = rm(workload.dir, { recursive: true, force: true })
      .catch((error: unknown) => {
        try {
          this.options.onCleanupError?.(scanId, error);
        } catch {
          // A reporter that throws has nowhere else to say so; the removal is not retried either way.
        }
      })
      .finally(() => this.removals.delete(removal));
    this.removals.add(removal);
  }

  /** Nothing outlives release here: the work directory is the whole workload. */
  async deleteCollectedWorkload(): Promise<void> {}

  /** Service shutdown: no scanner outlives the process that follows it. */
  async stopAll(): Promise<void> {
    await Promise.all([...this.workloads.keys()].map((scanId) => this.stop(scanId)));
    await Promise.all(this.removals);
    this.spawner.close();
  }
}

/** The target's settings, the login's session and the API definition, as the scanner definitions take them. */
function scannerInputsOf(inputs: WorkloadInputs): Pick<ScannerInput, 'settings' | 'session' | 'apiDefinition'> {
  return {
    ...(inputs.settings === undefined ? {} : { settings: inputs.settings }),
    ...(inputs.session === undefined ? {} : { session: inputs.session }),
    ...(inputs.apiDefinition === undefined
      ? {}
      : { apiDefinition: { fileName: inputs.apiDefinition.fileName, content: inputs.apiDefinition.content.toString('utf8') } }),
  };
}

/** The first requirement whose path does not exist, as its message. */
async function firstMissing(requires: ReadonlyArray<{ path: string; missing: string }>): Promise<string | undefined> {
  for (const requirement of requires) {
    try {
      await access(requirement.path);
    } catch {
      return requirement.missing;
    }
  }
  return undefined;
}

/** The size of a regular file, or undefined when there is none (a local stat: microseconds, cheaper than a hop to the thread pool). */
function sizeOf(path: string): number | undefined {
  try {
    const stats = statSync(path);
    return stats.isFile() ? stats.size : undefined;
  } catch {
    return undefined;
  }
}

/** `<name> <first line of the version file>`, when there is one (a missing file only means no version to record). */
async function contentVersionOf(content: { name: string; file: string } | undefined): Promise<string | undefined> {
  if (content === undefined) return undefined;
  try {
    const line = (await readFile(content.file, 'utf8')).split('\n')[0]!.trim().slice(0, 200);
    return line === '' ? undefined : `${content.name} ${line}`;
  } catch {
    return undefined;
  }
}
