/** Scheduled scans: the list with next and last runs, and the form that creates or edits one. */
import type { ActiveSession } from '../../../app/dashboard-sessions.js';
import type { ScheduledScan } from '../../../app/ports.js';
import { html, type SafeHtml } from '../../../app/present/html.js';
import { SCAN_TYPES } from '../../../domain/risks/finding.js';
import { EMAIL_NOTIFICATIONS, SCHEDULED_SCAN_LIMITS } from '../../../domain/schedules/scheduled-scan-resource.js';
import { SCHEDULE_KINDS } from '../../../domain/schedules/schedule.js';
import { PATHS, withQuery } from '../paths.js';
import { badge, checkboxGroup, csrfField, inputField, pagination, postButton, selectField, time, type Notice } from './components.js';
import { page } from './layout.js';

const EMAIL_TEXT: Record<string, string> = { NEVER: 'Never', ON_CHANGES: 'When risks changed', ALWAYS: 'After every run' };

/** "WEEKLY from 2026-12-01 09:00 UTC (Europe/Berlin)": the schedule in one line. */
export function scheduleText(schedule: ScheduledScan): SafeHtml {
  const zone = schedule.timeZone === null ? '' : ` (${schedule.timeZone})`;
  return html`${schedule.schedule} from ${time(schedule.startTime)}${zone}`;
}

function emailText(schedule: ScheduledScan): SafeHtml {
  const text = EMAIL_TEXT[schedule.emailNotification] ?? schedule.emailNotification;
  if (schedule.emailNotification === 'NEVER') return html`${text}`;
  return html`${text}<br><span class="hint">${schedule.emailTo.length === 0 ? 'no recipients' : schedule.emailTo.join(', ')}</span>`;
}

export interface ScheduledScansView {
  session: ActiveSession;
  schedules: readonly ScheduledScan[];
  nextPageToken: string | undefined;
  onLaterPage: boolean;
  notice?: Notice | undefined;
}

function schedulesTable(view: ScheduledScansView): SafeHtml {
  if (view.schedules.length === 0) return html`<p class="empty">No scheduled scans yet.</p>`;
  return html`<div class="table-wrap"><table>
  <caption>Scheduled scans, newest first</caption>
  <thead><tr><th scope="col">Name</th><th scope="col">Schedule</th><th scope="col">Scan types</th><th scope="col">Next run</th><th scope="col">Last run</th><th scope="col">E-mail</th></tr></thead>
  <tbody>${view.schedules.map(
    (schedule) => html`<tr>
    <th scope="row"><a href="${PATHS.scheduledScan(schedule.id)}">${schedule.name ?? schedule.objectName}</a>${schedule.disabled ? html` ${badge('revoked', 'Disabled')}` : ''}</th>
    <td>${scheduleText(schedule)}</td>
    <td>${schedule.scanTypes.join(', ')}</td>
    <td>${schedule.nextRun === null ? html`<span class="empty">none</span>` : time(schedule.nextRun)}</td>
    <td>${time(schedule.lastRan)}</td>
    <td>${emailText(schedule)}</td>
  </tr>`,
  )}</tbody>
</table></div>`;
}

export function scheduledScansPage(view: ScheduledScansView): string {
  return page(
    { title: 'Scheduled scans', session: view.session, section: 'scheduled', notice: view.notice },
    html`<h1>Scheduled scans</h1>
<p class="lead">Schedules start scans of the targets they select, by id or by tag, and can e-mail a summary of each run.</p>
<p><a class="button" href="${PATHS.newScheduledScan}">New scheduled scan</a></p>
${schedulesTable(view)}
${pagination(PATHS.scheduledScans, {}, view.nextPageToken, view.onLaterPage)}`,
  );
}

/** The form's values as typed: lists are comma- or line-separated text. */
export interface ScheduleForm {
  name: string;
  schedule: string;
  scanTypes: string[];
  targetIds: string;
  tags: string;
  startTime: string;
  timeZone: string;
  scheduleDates: string;
  emailNotification: string;
  emailTo: string;
  disabled: boolean;
}

export interface ScheduleFormView {
  session: ActiveSession;
  /** Absent when creating. */
  schedule?: ScheduledScan | undefined;
  form: ScheduleForm;
  error?: string | undefined;
  notice?: Notice | undefined;
}

function whenFields(form: ScheduleForm): SafeHtml {
  return html`<fieldset class="stack-fieldset">
    <legend>When</legend>
    ${selectField({ label: 'Schedule', name: 'schedule', selected: form.schedule, options: SCHEDULE_KINDS.map((kind) => ({ value: kind, text: kind })) })}
    ${inputField({ label: 'Start time', name: 'start_time', value: form.startTime, maxLength: 40, placeholder: '2026-12-01T09:00:00Z', hint: 'An ISO 8601 date-time with an offset. Empty: now. Repeating schedules keep its wall-clock time.' })}
    ${inputField({ label: 'Time zone', name: 'time_zone', value: form.timeZone, maxLength: SCHEDULED_SCAN_LIMITS.maxTimeZoneLength, placeholder: 'Europe/Berlin', hint: 'An IANA name whose local time repeats across daylight saving changes. Empty: UTC.' })}
    ${inputField({ label: 'Dates', name: 'schedule_dates', multiline: true, value: form.scheduleDates, hint: 'CUSTOM: 1 to 100 date-times; QUARTERLY: exactly 4, one per calendar quarter. One per line. Ignored for other schedules.' })}
  </fieldset>`;
}

