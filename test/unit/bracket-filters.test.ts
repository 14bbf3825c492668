import { expect } from 'chai';
import { filtersFromBrackets } from '../../src/domain/lists/bracket-filters.js';
import { bracketFiltersAsJson } from '../../src/http/bracket-filters.js';

const pairs = (query: string) => [...new URLSearchParams(query)];

describe('filters in the bracket form (axios, qs)', () => {
  const sameAsJson: Array<[string, string, Record<string, string[]>]> = [
    [
      'indexed, as axios and qs send it',
      'filters[status][0]=OPEN&filters[risk_definition.scan_type][0]=NMAP',
      { status: ['OPEN'], 'risk_definition.scan_type': ['NMAP'] },
    ],
    ['empty brackets', 'filters[status][]=OPEN&filters[status][]=CLOSED', { status: ['OPEN', 'CLOSED'] }],
    ['a scalar for one value', 'filters[tags]=prod', { tags: ['prod'] }],
    [
      'URL-encoded brackets',
      'filters%5Bstatus%5D%5B%5D=OPEN&filters%5Brisk_definition.scan_type%5D%5B0%5D=NMAP',
      { status: ['OPEN'], 'risk_definition.scan_type': ['NMAP'] },
    ],
    ['indexes out of order, placed by index', 'filters[status][1]=CLOSED&filters[status][0]=OPEN', { status: ['OPEN', 'CLOSED'] }],
    [
      'spaces and reserved characters in values',
      'filters[risk_definition.title][0]=Open%20port%20443%2Ftcp&filters[label][]=a+b',
      { 'risk_definition.title': ['Open port 443/tcp'], label: ['a b'] },
    ],
  ];
  for (const [what, query, expected] of sameAsJson) {
    it(`reads ${what} as the JSON form's object`, () => {
      expect(filtersFromBrackets(pairs(query))).to.deep.equal(expected);
      const rewritten = bracketFiltersAsJson(query);
      expect(rewritten.problem).to.equal(undefined);
      expect(JSON.parse(new URLSearchParams(rewritten.query).get('filters')!)).to.deep.equal(expected);
    });
  }

  it('keeps the other query parameters and leaves a query without the bracket form untouched', () => {
    const rewritten = new URLSearchParams(bracketFiltersAsJson('page_size=2&filters[status][]=OPEN&sort=threat_level%20desc').query);
    expect(rewritten.get('page_size')).to.equal('2');
    expect(rewritten.get('sort')).to.equal('threat_level desc');
    const untouched = 'filters=%7B%22status%22%3A%5B%22OPEN%22%5D%7D&page_size=2';
    expect(bracketFiltersAsJson(untouched)).to.deep.equal({ query: untouched });
  });

  it('refuses both forms in one request, saying to use one, and drops the filters', () => {
    const rewritten = bracketFiltersAsJson('filters=%7B%7D&filters[status][]=OPEN&page_size=3');
    expect(rewritten.problem?.message).to.match(/two forms; use one/);
    expect(new URLSearchParams(rewritten.query).has('filters')).to.equal(false);
    expect(new URLSearchParams(rewritten.query).get('page_size')).to.equal('3');
  });

  const refused: Array<[string, string, RegExp]> = [
    ['a nested object', 'filters[status][0][x]=OPEN', /not a filters form/],
    ['a key named by an index', 'filters[status][a]=OPEN', /not a filters form/],
    ['an empty key', 'filters[]=OPEN', /not a filters form/],
    ['an index past 99', 'filters[status][100]=OPEN', /indexes go from 0 to 99/],
    ['an index sent twice', 'filters[status][0]=OPEN&filters[status][0]=CLOSED', /sent twice/],
    ['more than 100 values for a key', Array.from({ length: 101 }, (_, i) => `filters[status][]=v${i}`).join('&'), /at most 100 values/],
    ['more than 20 keys', Array.from({ length: 21 }, (_, i) => `filters[k${i}]=v`).join('&'), /at most 20 keys/],
  ];
  for (const [what, query, message] of refused) {
    it(`refuses ${what}`, () => {
      expect(() => filtersFromBrackets(pairs(query))).to.throw(message);
      expect(bracketFiltersAsJson(query).problem?.message).to.match(message);
    });
  }

  it('makes a key named __proto__ an own key, which the allowed keys then refuse', () => {
    const filters = filtersFromBrackets(pairs('filters[__proto__][]=x'));
    expect(Object.keys(filters)).to.deep.equal(['__proto__']);
    expect(Object.getPrototypeOf(filters)).to.equal(Object.prototype);
  });
});
