/** Scans: the filtered list and a scan's page, with why it is in its state, what it skipped, and its result files. */
import type { ActiveSession } from '../../../app/dashboard-sessions.js';
import type { StoredResultFile } from '../../../app/ports.js';
import { html, type SafeHtml } from '../../../app/present/html.js';
import { SCAN_PDF } from '../../../domain/reports/scan-pdf-model.js';
import { SCAN_TYPES } from '../../../domain/risks/finding.js';
import { SCAN_STATES, isTerminal, type Condition, type Scan, type ScanState, type ScanSummary } from '../../../domain/scans/scan.js';
import { asSentence } from '../notices.js';
import { PATHS } from '../paths.js';
import { badge, pagination, postButton, selectField, time, type Notice } from './components.js';
import { page } from './layout.js';

/** What each state means, in the words a person reads on the scan's page. */
const STATE_MEANING: Record<ScanState, string> = {
  QUEUED: 'The scan waits for a free slot; it starts when fewer scans run than the service allows at once.',
  RUNNING: 'The scanner is running. Refresh the page to follow its progress.',
  SUCCEEDED: 'The scan finished and its findings were recorded as risks.',
  STOPPING: 'A stop was requested; the scan stops once its scanner has ended.',
  STOPPED: 'The scan was stopped before it finished. It closed no risks.',
  FAILED: 'The scan failed. The conditions below say why and what to change.',
  OVER_LIMIT: "The scan did not run: the account's monthly scan limit was reached.",
};

function stateBadge(state: ScanState): SafeHtml {
  return badge(`state-${state.replace('_', '-')}`, state);
}

function targetsText(scan: ScanSummary): SafeHtml {
  const [first, ...rest] = scan.requestedTargets;
  if (first === undefined) return html`<span class="empty">none</span>`;
  return html`<span class="mono">${first.target}</span>${rest.length === 0 ? '' : html` <span class="hint">and ${rest.length} more</span>`}`;
}

function riskCounts({ riskCounts: counts }: ScanSummary): SafeHtml {
  return html`${counts.newOpen} / ${counts.stillOpen} / ${counts.closed}`;
}

/** The scans table of the list, the overview and a target's page. */
export function scansTable(scans: readonly ScanSummary[], caption: string, empty: SafeHtml): SafeHtml {
  if (scans.length === 0) return empty;
  return html`<div class="table-wrap"><table>
  <caption>${caption}</caption>
  <thead><tr><th scope="col">Scan</th><th scope="col">State</th><th scope="col">Progress</th><th scope="col">Targets</th><th scope="col">Risks new / still / closed</th><th scope="col">Created</th><th scope="col">Finished</th></tr></thead>
  <tbody>${scans.map(
    (scan) => html`<tr>
    <th scope="row"><a href="${PATHS.scan(scan.id)}">${scan.type}<span class="visually-hidden"> scan of ${scan.createdAt}</span></a></th>
    <td>${stateBadge(scan.state)}</td>
    <td>${scan.progress}%</td>
    <td>${targetsText(scan)}</td>
    <td>${riskCounts(scan)}</td>
    <td>${time(scan.createdAt)}</td>
    <td>${time(scan.finishedAt)}</td>
  </tr>`,
  )}</tbody>
</table></div>`;
}

export interface ScanFilterForm {
  state: string;
  type: string;
  /** The runs of one scheduled scan (its page links here); kept through the form as a hidden field. */
  scheduled_by: string;
}

export interface ScansView {
  session: ActiveSession;
  filters: ScanFilterForm;
  scans: readonly ScanSummary[];
  nextPageToken: string | undefined;
  onLaterPage: boolean;
  notice?: Notice | undefined;
}

const ANY = { value: '', text: 'Any' };

function filterForm(filters: ScanFilterForm): SafeHtml {
  return html`<form class="panel" method="get" action="${PATHS.scans}" role="search" aria-label="Filter scans">
  ${filters.scheduled_by === '' ? '' : html`<input type="hidden" name="scheduled_by" value="${filters.scheduled_by}"><p>Scans started by one scheduled scan only. <a href="${PATHS.scheduledScan(filters.scheduled_by)}">Back to the scheduled scan</a></p>`}
  <div class="field-row">
    ${selectField({ label: 'State', name: 'state', selected: filters.state, options: [ANY, ...SCAN_STATES.map((state) => ({ value: state, text: state }))] })}
    ${selectField({ label: 'Scan type', name: 'type', selected: filters.type, options: [ANY, ...SCAN_TYPES.map((type) => ({ value: type, text: type }))] })}
    <div class="actions"><button type="submit" class="button">Apply filters</button><a href="${PATHS.scans}">Clear</a></div>
  </div>
</form>`;
}

export function scansPage(view: ScansView): string {
  return page(
    { title: 'Scans', session: view.session, section: 'scans', notice: view.notice },
    html`<h1>Scans</h1>
<p class="lead">Every scan of this account, newest first. Open a scan to see why it failed, which targets it skipped, and its result files. Start a scan from a <a href="${PATHS.targets}">target's page</a>.</p>
${filterForm(view.filters)}
${scansTable(view.scans, 'Scans, newest first', html`<p class="empty">No scans match these filters.</p>`)}
${pagination(PATHS.scans, { ...view.filters }, view.nextPageToken, view.onLaterPage)}`,
  );
}

export interface ScanPageView {
  session: ActiveSession;
  scan: Scan;
  files: readonly StoredResultFile[];
  notice?: Notice | undefined;
}

