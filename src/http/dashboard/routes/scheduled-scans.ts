/**
 * Scheduled scans: list, create, edit, disable or enable, delete. The form's
 * text becomes the API's request body, checked by the same schema and saved
 * by the same service as POST and PUT /v1/scans/scheduled, so the rules and
 * their refusal sentences are the API's.
 */
import type { Request, Response, Router } from 'express';
import type { ScheduledScan, ScheduledScansService } from '../../../app/scheduled-scans-service.js';
import { ScheduledScanCreate, ScheduledScanUpdate } from '../../../api/schemas/scheduled-scans.js';
import { InvalidRequestError } from '../../../domain/errors.js';
import { parseBody } from '../../handlers/input.js';
import { formField, formFields, listOf, named, queryText, sessionOf } from '../context.js';
import { asSentence, noticeFrom, withNotice } from '../notices.js';
import { PATHS } from '../paths.js';
import { scheduledScansPage, scheduleFormPage, type ScheduleForm } from '../views/scheduled-scans.js';

const SCHEDULES_PER_PAGE = 25;

function formFromRequest(req: Request): ScheduleForm {
  const text = (name: string) => (formField(req, name) ?? '').trim();
  return {
    name: text('name'),
    schedule: text('schedule'),
    scanTypes: formFields(req, 'scan_types'),
    targetIds: text('target_ids'),
    tags: text('tags'),
    startTime: text('start_time'),
    timeZone: text('time_zone'),
    scheduleDates: text('schedule_dates'),
    emailNotification: text('email_notification'),
    emailTo: text('email_to'),
    disabled: formField(req, 'disabled') === 'yes',
  };
}

function formFromSchedule(schedule: ScheduledScan): ScheduleForm {
  return {
    name: schedule.name ?? '',
    schedule: schedule.schedule,
    scanTypes: schedule.scanTypes,
    targetIds: schedule.filterTargetIds.join(', '),
    tags: schedule.filterTags.join(', '),
    startTime: schedule.startTime,
    timeZone: schedule.timeZone ?? '',
    scheduleDates: (schedule.scheduleDates ?? []).join('\n'),
    emailNotification: schedule.emailNotification,
    emailTo: schedule.emailTo.join(', '),
    disabled: schedule.disabled,
  };
}

const EMPTY_FORM: ScheduleForm = {
  name: '',
  schedule: 'WEEKLY',
  scanTypes: ['NMAP'],
  targetIds: '',
  tags: '',
  startTime: '',
  timeZone: '',
  scheduleDates: '',
  emailNotification: 'NEVER',
  emailTo: '',
  disabled: false,
};

/**
 * The API's request body. Empty optional text is left out (name cleared,
 * UTC, start now); an unchanged start time is left out on edit, so that
 * saving a schedule whose start has passed keeps it rather than refusing it.
 */
function bodyOf(form: ScheduleForm, current: ScheduledScan | undefined): Record<string, unknown> {
  const optional = (value: string) => (value === '' ? undefined : value);
  const dates = listOf(form.scheduleDates);
  return {
    name: optional(form.name),
    schedule: form.schedule,
    scan_types: form.scanTypes,
    filter_set: { target_ids: listOf(form.targetIds), tags: listOf(form.tags) },
    start_time: current !== undefined && form.startTime === current.startTime ? undefined : optional(form.startTime),
    time_zone: optional(form.timeZone),
    schedule_dates: dates.length === 0 ? undefined : dates,
    email_notification: form.emailNotification,
    email_to: listOf(form.emailTo),
    disabled: form.disabled,
  };
}

/** A schedule as the update body that changes only `disabled` (the API's replace semantics need every field). */
function withDisabled(schedule: ScheduledScan, disabled: boolean): Record<string, unknown> {
  return { ...bodyOf(formFromSchedule(schedule), schedule), disabled };
}

function listSchedules(req: Request, res: Response, schedules: ScheduledScansService): void {
  const session = sessionOf(res);
  const pageToken = queryText(req, 'page_token');
  const page = schedules.list(session.account, { page_size: SCHEDULES_PER_PAGE, page_token: pageToken === '' ? undefined : pageToken }, (schedule) => schedule);
  res
    .type('html')
    .send(scheduledScansPage({ session, schedules: page.items, nextPageToken: page.nextPageToken, onLaterPage: pageToken !== '', notice: noticeFrom(req) }));
}

/** Saves the form; the service's refusal re-renders it with what was typed and the sentence. */
function save(req: Request, res: Response, schedules: ScheduledScansService, current: ScheduledScan | undefined): void {
  const session = sessionOf(res);
  const form = formFromRequest(req);
  try {
    const body = bodyOf(form, current);
    const saved =
      current === undefined
        ? schedules.create(session.account, parseBody(ScheduledScanCreate, body))
        : schedules.update(session.account, current.id, parseBody(ScheduledScanUpdate, body));
    res.redirect(303, withNotice(PATHS.scheduledScan(saved.id), current === undefined ? 'schedule-created' : 'schedule-saved'));
  } catch (error) {
    if (!(error instanceof InvalidRequestError)) throw error;
    res
      .status(400)
      .type('html')
      .send(scheduleFormPage({ session, schedule: current, form, error: asSentence(error.message) }));
  }
}

export function scheduledScanRoutes(router: Router, schedules: ScheduledScansService): void {
  router.get('/scheduled-scans', named('dashboard.scheduledScans'), (req, res) => listSchedules(req, res, schedules));

  router.get('/scheduled-scans/new', named('dashboard.newScheduledScan'), (req, res) => {
    const form = { ...EMPTY_FORM, targetIds: queryText(req, 'target_ids').slice(0, 4000) };
    res.type('html').send(scheduleFormPage({ session: sessionOf(res), form }));
  });

  router.post('/scheduled-scans', named('dashboard.createScheduledScan'), (req, res) => save(req, res, schedules, undefined));

  router.get('/scheduled-scans/:id', named('dashboard.scheduledScan'), (req, res) => {
    const session = sessionOf(res);
    const schedule = schedules.get(session.account, String(req.params.id));
    res.type('html').send(scheduleFormPage({ session, schedule, form: formFromSchedule(schedule), notice: noticeFrom(req) }));
  });

  router.post('/scheduled-scans/:id', named('dashboard.updateScheduledScan'), (req, res) => {
    save(req, res, schedules, schedules.get(sessionOf(res).account, String(req.params.id)));
  });

  for (const [action, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    router.post(`/scheduled-scans/:id/${action}`, named(`dashboard.${action}ScheduledScan`), (req, res) => {
      const account = sessionOf(res).account;
      const schedule = schedules.get(account, String(req.params.id));
      schedules.update(account, schedule.id, parseBody(ScheduledScanUpdate, withDisabled(schedule, disabled)));
      res.redirect(303, withNotice(PATHS.scheduledScan(schedule.id), disabled ? 'schedule-disabled' : 'schedule-enabled'));
    });
  }

  router.post('/scheduled-scans/:id/delete', named('dashboard.deleteScheduledScan'), (req, res) => {
    schedules.delete(sessionOf(res).account, String(req.params.id));
    res.redirect(303, withNotice(PATHS.scheduledScans, 'schedule-deleted'));
  });
}
