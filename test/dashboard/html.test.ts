/**
 * The dashboard's html template tag: every interpolation is escaped unless it
 * is markup on purpose, so hostile text from users or scanner files cannot
 * open an element, close an attribute or start a script.
 */
import { expect } from 'chai';
import { escapeHtml, html, raw, SafeHtml } from '../../src/app/present/html.js';

const HOSTILE = [
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  "' onmouseover='alert(1)",
  '` onfocus=`alert(1)',
  '&lt;already escaped&gt;',
  '</textarea><script>alert(1)</script>',
];

describe('dashboard html templates', () => {
  it('escapes the five HTML metacharacters and the backtick', () => {
    expect(escapeHtml(`<a href="x" title='y'>&\`</a>`)).to.equal('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&#96;&lt;/a&gt;');
  });

  for (const text of HOSTILE) {
    it(`keeps ${JSON.stringify(text)} as text in element content and in a quoted attribute`, () => {
      const markup = html`<p title="${text}">${text}</p>`.markup;
      // Whatever the text, the only tags are the template's own and the attribute is closed by the template's quote only.
      expect(markup.match(/<[a-z/]/gi)).to.deep.equal(['<p', '</']);
      expect(markup.split('"')).to.have.length(3);
      expect(markup).to.not.include("'");
      expect(markup).to.not.include('`');
      // Escaping is reversible: the browser shows exactly the text that went in.
      const shown = markup.slice(markup.indexOf('>') + 1, markup.lastIndexOf('</p>'));
      expect(decode(shown)).to.equal(text);
    });
  }

  it('does not escape an ampersand twice through nested templates, but does escape text that looks escaped', () => {
    const inner = html`<b>${'Tom & Jerry'}</b>`;
    expect(html`<p>${inner}</p>`.markup).to.equal('<p><b>Tom &amp; Jerry</b></p>');
    expect(html`${'&amp;'}`.markup).to.equal('&amp;amp;');
  });

  it('inserts raw() fragments and nested templates as they are, and only those', () => {
    expect(html`<div>${raw('<hr>')}${html`<br>`}${'<hr>'}</div>`.markup).to.equal('<div><hr><br>&lt;hr&gt;</div>');
    // A plain object that merely looks like SafeHtml is still text.
    const impostor = { markup: '<script>', toString: () => '<script>' } as unknown as string;
    expect(html`${impostor}`.markup).to.equal('&lt;script&gt;');
  });

  it('renders lists item by item, numbers as text, and nothing for null, undefined and booleans', () => {
    expect(html`<ul>${['<a>', html`<li>b</li>`, 3]}</ul>`.markup).to.equal('<ul>&lt;a&gt;<li>b</li>3</ul>');
    expect(html`[${null}${undefined}${false}${true}]`.markup).to.equal('[]');
    expect(html`${0}`.markup).to.equal('0');
  });

  it('produces SafeHtml whose string form is the markup', () => {
    const fragment = html`<i>${'x'}</i>`;
    expect(fragment).to.be.instanceOf(SafeHtml);
    expect(String(fragment)).to.equal('<i>x</i>');
  });
});

function decode(text: string): string {
  const entities: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'", '&#96;': '`' };
  return text.replace(/&(amp|lt|gt|quot|#39|#96);/g, (entity) => entities[entity]!);
}
