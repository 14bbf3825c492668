/**
 * The PDF of one SUCCEEDED scan (issue 26), in the report's look and on its
 * renderer (pdf-document.ts, pdf-blocks.ts): a cover with the scan's facts,
 * contents, the summary of what it found, its targets, then its new open,
 * still open and closed risks, each list by target, the most severe first.
 */
import type { Writable } from 'node:stream';
import { truncationNote, type ScanPdfModel, type ScanPdfPart } from '../../domain/reports/scan-pdf-model.js';
import { LEVEL_COLORS } from '../charts.js';
import { displayTime, targetName } from '../text.js';
import { heading, riskBlocks, sectionHeading } from './pdf-blocks.js';
import { renderPdfDocument, type PdfDocumentPlan, type PdfRenderOptions } from './pdf-document.js';
import { FONTS, INK, PdfFlow } from './pdf-flow.js';
import { chartsBlock, contentsBlocks, healthTableBlocks, summaryTilesBlock, type ContentsEntry } from './pdf-summary.js';

function titleOf(model: ScanPdfModel): string {
  const { scan } = model.snapshot;
  const first = model.targets[0];
  const scope = model.targets.length === 1 && first !== undefined ? targetName(first) : `${model.targets.length} targets`;
  return `${scan.type} scan of ${scope}`;
}

function truncationBlock(flow: PdfFlow, model: ScanPdfModel): void {
  if (!model.truncated) return;
  flow.space(12);
  flow.text(truncationNote(model), { font: FONTS.bold, size: 11, color: LEVEL_COLORS.MEDIUM });
}

/** The cover; yields after each of its targets' lines (a scan may cover thousands). */
function* coverBlocks(flow: PdfFlow, model: ScanPdfModel): Generator<void> {
  const { snapshot } = model;
  const { scan } = snapshot;
  flow.space(120);
  flow.text('VIGIL SCAN REPORT', { font: FONTS.bold, size: 11, color: INK.muted, leading: 6 });
  flow.text(titleOf(model), { font: FONTS.bold, size: 26, leading: 10 });
  flow.rule();
  const counts = model.parts.map((part) => `${part.total} ${part.list.field}`).join(', ');
  const facts: Array<[string, string]> = [
    ['Account', snapshot.accountName],
    ['Scan', `${scan.name} (id ${scan.id})`],
    ['Scan type', scan.type],
    ['Started', displayTime(scan.createdAt)],
    ['Finished', scan.finishedAt === null ? 'not recorded' : displayTime(scan.finishedAt)],
    ['Risks', counts],
  ];
  for (const [label, value] of facts) {
    flow.text(label, { font: FONTS.bold, size: 10, keepWithNext: true });
    flow.text(value, { size: 11, leading: 6 });
  }
  flow.text('Targets', { font: FONTS.bold, size: 10, keepWithNext: true });
  for (const target of model.targets) {
    flow.text(`• ${target.label === '' ? target.target : `${target.label} (${target.target})`}`, { size: 11, indent: 6 });
    yield;
  }
  for (const skipped of snapshot.skipped) {
    flow.text(`• ${skipped.target}: skipped, ${skipped.reason}`, { size: 11, indent: 6, color: INK.muted });
    yield;
  }
  truncationBlock(flow, model);
}

function partAnchor(part: ScanPdfPart, index: number): string {
  return `${part.list.anchor}-target-${index}`;
}

function contentsOf(model: ScanPdfModel): ContentsEntry[] {
  return [
    { anchor: 'summary', title: 'Summary', level: 0 },
    { anchor: 'targets', title: 'Targets', level: 0 },
    ...model.parts.flatMap((part) => [
      { anchor: part.list.anchor, title: `${part.list.title} (${part.total})`, level: 0 as const },
      ...part.sections.map((section, index) => ({
        anchor: partAnchor(part, index),
        title: `${targetName(section.target)} (${section.risks.length})`,
        level: 1 as const,
      })),
    ]),
  ];
}

function* partBlocks(flow: PdfFlow, part: ScanPdfPart): Generator<void> {
  heading(flow, `${part.list.title} (${part.list.field})`, part.list.anchor, { breakBefore: true });
  if (part.total === 0) flow.text(part.list.none, { font: FONTS.italic, size: 11 });
  if (part.shown < part.total) {
    flow.text(`${part.total} risks are in this list; this PDF holds the ${part.shown} most severe (see the note on the cover for the rest).`, {
      font: FONTS.bold,
      size: 10,
      color: LEVEL_COLORS.MEDIUM,
    });
    flow.space(6);
  }
  yield;
  for (const [index, section] of part.sections.entries()) {
    sectionHeading(flow, section, partAnchor(part, index));
    for (const risk of section.risks) {
      riskBlocks(flow, risk);
      yield;
    }
  }
}

function* layOut(flow: PdfFlow, model: ScanPdfModel, entries: readonly ContentsEntry[], anchorPages: () => ReadonlyMap<string, number>): Generator<void> {
  yield* coverBlocks(flow, model);
  heading(flow, 'Contents', undefined, { breakBefore: true });
  yield* contentsBlocks(flow, entries, anchorPages);
  heading(flow, 'Summary', 'summary', { breakBefore: true });
  flow.text('The risks this PDF holds of those the scan found: its new open and still open risks.', { size: 10, color: INK.muted });
  summaryTilesBlock(flow, model);
  chartsBlock(flow, model);
  heading(flow, 'Targets', 'targets');
  yield* healthTableBlocks(flow, model);
  yield;
  for (const part of model.parts) yield* partBlocks(flow, part);
}

/** What renderPdfDocument draws for the scan's PDF; its layOut yields after every row, line and risk. */
export function scanPdfPlan(model: ScanPdfModel): PdfDocumentPlan {
  const { snapshot } = model;
  const entries = contentsOf(model);
  return {
    info: { Title: `Vigil scan report: ${titleOf(model)}`, Subject: `Scan ${snapshot.scan.id}`, CreationDate: new Date(snapshot.createdAt) },
    header: `Vigil scan report  ·  ${snapshot.accountName}  ·  ${titleOf(model)}`,
    createdAt: snapshot.createdAt,
    entries,
    layOut: (flow, anchorPages) => layOut(flow, model, entries, anchorPages),
  };
}

export async function renderScanPdf(model: ScanPdfModel, out: Writable, options: PdfRenderOptions = {}): Promise<void> {
  await renderPdfDocument(scanPdfPlan(model), out, options);
}