/** What went wrong first (a Failed condition, or one that is False, such as Admitted), then the newest. */
function explainingFirst(a: Condition, b: Condition): number {
  const weight = (condition: Condition) => (condition.type === 'Failed' || condition.status === 'False' ? 0 : 1);
  return weight(a) - weight(b) || b.lastTransitionTime.localeCompare(a.lastTransitionTime);
}

function conditions(scan: Scan): SafeHtml {
  if (scan.conditions.length === 0) return html`<p class="empty">No conditions recorded yet.</p>`;
  return html`<ul class="conditions">${[...scan.conditions].sort(explainingFirst).map(
    (condition: Condition) => html`<li>
    <p><strong>${asSentence(condition.message)}</strong></p>
    <p class="hint">${condition.type} is ${condition.status} (reason <code>${condition.reason}</code>) since ${time(condition.lastTransitionTime)}</p>
  </li>`,
  )}</ul>`;
}

function targetRows(scan: Scan): SafeHtml {
  const resolved = new Map(scan.resolvedTargets.map((target) => [target.targetId, target]));
  const skipped = new Map(scan.skippedTargets.map((target) => [target.targetId, target]));
  return html`<div class="table-wrap"><table>
  <caption>Targets of this scan</caption>
  <thead><tr><th scope="col">Target</th><th scope="col">Outcome</th></tr></thead>
  <tbody>${scan.requestedTargets.map((target) => {
    const skip = skipped.get(target.targetId);
    const addresses = resolved.get(target.targetId)?.addresses;
    const outcome =
      skip !== undefined
        ? html`${badge('failed', 'Skipped')} ${asSentence(skip.skippedReason)}`
        : addresses !== undefined
          ? html`Resolved to <span class="mono">${addresses.join(', ')}</span>`
          : html`<span class="empty">not resolved yet</span>`;
    return html`<tr><th scope="row"><a href="${PATHS.target(target.targetId)}" class="mono">${target.target}</a></th><td>${outcome}</td></tr>`;
  })}</tbody>
</table></div>`;
}

function resultFiles(files: readonly StoredResultFile[]): SafeHtml {
  if (files.length === 0) return html`<p class="empty">No result files: only a scan that succeeded has them.</p>`;
  return html`<ul>${files.map(resultFileItem)}</ul>`;
}

/** A scanner's file by its name; the scan's PDF by what it is, with a note while it is being made (its size is set once it is). */
function resultFileItem(file: StoredResultFile): SafeHtml {
  if (file.fileName !== SCAN_PDF.fileName || file.contentType !== SCAN_PDF.contentType) {
    return html`<li><a href="${PATHS.result(file.id)}" download>${file.fileName}</a> <span class="hint">(${file.contentType}, ${file.size.toLocaleString('en')} bytes)</span></li>`;
  }
  const about = file.size === 0 ? 'PDF, being made: the download waits for it' : `PDF, ${file.size.toLocaleString('en')} bytes`;
  return html`<li><a href="${PATHS.result(file.id)}" download>PDF of this scan</a> <span class="hint">(${about}: its targets and its new open, still open and closed risks)</span></li>`;
}

function scanActions(view: ScanPageView): SafeHtml {
  const { scan, session } = view;
  return isTerminal(scan.state)
    ? postButton({ action: PATHS.deleteScan(scan.id), csrf: session.csrfToken, label: 'Delete scan', variant: 'danger' })
    : postButton({ action: PATHS.stopScan(scan.id), csrf: session.csrfToken, label: 'Stop scan', variant: 'secondary' });
}

export function scanPage(view: ScanPageView): string {
  const { scan } = view;
  return page(
    { title: `${scan.type} scan`, session: view.session, section: 'scans', notice: view.notice },
    html`<p class="breadcrumb"><a href="${PATHS.scans}">Scans</a></p>
<h1>${scan.type} scan</h1>
<section class="panel" aria-labelledby="scan-facts-heading">
  <h2 id="scan-facts-heading" class="visually-hidden">Facts</h2>
  <p>${stateBadge(scan.state)} ${STATE_MEANING[scan.state]}</p>
  <dl class="facts">
    <dt>Progress</dt><dd>${scan.progress}%</dd>
    <dt>Risks</dt><dd>${scan.risks.newOpen.length} new, ${scan.risks.stillOpen.length} still open, ${scan.risks.closed.length} closed</dd>
    <dt>Authenticated</dt><dd>${scan.isAuthenticated ? 'yes, with the login recording' : 'no'}</dd>
    <dt>Scheduled by</dt><dd>${scan.scheduledBy === null ? html`<span class="empty">started by hand or the API</span>` : html`<a href="${PATHS.scheduledScan(scan.scheduledBy)}">a scheduled scan</a>`}</dd>
    <dt>Created</dt><dd>${time(scan.createdAt)}</dd>
    <dt>Started</dt><dd>${time(scan.startedAt)}</dd>
    <dt>Finished</dt><dd>${time(scan.finishedAt)}</dd>
    <dt>Scan id</dt><dd><code>${scan.id}</code></dd>
  </dl>
  <div class="actions">${scanActions(view)}</div>
</section>
<section aria-labelledby="conditions-heading">
  <h2 id="conditions-heading">What happened</h2>
  ${conditions(scan)}
</section>
<section aria-labelledby="scan-targets-heading">
  <h2 id="scan-targets-heading">Targets</h2>
  ${targetRows(scan)}
</section>
<section aria-labelledby="results-heading">
  <h2 id="results-heading">Result files</h2>
  ${resultFiles(view.files)}
</section>`,
  );
}
