/**
 * A generated block inside a page written by hand: the block lies between two
 * HTML comments, and only it is replaced, so the prose above and below stays
 * as its author wrote it.
 */
export interface BlockMarkers {
  begin: string;
  end: string;
}

/** Markers naming where the block comes from and what writes it. */
export function markersFor(source: string, script: string): BlockMarkers {
  return { begin: `<!-- generated from ${source} by ${script}: edit there, not here -->`, end: '<!-- end of the generated block -->' };
}

/** The block between its markers, a blank line on each side so that markdown sees the block on its own. */
export function fencedBlock(markers: BlockMarkers, body: string): string {
  return `${markers.begin}\n\n${body}\n\n${markers.end}`;
}

/** The page with the block between the markers replaced; a page that lost its markers is an error saying where they go. */
export function withGeneratedBlock(page: string, markers: BlockMarkers, body: string): string {
  const begin = page.indexOf(markers.begin);
  const end = page.indexOf(markers.end);
  if (begin === -1 || end < begin) throw new Error(`the page has lost its markers: put the generated block between\n${markers.begin}\nand\n${markers.end}`);
  return page.slice(0, begin) + fencedBlock(markers, body) + page.slice(end + markers.end.length);
}
