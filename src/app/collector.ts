/**
 * The result collector (DESIGN.md): turns a finished workload's files into
 * findings per target, staged in the store (RecordingStaging) as they are
 * parsed, for the risk history to record together with the Scan's final
 * state and every event.
 */
import { MalformedResultError } from '../domain/errors.js';
import { asScanType, type Finding, type FindingSink, type UnscannedHost } from '../domain/risks/finding.js';
import { ownersOf, unscannedTargets } from '../domain/risks/assign-findings.js';
import type { Scan, SkippedTarget } from '../domain/scans/scan.js';
import { parserFor } from '../parsers/index.js';
import type { RecordingStaging, WorkloadOutput } from './ports.js';
import { STAGE_BATCH } from './result-upload.js';
import { dropStaged, type TargetFindings } from './risk-history.js';
import { yieldToEventLoop } from './event-loop.js';

export interface CollectedFindings {
  /** The findings of each scanned target, staged under the scan's id and the target's (drop the staging when done with them). */
  byTarget: TargetFindings;
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
 * Parses every output file of the scan with its type's parser and stages the
 * findings under the scan's targets as they come: the XML formats (nmap,
 * OpenVAS, Nessus), the ones an in-cluster scan can make large, hand theirs
 * over in batches as they parse, so the collector holds none of them (a
 * 256 MiB nmap output's findings were all in memory until they were
 * recorded); the JSON formats return theirs at the end, staged then.
 * `maxBytes` is the result-file limit (VIGIL_RESULT_FILE_MAX_MB) the files
 * were already held to, passed on so the JSON parsers do not refuse them at
 * their 25 MiB upload default. When it throws, nothing stays staged.
 */
export async function collectFindings(
  scan: Scan,
  outputs: readonly WorkloadOutput[],
  staging: RecordingStaging,
  maxBytes?: number,
): Promise<CollectedFindings> {
  const sink = targetsSink(scan, staging);
  const unscanned: UnscannedHost[] = [];
  try {
    for (const output of outputs) unscanned.push(...(await parseOutput(scan, output, sink, maxBytes)));
  } catch (error) {
    await dropStaged(staging, scan.id);
    throw error;
  }
  const counts = staging.findingCounts(scan.id);
  return {
    byTarget: { findingsOf: (targetId) => staging.findings(scan.id, [targetId]), countOf: (targetId) => counts.get(targetId) ?? 0 },
    skipped: unscannedTargets(scan.resolvedTargets, unscanned, counts),
  };
}

/** One output file through its parser into the sink; returns the hosts the scanner reports it never scanned. */
async function parseOutput(scan: Scan, output: WorkloadOutput, sink: FindingSink, maxBytes: number | undefined): Promise<UnscannedHost[]> {
  const parser = parserFor(scan.type, maxBytes === undefined ? { findings: sink } : { maxBytes, findings: sink });
  try {
    let first = true;
    for await (const slice of slices(output.content)) {
      // A turn of the event loop between slices, none before the first: a file of one slice (most scans' output) is parsed at once.
      if (!first) await yieldToEventLoop();
      first = false;
      parser.write(slice);
    }
    const result = parser.end();
    // The parsers that do not stream their findings (the JSON formats) return them here.
    for (let start = 0; start < result.findings.length; start += STAGE_BATCH) sink.add(result.findings.slice(start, start + STAGE_BATCH));
    return result.unscanned ?? [];
  } catch (error) {
    if (error instanceof MalformedResultError) throw new MalformedResultError(`${output.file}: ${error.message}`);
    throw error;
  }
}

/**
 * Stages each finding under every target it belongs to (ownersOf: the one
 * named as the scanner was given it, else the one whose host it reports,
 * else every target whose checked addresses include it), as a risk of the
 * scan's type; a finding that belongs to none is dropped.
 */
function targetsSink(scan: Scan, staging: RecordingStaging): FindingSink {
  return {
    add: (findings) => {
      const byOwner = new Map<string, Finding[]>();
      for (const finding of findings) {
        for (const owner of ownersOf(scan.resolvedTargets, finding)) {
          let owned = byOwner.get(owner.targetId);
          if (owned === undefined) byOwner.set(owner.targetId, (owned = []));
          owned.push(asScanType(finding, scan.type));
        }
      }
      for (const [targetId, owned] of byOwner) staging.findingSink(scan.id, targetId).add(owned);
    },
  };
}
