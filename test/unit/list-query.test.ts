import { expect } from 'chai';
import { InvalidRequestError } from '../../src/domain/errors.js';
import { MAX_PAGE_SIZE, pageSizeFrom, parseFilters, parseSort } from '../../src/domain/lists/list-query.js';

const FILTER_KEYS = ['tags', 'label'] as const;
const SORT_FIELDS = ['label', 'created_at', 'last_scanned'] as const;

describe('list query parameters', () => {
  describe('pageSizeFrom (1..499 as given, anything else the default 500)', () => {
    const cases: ReadonlyArray<[string, number | undefined, number]> = [
      ['an absent page size gives the default', undefined, 500],
      ['0 gives the default', 0, 500],
      ['1 is taken as given', 1, 1],
      ['250 is taken as given', 250, 250],
      ['499 is taken as given', 499, 499],
      ['500 gives the default', 500, 500],
      ['501 gives the default, not a larger page', 501, 500],
      ['10000 gives the default, not a larger page', 10_000, 500],
      ['-1 gives the default', -1, 500],
      ['2.5 gives the default', 2.5, 500],
      ['NaN gives the default', Number.NaN, 500],
      ['Infinity gives the default', Number.POSITIVE_INFINITY, 500],
    ];
    for (const [name, raw, expected] of cases) {
      it(name, () => expect(pageSizeFrom(raw)).to.equal(expected));
    }

    it('has 500 as the default and largest page', () => {
      expect(MAX_PAGE_SIZE).to.equal(500);
    });
  });

  describe('parseFilters', () => {
    const accepted: ReadonlyArray<[string, string | undefined, object]> = [
      ['an absent parameter is no filter', undefined, {}],
      ['an empty string is no filter', '', {}],
      ['a blank string is no filter', '   ', {}],
      ['an empty object is no filter', '{}', {}],
      ['one key with values filters on them', '{"tags":["prod","web"]}', { tags: ['prod', 'web'] }],
      ['two keys filter on both', '{"tags":["prod"],"label":["Shop"]}', { tags: ['prod'], label: ['Shop'] }],
      ['an empty array means no filter on that key', '{"tags":[],"label":["Shop"]}', { label: ['Shop'] }],
      [
        'exactly 100 values are accepted',
        JSON.stringify({ tags: Array.from({ length: 100 }, (_, i) => `t${i}`) }),
        { tags: Array.from({ length: 100 }, (_, i) => `t${i}`) },
      ],
    ];
    for (const [name, raw, expected] of accepted) {
      it(name, () => expect(parseFilters(raw, FILTER_KEYS)).to.deep.equal(expected));
    }

    const refused: ReadonlyArray<[string, string, string | RegExp]> = [
      ['invalid JSON is refused, showing an example', '{tags:[prod]}', /not valid JSON.*\{"tags":\["value"\]\}|\{"tags":\["value"\]\}.*not valid JSON/],
      ['a JSON array is refused, naming the allowed keys', '["tags"]', 'keys are among: tags, label'],
      ['JSON null is refused', 'null', 'must be a JSON object'],
      ['a JSON number is refused', '42', 'must be a JSON object'],
      ['a JSON string is refused', '"tags"', 'must be a JSON object'],
      [
        'an unknown key is refused, naming it and the allowed keys',
        '{"state":["RUNNING"]}',
        "filters key 'state' is not supported here; allowed keys: tags, label",
      ],
      ['a __proto__ key is refused as unknown', '{"__proto__":["x"]}', "'__proto__'"],
      ['a value that is not an array is refused', '{"tags":"prod"}', 'filters.tags must be an array of strings'],
      ['an array of numbers is refused', '{"tags":[1,2]}', 'filters.tags must be an array of strings'],
      ['an array mixing strings and null is refused', '{"label":["a",null]}', 'filters.label must be an array of strings'],
      ['more than 100 values are refused', JSON.stringify({ tags: Array.from({ length: 101 }, (_, i) => `t${i}`) }), 'at most 100 values'],
    ];
    for (const [name, raw, message] of refused) {
      it(name, () => expect(() => parseFilters(raw, FILTER_KEYS)).to.throw(InvalidRequestError, message));
    }
  });

  describe('parseSort', () => {
    const accepted: ReadonlyArray<[string, string | undefined, object[]]> = [
      ['an absent parameter is no sort', undefined, []],
      ['a blank string is no sort', '  ', []],
      ['a field alone sorts ascending', 'label', [{ field: 'label', direction: 'asc' }]],
      ['a field with desc sorts descending', 'last_scanned desc', [{ field: 'last_scanned', direction: 'desc' }]],
      ['the direction is case-insensitive', 'label DESC', [{ field: 'label', direction: 'desc' }]],
      ['an explicit asc is accepted', 'label Asc', [{ field: 'label', direction: 'asc' }]],
      [
        'several comma-separated fields keep their order',
        'last_scanned desc,label, created_at asc',
        [
          { field: 'last_scanned', direction: 'desc' },
          { field: 'label', direction: 'asc' },
          { field: 'created_at', direction: 'asc' },
        ],
      ],
      ['several spaces between field and direction are accepted', 'label   desc', [{ field: 'label', direction: 'desc' }]],
    ];
    for (const [name, raw, expected] of accepted) {
      it(name, () => expect(parseSort(raw, SORT_FIELDS)).to.deep.equal(expected));
    }

    const refused: ReadonlyArray<[string, string, string]> = [
      ['an unknown field is refused, listing the allowed ones', 'name', "sort field 'name' is not supported; allowed fields: label, created_at, last_scanned"],
      ['field names are case-sensitive', 'LABEL', "sort field 'LABEL' is not supported"],
      ['a direction other than asc or desc is refused', 'label up', "sort 'label up' must be a field optionally followed by a space and asc or desc"],
      ['extra words after the direction are refused', 'label desc nulls', "sort 'label desc nulls' must be a field"],
      ['a field named twice is refused', 'label,label desc', "sort names 'label' more than once"],
      ['an empty part after a comma is refused', 'label,', "sort field '' is not supported"],
      ['an empty part before a comma is refused', ',label', "sort field '' is not supported"],
      ['two commas in a row are refused', 'label,,created_at', "sort field '' is not supported"],
      ['an SQL fragment is refused as an unknown field', 'label; DROP TABLE targets', "sort field 'label;' is not supported"],
    ];
    for (const [name, raw, message] of refused) {
      it(name, () => expect(() => parseSort(raw, SORT_FIELDS)).to.throw(InvalidRequestError, message));
    }
  });
});
