import type { ActiveSession } from '../../../app/dashboard-sessions.js';
import { THREAT_LEVELS } from '../../../domain/risks/finding.js';
import { MAX_ACCEPT_NOTE_LENGTH, type RiskView } from '../../../domain/risks/risk.js';
import { html, referenceLink, type SafeHtml } from '../../../app/present/html.js';
import { evidenceOf } from '../../../domain/reports/evidence.js';
import { cvesOf, referencesOf } from '../../../domain/reports/report-model.js';
import { PATHS, withQuery } from '../paths.js';
import { badge, csrfField, inputField, pagination, postButton, selectField, time, type Notice } from './components.js';
import { page } from './layout.js';
import { scansTable } from './scans.js';
import type { ScanSummary } from '../../../domain/scans/scan.js';

/** The orders a risk table offers: by severity either way; '' is newest first. */
export const RISK_TABLE_SORTS = ['threat_level desc', 'threat_level asc'] as const;

const ORDER_WORDS: Record<string, string> = { '': 'newest first', 'threat_level desc': 'most severe first', 'threat_level asc': 'least severe first' };

/** How a risk table says its order in its caption ("Risks, most severe first"). */
export function riskOrderWords(sort: string): string {
  return ORDER_WORDS[sort] ?? ORDER_WORDS['']!;
}

/**
 * The Threat level column header of a risk table: a link (so it is reached
 * and followed with the keyboard, and works without script) that sorts the
 * server-rendered table by severity, most severe first, then the other way;
 * aria-sort tells screen readers the current order.
 */
export function threatLevelHeader(sort: string, hrefFor: (sort: string) => string): SafeHtml {
  const next = sort === 'threat_level desc' ? 'threat_level asc' : 'threat_level desc';
  const ariaSort = sort === 'threat_level desc' ? 'descending' : sort === 'threat_level asc' ? 'ascending' : 'none';
  const arrow = sort === 'threat_level desc' ? ' ▼' : sort === 'threat_level asc' ? ' ▲' : '';
  return html`<th scope="col" aria-sort="${ariaSort}"><a href="${hrefFor(next)}">Threat level<span aria-hidden="true">${arrow}</span><span class="visually-hidden"> (sort ${riskOrderWords(next)})</span></a></th>`;
}

/** The filter form's values as sent; '' means any. */
export interface RiskFilterForm {
  /** One of RISK_TABLE_SORTS, or '' for newest first; kept through the form and the page links. */
  sort: string;
  threat_level: string;
  status: string;
  accepted: string;
  target: string;
  /** One target's risks (a target's page links here); kept through the form as a hidden field. */
  target_id: string;
}

export interface RisksView {
  session: ActiveSession;
  filters: RiskFilterForm;
  risks: readonly RiskView[];
  nextPageToken: string | undefined;
  onLaterPage: boolean;
  notice?: Notice | undefined;
}

const ANY = { value: '', text: 'Any' };

function filterForm(filters: RiskFilterForm): SafeHtml {
  return html`<form class="panel" method="get" action="${PATHS.risks}" role="search" aria-label="Filter risks">
  ${filters.sort === '' ? '' : html`<input type="hidden" name="sort" value="${filters.sort}">`}
  ${filters.target_id === '' ? '' : html`<input type="hidden" name="target_id" value="${filters.target_id}"><p>Risks of one target only. <a href="${PATHS.target(filters.target_id)}">Back to the target</a></p>`}
  <div class="field-row">
    ${selectField({ label: 'Threat level', name: 'threat_level', selected: filters.threat_level, options: [ANY, ...THREAT_LEVELS.map((level) => ({ value: level, text: level }))] })}
    ${selectField({ label: 'Status', name: 'status', selected: filters.status, options: [ANY, { value: 'OPEN', text: 'Open' }, { value: 'CLOSED', text: 'Closed' }] })}
    ${selectField({ label: 'Accepted', name: 'accepted', selected: filters.accepted, options: [ANY, { value: 'yes', text: 'Accepted' }, { value: 'no', text: 'Not accepted' }] })}
    ${inputField({ label: 'Target', name: 'target', type: 'search', value: filters.target, maxLength: 2048, placeholder: 'address or label' })}
    <div class="actions"><button type="submit" class="button">Apply filters</button><a href="${PATHS.risks}">Clear</a></div>
  </div>
</form>`;
}

export function riskBadges(risk: RiskView): SafeHtml {
  return html`${badge(risk.status, risk.status === 'OPEN' ? 'Open' : 'Closed')}${risk.isAccepted ? html` ${badge('accepted', 'Accepted')}` : ''}`;
}

function targetText(risk: RiskView): SafeHtml {
  return risk.targetLabel === '' ? html`<span class="mono">${risk.target}</span>` : html`${risk.targetLabel}<br><span class="hint mono">${risk.target}</span>`;
}

function risksTable(risks: readonly RiskView[], filters: RiskFilterForm): SafeHtml {
  if (risks.length === 0) return html`<p class="empty">No risks match these filters.</p>`;
  // A new order starts again at the first page: a page token continues only the order it came from.
  const hrefFor = (sort: string) => withQuery(PATHS.risks, { ...filters, sort });
  return html`<div class="table-wrap"><table>
  <caption>Risks, ${riskOrderWords(filters.sort)}${filters.sort === '' ? '' : html` (<a href="${hrefFor('')}">newest first instead</a>)`}</caption>
  <thead><tr><th scope="col">Title</th>${threatLevelHeader(filters.sort, hrefFor)}<th scope="col">Status</th><th scope="col">Target</th><th scope="col">First detected</th></tr></thead>
  <tbody>${risks.map(
    (risk) => html`<tr>
    <th scope="row"><a href="${PATHS.risk(risk.id)}">${risk.definition.title}</a></th>
    <td>${badge(risk.definition.threat_level, risk.definition.threat_level)}</td>
    <td>${riskBadges(risk)}</td>
    <td><a href="${PATHS.target(risk.targetId)}">${targetText(risk)}</a></td>
    <td>${time(risk.firstDetectedAt)}</td>
  </tr>`,
  )}</tbody>
</table></div>`;
}

