/**
 * HTML that escapes by default, for the dashboard's pages and the run
 * e-mails. Every value interpolated into an `html` template is escaped
 * unless it is already SafeHtml: a nested template, or
 * a fragment wrapped in raw() on purpose. Templates quote every attribute,
 * so escaping quotes is enough to keep a value inside its attribute.
 */

/** Markup that is safe to put in a page as it is. */
export class SafeHtml {
  constructor(readonly markup: string) {}

  toString(): string {
    return this.markup;
  }
}

/** What a template accepts: text (escaped), markup, lists of them, and nothing: null, undefined and booleans render as '' (for `cond && html`…``). */
export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (character) => ENTITIES[character]!);
}

/** Marks trusted markup (never anything a user or scanner wrote) as safe. */
export function raw(trusted: string): SafeHtml {
  return new SafeHtml(trusted);
}

function render(value: HtmlValue): string {
  if (value instanceof SafeHtml) return value.markup;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false || value === true) return '';
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): SafeHtml {
  let markup = strings[0]!;
  values.forEach((value, index) => {
    markup += render(value) + strings[index + 1]!;
  });
  return new SafeHtml(markup);
}

/** A reference a scanner gave: only web addresses become links; anything else (javascript:, data:) stays text. */
export function referenceLink(reference: string): SafeHtml {
  return /^https?:\/\//i.test(reference) ? html`<a href="${reference}" rel="noopener noreferrer">${reference}</a>` : html`${reference}`;
}
