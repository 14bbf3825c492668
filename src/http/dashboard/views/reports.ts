/** The Reports page: a form with the API's filters, and the account's latest reports with a download per format. */
import type { ActiveSession } from '../../../app/dashboard-sessions.js';
import type { ReportRecord } from '../../../app/ports.js';
import { THREAT_LEVELS, SCAN_TYPES } from '../../../domain/risks/finding.js';
import { describeFilters } from '../../../domain/reports/report-model.js';
import type { ReportFormat } from '../../../domain/reports/snapshot.js';
import { html, type SafeHtml } from '../../../app/present/html.js';
import { PATHS } from '../paths.js';
import { csrfField, inputField, selectField, time, type Notice } from './components.js';
import { page } from './layout.js';

/** The form's values as sent, kept when the page is shown again with an error. */
export interface ReportForm {
  report_format: string;
  target_ids: string;
  tags: string;
  label: string;
  titles: string;
  status: string;
  threat_levels: string[];
  scan_types: string[];
}

export const EMPTY_REPORT_FORM: ReportForm = {
  report_format: 'PDF',
  target_ids: '',
  tags: '',
  label: '',
  titles: '',
  status: '',
  threat_levels: [],
  scan_types: [],
};

export interface ReportsView {
  session: ActiveSession;
  form: ReportForm;
  formats: readonly ReportFormat[];
  reports: readonly ReportRecord[];
  notice?: Notice | undefined;
}

function checkboxes(legend: string, name: string, values: readonly string[], checked: readonly string[]): SafeHtml {
  return html`<fieldset class="field"><legend>${legend}</legend><div class="checks">${values.map(
    (value) => html`<label><input type="checkbox" name="${name}" value="${value}"${checked.includes(value) ? html` checked` : ''}> ${value}</label>`,
  )}</div><span class="hint">None ticked: all.</span></fieldset>`;
}

function createForm(view: ReportsView): SafeHtml {
  const { form } = view;
  const lines = 'One per line; a blank field does not filter.';
  return html`<form class="panel stack" method="post" action="${PATHS.reports}" aria-labelledby="create-heading">
  <h2 id="create-heading">Create a report</h2>
  ${csrfField(view.session.csrfToken)}
  ${selectField({ label: 'Format', name: 'report_format', selected: form.report_format, options: view.formats.map((format) => ({ value: format, text: format })) })}
  <h3>Targets</h3>
  <div class="field-row">
    ${inputField({ label: 'Tags', name: 'tags', multiline: true, value: form.tags, hint: lines })}
    ${inputField({ label: 'Labels', name: 'label', multiline: true, value: form.label, hint: lines })}
    ${inputField({ label: 'Target ids', name: 'target_ids', multiline: true, value: form.target_ids, hint: lines })}
  </div>
  <h3>Risks</h3>
  ${checkboxes('Threat levels', 'threat_level', THREAT_LEVELS, form.threat_levels)}
  ${checkboxes('Scan types', 'scan_type', SCAN_TYPES, form.scan_types)}
  <div class="field-row">
    ${selectField({
      label: 'Status',
      name: 'status',
      selected: form.status,
      options: [
        { value: '', text: 'Open and closed' },
        { value: 'OPEN', text: 'Open' },
        { value: 'CLOSED', text: 'Closed' },
      ],
    })}
    ${inputField({ label: 'Titles (exact)', name: 'titles', multiline: true, value: form.titles, hint: lines })}
  </div>
  <div><button type="submit" class="button">Create report</button></div>
</form>`;
}

function reportsTable(view: ReportsView): SafeHtml {
  if (view.reports.length === 0) return html`<p class="empty">No reports yet.</p>`;
  return html`<div class="table-wrap"><table>
  <caption>Latest reports, newest first</caption>
  <thead><tr><th scope="col">Created</th><th scope="col">Risks</th><th scope="col">Targets</th><th scope="col">Filters</th><th scope="col">Download</th></tr></thead>
  <tbody>${view.reports.map((report) => {
    const filters = describeFilters(report.filters);
    return html`<tr>
    <th scope="row">${time(report.createdAt)}</th>
    <td>${report.riskCount}${report.matchedRisks > report.riskCount ? html` <span class="hint">of more matching</span>` : ''}</td>
    <td>${report.targetCount}</td>
    <td>${filters.length === 0 ? html`<span class="empty">none</span>` : filters.join('; ')}</td>
    <td>${view.formats.map((format) => html`<a href="${PATHS.reportDownload(report.id, format)}">${format}<span class="visually-hidden"> of the report created ${report.createdAt}</span></a> `)}</td>
  </tr>`;
  })}</tbody>
</table></div>`;
}

export function reportsPage(view: ReportsView): string {
  return page(
    { title: 'Reports', session: view.session, section: 'reports', notice: view.notice },
    html`<h1>Reports</h1>
<p class="lead">PDF and HTML reports to hand on, and CSV for spreadsheets. A report is a snapshot: every download, in any format, shows the risks as they were when it was created. Closed and accepted risks are included unless you filter them out.</p>
${createForm(view)}
<h2>Your reports</h2>
${reportsTable(view)}`,
  );
}
