/**
 * Scheduled scans (SPEC.md, Scheduled scans): create, list, get, update with
 * replace semantics, delete. Running the schedules is the controller's job;
 * this service stores the configuration and the next run it computes.
 */
import { assertAccountMayRun } from '../domain/scans/start-scan.js';
import { randomUUID } from 'node:crypto';
import type { Account } from '../domain/accounts/account.js';
import type { Clock } from '../domain/clock.js';
import { InvalidRequestError, NotFoundError } from '../domain/errors.js';
import { pageSizeFrom, parseFilters } from '../domain/lists/list-query.js';
import { SCAN_TYPES, type ScanType } from '../domain/risks/finding.js';
import { EMAIL_NOTIFICATIONS, SCHEDULED_SCAN_LIMITS, type EmailNotification } from '../domain/schedules/scheduled-scan-resource.js';
import { SCHEDULE_KINDS, assertValidSchedule, nextRunOnSave, type ScheduleKind } from '../domain/schedules/schedule.js';
import { specOf, type ScheduleFields } from '../domain/schedules/scheduled-run.js';
import type { ListParams, ListResult, Paginator } from './pagination.js';
import type { ScheduledScan, ScheduledScanRepository } from './ports.js';

export type { ScheduledScan } from './ports.js';

/** The request body of create and update, after the OpenAPI shape check. */
export interface ScheduledScanInput {
  schedule?: string | undefined;
  scan_types?: string[] | undefined;
  filter_set?: { target_ids?: string[] | undefined; tags?: string[] | undefined } | undefined;
  email_notification?: string | undefined;
  start_time?: string | undefined;
  schedule_dates?: string[] | undefined;
  email_to?: string[] | undefined;
  name?: string | undefined;
  time_zone?: string | undefined;
  disabled?: boolean | undefined;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const ORDER = 'created_at:desc';

/** Told about a schedule written or deleted; `spec` when its configuration may have changed (not on deletion). */
export type ScheduledScanNotifier = (scheduledScan: ScheduledScan, spec: boolean) => void;

export class ScheduledScansService {
  private notify: ScheduledScanNotifier = () => undefined;

  constructor(
    private readonly scheduledScans: ScheduledScanRepository,
    private readonly paginator: Paginator,
    private readonly clock: Clock,
  ) {}

  /** The ScheduledScan reconciler registers here: told of every schedule created, updated (its new next_run) or deleted. */
  onChanged(notify: ScheduledScanNotifier): void {
    this.notify = notify;
  }

  /** `objectName` names the object (a ScheduledScan applied with kubectl keeps its own); by default `scheduledscan-<id>`. */
  create(account: Account, body: ScheduledScanInput, objectName?: string): ScheduledScan {
    const now = this.clock.now();
    const id = randomUUID();
    const scanTypes = scanTypesOf(account, body.scan_types);
    // An omitted start_time means "runs immediately": the schedule starts now.
    const startTime = body.start_time ?? now.toISOString();
    const base = {
      ...this.common(body),
      scanTypes,
      emailTo: emailToOf(body.email_to) ?? [],
      startTime,
      disabled: body.disabled ?? false,
    };
    const scheduledScan: ScheduledScan = {
      id,
      accountId: account.id,
      objectName: objectName ?? `scheduledscan-${id}`,
      ...base,
      nextRun: nextRunOf(base, now, { startTimeSent: true }),
      lastRan: null,
      createdAt: now.toISOString(),
    };
    this.scheduledScans.insert(scheduledScan);
    this.notify(scheduledScan, true);
    return scheduledScan;
  }

  list<R>(account: Account, params: ListParams, present: (scheduledScan: ScheduledScan) => R): ListResult<R> {
    const scope = `${account.id}:scheduled-scans`;
    // No filter keys here, but a broken filters value is refused as on every other list.
    parseFilters(params.filters, []);
    const page = this.scheduledScans.list(account.id, pageSizeFrom(params.page_size), this.paginator.cursorFrom(scope, ORDER, params.page_token));
    return this.paginator.resultOf(scope, ORDER, page, present);
  }

  get(account: Account, id: string): ScheduledScan {
    const scheduledScan = this.scheduledScans.findById(account.id, id);
    if (scheduledScan === undefined) throw new NotFoundError('scheduled scan', id);
    return scheduledScan;
  }

