/**
 * The PDF report's own layout: text is wrapped and the pages are cut before
 * anything is drawn. Knowing every page up front gives the table of contents
 * its page numbers and every footer "page N of M" without keeping a
 * thousand-page document in memory (pdfkit's bufferPages holds every page's
 * content until the end); the document then streams out page by page.
 */

/** Something placed in the flow: its height, and how to draw it at a y. */
export interface Block {
  height: number;
  draw?: (y: number) => void;
  /** Kept on the same page as the block after it (headings, a risk's title). */
  keepWithNext?: boolean;
  /** Starts a new page unless the page is still empty. */
  breakBefore?: boolean;
  /** A place the contents and the outline point to. */
  anchor?: string;
}

export interface PlacedBlock {
  block: Block;
  y: number;
}

export interface Pagination {
  pages: PlacedBlock[][];
  /** Anchor id to page number (1-based). */
  anchorPages: Map<string, number>;
}

export interface Area {
  top: number;
  bottom: number;
}

/** The height of a run of blocks that must share a page: a keepWithNext chain and the block that ends it. */
function groupHeight(blocks: readonly Block[], start: number): number {
  let height = 0;
  for (let index = start; index < blocks.length; index++) {
    height += blocks[index]!.height;
    if (!blocks[index]!.keepWithNext) break;
  }
  return height;
}

export function paginate(blocks: readonly Block[], area: Area): Pagination {
  const pages: PlacedBlock[][] = [[]];
  const anchorPages = new Map<string, number>();
  let y = area.top;
  let chainStarted = false;
  const newPage = () => {
    pages.push([]);
    y = area.top;
  };
  for (const [index, block] of blocks.entries()) {
    const pageEmpty = pages.at(-1)!.length === 0;
    if (block.breakBefore && !pageEmpty) newPage();
    else if (!chainStarted && !pageEmpty && y + groupHeight(blocks, index) > area.bottom) newPage();
    else if (y + block.height > area.bottom && !pageEmpty) newPage();
    chainStarted = block.keepWithNext === true;
    pages.at(-1)!.push({ block, y });
    if (block.anchor !== undefined) anchorPages.set(block.anchor, pages.length);
    y += block.height;
  }
  return { pages, anchorPages };
}

/** Widths of words at size 1 per font, cached: scanner text repeats the same words thousands of times. */
export class TextMeasure {
  private readonly cache = new Map<string, number>();

  constructor(private readonly unitWidth: (text: string, font: string) => number) {}

  width(text: string, font: string, size: number): number {
    const key = `${font}\u0000${text}`;
    let unit = this.cache.get(key);
    if (unit === undefined) {
      unit = this.unitWidth(text, font);
      // Bounded: a report of unique words must not grow the cache without end.
      if (this.cache.size > 200_000) this.cache.clear();
      this.cache.set(key, unit);
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
function wrapParagraph(paragraph: string, width: number, measure: (text: string) => number, space: number): string[] {
  const lines: string[] = [];
  let line = '';
  let lineWidth = 0;
  for (const word of paragraph.split(' ')) {
    if (word === '') continue;
    const wordWidth = measure(word);
    const pieces = wordWidth > width ? splitLongWord(word, width, measure) : [word];
    for (const piece of pieces) {
      const pieceWidth = pieces.length === 1 ? wordWidth : measure(piece);
      if (line !== '' && lineWidth + space + pieceWidth > width) {
        lines.push(line);
        line = '';
        lineWidth = 0;
      }
      lineWidth += (line === '' ? 0 : space) + pieceWidth;
      line = line === '' ? piece : `${line} ${piece}`;
    }
  }
  lines.push(line);
  return lines;
}

/** Wraps text (paragraphs split at line breaks) into lines; an empty text gives no lines. */
export function wrapText(text: string, width: number, measure: (text: string) => number): string[] {
  if (text.trim() === '') return [];
  const space = measure(' ');
  return text.split('\n').flatMap((paragraph) => wrapParagraph(paragraph, width, measure, space));
}
