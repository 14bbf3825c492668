/**
 * A RiskHistory on a store's database with bounds of its own, as the
 * composition root builds it: tests set a time budget no step fits in, so
 * that each transaction of a recording or a recompute does one target.
 */
import { RiskHistory, type RecordingLimits, type ScanCompletion, type ScanRisks } from '../../src/app/risk-history.js';
import { systemClock } from '../../src/domain/clock.js';
import type { Database } from '../../src/store/database.js';
import { SqliteEventReceivers } from '../../src/store/event-receivers.js';
import { SqlitePendingForgets } from '../../src/store/pending-forgets-repository.js';
import { SqlitePendingRecordings } from '../../src/store/pending-recordings-repository.js';
import { SqliteRecordingStaging } from '../../src/store/recording-staging.js';
import { SqliteRiskRepository } from '../../src/store/risks-repository.js';
import { SqliteScanSweeps } from '../../src/store/scan-sweeps.js';
import { SqliteTargetRepository } from '../../src/store/targets-repository.js';

export function riskHistoryWith(db: Database, limits: RecordingLimits): RiskHistory {
  return new RiskHistory(
    new SqliteRiskRepository(db),
    new SqliteTargetRepository(db),
    systemClock,
    new SqlitePendingRecordings(db),
    new SqliteEventReceivers(db),
    new SqliteRecordingStaging(db),
    new SqlitePendingForgets(db),
    new SqliteScanSweeps(db),
    limits,
  );
}

/**
 * A recording's end for tests of the risk history: `finish` gets the scan's
 * risk lists and stores nothing of the Scan (its event is dropped); false or
 * a throw rolls the recording back.
 */
export function handing<T>(finish: (risks: ScanRisks) => T | false): ScanCompletion<T> {
  return { scan: (risks, recorded) => ({ ...recorded, risks }), event: 'scan.updated', save: (scan) => finish(scan.risks) };
}
