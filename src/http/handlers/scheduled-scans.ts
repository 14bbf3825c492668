import { ScheduledScanCreate, ScheduledScanUpdate } from '../../api/schemas/scheduled-scans.js';
import type { ScheduledScan, ScheduledScansService } from '../../app/scheduled-scans-service.js';
import type { Operation } from '../api-router.js';
import { listQuery, parseBody } from './input.js';

function presentScheduledScan(scheduledScan: ScheduledScan) {
  return {
    id: scheduledScan.id,
    name: scheduledScan.name,
    schedule: scheduledScan.schedule,
    scan_types: scheduledScan.scanTypes,
    targets_filter: { target_ids: scheduledScan.filterTargetIds, tags: scheduledScan.filterTags },
    last_ran: scheduledScan.lastRan,
    next_run: scheduledScan.nextRun,
    created_at: scheduledScan.createdAt,
    disabled: scheduledScan.disabled,
    email_notification: scheduledScan.emailNotification,
    email_to: scheduledScan.emailTo,
    start_time: scheduledScan.startTime,
    schedule_dates: scheduledScan.scheduleDates,
    time_zone: scheduledScan.timeZone,
  };
}

export function scheduledScanOperations(scheduledScans: ScheduledScansService): Record<string, Operation> {
  return {
    createScheduledScan: ({ principal, body }) => ({
      data: presentScheduledScan(scheduledScans.create(principal.account, parseBody(ScheduledScanCreate, body))),
    }),
    listScheduledScans: ({ principal, query }) => {
      const page = scheduledScans.list(principal.account, listQuery(query), presentScheduledScan);
      return { data: page.items, ...(page.nextPageToken === undefined ? {} : { next_page_token: page.nextPageToken }) };
    },
    getScheduledScan: ({ principal, params }) => ({ data: presentScheduledScan(scheduledScans.get(principal.account, params.id!)) }),
    updateScheduledScan: ({ principal, params, body }) => ({
      data: presentScheduledScan(scheduledScans.update(principal.account, params.id!, parseBody(ScheduledScanUpdate, body))),
    }),
    deleteScheduledScan: ({ principal, params }) => {
      scheduledScans.delete(principal.account, params.id!);
      return { data: { id: params.id!, deleted: true } };
    },
  };
}
