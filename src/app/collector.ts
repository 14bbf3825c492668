/**
 * The result collector (DESIGN.md): turns a finished workload's files into
 * findings per target, then records them in the risk history together with
 * the Scan's final state and every event, in one transaction.
 */
import { MalformedResultError } from '../domain/errors.js';
import type { Finding } from '../domain/risks/finding.js';
import { assignFindings } from '../domain/risks/assign-findings.js';
import type { Scan } from '../domain/scans/scan.js';
import { parserFor } from '../parsers/index.js';
import type { WorkloadOutput } from './ports.js';

/** Parses every output file of the scan with its type's parser and assigns the findings to the scan's targets. */
export function collectFindings(scan: Scan, outputs: readonly WorkloadOutput[]): Map<string, Finding[]> {
  const findings: Finding[] = [];
  for (const output of outputs) {
    const parser = parserFor(scan.type);
    try {
      parser.write(output.content);
      findings.push(...parser.end().findings);
    } catch (error) {
      if (error instanceof MalformedResultError) throw new MalformedResultError(`${output.file}: ${error.message}`);
      throw error;
    }
  }
  return assignFindings(scan.resolvedTargets, findings);
}
