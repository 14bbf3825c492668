import { expect } from 'chai';
import { MalformedResultError } from '../../src/domain/errors.js';
import type { Finding } from '../../src/domain/risks/finding.js';
import { FIELD_CAPS, FindingBudget, MAX_FINDINGS_PER_SCAN, boundFinding, capField, definitionJsonLength } from '../../src/parsers/finding-bounds.js';
import { LIST_PAGE_BYTE_BUDGET, Paginator } from '../../src/app/pagination.js';
import { PageTokenCodec } from '../../src/domain/lists/page-token.js';

function finding(overrides: Partial<Finding['definition']> = {}, fingerprint = 'nmap:tcp/80'): Finding {
  return {
    fingerprint,
    location: { host: '45.0.0.1', port: 80, protocol: 'tcp' },
    definition: { scan_type: 'NMAP', title: 't', threat_level: 'INFO', description: 'd', solution: 's', cvss: '', additional_info: {}, ...overrides },
  };
}

describe('finding bounds', () => {
  it('measures a definition as long as JSON.stringify writes it, whatever its text holds', () => {
    const texts = [
      '',
      'plain text',
      'a "quoted" word',
      'back\\slash',
      'line\nbreak\ttab\u0000nul\u001f',
      'é ü 日本語',
      'pair 🔐 kept',
      'lone \ud800 high',
      'lone \udc00 low',
      'end \ud83d',
      '\u2028\u2029\u007f\u0080',
    ];
    const info = { port: 1, text: 'x "y"' };
    const infoLength = JSON.stringify(info).length;
    for (const text of texts) {
      for (const definition of [
        finding({ title: text, description: `${text}${text}`, solution: text, cvss: text, additional_info: info }).definition,
        { additional_info: info, title: text } as unknown as Finding['definition'],
        { title: text, extra: 7, gone: undefined, list: [text, 1] } as unknown as Finding['definition'],
        {} as unknown as Finding['definition'],
      ]) {
        const expected = JSON.stringify({ ...definition, additional_info: info }).length;
        expect(definitionJsonLength(definition, infoLength), JSON.stringify(definition)).to.equal(expected);
      }
    }
  });

  it('cuts every text field to its cap and marks the cut', () => {
    const long = 'x'.repeat(100_000);
    const { definition } = boundFinding(finding({ title: long, description: long, solution: long, cvss: long }));
    expect(definition.title).to.have.length(FIELD_CAPS.title);
    expect(definition.description).to.have.length(FIELD_CAPS.description);
    expect(definition.solution).to.have.length(FIELD_CAPS.solution);
    expect(definition.cvss).to.have.length(FIELD_CAPS.cvss);
    for (const text of [definition.title, definition.description, definition.solution]) expect(text).to.match(/… \[truncated\]$/);
  });

  it('leaves findings within their caps as they are', () => {
    const small = finding({ additional_info: { port: 80, cpes: ['cpe:/a:x'] } });
    expect(boundFinding(small)).to.deep.equal(small);
  });

  it('never splits a surrogate pair when it cuts', () => {
    const cut = capField('😀'.repeat(1000), 101);
    expect(cut.length).to.be.at.most(101);
    expect(/\p{Surrogate}/u.test(cut.replace(/\p{Emoji_Presentation}/gu, ''))).to.equal(false);
  });

  it('keeps additional_info as a whole within its cap, trimming long strings and lists first', () => {
    const info = { evidence: 'e'.repeat(1_000_000), refs: Array.from({ length: 10_000 }, (_, index) => `ref-${index}`), port: 80 };
    const bounded = boundFinding(finding({ additional_info: info })).definition.additional_info;
    expect(JSON.stringify(bounded).length).to.be.at.most(FIELD_CAPS.additionalInfo);
    expect(bounded).to.include({ truncated: true, port: 80 });
    expect(bounded.refs).to.have.length(FIELD_CAPS.infoListItems);
  });

  it('falls back to an excerpt when even trimmed additional_info is too large', () => {
    const info = Object.fromEntries(Array.from({ length: 5000 }, (_, index) => [`key-${index}`, { nested: 'v'.repeat(3000) }]));
    const bounded = boundFinding(finding({ additional_info: info })).definition.additional_info;
    expect(JSON.stringify(bounded).length).to.be.at.most(FIELD_CAPS.additionalInfo);
    expect(bounded.truncated).to.equal(true);
  });

  it('replaces a fingerprint longer than its cap with a stable hash', () => {
    const long = `zap:${'n'.repeat(10_000)}`;
    const first = boundFinding(finding({}, long)).fingerprint;
    expect(first).to.match(/^sha256:[0-9a-f]{64}$/);
    expect(boundFinding(finding({}, long)).fingerprint).to.equal(first);
  });

  it(`refuses the finding after the ${MAX_FINDINGS_PER_SCAN}th, naming the cap`, () => {
    const budget = new FindingBudget();
    for (let index = 0; index < MAX_FINDINGS_PER_SCAN; index++) budget.add(finding());
    expect(() => budget.add(finding())).to.throw(MalformedResultError, 'more than 50,000 findings');
  });

  it('refuses findings whose text together passes 64 MiB', () => {
    const budget = new FindingBudget();
    const big = finding({ description: 'd'.repeat(FIELD_CAPS.description), solution: 's'.repeat(FIELD_CAPS.solution) });
    expect(() => {
      for (let index = 0; index < 3000; index++) budget.add(big);
    }).to.throw(MalformedResultError, '64 MiB');
  });
});

describe('list page byte budget', () => {
  const paginator = new Paginator(new PageTokenCodec(Buffer.alloc(32, 1)));
  const item = 'x'.repeat(LIST_PAGE_BYTE_BUDGET / 3);

  it('ends a page early at the budget, with a token that continues after the last item sent', () => {
    const page = { items: [1, 2, 3, 4, 5].map((n) => ({ n, text: item })), nextCursor: undefined, cursorAt: (index: number) => [index + 100] };
    const result = paginator.resultOf('scope', 'seq:desc', page, (value) => value);
    expect(result.items.map((value) => value.n)).to.deep.equal([1, 2]);
    expect(paginator.cursorFrom('scope', 'seq:desc', result.nextPageToken)).to.deep.equal([101]);
  });

  it('sends one item even when it alone is over the budget', () => {
    const page = { items: [{ text: 'y'.repeat(LIST_PAGE_BYTE_BUDGET + 1) }, { text: 'z' }], nextCursor: undefined, cursorAt: (index: number) => [index] };
    const result = paginator.resultOf('scope', 'seq:desc', page, (value) => value);
    expect(result.items).to.have.length(1);
    expect(paginator.cursorFrom('scope', 'seq:desc', result.nextPageToken)).to.deep.equal([0]);
  });

  it('keeps the store cursor when the page fits', () => {
    const page = { items: [{ text: 'a' }], nextCursor: [7], cursorAt: (index: number) => [index] };
    const result = paginator.resultOf('scope', 'seq:desc', page, (value) => value);
    expect(paginator.cursorFrom('scope', 'seq:desc', result.nextPageToken)).to.deep.equal([7]);
  });
});
