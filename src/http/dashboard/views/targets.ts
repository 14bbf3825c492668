/** Targets: the searchable list with health and open risks, and a target's page with its risks, scans and actions. */
import type { ActiveSession } from '../../../app/dashboard-sessions.js';
import type { TargetListRow } from '../../../app/ports.js';
import { html, type SafeHtml } from '../../../app/present/html.js';
import { MAX_LABEL_LENGTH } from '../../../api/schemas/targets.js';
import { SCAN_TYPES } from '../../../domain/risks/finding.js';
import type { RiskView } from '../../../domain/risks/risk.js';
import type { ScanSummary } from '../../../domain/scans/scan.js';
import type { OpenRiskCounts } from '../../../domain/targets/health-score.js';
import type { Target } from '../../../domain/targets/target.js';
import { PATHS, withQuery } from '../paths.js';
import { badge, csrfField, gradeBadge, inputField, pagination, postButton, riskCountBadges, selectField, time, type Notice } from './components.js';
import { page } from './layout.js';
import { riskBadges, riskOrderWords, threatLevelHeader } from './risks.js';
import { scansTable } from './scans.js';

export interface TargetFilterForm {
  tag: string;
  q: string;
}

export interface TargetsView {
  session: ActiveSession;
  filters: TargetFilterForm;
  targets: ReadonlyArray<{ row: TargetListRow; tags: string[] }>;
  openRisks: ReadonlyMap<string, OpenRiskCounts>;
  nextPageToken: string | undefined;
  onLaterPage: boolean;
  notice?: Notice | undefined;
}

function tagList(tags: readonly string[]): SafeHtml {
  if (tags.length === 0) return html`<span class="empty">none</span>`;
  return html`${tags.map((tag, index) => html`${index === 0 ? '' : ' '}<a class="tag" href="${withQuery(PATHS.targets, { tag })}">${tag}</a>`)}`;
}

function addressAndLabel(target: { target: string; label: string }): SafeHtml {
  return target.label === '' ? html`<span class="mono">${target.target}</span>` : html`${target.label}<br><span class="hint mono">${target.target}</span>`;
}

function filterForm(filters: TargetFilterForm): SafeHtml {
  return html`<form class="panel" method="get" action="${PATHS.targets}" role="search" aria-label="Filter targets">
  <div class="field-row">
    ${inputField({ label: 'Tag', name: 'tag', value: filters.tag, maxLength: 100, placeholder: 'production' })}
    ${inputField({ label: 'Address or label contains', name: 'q', type: 'search', value: filters.q, maxLength: 2048 })}
    <div class="actions"><button type="submit" class="button">Apply filters</button><a href="${PATHS.targets}">Clear</a></div>
  </div>
</form>`;
}

function targetsTable(view: TargetsView): SafeHtml {
  if (view.targets.length === 0) return html`<p class="empty">No targets match these filters.</p>`;
  return html`<div class="table-wrap"><table>
  <caption>Targets, newest first</caption>
  <thead><tr><th scope="col">Target</th><th scope="col">Health</th><th scope="col">Open risks</th><th scope="col">Tags</th><th scope="col">Origin</th><th scope="col">Last scanned</th></tr></thead>
  <tbody>${view.targets.map(
    ({ row, tags }) => html`<tr>
    <th scope="row"><a href="${PATHS.target(row.id)}">${addressAndLabel(row)}</a></th>
    <td>${gradeBadge(row.healthScore, row.healthGrade, row.lastScannedAt)}</td>
    <td>${riskCountBadges(view.openRisks.get(row.id))}</td>
    <td>${tagList(tags)}</td>
    <td>${row.origin}</td>
    <td>${time(row.lastScannedAt)}</td>
  </tr>`,
  )}</tbody>
</table></div>`;
}

export function targetsPage(view: TargetsView): string {
  return page(
    { title: 'Targets', session: view.session, section: 'targets', notice: view.notice },
    html`<h1>Targets</h1>
<p class="lead">The hosts, addresses and sites this account scans. The health score starts at 100 and drops with each open risk that is not accepted; the grade follows it. Add targets with <code>POST /v1/targets</code> or by starting a scan of a new address.</p>
${filterForm(view.filters)}
${targetsTable(view)}
${pagination(PATHS.targets, { ...view.filters }, view.nextPageToken, view.onLaterPage)}`,
  );
}

export interface TargetPageView {
  session: ActiveSession;
  target: Target;
  openRisks: OpenRiskCounts | undefined;
  risks: readonly RiskView[];
  /** The risk table's order: one of RISK_TABLE_SORTS, or '' for newest first. */
  riskSort?: string | undefined;
  moreRisks: boolean;
  scans: readonly ScanSummary[];
  /** What the last form sent and the service's refusal, shown in that form. */
  edit?: { label: string; tags: string; error: string } | undefined;
  scanError?: { type: string; error: string } | undefined;
  deleteError?: string | undefined;
  notice?: Notice | undefined;
}

