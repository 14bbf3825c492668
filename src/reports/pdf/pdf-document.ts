/**
 * Renders a Vigil PDF on pdfkit from a plan (the report, pdf-report.ts; a
 * scan's PDF, scan-pdf.ts): laid out in full first (layout.ts), then drawn
 * page by page into the output stream, yielding to the event loop between
 * pages so that other requests are served while a large PDF renders.
 */
import { once } from 'node:events';
import type { Writable } from 'node:stream';
// pdfkit is imported on first use (loadPdfkit), not with every process that loads this module.
import type PDFDocumentType from 'pdfkit';
import { yieldToEventLoop } from '../../app/event-loop.js';
import { displayTime } from '../text.js';
import { PageCursor, type Block } from './layout.js';
import { CONTENT_WIDTH, FONTS, INK, PAGE, PdfFlow } from './pdf-flow.js';
import type { ContentsEntry } from './pdf-summary.js';

/** What one PDF holds: its metadata, its page header, its contents, and how its blocks are laid out. */
export interface PdfDocumentPlan {
  info: { Title: string; Subject: string; CreationDate: Date };
  /** The text at the top left of every page. */
  header: string;
  /** ISO time at the top right of every page. */
  createdAt: string;
  /** The contents and the outline: level 1 entries come under the level 0 entry before them. */
  entries: readonly ContentsEntry[];
  /**
   * Lays the document out into flow.blocks a piece at a time, yielding after
   * each piece (a risk) so that the caller places and discards the blocks;
   * `anchorPages` gives the contents their page numbers once counted.
   */
  layOut(flow: PdfFlow, anchorPages: () => ReadonlyMap<string, number>): Generator<void>;
}

/** Hands the blocks laid out so far to the page cursor and forgets them. */
function place(flow: PdfFlow, cursor: PageCursor): void {
  cursor.add(flow.blocks);
  flow.blocks.length = 0;
}

/**
 * How long either pass works before it yields to the event loop. It
 * yielded every 10 risks laid out and every page drawn: 30-55 ms a step with
 * long scanner text or a full page of a scan PDF, and 109 ms with another
 * step beside it (bench/scale.ts).
 */
const STEP_MS = 12;

/** A yield to the event loop once STEP_MS have passed since the last. */
class Steps {
  private since = performance.now();

  due(): boolean {
    return performance.now() - this.since >= STEP_MS;
  }

  async yield(): Promise<void> {
    await yieldToEventLoop();
    this.since = performance.now();
  }
}

/** The first pass: where each anchor lands and how many pages there are, without drawing; yields to the event loop now and then. */
async function countPages(flow: PdfFlow, plan: PdfDocumentPlan): Promise<{ anchorPages: Map<string, number>; total: number }> {
  const anchorPages = new Map<string, number>();
  const cursor = new PageCursor({ top: PAGE.top, bottom: PAGE.bottom }, (block) => {
    if (block.anchor !== undefined) anchorPages.set(block.anchor, cursor.pages);
  });
  const steps = new Steps();
  for (const _ of plan.layOut(flow, () => anchorPages)) {
    place(flow, cursor);
    if (steps.due()) await steps.yield();
  }
  cursor.finish();
  return { anchorPages, total: cursor.pages };
}

function pageFrame(flow: PdfFlow, plan: PdfDocumentPlan, number: number, total: number): void {
  const header = flow.fit(plan.header, CONTENT_WIDTH - 140, FONTS.regular, 8);
  flow.drawLine(header, PAGE.left, 34, FONTS.regular, 8, INK.muted);
  const created = `Created ${displayTime(plan.createdAt)}`;
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

  /** Between pages: waits while the file is behind (the caller then yields to the event loop). */
  async catchUp(): Promise<void> {
    if (this.out.writableNeedDrain) await once(this.out, 'drain');
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

/** The PDF's bookmarks: each level-0 entry, and the level-1 entries under the level-0 entry before them. */
class Outline {
  private readonly titles: Map<string, ContentsEntry>;
  private parent: PDFKit.PDFOutline | undefined;

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
      (this.parent ?? this.doc.outline).addItem(entry.title);
      return;
    }
    this.parent = this.doc.outline.addItem(entry.title);
  }
}

/** The second pass: the same flow, drawn page by page, yielding to the event loop whenever a page is done. */
async function drawPages(
  flow: PdfFlow,
  plan: PdfDocumentPlan,
  counted: Awaited<ReturnType<typeof countPages>>,
  output: CoalescedOutput,
  gatherPageContent: boolean,
): Promise<void> {
  const content = gatherPageContent ? new PageContent(flow.doc) : undefined;
  const outline = new Outline(flow.doc, plan.entries);
  const cursor = new PageCursor({ top: PAGE.top, bottom: PAGE.bottom }, (block, y, newPage) => {
    if (newPage) {
      content?.flush();
      flow.doc.addPage({ size: [PAGE.width, PAGE.height], margin: 0 });
      flow.forgetStyle();
      pageFrame(flow, plan, cursor.pages, counted.total);
    }
    drawBlock(flow, block, y, outline);
  });
  let pagesDone = 0;
  const steps = new Steps();
  for (const _ of plan.layOut(flow, () => counted.anchorPages)) {
    place(flow, cursor);
    if (cursor.pages > pagesDone) {
      // A page done: the file catches up, and other work has a turn.
      pagesDone = cursor.pages;
      await output.catchUp();
      await steps.yield();
    } else if (steps.due()) await steps.yield();
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

let pdfkit: Promise<typeof PDFDocumentType> | undefined;

/**
 * pdfkit, imported on first use (the CLI's other commands never load it:
 * about 12 MB of RSS). The service loads it before it takes requests
 * (composeHttpApp): evaluating pdfkit and its fonts' modules held the event
 * loop 80 ms in the turn of the first PDF (bench/scale.ts).
 */
export function loadPdfkit(): Promise<typeof PDFDocumentType> {
  return (pdfkit ??= import('pdfkit').then((module) => (module as { default: typeof PDFDocumentType }).default));
}

export async function renderPdfDocument(plan: PdfDocumentPlan, out: Writable, options: PdfRenderOptions = {}): Promise<void> {
  const PDFDocument = await loadPdfkit();
  const doc = new PDFDocument({
    autoFirstPage: false,
    bufferPages: false,
    info: { Title: plan.info.Title, Author: 'Vigil', Subject: plan.info.Subject, CreationDate: plan.info.CreationDate },
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
  const counted = await countPages(flow, plan);
  await drawPages(flow, plan, counted, output, options.plainPdfkit !== true);
  doc.end();
  await done;
}