export function risksPage(view: RisksView): string {
  return page(
    { title: 'Risks', session: view.session, section: 'risks', notice: view.notice },
    html`<h1>Risks</h1>
<p class="lead">Findings on your targets, tracked across scans. Accept a risk that is a false positive or there by design: it then no longer lowers its target's health score.</p>
${filterForm(view.filters)}
${risksTable(view.risks, view.filters)}
${pagination(PATHS.risks, { ...view.filters }, view.nextPageToken, view.onLaterPage)}`,
  );
}

export interface RiskPageView {
  session: ActiveSession;
  risk: RiskView;
  /** The newest scans that detected the risk. */
  scans: readonly ScanSummary[];
  noteError?: { note: string; error: string } | undefined;
  notice?: Notice | undefined;
}

function acceptance(view: RiskPageView): SafeHtml {
  const { risk, session } = view;
  const history =
    risk.acceptedBy.length === 0
      ? html`<p class="empty">This risk has never been accepted.</p>`
      : html`<div class="table-wrap"><table>
  <caption>Acceptance notes, oldest first</caption>
  <thead><tr><th scope="col">Accepted</th><th scope="col">Note</th></tr></thead>
  <tbody>${risk.acceptedBy.map((entry) => html`<tr><th scope="row">${time(entry.created_at)}</th><td>${entry.note}</td></tr>`)}</tbody>
</table></div>`;
  const control = risk.isAccepted
    ? html`<div class="actions">${postButton({ action: PATHS.unacceptRisk(risk.id), csrf: session.csrfToken, label: 'Un-accept risk', variant: 'secondary' })}</div>`
    : html`<form class="stack" method="post" action="${PATHS.acceptRisk(risk.id)}">
  ${csrfField(session.csrfToken)}
  ${inputField({ label: 'Note', name: 'note', multiline: true, required: true, maxLength: MAX_ACCEPT_NOTE_LENGTH, hint: 'Why is this risk accepted? For example “false positive: the port is filtered upstream”.', value: view.noteError?.note, error: view.noteError?.error })}
  <div><button type="submit" class="button">Accept risk</button></div>
</form>`;
  return html`<section class="panel" aria-labelledby="acceptance-heading">
  <h2 id="acceptance-heading">Acceptance</h2>
  <p>${risk.isAccepted ? 'This risk is accepted.' : 'This risk is not accepted.'}</p>
  ${control}
  ${history}
</section>`;
}

export function riskPage(view: RiskPageView): string {
  const { risk } = view;
  const definition = risk.definition;
  return page(
    { title: definition.title, session: view.session, section: 'risks', notice: view.notice },
    html`<p class="breadcrumb"><a href="${PATHS.risks}">Risks</a></p>
<h1>${definition.title}</h1>
<section class="panel" aria-labelledby="facts-heading">
  <h2 id="facts-heading" class="visually-hidden">Facts</h2>
  <dl class="facts">
    <dt>Threat level</dt><dd>${badge(definition.threat_level, definition.threat_level)}</dd>
    <dt>Status</dt><dd>${riskBadges(risk)}</dd>
    <dt>Target</dt><dd><a href="${PATHS.target(risk.targetId)}">${targetText(risk)}</a></dd>
    <dt>Tags</dt><dd>${risk.tags.length === 0 ? html`<span class="empty">none</span>` : risk.tags.join(', ')}</dd>
    <dt>Scan type</dt><dd>${definition.scan_type}</dd>
    <dt>CVSS</dt><dd>${definition.cvss === '' ? html`<span class="empty">not given</span>` : definition.cvss}</dd>
    <dt>First detected</dt><dd>${time(risk.firstDetectedAt)}</dd>
    <dt>Last detected</dt><dd>${time(risk.lastDetectedAt)}</dd>
  </dl>
</section>
${acceptance(view)}
<section aria-labelledby="risk-scans-heading">
  <h2 id="risk-scans-heading">Scans that found it</h2>
  ${scansTable(view.scans, 'Scans that detected this risk, newest first', html`<p class="empty">No scan that detected this risk is left.</p>`)}
</section>
<h2>Description</h2>
<p class="prose">${definition.description === '' ? html`<span class="empty">none</span>` : definition.description}</p>
<h2>Solution</h2>
<p class="prose">${definition.solution === '' ? html`<span class="empty">none</span>` : definition.solution}</p>
${evidence(risk)}`,
  );
}

/** What the scanner saw, as the reports show it: labelled fields, the CVEs and the references, never raw JSON. */
function evidence(risk: RiskView): SafeHtml {
  const cves = cvesOf(risk);
  const lines = evidenceOf(risk);
  const references = referencesOf(risk);
  const fields = [...(cves.length === 0 ? [] : [{ label: 'CVEs', value: cves.join(', ') }]), ...lines];
  return html`<h2>Evidence</h2>
${fields.length === 0 ? html`<p class="empty">The scanner gave none.</p>` : html`<dl class="facts evidence">${fields.map((field) => html`<dt>${field.label}</dt><dd>${field.value}</dd>`)}</dl>`}
${references.length === 0 ? '' : html`<h2>References</h2><ul class="references">${references.map((reference) => html`<li>${referenceLink(reference)}</li>`)}</ul>`}`;
}
