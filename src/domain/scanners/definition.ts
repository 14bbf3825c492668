/**
 * How each scan type is run: one ScannerDefinition per type says which
 * program or container image runs, with which arguments, which files it
 * writes and how its output lines tell progress. Pure functions: the
 * Kubernetes Job builder and the embedded child-process runner (outer ring)
 * do the I/O.
 */
import type { ScanType } from '../risks/finding.js';
import type { ZapSession } from './zap-plan.js';

export interface ScannerInput {
  /**
   * The Scan's targets as stored (public IPv4, host name or http(s) URL),
   * already within the type's per-Scan limit. Each definition reshapes them
   * into what its scanner takes (nmap: hosts, sslyze: host:port, ZAP: a URL).
   */
  targets: string[];
  /** Directory the scanner writes its outputs into (an emptyDir in Kubernetes, a scan work directory locally). */
  outputDir: string;
  /** A login script to replay before a web scan (OWASP_ZAP types only). */
  authScriptFile?: string;
  /** Type-specific settings; for the ZAP types, the target's scanner_settings.zap. */
  settings?: unknown;
  /** ZAP types: the session a replayed login left (embedded runtime; in Kubernetes the Job's login step writes the plan). */
  session?: ZapSession;
  /** ZAP types: the target's API definition, imported with the openapi job. */
  apiDefinition?: { fileName: string; content: string };
  /** Path of Vigil's CLI entry point, for the types Vigil runs itself (OPENVAS, NESSUS) in the embedded runtime. */
  cliPath?: string;
  /**
   * The IPv4 addresses Vigil resolved and checked for each host name among
   * the targets (vettedAddresses in scans/resolve-targets.ts). A scanner must
   * connect to these, never resolve the name again: a name that rebinds
   * between the check and the scan would reach a private address (issue 16).
   */
  addresses?: Readonly<Record<string, readonly string[]>>;
  /** Embedded runtime, NUCLEI: the directory holding nuclei-templates (VIGIL_NUCLEI_TEMPLATES). */
  nucleiTemplatesDir?: string;
}

export interface ScannerContainer {
  /** Image with a pinned version tag. */
  image: string;
  /** Overrides the image's entrypoint when set. */
  command?: string[];
  args: string[];
  /** Linux capabilities to add; everything else stays dropped. */
  capabilities?: string[];
  /** Environment the scanner needs; JAVA_TOOL_OPTIONS is appended to the Job's own. */
  env?: Record<string, string>;
}

export interface LocalCommand {
  program: string;
  args: string[];
  /** Variables set on top of the service's environment. */
  env?: Record<string, string>;
  /** Files or directories that must exist before the scanner starts, each with the sentence saying how to get it. */
  requires?: Array<{ path: string; missing: string }>;
  /** What the scanner runs with that shapes its findings (nuclei's templates): a file whose first line is the version, read when present. */
  contentVersion?: { name: string; file: string };
}

export interface ScannerOutput {
  /** File name relative to outputDir. */
  file: string;
  contentType: string;
}

/** A file the runner writes into outputDir before starting the scanner (ZAP's plan, nuclei's target list). */
export interface ScannerInputFile {
  file: string;
  content: string;
}

export interface ScannerDefinition {
  type: ScanType;
  /** Kubernetes: container image with a pinned tag, and args, writing outputs under outputDir. */
  container(input: ScannerInput): ScannerContainer;
  /** Embedded runtime: the local program and its args, or undefined when this type cannot run locally as a plain program. */
  local(input: ScannerInput): LocalCommand | undefined;
  /**
   * How a person installs the local program, named in the condition of a
   * Scan whose scanner is missing; absent for the types Vigil runs itself.
   */
  installHint?: string;
  /**
   * Files the runner must write into outputDir before starting the scanner,
   * in both runtimes; none when absent. They are inputs, never uploaded as results.
   */
  inputs?(input: ScannerInput): ScannerInputFile[];
  /**
   * Exit codes after which the outputs are complete, from the scanner's own
   * documentation or source: 0, plus any code it documents for "finished,
   * with findings or warnings". Anything else (a crash, a refusal) is a
   * failure. In Kubernetes only 0 completes a Job (a non-zero init container
   * fails the pod before the upload), so the arguments must make the scanner
   * exit 0 in those cases too.
   */
  completeExitCodes: readonly number[];
  /**
   * Kubernetes: what the default image carries besides the scanner that
   * changes its findings (nuclei's templates), recorded on the Scan.
   */
  imageContent?: { image: string; description: string };
  /** Output files the scanner writes, relative to outputDir, with content types (e.g. nmap.xml application/xml). */
  outputs: Array<{ file: string; contentType: string }>;
  /**
   * Parses one line of scanner stdout/stderr into a progress percentage, or
   * undefined. Some scanners restart their percentage per phase: the caller
   * keeps progress monotonic (advanceProgress in scans/scan.ts).
   */
  progressFrom(line: string): number | undefined;
}

/** Whether an exit left complete outputs: a listed code, never a signal. */
export function exitedComplete(definition: Pick<ScannerDefinition, 'completeExitCodes'>, code: number | null): boolean {
  return code !== null && definition.completeExitCodes.includes(code);
}

/** outputDir joined with a file name, POSIX style (scanner containers and local runs are Linux). */
export function outputPath(outputDir: string, file: string): string {
  return `${outputDir.replace(/\/+$/, '')}/${file}`;
}

/** A reported percentage within 0..100, or undefined when the text is not a number. */
export function percentage(text: string | number | undefined): number | undefined {
  const value = typeof text === 'number' ? text : Number.parseFloat(text ?? '');
  if (!Number.isFinite(value)) return undefined;
  return Math.min(100, Math.max(0, value));
}
