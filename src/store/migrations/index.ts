/**
 * Numbered migrations, applied in order at start-up, each in its own
 * transaction. Never edit a migration that has shipped; add the next number.
 */
import { m0001AccountsAndTargets } from './0001-accounts-and-targets.js';
import { m0002ScansResultsEvents } from './0002-scans-results-events.js';
import { m0003UploadTokens } from './0003-upload-tokens.js';
import { m0004Risks } from './0004-risks.js';
import { m0005Sources } from './0005-sources.js';
import { m0006Webhooks } from './0006-webhooks.js';
import { m0007WebhookCursor } from './0007-webhook-cursor.js';
import { m0008ScheduledScans } from './0008-scheduled-scans.js';
import { m0009DashboardSessions } from './0009-dashboard-sessions.js';
import { m0010ScheduledRuns } from './0010-scheduled-runs.js';
import { m0011WebhookDueByEndpoint } from './0011-webhook-due-by-endpoint.js';
import { m0012Reports } from './0012-reports.js';
import { m0013PendingRecordings } from './0013-pending-recordings.js';
import { m0014DashboardRiskIndexes } from './0014-dashboard-risk-indexes.js';
import { m0015TargetAttachments } from './0015-target-attachments.js';
import { m0016WebhookDeliveryStateIndexes } from './0016-webhook-delivery-state-indexes.js';
import { m0017TargetListJsonIndex } from './0017-target-list-json-index.js';
import { m0018ScanResultContent } from './0018-scan-result-content.js';
import { m0019WebhookFirstAttemptDeliveries } from './0019-webhook-first-attempt-deliveries.js';
import { m0020RiskSortIndexes } from './0020-risk-sort-indexes.js';
import { m0021PendingRecordingTargets } from './0021-pending-recording-targets.js';
import { m0022ScanResourceMarks } from './0022-scan-resource-marks.js';
import { m0023PendingResultFiles } from './0023-pending-result-files.js';
import { m0024ListFilterIndexes } from './0024-list-filter-indexes.js';
import { m0025ScanRiskLists } from './0025-scan-risk-lists.js';
import { m0026DashboardCounters } from './0026-dashboard-counters.js';
import { m0027TargetsLastScannedJson } from './0027-targets-last-scanned-json.js';
import { m0028PendingScanForgets } from './0028-pending-scan-forgets.js';
import { m0029ScanRowsSwept } from './0029-scan-rows-swept.js';
import { m0030OpenCountsOnChange } from './0030-open-counts-on-change.js';
import { m0031HeldEvents } from './0031-held-events.js';
import { m0032EventParts } from './0032-event-parts.js';
import { m0033RiskInsertsCountThemselves } from './0033-risk-inserts-count-themselves.js';
import { m0034RiskTitlesPendingList } from './0034-risk-titles-pending-list.js';
import { m0035StatusAndLevelOneIndex } from './0035-status-and-level-one-index.js';
import { m0036TargetSortKeysWithoutJson } from './0036-target-sort-keys-without-json.js';
import { m0037RisksByTargetOneIndex } from './0037-risks-by-target-one-index.js';
import { m0038UnusedLastScannedIndex } from './0038-unused-last-scanned-index.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  m0001AccountsAndTargets,
  m0002ScansResultsEvents,
  m0003UploadTokens,
  m0004Risks,
  m0005Sources,
  m0006Webhooks,
  m0007WebhookCursor,
  m0008ScheduledScans,
  m0009DashboardSessions,
  m0010ScheduledRuns,
  m0011WebhookDueByEndpoint,
  m0012Reports,
  m0013PendingRecordings,
  m0014DashboardRiskIndexes,
  m0015TargetAttachments,
  m0016WebhookDeliveryStateIndexes,
  m0017TargetListJsonIndex,
  m0018ScanResultContent,
  m0019WebhookFirstAttemptDeliveries,
  m0020RiskSortIndexes,
  m0021PendingRecordingTargets,
  m0022ScanResourceMarks,
  m0023PendingResultFiles,
  m0024ListFilterIndexes,
  m0025ScanRiskLists,
  m0026DashboardCounters,
  m0027TargetsLastScannedJson,
  m0028PendingScanForgets,
  m0029ScanRowsSwept,
  m0030OpenCountsOnChange,
  m0031HeldEvents,
  m0032EventParts,
  m0033RiskInsertsCountThemselves,
  m0034RiskTitlesPendingList,
  m0035StatusAndLevelOneIndex,
  m0036TargetSortKeysWithoutJson,
  m0037RisksByTargetOneIndex,
  m0038UnusedLastScannedIndex,
];
