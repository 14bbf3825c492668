/**
 * The PDF report on pdfkit: cover, contents with page numbers, summary with
 * vector charts, the targets' health, then one section per target with its
 * risks most severe first. Laid out in full first (layout.ts), then drawn
 * page by page into the output stream, yielding to the event loop between
 * pages so that other requests are served while a large report renders.
 */
import type { Writable } from 'node:stream';
import PDFDocument from 'pdfkit';
import { THREAT_LEVELS } from '../../domain/risks/finding.js';
import { cvesOf, cvssText, describeFilters, evidenceOf, referencesOf, type ReportModel, type ReportSection } from '../../domain/reports/report-model.js';
import type { ReportRisk } from '../../domain/reports/snapshot.js';
import { LEVEL_COLORS } from '../charts.js';
import { displayTime, targetName } from '../text.js';
import { paginate, type Pagination } from './layout.js';
import { CONTENT_WIDTH, FONTS, INK, PAGE, PdfFlow } from './pdf-flow.js';
import { chartsBlock, contentsBlocks, healthTableBlocks, summaryTilesBlock, type ContentsEntry } from './pdf-summary.js';

function coverBlocks(flow: PdfFlow, report: ReportModel): void {
  const { snapshot } = report;
  flow.space(120);
  flow.text('VIGIL VULNERABILITY REPORT', { font: FONTS.bold, size: 11, color: INK.muted, leading: 6 });
  flow.text(`Security findings for ${snapshot.accountName}`, { font: FONTS.bold, size: 26, leading: 10 });
  flow.rule();
  const facts: Array<[string, string]> = [
    ['Account', snapshot.accountName],
    ['Created', displayTime(snapshot.createdAt)],
    ['Report id', snapshot.id],
    ['Scope', `${report.summary.total} risks on ${report.targets.length} targets, closed and accepted risks included`],
  ];
  for (const [label, value] of facts) {
    flow.text(label, { font: FONTS.bold, size: 10, keepWithNext: true });
    flow.text(value, { size: 11, leading: 6 });
  }
  const filters = describeFilters(snapshot.filters);
  flow.text('Filters', { font: FONTS.bold, size: 10, keepWithNext: true });
  if (filters.length === 0) flow.text('None: every risk of every target the account has.', { size: 11 });
  for (const line of filters) flow.text(`• ${line}`, { size: 11, indent: 6 });
  if (report.truncated) {
    flow.space(12);
    flow.text(`${snapshot.matchedRisks} risks matched the filters; this report holds the ${snapshot.risks.length} most severe. Narrow the filters to see the rest.`, {
      font: FONTS.bold,
      size: 11,
      color: LEVEL_COLORS.MEDIUM,
    });
  }
}

function heading(flow: PdfFlow, text: string, anchor: string | undefined, options: { size?: number; breakBefore?: boolean } = {}): void {
  const size = options.size ?? 18;
  const line = flow.fit(text, CONTENT_WIDTH, FONTS.bold, size);
  flow.push({ height: size * 1.6, keepWithNext: true, breakBefore: options.breakBefore, anchor, draw: (y) => flow.drawLine(line, PAGE.left, y + size * 0.3, FONTS.bold, size, INK.text) });
}

function riskTitleBlock(flow: PdfFlow, risk: ReportRisk): void {
  const level = risk.definition.threat_level;
  const badgeWidth = flow.width(level, FONTS.bold, 8) + 8;
  const title = flow.fit(risk.definition.title, CONTENT_WIDTH - badgeWidth - 8, FONTS.bold, 11);
  flow.push({
    height: 20,
    keepWithNext: true,
    draw: (y) => {
      flow.badge(level, PAGE.left, y + 3, LEVEL_COLORS[level]!);
      flow.drawLine(title, PAGE.left + badgeWidth + 6, y + 3, FONTS.bold, 11, INK.text);
    },
  });
}

function riskBlocks(flow: PdfFlow, risk: ReportRisk): void {
  const definition = risk.definition;
  riskTitleBlock(flow, risk);
  if (flow.width(definition.title, FONTS.bold, 11) > CONTENT_WIDTH - 60) flow.text(definition.title, { size: 9, color: INK.muted, keepWithNext: true });
  const status = `${risk.status === 'OPEN' ? 'Open' : 'Closed'}${risk.isAccepted ? ', accepted' : ''}`;
  flow.text(`CVSS ${cvssText(risk)}  ·  ${status}  ·  ${definition.scan_type}  ·  first detected ${displayTime(risk.firstDetectedAt)}  ·  last detected ${displayTime(risk.lastDetectedAt)}`, {
    size: 8.5,
    color: INK.muted,
    keepWithNext: true,
  });
  const cves = cvesOf(risk);
  if (cves.length > 0) flow.text(cves.join(', '), { size: 8.5, color: INK.muted, keepWithNext: true });
  labelled(flow, 'Description', definition.description === '' ? 'None given by the scanner.' : definition.description);
  labelled(flow, 'Solution', definition.solution === '' ? 'None given by the scanner.' : definition.solution);
  const references = referencesOf(risk);
  if (references.length > 0) labelled(flow, 'References', references.join('\n'));
  const evidence = evidenceOf(risk);
  if (evidence.length > 0) {
    flow.text('Evidence', { font: FONTS.bold, size: 8.5, color: INK.muted, keepWithNext: true });
    for (const entry of evidence) flow.text(`${entry.label}: ${entry.value}`, { font: FONTS.mono, size: 8 });
  }
  flow.space(10);
}

