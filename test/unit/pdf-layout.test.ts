/** The PDF report's own layout: word wrap, and cutting the flow into pages with headings kept with what follows. */
import { expect } from 'chai';
import { PageCursor, wrapText, type Block } from '../../src/reports/pdf/layout.js';
import { pdfText } from '../../src/reports/pdf/pdf-flow.js';

/** Every character 1 unit wide: widths are lengths. */
const measure = (text: string) => text.length;

describe('PDF layout: wrapping', () => {
  it('wraps greedily at spaces, keeping line breaks as paragraphs', () => {
    expect(wrapText('aaa bbb ccc dd\neee', 7, measure).map((line) => line.text)).to.deep.equal(['aaa bbb', 'ccc dd', 'eee']);
  });

  it('cuts a word longer than the line (URLs, hashes) into pieces', () => {
    expect(wrapText('x 0123456789abc', 5, measure).map((line) => line.text)).to.deep.equal(['x', '01234', '56789', 'abc']);
  });

  it("reports each line's width and gives no lines for blank text", () => {
    expect(wrapText('ab cd', 10, measure)).to.deep.equal([{ text: 'ab cd', width: 5 }]);
    expect(wrapText('  \n ', 10, measure)).to.deep.equal([]);
  });

  it('reduces text to what the standard fonts draw', () => {
    expect(pdfText('Zürich – “ok” 東京 😀\ttab\r\nline')).to.equal('Zürich – “ok” ?? ?    tab\nline');
  });
});

describe('PDF layout: pages', () => {
  function pages(blocks: Block[], bottom = 100): Array<Array<[string, number]>> {
    const result: Array<Array<[string, number]>> = [];
    const cursor = new PageCursor({ top: 0, bottom }, (block, y, newPage) => {
      if (newPage) result.push([]);
      result.at(-1)!.push([block.anchor ?? '', y]);
    });
    cursor.add(blocks);
    cursor.finish();
    expect(cursor.pages).to.equal(result.length);
    return result;
  }
  const line = (name: string, height = 20, extra: Partial<Block> = {}): Block => ({ height, anchor: name, ...extra });

  it('fills a page and continues on the next', () => {
    expect(pages([line('a', 40), line('b', 40), line('c', 40)])).to.deep.equal([
      [
        ['a', 0],
        ['b', 40],
      ],
      [['c', 0]],
    ]);
  });

  it('moves a heading to the next page with the block it is kept with', () => {
    expect(pages([line('a', 70), line('heading', 20, { keepWithNext: true }), line('body', 20)])).to.deep.equal([
      [['a', 0]],
      [
        ['heading', 0],
        ['body', 20],
      ],
    ]);
  });

  it('starts a page before a block that asks for it, unless the page is empty', () => {
    expect(pages([line('first', 10, { breakBefore: true }), line('b', 10), line('section', 10, { breakBefore: true })])).to.deep.equal([
      [
        ['first', 0],
        ['b', 10],
      ],
      [['section', 0]],
    ]);
  });

  it('splits a chain taller than a page rather than looping', () => {
    const chain = [line('h1', 60, { keepWithNext: true }), line('h2', 60, { keepWithNext: true }), line('end', 10)];
    expect(pages(chain)).to.deep.equal([
      [['h1', 0]],
      [
        ['h2', 0],
        ['end', 60],
      ],
    ]);
  });

  it('gives the same pages when the flow arrives in pieces', () => {
    const flow = [line('a', 30), line('h', 20, { keepWithNext: true }), line('b', 30), line('c', 30), line('d', 30)];
    const whole = pages(flow);
    const pieces: Array<Array<[string, number]>> = [];
    const cursor = new PageCursor({ top: 0, bottom: 100 }, (block, y, newPage) => {
      if (newPage) pieces.push([]);
      pieces.at(-1)!.push([block.anchor ?? '', y]);
    });
    cursor.add(flow.slice(0, 2));
    cursor.add(flow.slice(2));
    cursor.finish();
    expect(pieces).to.deep.equal(whole);
  });
});
