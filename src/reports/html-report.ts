/**
 * The HTML report: one self-contained file (inline styles, inline SVG
 * charts, no script, no external resource; a Content-Security-Policy that
 * says so), every text from scanners and users escaped by the html template.
 * Written section by section, so a large report never sits in memory whole.
 */
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { html, raw, referenceLink, type SafeHtml } from '../app/present/html.js';
import { THREAT_LEVELS } from '../domain/risks/finding.js';
import {
  cvesOf,
  cvssText,
  describeFilters,
  evidenceOf,
  referencesOf,
  truncationNote,
  type ReportModel,
  type ReportSection,
} from '../domain/reports/report-model.js';
import type { ReportRisk, ReportTarget } from '../domain/reports/snapshot.js';
import { barFractions, chartsOf, type Chart } from './charts.js';
import { REPORT_STYLES } from './html-styles.js';
import { displayTime, targetName } from './text.js';
import { healthText, NOT_SCANNED_YET } from '../domain/targets/health-score.js';

const POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

async function write(out: Writable, chunk: SafeHtml | string): Promise<void> {
  if (!out.write(String(chunk))) await once(out, 'drain');
}

function barChart(chart: Chart, index: number): SafeHtml {
  const rowHeight = 28;
  const height = chart.bars.length * rowHeight + 8;
  const fractions = barFractions(chart);
  return html`<figure class="chart">
<figcaption id="chart-${index}">${chart.title}</figcaption>
<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 420 ${height}" width="420" height="${height}" role="img" aria-labelledby="chart-${index}">
${chart.bars.map((bar, row) => {
  const y = 4 + row * rowHeight;
  const width = Math.max(fractions[row]! * 260, bar.value > 0 ? 2 : 0);
  return html`<text x="0" y="${y + 17}" font-size="12" fill="#1f2933">${bar.label}</text><rect x="110" y="${y + 4}" width="${width.toFixed(1)}" height="18" rx="2" fill="${bar.color}"></rect><text x="${(116 + width).toFixed(1)}" y="${y + 17}" font-size="12" fill="#1f2933">${bar.value}</text>`;
})}
</svg>
</figure>`;
}

function cover(report: ReportModel): SafeHtml {
  const { snapshot } = report;
  const filters = describeFilters(snapshot.filters);
  return html`<header class="cover">
<p class="kicker">Vigil vulnerability report</p>
<h1>Security findings for ${snapshot.accountName}</h1>
<dl class="facts">
<dt>Account</dt><dd>${snapshot.accountName}</dd>
<dt>Created</dt><dd>${displayTime(snapshot.createdAt)}</dd>
<dt>Report id</dt><dd class="mono">${snapshot.id}</dd>
<dt>Filters</dt><dd>${filters.length === 0 ? 'none: every risk of every target the account has' : html`<ul>${filters.map((line) => html`<li>${line}</li>`)}</ul>`}</dd>
<dt>Scope</dt><dd>${report.summary.total} risks on ${report.targets.length} targets, closed and accepted risks included</dd>
</dl>
${report.truncated ? html`<p class="note" role="note">${truncationNote(snapshot)}</p>` : ''}
</header>`;
}

function summary(report: ReportModel): SafeHtml {
  const { summary: counts } = report;
  return html`<section aria-labelledby="summary"><h2 id="summary">Summary</h2>
<div class="tiles">
${THREAT_LEVELS.map((level) => html`<div class="tile level-${level.toLowerCase()}"><span class="count">${counts.byThreatLevel[level]}</span><span>${level}</span></div>`)}
</div>
<table class="compact"><caption>Risks by status</caption><tbody>
<tr><th scope="row">Open</th><td>${counts.byStatus.OPEN}</td></tr>
<tr><th scope="row">Closed</th><td>${counts.byStatus.CLOSED}</td></tr>
<tr><th scope="row">Accepted (false positive or by design)</th><td>${counts.accepted}</td></tr>
<tr><th scope="row">Total</th><td>${counts.total}</td></tr>
</tbody></table>
<div class="charts">${chartsOf(report).map(barChart)}</div>
</section>`;
}