function labelled(flow: PdfFlow, label: string, text: string): void {
  flow.text(label, { font: FONTS.bold, size: 8.5, color: INK.muted, keepWithNext: true });
  flow.text(text, { size: 9.5 });
  flow.space(3);
}

function sectionBlocks(flow: PdfFlow, section: ReportSection, anchor: string): void {
  const { target } = section;
  heading(flow, targetName(target), anchor, { size: 14 });
  const counts = THREAT_LEVELS.filter((level) => section.byThreatLevel[level] > 0).map((level) => `${section.byThreatLevel[level]} ${level}`);
  const address = target.label === '' ? '' : `${target.target}  ·  `;
  const tags = target.tags.length === 0 ? '' : `  ·  tags ${target.tags.join(', ')}`;
  flow.text(`${address}Health ${target.healthScore.score}, grade ${target.healthScore.grade}${tags}  ·  ${counts.join(', ')}`, { size: 9, color: INK.muted, keepWithNext: true });
  flow.rule();
  for (const risk of section.risks) riskBlocks(flow, risk);
}

/** Lays out the whole report; the contents' page numbers are read from the pagination when they are drawn. */
function layOut(flow: PdfFlow, report: ReportModel, pagination: () => Pagination): ContentsEntry[] {
  const entries: ContentsEntry[] = [
    { anchor: 'summary', title: 'Summary', level: 0 },
    { anchor: 'health', title: 'Targets and health', level: 0 },
    { anchor: 'findings', title: 'Findings by target', level: 0 },
    ...report.sections.map((section, index) => ({ anchor: `target-${index}`, title: `${targetName(section.target)} (${section.risks.length})`, level: 1 as const })),
  ];
  coverBlocks(flow, report);
  heading(flow, 'Contents', undefined, { breakBefore: true });
  contentsBlocks(flow, entries, pagination);
  heading(flow, 'Summary', 'summary', { breakBefore: true });
  summaryTilesBlock(flow, report);
  chartsBlock(flow, report);
  heading(flow, 'Targets and health', 'health');
  healthTableBlocks(flow, report);
  heading(flow, 'Findings by target', 'findings', { breakBefore: true });
  if (report.sections.length === 0) flow.text('No risks match the filters.', { font: FONTS.italic, size: 11 });
  report.sections.forEach((section, index) => sectionBlocks(flow, section, `target-${index}`));
  return entries;
}

function pageFrame(flow: PdfFlow, report: ReportModel, number: number, total: number): void {
  const { snapshot } = report;
  const header = flow.fit(`Vigil vulnerability report  ·  ${snapshot.accountName}`, CONTENT_WIDTH - 140, FONTS.regular, 8);
  flow.drawLine(header, PAGE.left, 34, FONTS.regular, 8, INK.muted);
  const created = `Created ${displayTime(snapshot.createdAt)}`;
  flow.drawLine(created, PAGE.right - flow.width(created, FONTS.regular, 8), 34, FONTS.regular, 8, INK.muted);
  flow.doc.moveTo(PAGE.left, 48).lineTo(PAGE.right, 48).lineWidth(0.5).strokeColor(INK.rule).stroke();
  const footer = `Page ${number} of ${total}`;
  flow.drawLine(footer, (PAGE.width - flow.width(footer, FONTS.regular, 8)) / 2, PAGE.height - 40, FONTS.regular, 8, INK.muted);
}

async function drawPages(flow: PdfFlow, report: ReportModel, pagination: Pagination, entries: readonly ContentsEntry[]): Promise<void> {
  const { doc } = flow;
  const titles = new Map(entries.map((entry) => [entry.anchor, entry]));
  let findingsOutline: PDFKit.PDFOutline | undefined;
  for (const [index, page] of pagination.pages.entries()) {
    doc.addPage({ size: [PAGE.width, PAGE.height], margin: 0 });
    pageFrame(flow, report, index + 1, pagination.pages.length);
    for (const { block, y } of page) {
      if (block.anchor !== undefined) {
        doc.addNamedDestination(block.anchor, 'XYZ', 0, y, null);
        const entry = titles.get(block.anchor);
        if (entry !== undefined && entry.level === 0) {
          const item = doc.outline.addItem(entry.title);
          if (entry.anchor === 'findings') findingsOutline = item;
        } else if (entry !== undefined) (findingsOutline ?? doc.outline).addItem(entry.title);
      }
      block.draw?.(y);
    }
    // Yield between pages: a long report must not hold the event loop for seconds.
    await new Promise((resolve) => setImmediate(resolve));
  }
}

export async function renderPdfReport(report: ReportModel, out: Writable): Promise<void> {
  const { snapshot } = report;
  const doc = new PDFDocument({
    autoFirstPage: false,
    bufferPages: false,
    info: { Title: `Vigil vulnerability report: ${snapshot.accountName}`, Author: 'Vigil', Subject: `Report ${snapshot.id}`, CreationDate: new Date(snapshot.createdAt) },
    displayTitle: true,
  });
  const done = new Promise<void>((resolve, reject) => {
    out.once('finish', resolve);
    out.once('error', reject);
    doc.once('error', reject);
  });
  doc.pipe(out);
  const flow = new PdfFlow(doc);
  let pagination: Pagination | undefined;
  const entries = layOut(flow, report, () => pagination!);
  pagination = paginate(flow.blocks, { top: PAGE.top, bottom: PAGE.bottom });
  await drawPages(flow, report, pagination, entries);
  doc.end();
  await done;
}
