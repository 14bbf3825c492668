/**
 * The embedded runtime's WorkloadRunner: each Scan's scanner runs as a child
 * process of the service, in its own work directory under the data dir.
 * Progress comes from the scanner's output lines; results are the files it
 * writes. A process that cannot start, exits with a code its definition
 * does not list as complete (completeExitCodes), outlives its deadline or is
 * unknown after a restart is a failed workload.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { access, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { WorkloadOutput, WorkloadRunner, WorkloadStatus } from '../../app/ports.js';
import type { ResolvedTarget, Scan } from '../../domain/scans/scan.js';
import { scannerTargets } from '../../domain/scans/resolve-targets.js';
import { exitedComplete, type LocalCommand, type ScannerDefinition } from '../../domain/scanners/definition.js';
import type { ScanType } from '../../domain/risks/finding.js';

export interface ProcessRunnerOptions {
  workDir: string;
  scannerFor: (type: ScanType) => ScannerDefinition;
  /** A scanner still running after this long is killed and its Scan fails. */
  deadlineMs: number;
  /** Path of the vigil CLI, for the types Vigil drives itself (OPENVAS, NESSUS). */
  cliPath?: string;
  /**
   * The environment a scanner that sets variables of its own starts from
   * (scannerEnvironment() in config/settings.ts). Required: without it such a
   * scanner would start without PATH, or without the variables that pin it.
   */
  environment: Readonly<Record<string, string | undefined>>;
  /** Embedded NUCLEI: the templates directory (VIGIL_NUCLEI_TEMPLATES). */
  nucleiTemplatesDir?: string;
}

type Outcome = { phase: 'Succeeded' } | { phase: 'Failed'; reason: string; message: string };

interface Workload {
  definition: ScannerDefinition;
  dir: string;
  child?: ChildProcess;
  progress?: number;
  stderrTail: string[];
  outcome?: Outcome;
  /** LocalCommand.contentVersion, read when the outputs are collected. */
  contentVersion?: { name: string; file: string };
  deadline?: NodeJS.Timeout;
  exited: Promise<void>;
}

const STDERR_LINES_KEPT = 20;
const KILL_GRACE_MS = 5000;

export class ProcessWorkloadRunner implements WorkloadRunner {
  private readonly workloads = new Map<string, Workload>();
  private readonly listeners: Array<(scanId: string) => void> = [];

  constructor(private readonly options: ProcessRunnerOptions) {}

  onChange(listener: (scanId: string) => void): void {
    this.listeners.push(listener);
  }

  private changed(scanId: string): void {
    for (const listener of this.listeners) listener(scanId);
  }

  async start(scan: Scan, resolved: readonly ResolvedTarget[]): Promise<void> {
    if (this.workloads.has(scan.id)) return;
    const definition = this.options.scannerFor(scan.type);
    const dir = join(this.options.workDir, scan.id);
    let markExited: () => void = () => undefined;
    const workload: Workload = { definition, dir, stderrTail: [], exited: new Promise((resolve) => (markExited = resolve)) };
    this.workloads.set(scan.id, workload);
    await mkdir(dir, { recursive: true });
    const input = { ...scannerTargets(resolved), outputDir: dir, cliPath: this.options.cliPath, nucleiTemplatesDir: this.options.nucleiTemplatesDir };
    for (const file of definition.inputs?.(input) ?? []) await writeFile(join(dir, file.file), file.content);
    const command = definition.local(input);
    if (command === undefined) {
      this.finish(scan.id, workload, { phase: 'Failed', reason: 'NotRunnableLocally', message: `${scan.type} scans cannot run in the embedded runtime; run Vigil with VIGIL_RUNTIME=kubernetes` });
      markExited();
      return;
    }
    const missing = await firstMissing(command.requires ?? []);
    if (missing !== undefined) {
      this.finish(scan.id, workload, { phase: 'Failed', reason: 'ScannerPrerequisiteMissing', message: missing });
      markExited();
      return;
    }
    workload.contentVersion = command.contentVersion;
    this.spawnScanner(scan.id, workload, command, markExited);
  }