function healthTable(targets: readonly ReportTarget[], sectionIds: ReadonlyMap<string, number>): SafeHtml {
  if (targets.length === 0) return html`<p class="empty">The filters select no targets.</p>`;
  return html`<section aria-labelledby="health"><h2 id="health">Targets and health</h2>
<table><caption>Health score (0 to 100) and grade of each target, the worst first</caption>
<thead><tr><th scope="col">Target</th><th scope="col">Tags</th><th scope="col">Score</th><th scope="col">Grade</th></tr></thead>
<tbody>${targets.map((target) => {
    const index = sectionIds.get(target.id);
    const name = targetName(target);
    return html`<tr><th scope="row">${index === undefined ? name : html`<a href="#target-${index}">${name}</a>`}${target.label === '' ? '' : html`<br><span class="mono muted">${target.target}</span>`}</th><td>${target.tags.join(', ')}</td>${target.lastScannedAt === null ? html`<td colspan="2" class="muted">${NOT_SCANNED_YET}</td>` : html`<td>${target.healthScore.score}</td><td><span class="grade grade-${target.healthScore.grade.toLowerCase()}">${target.healthScore.grade}</span></td>`}</tr>`;
  })}</tbody></table></section>`;
}

function riskArticle(risk: ReportRisk): SafeHtml {
  const definition = risk.definition;
  const cves = cvesOf(risk);
  const references = referencesOf(risk);
  const evidence = evidenceOf(risk);
  return html`<article class="risk">
<h4><span class="level level-${definition.threat_level.toLowerCase()}">${definition.threat_level}</span> ${definition.title}</h4>
<p class="meta">CVSS ${cvssText(risk)} · ${risk.status === 'OPEN' ? 'Open' : 'Closed'}${risk.isAccepted ? ' · Accepted' : ''} · ${definition.scan_type} · first detected ${displayTime(risk.firstDetectedAt)} · last detected ${displayTime(risk.lastDetectedAt)}</p>
${cves.length === 0 ? '' : html`<p class="meta">${cves.join(', ')}</p>`}
<h5>Description</h5><p class="prose">${definition.description === '' ? 'None given by the scanner.' : definition.description}</p>
<h5>Solution</h5><p class="prose">${definition.solution === '' ? 'None given by the scanner.' : definition.solution}</p>
${references.length === 0 ? '' : html`<h5>References</h5><ul class="refs">${references.map((reference) => html`<li>${referenceLink(reference)}</li>`)}</ul>`}
${evidence.length === 0 ? '' : html`<h5>Evidence</h5><dl class="evidence">${evidence.map((entry) => html`<dt>${entry.label}</dt><dd>${entry.value}</dd>`)}</dl>`}
</article>`;
}

function sectionHeading(section: ReportSection, index: number): SafeHtml {
  const { target } = section;
  const counts = THREAT_LEVELS.filter((level) => section.byThreatLevel[level] > 0).map((level) => `${section.byThreatLevel[level]} ${level}`);
  return html`<h3 id="target-${index}">${targetName(target)}</h3>
<p class="meta">${target.label === '' ? '' : html`<span class="mono">${target.target}</span> · `}Health ${healthText(target.healthScore, target.lastScannedAt)}${target.tags.length === 0 ? '' : ` · tags ${target.tags.join(', ')}`} · ${counts.join(', ')}</p>`;
}

function contents(report: ReportModel): SafeHtml {
  return html`<nav aria-labelledby="contents"><h2 id="contents">Contents</h2><ol>
<li><a href="#summary">Summary</a></li><li><a href="#health">Targets and health</a></li>
<li><a href="#findings">Findings by target</a><ol>${report.sections.map((section, index) => html`<li><a href="#target-${index}">${targetName(section.target)}</a> (${section.risks.length})</li>`)}</ol></li>
</ol></nav>`;
}

export async function renderHtmlReport(report: ReportModel, out: Writable): Promise<void> {
  const sectionIds = new Map(report.sections.map((section, index) => [section.target.id, index]));
  await write(
    out,
    html`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${POLICY}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Vigil report · ${report.snapshot.accountName} · ${report.snapshot.createdAt.slice(0, 10)}</title>
<style>${raw(REPORT_STYLES)}</style></head><body><main>
${cover(report)}${contents(report)}${summary(report)}${healthTable(report.targets, sectionIds)}
<section aria-labelledby="findings"><h2 id="findings">Findings by target</h2>
${report.sections.length === 0 ? html`<p class="empty">No risks match the filters.</p>` : ''}`,
  );
  for (const [index, section] of report.sections.entries()) {
    await write(out, html`<section class="target">${sectionHeading(section, index)}${section.risks.map(riskArticle)}</section>`);
  }
  await write(out, '</section></main></body></html>\n');
  out.end();
}
