/**
 * Builds the PDF report's flow of blocks on pdfkit: wrapped text lines,
 * spaces, coloured badges. Everything a scanner or a user wrote is drawn as
 * text through pdfkit (never as PDF syntax), after pdfText() has reduced it
 * to what the standard fonts can show.
 */
import type PDFDocument from 'pdfkit';
import { quickenCurrentFont } from './font-metrics.js';
import { TextMeasure, wrapText, type Block } from './layout.js';

export const PAGE = { width: 595.28, height: 841.89, left: 50, right: 545.28, top: 70, bottom: 785 } as const;
export const CONTENT_WIDTH = PAGE.right - PAGE.left;
export const FONTS = { regular: 'Helvetica', bold: 'Helvetica-Bold', italic: 'Helvetica-Oblique', mono: 'Courier' } as const;
export const INK = { text: '#1f2933', muted: '#52606d', rule: '#d9e0e6' } as const;

/** The characters of Windows-1252 beyond Latin-1 that the standard PDF fonts carry. */
const WIN_ANSI_EXTRA = '€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ';
const NOT_DRAWABLE = new RegExp(`[^\\n\\x20-\\x7e\\xa0-\\xff${WIN_ANSI_EXTRA}]`, 'gu');

/**
 * Text the standard fonts can draw: tabs become spaces, control characters
 * go, and characters beyond Windows-1252 become '?' (pdfkit would otherwise
 * draw the wrong glyphs for them).
 */
export function pdfText(text: string): string {
  return text.normalize('NFC').replace(/\r\n?/g, '\n').replace(/\t/g, '    ').replace(NOT_DRAWABLE, '?');
}

export interface TextStyle {
  font?: string;
  size?: number;
  color?: string;
  indent?: number;
  /** Extra leading below each line, in points. */
  leading?: number;
  keepWithNext?: boolean;
}

/** pdfkit's own step that draws one line of text at a place, without measuring it again (see drawLine). */
type DrawFragment = (text: string, x: number, y: number, options: { textWidth: number; wordCount: number }) => void;

export class PdfFlow {
  readonly blocks: Block[] = [];
  private readonly measure: TextMeasure;
  private readonly drawFragment: DrawFragment | undefined;
  private readonly quicken: boolean;

  /**
   * `plainPdfkit`: draw each line through doc.text and keep pdfkit's own font
   * metric lookups (font-metrics.ts), as pdfkit's users do; only for the test
   * that proves the report's quicker paths give the same bytes.
   */
  constructor(
    readonly doc: PDFKit.PDFDocument,
    plainPdfkit = false,
  ) {
    const fragment = (doc as unknown as { _fragment?: DrawFragment })._fragment;
    this.drawFragment = plainPdfkit || typeof fragment !== 'function' ? undefined : fragment.bind(doc);
    this.quicken = !plainPdfkit;
    this.measure = new TextMeasure((text, font) => {
      this.forgetStyle();
      this.setFont(font);
      return doc.fontSize(1).widthOfString(text);
    });
  }

  private setFont(font: string): void {
    this.doc.font(font);
    if (this.quicken) quickenCurrentFont(this.doc);
  }

  width(text: string, font: string, size: number): number {
    return this.measure.width(text, font, size);
  }

  /** Cuts text to fit on one line of `width`, ending it with an ellipsis when cut. */
  fit(text: string, width: number, font: string, size: number): string {
    const clean = pdfText(text).replace(/\n/g, ' ');
    if (this.width(clean, font, size) <= width) return clean;
    let low = 0;
    let high = clean.length;
    while (low < high) {
      const middle = Math.ceil((low + high) / 2);
      if (this.width(`${clean.slice(0, middle)}…`, font, size) <= width) low = middle;
      else high = middle - 1;
    }
    return `${clean.slice(0, low)}…`;
  }

  private current = { font: '', size: 0, color: '' };

  /**
   * Draws one line of text at (x, y), y being the top of the line. Font,
   * size and colour are set only when they change, and the width known from
   * the layout is passed on (textWidth), so pdfkit does not measure the line
   * a second time before encoding it. The line goes straight to pdfkit's
   * _fragment, the step doc.text ends in for a line without wrapping:
   * doc.text would copy the options and then measure the whole line once
   * more only to move its cursor, which a report placing every line itself
   * never reads (a fifth of the PDF's time). test/unit/pdf-report.test.ts
   * checks that both give the same bytes, so a pdfkit upgrade that changes
   * _fragment fails there.
   */
  drawLine(text: string, x: number, y: number, font: string, size: number, color: string, width?: number): void {
    // Measured first: measuring an unknown word sets pdfkit's font and size itself.
    const textWidth = width ?? this.width(text, font, size);
    const current = this.current;
    if (current.font !== font) this.setFont((current.font = font));
    if (current.size !== size) this.doc.fontSize((current.size = size));
    if (current.color !== color) this.doc.fillColor((current.color = color));
    if (this.drawFragment !== undefined) this.drawFragment(text, x, y, { textWidth, wordCount: 0 });
    else this.doc.text(text, x, y, { lineBreak: false, textWidth, wordCount: 0 } as PDFKit.Mixins.TextOptions);
  }

  /** Fills a shape: fills change pdfkit's fill colour behind drawLine's back, so it forgets what it set. */
  fill(shape: (doc: PDFKit.PDFDocument) => PDFKit.PDFDocument, color: string): void {
    shape(this.doc).fill(color);
    this.forgetStyle();
  }

  /** Pages and measuring change the fill colour and font behind drawLine's back: forget what it set. */
  forgetStyle(): void {
    this.current = { font: '', size: 0, color: '' };
  }

  push(block: Block): void {
    this.blocks.push(block);
  }

  space(height: number, options: { keepWithNext?: boolean } = {}): void {
    this.blocks.push({ height, keepWithNext: options.keepWithNext });
  }

  /** Wrapped text: one block per line, so that paragraphs flow across pages. */
  text(text: string, style: TextStyle = {}): void {
    const font = style.font ?? FONTS.regular;
    const size = style.size ?? 10;
    const color = style.color ?? INK.text;
    const indent = style.indent ?? 0;
    const lineHeight = size * 1.25 + (style.leading ?? 0);
    const lines = wrapText(pdfText(text).trim(), CONTENT_WIDTH - indent, (part) => this.width(part, font, size));
    for (const [index, line] of lines.entries()) {
      // The first line stays with the second (no orphan); the last stays with what follows when asked.
      const keep = index === lines.length - 1 ? style.keepWithNext === true : index === 0;
      this.blocks.push({ height: lineHeight, keepWithNext: keep, line: { text: line.text, width: line.width, x: PAGE.left + indent, font, size, color } });
    }
  }

  /** A coloured label with white text (threat level, grade), drawn at (x, y); returns its width. */
  badge(text: string, x: number, y: number, color: string, size = 8): number {
    const width = this.width(text, FONTS.bold, size) + 8;
    this.fill((doc) => doc.roundedRect(x, y, width, size + 5, 2), color);
    this.drawLine(text, x + 4, y + 3, FONTS.bold, size, '#ffffff');
    return width;
  }

  rule(): void {
    this.blocks.push({
      height: 10,
      draw: (y) => {
        this.doc
          .moveTo(PAGE.left, y + 5)
          .lineTo(PAGE.right, y + 5)
          .lineWidth(0.5)
          .strokeColor(INK.rule)
          .stroke();
      },
    });
  }
}

export type { PDFDocument };