  private spawnScanner(scanId: string, workload: Workload, command: LocalCommand, markExited: () => void): void {
    const env = command.env === undefined ? undefined : { ...this.options.environment, ...command.env };
    const child = spawn(command.program, command.args, { cwd: workload.dir, stdio: ['ignore', 'pipe', 'pipe'], ...(env === undefined ? {} : { env }) });
    workload.child = child;
    this.followLines(scanId, workload, child);
    workload.deadline = setTimeout(() => this.kill(scanId, workload, { phase: 'Failed', reason: 'DeadlineExceeded', message: `the scanner ran longer than ${Math.round(this.options.deadlineMs / 1000)} s and was stopped` }), this.options.deadlineMs);
    child.once('error', (error: NodeJS.ErrnoException) => {
      const message = error.code === 'ENOENT' ? `${command.program} is not installed on this machine; install it (nmap: apt-get install nmap) or run Vigil on Kubernetes` : `${command.program} could not start: ${error.message}`;
      this.finish(scanId, workload, { phase: 'Failed', reason: error.code === 'ENOENT' ? 'ScannerNotInstalled' : 'ScannerNotStarted', message });
      markExited();
    });
    child.once('close', (code, signal) => {
      this.finish(scanId, workload, this.outcomeOfExit(command.program, workload, code, signal));
      markExited();
    });
  }

  private outcomeOfExit(program: string, workload: Workload, code: number | null, signal: NodeJS.Signals | null): Outcome {
    if (exitedComplete(workload.definition, code)) return { phase: 'Succeeded' };
    const tail = workload.stderrTail.slice(-3).join(' | ');
    const how = signal !== null ? `was killed by ${signal}` : `exited with code ${code}`;
    return { phase: 'Failed', reason: 'ScannerExited', message: `${program} ${how}${tail === '' ? '' : `: ${tail}`}` };
  }

  private followLines(scanId: string, workload: Workload, child: ChildProcess): void {
    const onLine = (line: string, isStderr: boolean) => {
      const progress = workload.definition.progressFrom(line);
      if (progress !== undefined && progress !== workload.progress) {
        workload.progress = progress;
        this.changed(scanId);
      }
      if (isStderr && line.trim() !== '') workload.stderrTail = [...workload.stderrTail, line.trim()].slice(-STDERR_LINES_KEPT);
    };
    createInterface({ input: child.stdout! }).on('line', (line) => onLine(line, false));
    createInterface({ input: child.stderr! }).on('line', (line) => onLine(line, true));
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
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    setTimeout(() => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'), KILL_GRACE_MS).unref();
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
      try {
        outputs.push({ ...output, content: await readFile(join(workload.dir, output.file)) });
      } catch {
        return { phase: 'Failed', reason: 'OutputMissing', message: `the scanner exited cleanly but did not write ${output.file}` };
      }
    }
    const detail = await contentVersionOf(workload.contentVersion);
    return { phase: 'Succeeded', outputs, ...(detail === undefined ? {} : { detail }) };
  }

  async stop(scanId: string): Promise<void> {
    const workload = this.workloads.get(scanId);
    if (workload === undefined) return;
    this.kill(scanId, workload, { phase: 'Failed', reason: 'Stopped', message: 'the scan was stopped' });
    await workload.exited;
  }

  async release(scanId: string): Promise<void> {
    const workload = this.workloads.get(scanId);
    this.workloads.delete(scanId);
    if (workload !== undefined) await rm(workload.dir, { recursive: true, force: true });
  }

  /** Service shutdown: no scanner outlives the process that follows it. */
  async stopAll(): Promise<void> {
    await Promise.all([...this.workloads.keys()].map((scanId) => this.stop(scanId)));
  }
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
