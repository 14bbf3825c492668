/**
 * A scan's risk lists read a run at a time, and ids read a slice at a time,
 * with a turn of the event loop after each read: a scan of 40,020 risks read
 * with its whole lists at once held the loop 46 ms (bench/scale.ts's upload,
 * traced). Scan PDFs and scheduled runs' e-mails read them this way.
 */
import type { Scan, ScanSummary } from '../domain/scans/scan.js';
import { yieldToEventLoop } from './event-loop.js';
import type { ScanRepository } from './ports.js';

/** Entries of a scan's risk list read per turn of the event loop. */
const LIST_IDS_PER_READ = 5_000;

/** Risk ids read per query: under SQLite's limit of bound variables, and short enough not to hold the event loop. */
const IDS_PER_READ = 500;

/** One of the scan's risk lists, LIST_IDS_PER_READ entries a run, a turn of the event loop after each. */
export async function* riskListRuns(
  scans: Pick<ScanRepository, 'riskListIds'>,
  scan: Pick<ScanSummary, 'id' | 'riskCounts'>,
  list: keyof Scan['risks'],
): AsyncGenerator<string[]> {
  for (let position = 0; position < scan.riskCounts[list]; position += LIST_IDS_PER_READ) {
    const run = scans.riskListIds(scan.id, list, position, Math.min(LIST_IDS_PER_READ, scan.riskCounts[list] - position));
    await yieldToEventLoop();
    yield run;
  }
}

/** The ids in slices of IDS_PER_READ, a turn of the event loop after each slice is used. */
export async function* idSlices(ids: readonly string[]): AsyncGenerator<readonly string[]> {
  for (let start = 0; start < ids.length; start += IDS_PER_READ) {
    yield ids.slice(start, start + IDS_PER_READ);
    await yieldToEventLoop();
  }
}
