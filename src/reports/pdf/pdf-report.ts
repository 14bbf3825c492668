/**
 * The PDF report on pdfkit: cover, contents with page numbers, summary with
 * vector charts, the targets' health, then one section per target with its
 * risks most severe first. Laid out in full first (layout.ts), then drawn
 * page by page into the output stream, yielding to the event loop between
 * pages so that other requests are served while a large report renders.
 */
import { once } from 'node:events';
import type { Writable } from 'node:stream';
// pdfkit is loaded with the first PDF, not with the service (about 12 MB of RSS a process that renders no PDF does not need).
import type PDFDocumentType from 'pdfkit';
import { THREAT_LEVELS } from '../../domain/risks/finding.js';
import { cvesOf, cvssText, describeFilters, evidenceOf, referencesOf, type ReportModel, type ReportSection } from '../../domain/reports/report-model.js';
import type { ReportRisk } from '../../domain/reports/snapshot.js';
import { LEVEL_COLORS } from '../charts.js';
import { displayTime, targetName } from '../text.js';
import { PageCursor, wrapText, type Block } from './layout.js';
import { CONTENT_WIDTH, FONTS, INK, PAGE, PdfFlow, pdfText } from './pdf-flow.js';
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

/** The threat level badge, then the title wrapped beside it. */
function riskTitleBlocks(flow: PdfFlow, risk: ReportRisk): void {
  const level = risk.definition.threat_level;
  const indent = flow.width(level, FONTS.bold, 8) + 14;
  const lines = wrapText(pdfText(risk.definition.title), CONTENT_WIDTH - indent, (part) => flow.width(part, FONTS.bold, 11));
  lines.forEach((line, index) => {
    flow.push({
      height: index === 0 ? 18 : 14,
      keepWithNext: true,
      line: { ...line, x: PAGE.left + indent, font: FONTS.bold, size: 11, color: INK.text },
      draw: index === 0 ? (y) => flow.badge(level, PAGE.left, y, LEVEL_COLORS[level]!) : undefined,
    });
  });
}

function riskBlocks(flow: PdfFlow, risk: ReportRisk): void {
  const definition = risk.definition;
  riskTitleBlocks(flow, risk);
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
  flow.space(9);
}

function labelled(flow: PdfFlow, label: string, text: string): void {
  flow.text(label, { font: FONTS.bold, size: 8.5, color: INK.muted, keepWithNext: true });
  flow.text(text, { size: 9.5 });
}

function sectionHeading(flow: PdfFlow, section: ReportSection, anchor: string): void {
  const { target } = section;
  heading(flow, targetName(target), anchor, { size: 14 });
  const counts = THREAT_LEVELS.filter((level) => section.byThreatLevel[level] > 0).map((level) => `${section.byThreatLevel[level]} ${level}`);
  const address = target.label === '' ? '' : `${target.target}  ·  `;
  const tags = target.tags.length === 0 ? '' : `  ·  tags ${target.tags.join(', ')}`;
  flow.text(`${address}Health ${target.healthScore.score}, grade ${target.healthScore.grade}${tags}  ·  ${counts.join(', ')}`, { size: 9, color: INK.muted, keepWithNext: true });
  flow.rule();
}

