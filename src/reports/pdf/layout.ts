/**
 * The PDF report's own layout: text is wrapped and cut into pages by this
 * code, so the pages are known before anything is drawn. A first pass over
 * the flow counts the pages and finds where each section starts, which
 * gives the table of contents its page numbers and every footer "page N of
 * M"; a second pass draws. Neither keeps the document in memory (pdfkit's
 * bufferPages would hold every page until the end): blocks are made a risk
 * at a time and the PDF streams out page by page.
 */

/** One line of text, kept as data: a report has hundreds of thousands of them. */
export interface TextLine {
  text: string;
  /** Its width as laid out, so that drawing does not measure it again. */
  width: number;
  x: number;
  font: string;
  size: number;
  color: string;
}

/** Something placed in the flow: its height, and a line of text or a drawing at a y. */
export interface Block {
  height: number;
  line?: TextLine;
  draw?: (y: number) => void;
  /** Kept on the same page as the block after it (headings, a risk's title). */
  keepWithNext?: boolean;
  /** Starts a new page unless the page is still empty. */
  breakBefore?: boolean;
  /** A place the contents and the outline point to. */
  anchor?: string;
}

export interface Area {
  top: number;
  bottom: number;
}

/**
 * Cuts the flow into pages as blocks arrive: a block chained with
 * keepWithNext waits for the rest of its chain, and the chain moves to a
 * new page when it does not fit on the current one. The same blocks always
 * give the same pages, which is what lets a first pass count the pages and
 * find the anchors, and a second pass draw them.
 */
export class PageCursor {
  /** Pages started so far (the current one is number `pages`). */
  pages = 0;
  private y: number;
  private onPage = 0;
  private readonly waiting: Block[] = [];

  constructor(
    private readonly area: Area,
    private readonly emit: (block: Block, y: number, newPage: boolean) => void,
  ) {
    this.y = area.top;
  }

  /** Takes blocks in flow order; places every complete keepWithNext chain. */
  add(blocks: readonly Block[]): void {
    for (const block of blocks) {
      this.waiting.push(block);
      if (!block.keepWithNext) this.placeWaiting();
    }
  }

  /** Places what is still waiting (the end of the flow). */
  finish(): void {
    this.placeWaiting();
  }

  private placeWaiting(): void {
    const group = this.waiting.splice(0);
    if (group.length === 0) return;
    const height = group.reduce((sum, block) => sum + block.height, 0);
    if (this.onPage > 0 && (group[0]!.breakBefore || this.y + height > this.area.bottom)) this.newPage();
    for (const block of group) {
      if (this.onPage > 0 && this.y + block.height > this.area.bottom) this.newPage();
      const starting = this.onPage === 0;
      if (starting && this.pages === 0) this.pages = 1;
      this.emit(block, this.y, starting);
      this.onPage++;
      this.y += block.height;
    }
  }

  private newPage(): void {
    this.pages++;
    this.onPage = 0;
    this.y = this.area.top;
  }
}

/** Widths of words at size 1 per font, cached: scanner text repeats the same words thousands of times. */
export class TextMeasure {
  private readonly cache = new Map<string, Map<string, number>>();
  private entries = 0;

  constructor(private readonly unitWidth: (text: string, font: string) => number) {}

  width(text: string, font: string, size: number): number {
    let widths = this.cache.get(font);
    if (widths === undefined) this.cache.set(font, (widths = new Map()));
    let unit = widths.get(text);
    if (unit === undefined) {
      unit = this.unitWidth(text, font);
      // Bounded: a report of unique words must not grow the cache without end.
      if (++this.entries > 20_000) {
        this.cache.clear();
        this.entries = 0;
      }
      widths.set(text, unit);
    }
    return unit * size;
  }
}

/** Cuts a word wider than the line into pieces that fit (URLs, hashes, base64 evidence). */
function splitLongWord(word: string, width: number, measure: (text: string) => number): string[] {
  const pieces: string[] = [];
  let piece = '';
  for (const character of word) {
    if (piece !== '' && measure(piece + character) > width) {
      pieces.push(piece);
      piece = '';
    }
    piece += character;
  }
  if (piece !== '') pieces.push(piece);
  return pieces;
}

/** Greedy word wrap of one paragraph into lines no wider than `width`. */
function wrapParagraph(paragraph: string, width: number, measure: (text: string) => number, space: number): WrappedLine[] {
  const lines: WrappedLine[] = [];
  // Words are collected and joined once per line: concatenating word by word
  // leaves a rope of small strings per line, which costs far more memory.
  let words: string[] = [];
  let lineWidth = 0;
  for (const word of paragraph.split(' ')) {
    if (word === '') continue;
    const wordWidth = measure(word);
    const pieces = wordWidth > width ? splitLongWord(word, width, measure) : [word];
    for (const piece of pieces) {
      const pieceWidth = pieces.length === 1 ? wordWidth : measure(piece);
      if (words.length > 0 && lineWidth + space + pieceWidth > width) {
        lines.push({ text: words.join(' '), width: lineWidth });
        words = [];
        lineWidth = 0;
      }
      lineWidth += (words.length === 0 ? 0 : space) + pieceWidth;
      words.push(piece);
    }
  }
  lines.push({ text: words.join(' '), width: lineWidth });
  return lines;
}

export interface WrappedLine {
  text: string;
  width: number;
}

/** Wraps text (paragraphs split at line breaks) into lines; an empty text gives no lines. */
export function wrapText(text: string, width: number, measure: (text: string) => number): WrappedLine[] {
  if (text.trim() === '') return [];
  const space = measure(' ');
  return text.split('\n').flatMap((paragraph) => wrapParagraph(paragraph, width, measure, space));
}
