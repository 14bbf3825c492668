/**
 * The result collector (DESIGN.md): turns a finished workload's files into
 * findings per target, then records them in the risk history together with
 * the Scan's final state and every event, in one transaction.
 */
import { MalformedResultError } from '../domain/errors.js';
import type { Finding } from '../domain/risks/finding.js';
import { assignFindings, unscannedTargets } from '../domain/risks/assign-findings.js';
import type { UnscannedHost } from '../domain/risks/finding.js';
import type { Scan, SkippedTarget } from '../domain/scans/scan.js';
import { parserFor } from '../parsers/index.js';
import type { WorkloadOutput } from './ports.js';

export interface CollectedFindings {
  /** Findings per target id, for the targets that were scanned. */
  byTarget: Map<string, Finding[]>;
  /** Targets the scanner reports it never reached (sslyze's invalid server strings, unreachable servers). */
  skipped: SkippedTarget[];
}

/**
 * A scanner's output file (up to VIGIL_RESULT_FILE_MAX_MB) is fed to its
 * parser in slices of this size with a turn of the event loop between them,
 * so parsing a large file never holds up other requests (issue 16).
 */
const PARSE_SLICE_BYTES = 1024 * 1024;

/** The file in slices of at most PARSE_SLICE_BYTES: cut from memory, or as read from disk (never the whole file at once). */
async function* slices(content: WorkloadOutput['content']): AsyncGenerator<Uint8Array> {
  const pieces = content instanceof Uint8Array ? [content] : content();
  for await (const piece of pieces) {
    for (let start = 0; start < piece.byteLength; start += PARSE_SLICE_BYTES) yield piece.subarray(start, start + PARSE_SLICE_BYTES);
  }
}

/**
 * Parses every output file of the scan with its type's parser and assigns the
 * findings to the scan's targets. `maxBytes` is the result-file limit
 * (VIGIL_RESULT_FILE_MAX_MB) the files were already held to, passed on so the
 * JSON parsers do not refuse them at their 25 MiB upload default.
 */
export async function collectFindings(scan: Scan, outputs: readonly WorkloadOutput[], maxBytes?: number): Promise<CollectedFindings> {
  const findings: Finding[] = [];
  const unscanned: UnscannedHost[] = [];
  for (const output of outputs) {
    const parser = parserFor(scan.type, maxBytes === undefined ? {} : { maxBytes });
    try {
      let first = true;
      for await (const slice of slices(output.content)) {
        // A turn of the event loop between slices, none before the first: a file of one slice (most scans' output) is parsed at once.
        if (!first) await new Promise((resolve) => setImmediate(resolve));
        first = false;
        parser.write(slice);
      }
      const result = parser.end();
      findings.push(...result.findings);
      unscanned.push(...(result.unscanned ?? []));
    } catch (error) {
      if (error instanceof MalformedResultError) throw new MalformedResultError(`${output.file}: ${error.message}`);
      throw error;
    }
  }
  const byTarget = assignFindings(scan.resolvedTargets, findings);
  const skipped = unscannedTargets(scan.resolvedTargets, unscanned, byTarget);
  for (const target of skipped) byTarget.delete(target.targetId);
  return { byTarget, skipped };
}
