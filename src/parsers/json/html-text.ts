/**
 * Turns the HTML fragments scanners put in JSON fields (ZAP's `<p>...</p>`
 * descriptions) into plain text. Risk texts are shown in the dashboard, PDF
 * and CSV reports and webhook payloads; none of them should ever receive
 * markup from a scanned site, so tags are removed, never passed through.
 */

// Every pattern ends in (?:>|$) or similar, so it cannot fail after scanning
// ahead: an unterminated tag runs to the end of the text, and hostile input
// such as '<p <p <p ...' without any '>' stays linear instead of backtracking.
const COMMENT = /<!--[\s\S]*?(?:-->|$)/g;
/** Script and style bodies are code, not prose: drop them with their tags. */
const SCRIPT_OR_STYLE = /<(script|style)\b[^>]*(?:>|$)[\s\S]*?(?:<\/\1\s*>|$)/gi;
/** Tags that end a paragraph or line in rendered HTML. */
const BLOCK_BOUNDARY = /<\/?(?:p|div|br|li|ul|ol|h[1-6]|tr|table|pre|blockquote|section|article|header|footer)\b[^>]*(?:>|$)/gi;
/** Any other tag, declaration or processing instruction. */
const ANY_TAG = /<(?:\/?[a-zA-Z][^>]*|![^>]*|\?[^>]*)(?:>|$)/g;
const TAG_OPENER = /<(?=[a-zA-Z/!?])/g;
const ENTITY = /&(#x[0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-zA-Z]{2,8});/g;

const NAMED_ENTITIES: ReadonlyMap<string, string> = new Map([
  ['amp', '&'],
  ['lt', '<'],
  ['gt', '>'],
  ['quot', '"'],
  ['apos', "'"],
  ['nbsp', ' '],
]);

export function htmlToPlainText(html: string): string {
  const withoutMarkup = html.replace(COMMENT, ' ').replace(SCRIPT_OR_STYLE, ' ').replace(BLOCK_BOUNDARY, '\n').replace(ANY_TAG, '');
  // Decoding can reveal '<script>' written as '&lt;script&gt;'. A space after
  // '<' keeps the text readable while no HTML parser can take it for a tag.
  const decoded = decodeEntities(withoutMarkup).replace(TAG_OPENER, '< ');
  return normalizeLines(decoded);
}

/** How far the end of a cut text's plain text can differ from the whole text's: a cut entity ('&#x10FFF'), a trimmed space. */
const CUT_MARGIN = 64;

/**
 * The first `maxChars` characters of htmlToPlainText(html) (then cut by
 * `cap`), without converting all of a long text: a ZAP alert's otherinfo
 * can be 100 KiB of which 4,000 characters are kept. A leading part of the
 * text is converted, four times longer each time, until its plain text
 * passes the cap with a margin. Every step is local (a tag, comment or
 * script cut at the end runs to the end of the part, as it would run past
 * it in the whole text), so the plain text of a leading part is the whole
 * text's plain text up to its last few characters.
 */
export function cappedPlainText(html: string, maxChars: number, cap: (text: string, maxChars: number) => string): string {
  for (let part = Math.max(4 * maxChars, 1024); part < html.length; part *= 4) {
    const text = htmlToPlainText(html.slice(0, part));
    if (text.length > maxChars + CUT_MARGIN) return cap(text.slice(0, maxChars + CUT_MARGIN), maxChars);
  }
  return cap(htmlToPlainText(html), maxChars);
}

function decodeEntities(text: string): string {
  return text.replace(ENTITY, (entity, body: string) => {
    if (body.startsWith('#')) {
      const codePoint = body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
      return isDecodableCodePoint(codePoint) ? String.fromCodePoint(codePoint) : entity;
    }
    return NAMED_ENTITIES.get(body.toLowerCase()) ?? entity;
  });
}

function isDecodableCodePoint(codePoint: number): boolean {
  const isSurrogate = codePoint >= 0xd800 && codePoint <= 0xdfff;
  return codePoint > 0 && codePoint <= 0x10ffff && !isSurrogate;
}

/** One paragraph per line: spaces collapsed, blank lines dropped. */
function normalizeLines(text: string): string {
  return text
    .split(/\r\n|\r|\n/)
    .map((line) => line.replace(/[\s\u00a0]+/g, ' ').trim())
    .filter((line) => line !== '')
    .join('\n');
}

/** The http(s) URLs in a text, in order, without duplicates (ZAP puts one per `<p>` in `reference`). */
export function urlsInText(text: string): string[] {
  const urls = text.match(/https?:\/\/[^\s<>"'`]+/g) ?? [];
  return [...new Set(urls.map(withoutTrailingPunctuation))];
}

/** 'https://a.example/x.' at the end of a sentence means 'https://a.example/x'. */
function withoutTrailingPunctuation(url: string): string {
  let end = url.length;
  while (end > 0 && '.,;:)]'.includes(url.charAt(end - 1))) end--;
  return url.slice(0, end);
}