function contentsOf(report: ReportModel): ContentsEntry[] {
  return [
    { anchor: 'summary', title: 'Summary', level: 0 },
    { anchor: 'health', title: 'Targets and health', level: 0 },
    { anchor: 'findings', title: 'Findings by target', level: 0 },
    ...report.sections.map((section, index) => ({ anchor: `target-${index}`, title: `${targetName(section.target)} (${section.risks.length})`, level: 1 as const })),
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
  contentsBlocks(flow, entries, anchorPages);
  heading(flow, 'Summary', 'summary', { breakBefore: true });
  summaryTilesBlock(flow, report);
  chartsBlock(flow, report);
  heading(flow, 'Targets and health', 'health');
  healthTableBlocks(flow, report);
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

/** Hands the blocks laid out so far to the page cursor and forgets them. */
function place(flow: PdfFlow, cursor: PageCursor): void {
  cursor.add(flow.blocks);
  flow.blocks.length = 0;
}

/** The first pass: where each anchor lands and how many pages there are, without drawing; yields to the event loop now and then. */
async function countPages(flow: PdfFlow, report: ReportModel, entries: readonly ContentsEntry[]): Promise<{ anchorPages: Map<string, number>; total: number }> {
  const anchorPages = new Map<string, number>();
  const cursor = new PageCursor({ top: PAGE.top, bottom: PAGE.bottom }, (block) => {
    if (block.anchor !== undefined) anchorPages.set(block.anchor, cursor.pages);
  });
  let pieces = 0;
  for (const _ of layOut(flow, report, entries, () => anchorPages)) {
    place(flow, cursor);
    if (++pieces % 200 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  cursor.finish();
  return { anchorPages, total: cursor.pages };
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

/**
 * pdfkit pushes every line of PDF syntax as its own small buffer, whatever
 * the backpressure. Piped straight into a file, those buffers wait in
 * queues across event-loop turns, outlive the young generation, and pile up
 * as old garbage (hundreds of MB for a large report). Collected here and
 * written in 256 KiB pieces, they die young.
 */
class CoalescedOutput {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(private readonly out: Writable) {}

  take(chunk: Buffer): void {
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    if (this.pendingBytes >= 16 * 1024) this.flush();
  }

  flush(): void {
    if (this.pendingBytes === 0) return;
    this.out.write(Buffer.concat(this.pending, this.pendingBytes));
    this.pending = [];
    this.pendingBytes = 0;
  }

  /** Between pages: yields to the event loop (a long report must not hold it for seconds) and waits while the file is behind. */
  async catchUp(): Promise<void> {
    if (this.out.writableNeedDrain) await once(this.out, 'drain');
    else await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * A page's content stream, gathered in one reused buffer. pdfkit turns every
 * operator it adds to a page (each line of text is five or six) into its own
 * small typed array and keeps them until the page ends. Those arrays outlive
 * young-generation collections, V8's allocation-site pretenuring then
 * allocates them in the old generation, and the old generation fills with
 * dead arrays between full collections: 375 MB over a 10,000-risk report,
 * which peaked 330-354 MB over the process's baseline (about 110 MB with
 * --no-allocation-site-pretenuring; bench/reports.ts). Here the operators
 * are copied into one buffer, and the page gets them as a single chunk just
 * before it ends (pdfkit compresses it then, as before), so the PDF is byte
 * for byte what pdfkit would write (test/unit/pdf-report.test.ts).
 */
class PageContent {
  private buffer = Buffer.allocUnsafe(64 * 1024);
  private length = 0;

  constructor(private readonly doc: PDFKit.PDFDocument) {
    doc.addContent = (data: unknown) => {
      this.append(data);
      return doc;
    };
  }

  private append(data: unknown): void {
    // As pdfkit's PDFReference.write: bytes as they are; anything else as text with a line break after it.
    const bytes = data instanceof Uint8Array ? data : undefined;
    const text = bytes === undefined ? `${String(data)}\n` : '';
    const needed = bytes === undefined ? text.length : bytes.length;
    if (this.length + needed > this.buffer.length) {
      const larger = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.length + needed));
      this.buffer.copy(larger, 0, 0, this.length);
      this.buffer = larger;
    }
    if (bytes !== undefined) {
      this.buffer.set(bytes, this.length);
      this.length += bytes.length;
    } else {
      // latin1 keeps each character's low byte, as pdfkit's own conversion does.
      this.length += this.buffer.write(text, this.length, 'latin1');
    }
  }

  /**
   * Hands the current page what was drawn on it; call right before the page
   * ends (doc.addPage, doc.end). The page gets a view of the reused buffer,
   * which pdfkit copies and compresses as the page ends, before anything is
   * drawn again.
   */
  flush(): void {
    if (this.length === 0) return;
    (this.doc as unknown as { page: { write(chunk: Uint8Array): void } }).page.write(this.buffer.subarray(0, this.length));
    this.length = 0;
  }
}

/** Draws one placed block: its anchor (a named destination and an outline entry), its line of text, its drawing. */
function drawBlock(flow: PdfFlow, block: Block, y: number, outline: Outline): void {
  if (block.anchor !== undefined) {
    flow.doc.addNamedDestination(block.anchor, 'XYZ', 0, y, null);
    outline.add(block.anchor);
  }
  if (block.line !== undefined) flow.drawLine(block.line.text, block.line.x, y, block.line.font, block.line.size, block.line.color, block.line.width);
  if (block.draw !== undefined) {
    block.draw(y);
    flow.forgetStyle();
  }
}

/** The PDF's bookmarks: the three parts, and each target under "Findings by target". */
class Outline {
  private readonly titles: Map<string, ContentsEntry>;
  private findings: PDFKit.PDFOutline | undefined;

  constructor(
    private readonly doc: PDFKit.PDFDocument,
    entries: readonly ContentsEntry[],
  ) {
    this.titles = new Map(entries.map((entry) => [entry.anchor, entry]));
  }

  add(anchor: string): void {
    const entry = this.titles.get(anchor);
    if (entry === undefined) return;
    if (entry.level === 1) {
      (this.findings ?? this.doc.outline).addItem(entry.title);
      return;
    }
    const item = this.doc.outline.addItem(entry.title);
    if (entry.anchor === 'findings') this.findings = item;
  }
}

/** The second pass: the same flow, drawn page by page, yielding to the event loop whenever a page is done. */
async function drawPages(flow: PdfFlow, report: ReportModel, entries: readonly ContentsEntry[], counted: Awaited<ReturnType<typeof countPages>>, output: CoalescedOutput, gatherPageContent: boolean): Promise<void> {
  const content = gatherPageContent ? new PageContent(flow.doc) : undefined;
  const outline = new Outline(flow.doc, entries);
  const cursor = new PageCursor({ top: PAGE.top, bottom: PAGE.bottom }, (block, y, newPage) => {
    if (newPage) {
      content?.flush();
      flow.doc.addPage({ size: [PAGE.width, PAGE.height], margin: 0 });
      flow.forgetStyle();
      pageFrame(flow, report, cursor.pages, counted.total);
    }
    drawBlock(flow, block, y, outline);
  });
  let pagesDone = 0;
  for (const _ of layOut(flow, report, entries, () => counted.anchorPages)) {
    place(flow, cursor);
    if (cursor.pages > pagesDone) {
      pagesDone = cursor.pages;
      await output.catchUp();
    }
  }
  cursor.finish();
  content?.flush();
}

export interface PdfRenderOptions {
  /**
   * true: pdfkit as it comes, each page's operators kept by pdfkit, each
   * line drawn through doc.text, pdfkit's own font metric lookups. Only for
   * the test that proves the report's own paths (PageContent,
   * PdfFlow.drawLine, font-metrics.ts) give the same bytes.
   */
  plainPdfkit?: boolean;
}

export async function renderPdfReport(report: ReportModel, out: Writable, options: PdfRenderOptions = {}): Promise<void> {
  const { snapshot } = report;
  const { default: PDFDocument } = (await import('pdfkit')) as { default: typeof PDFDocumentType };
  const doc = new PDFDocument({
    autoFirstPage: false,
    bufferPages: false,
    info: { Title: `Vigil vulnerability report: ${snapshot.accountName}`, Author: 'Vigil', Subject: `Report ${snapshot.id}`, CreationDate: new Date(snapshot.createdAt) },
    displayTitle: true,
  });
  const output = new CoalescedOutput(out);
  const done = new Promise<void>((resolve, reject) => {
    doc.on('data', (chunk: Buffer) => output.take(chunk));
    doc.once('end', () => {
      output.flush();
      out.end();
    });
    out.once('finish', resolve);
    out.once('error', reject);
    doc.once('error', reject);
  });
  const flow = new PdfFlow(doc, options.plainPdfkit === true);
  const entries = contentsOf(report);
  const counted = await countPages(flow, report, entries);
  await drawPages(flow, report, entries, counted, output, options.plainPdfkit !== true);
  doc.end();
  await done;
}