function facts(target: Target, openRisks: OpenRiskCounts | undefined): SafeHtml {
  return html`<dl class="facts">
    <dt>Address</dt><dd class="mono">${target.target}</dd>
    <dt>Health</dt><dd>${gradeBadge(target.healthScore.score, target.healthScore.grade, target.lastScannedAt)}</dd>
    <dt>Open risks</dt><dd>${riskCountBadges(openRisks)}</dd>
    <dt>Tags</dt><dd>${tagList(target.tags)}</dd>
    <dt>Origin</dt><dd>${target.origin}</dd>
    <dt>Login recording</dt><dd>${target.authSeleniumFile === undefined ? html`<span class="empty">none</span>` : html`<span class="mono">${target.authSeleniumFile}</span>: ZAP scans sign in with it`}</dd>
    <dt>API definition</dt><dd>${target.openApiFile === undefined ? html`<span class="empty">none</span>` : html`<span class="mono">${target.openApiFile}</span>: ZAP scans every operation in it`}</dd>
    ${target.hostname === undefined ? '' : html`<dt>Host name</dt><dd class="mono">${target.hostname}</dd>`}
    ${target.os === undefined ? '' : html`<dt>Operating system</dt><dd>${target.os}</dd>`}
    <dt>Created</dt><dd>${time(target.createdAt)}</dd>
    <dt>Last scanned</dt><dd>${time(target.lastScannedAt)}</dd>
  </dl>`;
}

function editForm(view: TargetPageView): SafeHtml {
  const { target, session, edit } = view;
  return html`<section class="panel" aria-labelledby="edit-heading">
  <h2 id="edit-heading">Label and tags</h2>
  <form class="stack" method="post" action="${PATHS.editTarget(target.id)}">
    ${csrfField(session.csrfToken)}
    ${edit === undefined ? '' : html`<p class="notice notice-error" role="alert">${edit.error}</p>`}
    ${inputField({ label: 'Label', name: 'label', value: edit?.label ?? target.label, maxLength: MAX_LABEL_LENGTH })}
    ${inputField({ label: 'Tags', name: 'tags', value: edit?.tags ?? target.tags.join(', '), hint: 'Separated by commas; stored in lowercase.', maxLength: 2000 })}
    <div><button type="submit" class="button">Save target</button></div>
  </form>
</section>`;
}

function scanForm(view: TargetPageView): SafeHtml {
  const { target, session, scanError } = view;
  return html`<section class="panel" aria-labelledby="start-scan-heading">
  <h2 id="start-scan-heading">Scan this target</h2>
  <form class="field-row" method="post" action="${PATHS.scanTarget(target.id)}">
    ${csrfField(session.csrfToken)}
    ${selectField({ label: 'Scan type', name: 'type', selected: scanError?.type ?? 'NMAP', options: SCAN_TYPES.map((type) => ({ value: type, text: type })) })}
    <div class="actions"><button type="submit" class="button">Start scan</button></div>
  </form>
  ${scanError === undefined ? '' : html`<p class="notice notice-error" role="alert">${scanError.error}</p>`}
  <p class="hint">Or <a href="${withQuery(PATHS.newScheduledScan, { target_ids: target.id })}">schedule scans of this target</a>.</p>
</section>`;
}

function risksTable(view: TargetPageView): SafeHtml {
  const sort = view.riskSort ?? '';
  const all = withQuery(PATHS.risks, { target_id: view.target.id, sort });
  if (view.risks.length === 0) return html`<p class="empty">No risks found on this target.</p>`;
  // Back to this table after the page loads in the new order.
  const hrefFor = (next: string) => `${withQuery(PATHS.target(view.target.id), { risk_sort: next })}#target-risks-heading`;
  return html`<div class="table-wrap"><table>
  <caption>Risks of this target, ${riskOrderWords(sort)}</caption>
  <thead><tr><th scope="col">Title</th>${threatLevelHeader(sort, hrefFor)}<th scope="col">Status</th><th scope="col">Scan type</th><th scope="col">Last detected</th></tr></thead>
  <tbody>${view.risks.map(
    (risk) => html`<tr>
    <th scope="row"><a href="${PATHS.risk(risk.id)}">${risk.definition.title}</a></th>
    <td>${badge(risk.definition.threat_level, risk.definition.threat_level)}</td>
    <td>${riskBadges(risk)}</td>
    <td>${risk.scanType}</td>
    <td>${time(risk.lastDetectedAt)}</td>
  </tr>`,
  )}</tbody>
</table></div>
${view.moreRisks ? html`<p><a href="${all}">All risks of this target</a></p>` : ''}`;
}

export function targetPage(view: TargetPageView): string {
  const { target, session } = view;
  return page(
    { title: target.label === '' ? target.target : target.label, session, section: 'targets', notice: view.notice },
    html`<p class="breadcrumb"><a href="${PATHS.targets}">Targets</a></p>
<h1>${target.label === '' ? target.target : target.label}</h1>
<section class="panel" aria-labelledby="target-facts-heading">
  <h2 id="target-facts-heading" class="visually-hidden">Facts</h2>
  ${facts(target, view.openRisks)}
</section>
<div class="overview-grid">
${scanForm(view)}
${editForm(view)}
</div>
<section aria-labelledby="target-risks-heading">
  <h2 id="target-risks-heading">Risks</h2>
  ${risksTable(view)}
</section>
<section aria-labelledby="target-scans-heading">
  <h2 id="target-scans-heading">Scans</h2>
  ${scansTable(view.scans, 'Latest scans of this target, newest first', html`<p class="empty">No scan of this target yet.</p>`)}
</section>
<section class="panel danger-zone" aria-labelledby="delete-target-heading">
  <h2 id="delete-target-heading">Delete this target</h2>
  <p>Deleting a target deletes its risks too, and schedules stop selecting it by id.</p>
  ${view.deleteError === undefined ? '' : html`<p class="notice notice-error" role="alert">${view.deleteError}</p>`}
  ${postButton({ action: PATHS.deleteTarget(target.id), csrf: session.csrfToken, label: 'Delete target', variant: 'danger' })}
</section>`,
  );
}