  /**
   * Replaces the configuration: schedule, filter_set and email_notification
   * are required; omitted scan_types, email_to, disabled and start_time keep
   * their values; an omitted name clears it. next_run is always recalculated.
   */
  update(account: Account, id: string, body: ScheduledScanInput): ScheduledScan {
    const current = this.get(account, id);
    const now = this.clock.now();
    const base = {
      ...this.common(body),
      scanTypes: body.scan_types === undefined ? current.scanTypes : scanTypesOf(account, body.scan_types),
      emailTo: emailToOf(body.email_to) ?? current.emailTo,
      startTime: body.start_time ?? current.startTime,
      disabled: body.disabled ?? current.disabled,
    };
    const lastRan = current.lastRan === null ? undefined : new Date(current.lastRan);
    const updated: ScheduledScan = {
      ...current,
      ...base,
      nextRun: nextRunOf(base, now, { startTimeSent: body.start_time !== undefined, ...(lastRan === undefined ? {} : { lastRan }) }),
    };
    this.scheduledScans.update(updated);
    this.notify(updated, true);
    return updated;
  }

  delete(account: Account, id: string): void {
    const scheduledScan = this.get(account, id);
    if (!this.scheduledScans.delete(account.id, id)) throw new NotFoundError('scheduled scan', id);
    this.notify(scheduledScan, false);
  }

  /** The fields required (or cleared when omitted) on both create and update. */
  private common(body: ScheduledScanInput) {
    const schedule = body.schedule;
    if (schedule === undefined) throw new InvalidRequestError('schedule is required');
    if (!(SCHEDULE_KINDS as readonly string[]).includes(schedule)) throw new InvalidRequestError(`schedule must be one of ${SCHEDULE_KINDS.join(', ')}`);
    if (body.filter_set === undefined) throw new InvalidRequestError('filter_set is required: send target_ids and/or tags');
    const targetIds = body.filter_set.target_ids ?? [];
    const tags = body.filter_set.tags ?? [];
    if (targetIds.length === 0 && tags.length === 0) {
      throw new InvalidRequestError('filter_set must list at least one target id in target_ids or one tag in tags');
    }
    const emailNotification = body.email_notification;
    if (emailNotification === undefined) throw new InvalidRequestError('email_notification is required');
    if (!(EMAIL_NOTIFICATIONS as readonly string[]).includes(emailNotification)) {
      throw new InvalidRequestError(`email_notification must be one of ${EMAIL_NOTIFICATIONS.join(', ')}`);
    }
    const name = body.name;
    if (name !== undefined && (name.length < SCHEDULED_SCAN_LIMITS.minNameLength || name.length > SCHEDULED_SCAN_LIMITS.maxNameLength)) {
      throw new InvalidRequestError(`name must be ${SCHEDULED_SCAN_LIMITS.minNameLength} to ${SCHEDULED_SCAN_LIMITS.maxNameLength} characters`);
    }
    const kind = schedule as ScheduleKind;
    const usesDates = kind === 'CUSTOM' || kind === 'QUARTERLY';
    return {
      name: name ?? null,
      schedule: kind,
      filterTargetIds: [...new Set(targetIds)],
      filterTags: [...new Set(tags.map((tag) => tag.toLowerCase()))],
      emailNotification: emailNotification as EmailNotification,
      // schedule_dates is ignored unless the schedule uses it.
      scheduleDates: usesDates ? (body.schedule_dates ?? []) : null,
      timeZone: body.time_zone ?? null,
    };
  }
}

function scanTypesOf(account: Account, types: string[] | undefined): ScanType[] {
  if (types === undefined || types.length === 0) throw new InvalidRequestError('scan_types must list at least one scan type');
  const unknown = types.find((type) => !(SCAN_TYPES as readonly string[]).includes(type));
  if (unknown !== undefined) throw new InvalidRequestError(`scan_types item '${unknown.slice(0, 40)}' must be one of ${SCAN_TYPES.join(', ')}`);
  const scanTypes = [...new Set(types)] as ScanType[];
  for (const type of scanTypes) {
    try {
      assertAccountMayRun(account, type);
    } catch (error) {
      if (error instanceof InvalidRequestError) throw new InvalidRequestError(`scan_types: ${error.message}`);
      throw error;
    }
  }
  return scanTypes;
}

function emailToOf(emailTo: string[] | undefined): string[] | undefined {
  if (emailTo === undefined) return undefined;
  if (emailTo.length > SCHEDULED_SCAN_LIMITS.maxEmailTo) {
    throw new InvalidRequestError(`email_to may list at most ${SCHEDULED_SCAN_LIMITS.maxEmailTo} addresses; it lists ${emailTo.length}`);
  }
  const invalid = emailTo.find((address) => address.length > SCHEDULED_SCAN_LIMITS.maxEmailLength || !EMAIL.test(address));
  if (invalid !== undefined) throw new InvalidRequestError(`email_to item '${invalid.slice(0, 80)}' is not a valid e-mail address`);
  return emailTo;
}

/** Validates the schedule (schedule_dates, time_zone, start_time) and computes the run to store. */
function nextRunOf(configuration: ScheduleFields, now: Date, options: { startTimeSent: boolean; lastRan?: Date }): string | null {
  const spec = specOf(configuration);
  assertValidSchedule(spec);
  return nextRunOnSave(spec, now, options)?.toISOString() ?? null;
}