function whatFields(form: ScheduleForm): SafeHtml {
  return html`<fieldset class="stack-fieldset">
    <legend>What</legend>
    ${checkboxGroup({ legend: 'Scan types', name: 'scan_types', checked: form.scanTypes, options: SCAN_TYPES.map((type) => ({ value: type, text: type })), hint: 'Each run starts one scan of each type.' })}
    ${inputField({ label: 'Target ids', name: 'target_ids', multiline: true, value: form.targetIds, hint: "Ids from the targets' pages, separated by commas or lines." })}
    ${inputField({ label: 'Tags', name: 'tags', value: form.tags, hint: 'Separated by commas: every target with any of them, as tagged at each run.' })}
  </fieldset>`;
}

function notifyFields(form: ScheduleForm): SafeHtml {
  return html`<fieldset class="stack-fieldset">
    <legend>E-mail</legend>
    ${selectField({ label: 'E-mail a summary', name: 'email_notification', selected: form.emailNotification, options: EMAIL_NOTIFICATIONS.map((value) => ({ value, text: EMAIL_TEXT[value] ?? value })) })}
    ${inputField({ label: 'Recipients', name: 'email_to', value: form.emailTo, hint: `Up to ${SCHEDULED_SCAN_LIMITS.maxEmailTo} addresses, separated by commas.` })}
  </fieldset>`;
}

function scheduleForm(view: ScheduleFormView): SafeHtml {
  const { form, schedule } = view;
  return html`<form class="stack wide" method="post" action="${schedule === undefined ? PATHS.scheduledScans : PATHS.scheduledScan(schedule.id)}">
  ${csrfField(view.session.csrfToken)}
  ${view.error === undefined ? '' : html`<p class="notice notice-error" role="alert">${view.error}</p>`}
  ${inputField({ label: 'Name', name: 'name', value: form.name, maxLength: SCHEDULED_SCAN_LIMITS.maxNameLength, hint: 'Optional: shown in lists and e-mails.' })}
  ${whenFields(form)}
  ${whatFields(form)}
  ${notifyFields(form)}
  <label class="checkbox"><input type="checkbox" name="disabled" value="yes"${form.disabled ? html` checked` : ''}> Disabled (kept, but does not run)</label>
  <div><button type="submit" class="button">${schedule === undefined ? 'Create scheduled scan' : 'Save scheduled scan'}</button></div>
</form>`;
}

function scheduleFacts(view: ScheduleFormView, schedule: ScheduledScan): SafeHtml {
  const csrf = view.session.csrfToken;
  return html`<section class="panel" aria-labelledby="schedule-facts-heading">
  <h2 id="schedule-facts-heading">Runs</h2>
  <dl class="facts">
    <dt>Status</dt><dd>${schedule.disabled ? badge('revoked', 'Disabled') : badge('active', 'Enabled')}</dd>
    <dt>Next run</dt><dd>${schedule.nextRun === null ? html`<span class="empty">none left</span>` : time(schedule.nextRun)}</dd>
    <dt>Last run</dt><dd>${time(schedule.lastRan)}</dd>
    <dt>Created</dt><dd>${time(schedule.createdAt)}</dd>
  </dl>
  <p><a href="${withQuery(PATHS.scans, { scheduled_by: schedule.id })}">Scans it started</a></p>
  <div class="actions">
    ${
      schedule.disabled
        ? postButton({ action: PATHS.enableScheduledScan(schedule.id), csrf, label: 'Enable scheduled scan', variant: 'secondary' })
        : postButton({ action: PATHS.disableScheduledScan(schedule.id), csrf, label: 'Disable scheduled scan', variant: 'secondary' })
    }
    ${postButton({ action: PATHS.deleteScheduledScan(schedule.id), csrf, label: 'Delete scheduled scan', variant: 'danger' })}
  </div>
</section>`;
}

export function scheduleFormPage(view: ScheduleFormView): string {
  const { schedule } = view;
  const title = schedule === undefined ? 'New scheduled scan' : (schedule.name ?? schedule.objectName);
  return page(
    { title, session: view.session, section: 'scheduled', notice: view.notice },
    html`<p class="breadcrumb"><a href="${PATHS.scheduledScans}">Scheduled scans</a></p>
<h1>${title}</h1>
${schedule === undefined ? '' : scheduleFacts(view, schedule)}
<section class="panel" aria-labelledby="schedule-form-heading">
  <h2 id="schedule-form-heading">${schedule === undefined ? 'Settings' : 'Edit settings'}</h2>
  ${scheduleForm(view)}
</section>`,
  );
}
