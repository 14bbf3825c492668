/**
 * Quicker metric lookups for pdfkit's standard fonts. pdfkit keeps a
 * standard font's glyph widths and kerning pairs in plain objects and looks
 * a pair up under a key built for each pair of characters it measures or
 * draws ("T\0o"): a fifth of a large report's CPU time went to those lookups
 * (bench/reports.ts). The same numbers are put in Maps, kerning by left then
 * right glyph, and the font's two lookups answer from them; what they answer
 * is unchanged, so are the PDF's bytes (test/unit/pdf-report.test.ts compares
 * them with plain pdfkit, so a pdfkit upgrade that changes these fields
 * fails there).
 */

/** The part of pdfkit's AFMFont (pdfkit 0.20) that this replaces. */
interface AfmFont {
  glyphWidths: Record<string, number>;
  kernPairs: Record<string, number>;
  widthOfGlyph(glyph: string): number;
  getKernPair(left: string, right: string | undefined): number;
}

const quickened = new WeakSet<object>();

/** Gives the document's current font (when it is one of the standard fonts) the quicker lookups; once per font. */
export function quickenCurrentFont(doc: PDFKit.PDFDocument): void {
  const font = (doc as unknown as { _font?: { font?: Partial<AfmFont> } })._font?.font;
  if (font === undefined || quickened.has(font)) return;
  quickened.add(font);
  const { glyphWidths, kernPairs } = font;
  if (typeof glyphWidths !== 'object' || typeof kernPairs !== 'object' || typeof font.widthOfGlyph !== 'function' || typeof font.getKernPair !== 'function')
    return;
  const widths = new Map(Object.entries(glyphWidths));
  const kerning = new Map<string, Map<string, number>>();
  for (const [pair, amount] of Object.entries(kernPairs)) {
    const [left, right] = pair.split('\0') as [string, string];
    let row = kerning.get(left);
    if (row === undefined) kerning.set(left, (row = new Map()));
    row.set(right, amount);
  }
  // As pdfkit's own: a glyph or pair it does not know counts 0 (so does the pair after the last glyph, whose right is undefined).
  font.widthOfGlyph = (glyph) => widths.get(glyph) || 0;
  font.getKernPair = (left, right) => (right === undefined ? 0 : kerning.get(left)?.get(right) || 0);
}
