import type { Scan, ScanSummary } from '../../domain/scans/scan.js';
import { yieldToEventLoop } from '../event-loop.js';

/** The API shape of a Scan (SPEC.md field names); also the `data` of scan events. */
export function presentScan(scan: Scan) {
  return {
    id: scan.id,
    type: scan.type,
    state: scan.state,
    progress: scan.progress,
    is_authenticated: scan.isAuthenticated,
    risks: {
      new_open: scan.risks.newOpen.map((risk_id) => ({ risk_id })),
      still_open: scan.risks.stillOpen.map((risk_id) => ({ risk_id })),
      closed: scan.risks.closed.map((risk_id) => ({ risk_id })),
    },
    results: scan.state === 'SUCCEEDED' ? scan.results.map((file) => ({ result_id: file.resultId, content_type: file.contentType })) : [],
    requested_targets: scan.requestedTargets.map((target) => ({ target_id: target.targetId, target: target.target })),
    resolved_targets: scan.resolvedTargets.map((target) => ({ target_id: target.targetId, target: target.target, addresses: target.addresses })),
    skipped_targets: scan.skippedTargets.map((target) => ({ target_id: target.targetId, skipped_reason: target.skippedReason })),
    created_at: scan.createdAt,
    started_at: scan.startedAt,
    finished_at: scan.finishedAt,
    scheduled_by: scan.scheduledBy,
    report_id: scan.reportId,
    conditions: scan.conditions,
  };
}

export type ScanJson = ReturnType<typeof presentScan>;

/**
 * Risk ids rendered per turn of the event loop: about 100 KiB of JSON, below
 * V8's 128 KiB for a large object. Pieces of 8,192 ids (400 KiB) were each
 * allocated in the old generation and lived until a full collection: under
 * ten clients on the scans lists the service peaked at 476-502 MB (bench/scale.ts).
 */
export const RISK_IDS_PER_TURN = 2000;

/** `{"risk_id":"<uuid>"}` and its comma: each risk id's share of a rendered list (risk ids are UUIDs). */
export const RISK_ID_JSON_CHARS = '{"risk_id":""},'.length + 36;

const EMPTY_RISKS = '"risks":{"new_open":[],"still_open":[],"closed":[]}';

/** Reads `count` entries of one of a scan's risk lists from `position` as the API's JSON (ScanRepository.riskListJson). */
export type RiskListJson = (list: keyof Scan['risks'], position: number, count: number) => string;

/** A listed scan's JSON: its length, known before any risk id is read, and its text in pieces. */
export interface RenderedScan {
  length: number;
  pieces(listJson: RiskListJson): AsyncGenerator<string>;
}

/** presentScan()'s JSON for a listed scan, its risk lists left to read (scanJsonPieces). */
export function renderedScan(summary: ScanSummary): RenderedScan {
  const json = JSON.stringify(presentScan({ ...summary, risks: { newOpen: [], stillOpen: [], closed: [] } }));
  // risks follows id, type, state, progress and is_authenticated, which Vigil sets: its first occurrence is the field.
  const at = json.indexOf(EMPTY_RISKS);
  const before = json.slice(0, at);
  const after = json.slice(at + EMPTY_RISKS.length);
  const ids = summary.riskCounts.newOpen + summary.riskCounts.stillOpen + summary.riskCounts.closed;
  return { length: json.length + ids * RISK_ID_JSON_CHARS, pieces: (listJson) => scanJsonPieces(summary, before, after, listJson) };
}

/**
 * presentScan()'s JSON text for a Scan held in memory, in pieces, a turn of
 * the event loop between them (scanJsonPieces): a large recording's scan
 * event (RiskHistory).
 */
export function scanJsonInPieces(scan: Scan): AsyncGenerator<string> {
  const { risks, ...summary } = scan;
  const rendered = renderedScan({ ...summary, riskCounts: { newOpen: risks.newOpen.length, stillOpen: risks.stillOpen.length, closed: risks.closed.length } });
  return rendered.pieces((list, position, count) =>
    risks[list]
      .slice(position, position + count)
      .map((riskId) => `{"risk_id":${JSON.stringify(riskId)}}`)
      .join(','),
  );
}

/**
 * presentScan()'s JSON text for a listed scan, in pieces: its risk lists are
 * read RISK_IDS_PER_TURN ids at a time, each after a turn of the event loop,
 * and each piece is what was rendered since the last turn. A page of scans
 * holds tens of thousands of ids: one synchronous read and stringify of
 * them held the loop for 90 ms, and ten such pages in memory at once were
 * most of the service's peak RSS (bench/scale.ts).
 */
async function* scanJsonPieces(summary: ScanSummary, before: string, after: string, listJson: RiskListJson): AsyncGenerator<string> {
  let text = `${before}"risks":{`;
  for (const [key, list] of [
    ['new_open', 'newOpen'],
    ['still_open', 'stillOpen'],
    ['closed', 'closed'],
  ] as const) {
    text += `${key === 'new_open' ? '' : ','}"${key}":[`;
    let chunks = 0;
    for (let position = 0; position < summary.riskCounts[list]; position += RISK_IDS_PER_TURN) {
      yield text;
      await yieldToEventLoop();
      // Empty when the scan went meanwhile (a deletion): what was read stays valid JSON.
      const chunk = listJson(list, position, RISK_IDS_PER_TURN);
      text = chunk === '' ? '' : chunks++ === 0 ? chunk : `,${chunk}`;
    }
    text += ']';
  }
  yield `${text}}${after}`;
}
