/**
 * Scanner text as plain text: XML formats carry no markup inside their text,
 * only the indentation and hard wraps of their writers.
 */

/** Trims every line, collapses runs of spaces and tabs, keeps at most one blank line between paragraphs. */
export function normaliseText(text: string): string {
  return OTHER_WHITESPACE.test(text) ? normaliseTextByLines(text) : normalisePlainText(text);
}

/**
 * JavaScript's whitespace (\s, what trim() removes) other than the space,
 * tab, no-break space, CR and LF that normaliseText rewrites itself.
 */
const OTHER_WHITESPACE = /[^\S \t\u00a0\r\n]/;

/**
 * normaliseText for text whose only whitespace is spaces, tabs, no-break
 * spaces, CR and LF, in whole-text replaces that match only what changes:
 * once the runs are collapsed a line can only start or end with one space,
 * so trimming every line is dropping a space next to a newline. The same
 * result as splitting into lines (test/parsers/plain-text.test.ts compares
 * them), without an array and a string per line: the script outputs of a
 * large nmap report were a tenth of its parse (bench/ingest.ts).
 */
function normalisePlainText(text: string): string {
  let plain = text.includes('\r') ? text.replace(/\r\n?/g, '\n') : text;
  plain = plain.replace(/[\t\u00a0][\t \u00a0]*| [\t \u00a0]+/g, ' ');
  plain = plain.replace(/ \n ?|\n /g, '\n');
  return plain.replace(/\n{3,}/g, '\n\n').trim();
}

/** normaliseText by splitting into lines: the reference, and the way for text with other whitespace. */
export function normaliseTextByLines(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((line) => line.replace(/[\t \u00a0]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** One line: titles are shown in lists and subjects, where a newline breaks the layout. */
export function normaliseTitle(text: string): string {
  // Most titles are one line already: a test allocates nothing, where the
  // replace built a new string for every single space (bench/ingest.ts).
  if (isNormalisedTitle(text)) return text;
  return text.replace(/\s+/g, ' ').trim();
}

/** True when normaliseTitle(text) is `text`: titles joined from such pieces with single spaces need no normalising. */
export function isNormalisedTitle(text: string): boolean {
  return !UNNORMALISED_TITLE.test(text);
}

/** Whitespace normaliseTitle would change: any but a single space between two other characters. */
const UNNORMALISED_TITLE = /[^\S ]| {2}|^ | $/;

/** Keeps the first `maxChars` characters, without cutting a surrogate pair, and says that it cut. */
export function truncateText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  let end = maxChars;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}\n[truncated: ${text.length - end} more characters]`;
}

/** Joins labelled sections, leaving out empty ones: "Insight:\n...". An empty label gives the text alone. */
export function joinSections(sections: ReadonlyArray<readonly [label: string, text: string | undefined]>): string {
  return sections
    .map(([label, text]) => [label, normaliseText(text ?? '')] as const)
    .filter(([, text]) => text !== '')
    .map(([label, text]) => (label === '' ? text : `${label}:\n${text}`))
    .join('\n\n');
}
