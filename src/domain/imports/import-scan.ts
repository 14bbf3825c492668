/**
 * The Scan an upload becomes: it ran elsewhere, so it is born SUCCEEDED with
 * its result file, and it covers every target the file named, so it feeds
 * the risk history exactly as a scan Vigil ran would (DESIGN.md decision 7).
 */
import type { Scan } from '../scans/scan.js';
import type { Source } from '../sources/source.js';
import { parseIpv4 } from '../targets/ipv4.js';
import type { ImportableScanType } from './importable.js';
import { setCondition } from '../conditions/condition.js';

export interface ImportScanInput {
  id: string;
  accountId: string;
  type: ImportableScanType;
  targets: ReadonlyArray<{ id: string; target: string }>;
  source: Source;
  skippedHosts: number;
  resultId: string;
  contentType: string;
  at: string;
}

export function newImportScan(input: ImportScanInput): Scan {
  return {
    id: input.id,
    accountId: input.accountId,
    name: `import-${input.id}`,
    type: input.type,
    state: 'SUCCEEDED',
    progress: 100,
    isAuthenticated: false,
    requestedTargets: input.targets.map((target) => ({ targetId: target.id, target: target.target })),
    resolvedTargets: input.targets.map((target) => ({
      targetId: target.id,
      target: target.target,
      addresses: parseIpv4(target.target) === undefined ? [] : [target.target],
    })),
    skippedTargets: [],
    conditions: setCondition([], { type: 'Succeeded', status: 'True', reason: 'Imported', message: importMessage(input) }, input.at),
    results: [{ resultId: input.resultId, contentType: input.contentType }],
    risks: { newOpen: [], stillOpen: [], closed: [] },
    scheduledBy: null,
    reportId: null,
    createdAt: input.at,
    startedAt: input.at,
    finishedAt: input.at,
  };
}

function importMessage(input: ImportScanInput): string {
  const skipped = input.skippedHosts === 0 ? '' : `; ${input.skippedHosts} host(s) of the file were not valid targets and were skipped`;
  return `results uploaded into source '${input.source.name}' (id ${input.source.id})${skipped}`;
}
