/**
 * The PDF report on pdfkit: cover, contents with page numbers, summary with
 * vector charts, the targets' health, then one section per target with its
 * risks most severe first. Rendered by pdf-document.ts, page by page.
 */
import type { Writable } from 'node:stream';
import { describeFilters, truncationNote, type ReportModel } from '../../domain/reports/report-model.js';
import { LEVEL_COLORS } from '../charts.js';
import { displayTime, targetName } from '../text.js';
import { heading, riskBlocks, sectionHeading } from './pdf-blocks.js';
import { renderPdfDocument, type PdfDocumentPlan, type PdfRenderOptions } from './pdf-document.js';
import { FONTS, INK, PdfFlow } from './pdf-flow.js';
import { chartsBlock, contentsBlocks, healthTableBlocks, summaryTilesBlock, type ContentsEntry } from './pdf-summary.js';

export type { PdfRenderOptions } from './pdf-document.js';

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
    flow.text(truncationNote(snapshot), {
      font: FONTS.bold,
      size: 11,
      color: LEVEL_COLORS.MEDIUM,
    });
  }
}

function contentsOf(report: ReportModel): ContentsEntry[] {
  return [
    { anchor: 'summary', title: 'Summary', level: 0 },
    { anchor: 'health', title: 'Targets and health', level: 0 },
    { anchor: 'findings', title: 'Findings by target', level: 0 },
    ...report.sections.map((section, index) => ({
      anchor: `target-${index}`,
      title: `${targetName(section.target)} (${section.risks.length})`,
      level: 1 as const,
    })),
  ];
}

/**
 * Lays out the report into flow.blocks a piece at a time (front matter,
 * each section's heading, each risk), yielding after each piece so that the
 * caller places and discards the blocks: only one risk's blocks are held.
 */
function* layOut(flow: PdfFlow, report: ReportModel, entries: readonly ContentsEntry[], anchorPages: () => ReadonlyMap<string, number>): Generator<void> {
  coverBlocks(flow, report);
  heading(flow, 'Contents', undefined, { breakBefore: true });
  yield* contentsBlocks(flow, entries, anchorPages);
  heading(flow, 'Summary', 'summary', { breakBefore: true });
  summaryTilesBlock(flow, report);
  chartsBlock(flow, report);
  heading(flow, 'Targets and health', 'health');
  yield* healthTableBlocks(flow, report);
  heading(flow, 'Findings by target', 'findings', { breakBefore: true });
  if (report.sections.length === 0) flow.text('No risks match the filters.', { font: FONTS.italic, size: 11 });
  yield;
  for (const [index, section] of report.sections.entries()) {
    sectionHeading(flow, section, `target-${index}`);
    for (const risk of section.risks) {
      riskBlocks(flow, risk);
      yield;
    }
  }
}

/** What renderPdfDocument draws for the report; its layOut yields after every row, line and risk. */
export function reportPdfPlan(report: ReportModel): PdfDocumentPlan {
  const { snapshot } = report;
  const entries = contentsOf(report);
  return {
    info: { Title: `Vigil vulnerability report: ${snapshot.accountName}`, Subject: `Report ${snapshot.id}`, CreationDate: new Date(snapshot.createdAt) },
    header: `Vigil vulnerability report  ·  ${snapshot.accountName}`,
    createdAt: snapshot.createdAt,
    entries,
    layOut: (flow, anchorPages) => layOut(flow, report, entries, anchorPages),
  };
}

export async function renderPdfReport(report: ReportModel, out: Writable, options: PdfRenderOptions = {}): Promise<void> {
  await renderPdfDocument(reportPdfPlan(report), out, options);
}
