import { expect } from 'chai';
import { InvalidRequestError } from '../../src/domain/errors.js';
import { THREAT_LEVELS, type ThreatLevel } from '../../src/domain/risks/finding.js';
import { healthScore, PERFECT_HEALTH, type HealthGrade, type OpenRiskCounts } from '../../src/domain/targets/health-score.js';
import {
  applyTargetUpdate,
  assertTargetDeletable,
  DEFAULT_ZAP_SETTINGS,
  mergeZapSettings,
  normaliseTags,
  TARGET_ORIGINS,
  type Target,
  type TargetChanges,
  type TargetOrigin,
} from '../../src/domain/targets/target.js';
import type { ZapSettingsInputValue, ZapSettingsValue } from '../../src/api/schemas/targets.js';

const CRAWL_KEYS = [
  'included_domains',
  'excluded_domains',
  'excluded_urls',
  'seed_urls',
  'anti_csrf_tokens',
  'scan_discovered_subdomains',
  'scan_third_party_javascript',
] as const;

/** Every field differs from its default, so a reset to defaults is visible. */
function customisedZap(): ZapSettingsValue {
  return {
    included_domains: ['cdn.example.com'],
    excluded_domains: ['ads.example.com'],
    excluded_urls: ['.*logout.*'],
    seed_urls: ['https://example.com/start'],
    anti_csrf_tokens: ['csrf_token'],
    scan_discovered_subdomains: true,
    scan_third_party_javascript: true,
    headers: [{ key: 'X-Team', value: 'red' }],
    cookies: [{ name: 'session', value: 'abc' }],
  };
}

/** A crawl value for each key that differs from both the default and customisedZap(). */
const SENT_CRAWL_VALUE: { [K in (typeof CRAWL_KEYS)[number]]: ZapSettingsValue[K] } = {
  included_domains: ['api.example.com'],
  excluded_domains: ['tracker.example.com'],
  excluded_urls: ['.*\\.pdf$'],
  seed_urls: ['https://example.com/other'],
  anti_csrf_tokens: ['xsrf'],
  scan_discovered_subdomains: true,
  scan_third_party_javascript: true,
};

function aTarget(overrides: Partial<Target> = {}): Target {
  return {
    id: 't-1',
    accountId: 'a-1',
    target: 'example.com',
    label: 'Shop',
    tags: ['prod', 'web'],
    healthScore: PERFECT_HEALTH,
    authSeleniumFile: undefined,
    zap: customisedZap(),
    origin: 'MANUAL',
    createdAt: '2026-01-01T00:00:00.000Z',
    lastScannedAt: null,
    ...overrides,
  };
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

describe('target rules', () => {
  describe('normaliseTags', () => {
    const cases: ReadonlyArray<[string, string[], string[]]> = [
      ['lower-cases tags', ['Prod', 'WEB'], ['prod', 'web']],
      ['trims tags', ['  prod ', '\tweb\n'], ['prod', 'web']],
      ['removes duplicates that differ only in case or spacing, keeping the first position', ['Prod', 'web', ' prod', 'PROD'], ['prod', 'web']],
      ['keeps the order given', ['zeta', 'alpha', 'mid'], ['zeta', 'alpha', 'mid']],
      ['keeps inner spaces', ['Team A'], ['team a']],
      ['turns no tags into no tags', [], []],
    ];
    for (const [name, input, expected] of cases) {
      it(name, () => expect(normaliseTags(input)).to.deep.equal(expected));
    }

    for (const [name, input] of [
      ['refuses an empty tag', ['prod', '']],
      ['refuses a blank tag', ['   ']],
    ] as const) {
      it(name, () => expect(() => normaliseTags([...input])).to.throw(InvalidRequestError, 'tags must not be empty'));
    }
  });

  describe('mergeZapSettings (SPEC.md Targets rule 3)', () => {
    it('keeps everything when no zap settings are sent', () => {
      expect(mergeZapSettings(customisedZap(), undefined)).to.deep.equal(customisedZap());
    });

    it('keeps everything when an empty zap object is sent', () => {
      expect(mergeZapSettings(customisedZap(), {})).to.deep.equal(customisedZap());
    });

    for (const sentKey of CRAWL_KEYS) {
      it(`sending only ${sentKey} sets it and resets the other six crawl settings to defaults, keeping headers and cookies`, () => {
        const merged = mergeZapSettings(customisedZap(), { [sentKey]: SENT_CRAWL_VALUE[sentKey] } as ZapSettingsInputValue);
        for (const key of CRAWL_KEYS) {
          expect(merged[key], key).to.deep.equal(key === sentKey ? SENT_CRAWL_VALUE[key] : DEFAULT_ZAP_SETTINGS[key]);
        }
        expect(merged.headers).to.deep.equal(customisedZap().headers);
        expect(merged.cookies).to.deep.equal(customisedZap().cookies);
      });
    }

    it('sending a crawl boolean as false still counts as sending a crawl setting', () => {
      const merged = mergeZapSettings(customisedZap(), { scan_discovered_subdomains: false });
      expect(merged.scan_discovered_subdomains).to.equal(false);
      expect(merged.seed_urls).to.deep.equal([]);
      expect(merged.scan_third_party_javascript).to.equal(false);
    });

    it('sending an empty crawl list clears it and resets the rest of the crawl settings', () => {
      const merged = mergeZapSettings(customisedZap(), { seed_urls: [] });
      for (const key of CRAWL_KEYS) expect(merged[key], key).to.deep.equal(DEFAULT_ZAP_SETTINGS[key]);
    });

    it('sending only headers replaces headers and keeps crawl settings and cookies', () => {
      const headers = [{ key: 'Authorization', value: 'Bearer x' }];
      expect(mergeZapSettings(customisedZap(), { headers })).to.deep.equal({ ...customisedZap(), headers });
    });

    it('sending only cookies replaces cookies and keeps crawl settings and headers', () => {
      const cookies = [{ name: 'sid', value: '1', sameSite: 'Lax' as const }];
      expect(mergeZapSettings(customisedZap(), { cookies })).to.deep.equal({ ...customisedZap(), cookies });
    });

    it('sending an empty headers list removes all headers', () => {
      expect(mergeZapSettings(customisedZap(), { headers: [] }).headers).to.deep.equal([]);
    });

    it('sending all crawl settings with headers replaces them and keeps cookies', () => {
      const headers = [{ key: 'X-New', value: 'v' }];
      const merged = mergeZapSettings(customisedZap(), { ...SENT_CRAWL_VALUE, headers });
      expect(merged).to.deep.equal({ ...SENT_CRAWL_VALUE, headers, cookies: customisedZap().cookies });
    });

    it('does not change the current settings or the defaults', () => {
      const current = deepFreeze(customisedZap());
      mergeZapSettings(current, deepFreeze({ seed_urls: ['https://example.com/x'], headers: [] }));
      expect(current).to.deep.equal(customisedZap());
      expect(DEFAULT_ZAP_SETTINGS.seed_urls).to.deep.equal([]);
    });
  });

  describe('applyTargetUpdate (SPEC.md Targets rules 1 to 5)', () => {
    const cases: ReadonlyArray<{ name: string; origin?: TargetOrigin; changes: TargetChanges; expected: Partial<Target> }> = [
      { name: 'omitted fields keep their values', changes: {}, expected: { label: 'Shop', tags: ['prod', 'web'], zap: customisedZap() } },
      { name: 'a new label replaces the label and keeps tags', changes: { label: 'Store' }, expected: { label: 'Store', tags: ['prod', 'web'] } },
      { name: 'an empty label clears the label', changes: { label: '' }, expected: { label: '' } },
      { name: 'new tags replace the tags, normalised', changes: { tags: ['Staging', ' staging '] }, expected: { tags: ['staging'], label: 'Shop' } },
      { name: 'an empty tags array removes all tags', changes: { tags: [] }, expected: { tags: [] } },
      {
        name: 'scanner settings are merged under rule 3',
        changes: { zap: { headers: [] } },
        expected: { zap: { ...customisedZap(), headers: [] } },
      },
      {
        name: 'a cloud-provider target keeps its label and tags',
        origin: 'CLOUD_PROVIDER',
        changes: { label: 'Mine', tags: ['mine'] },
        expected: { label: 'Shop', tags: ['prod', 'web'] },
      },
      {
        name: 'a cloud-provider target accepts scanner settings',
        origin: 'CLOUD_PROVIDER',
        changes: { label: 'Mine', zap: { cookies: [] } },
        expected: { label: 'Shop', zap: { ...customisedZap(), cookies: [] } },
      },
      { name: 'an internally discovered target takes a new label', origin: 'INTERNAL_SCANNER', changes: { label: 'Found' }, expected: { label: 'Found' } },
      { name: 'a code-integration target takes new tags', origin: 'CODE_INTEGRATION', changes: { tags: ['Repo'] }, expected: { tags: ['repo'] } },
    ];
    for (const { name, origin = 'MANUAL', changes, expected } of cases) {
      it(name, () => {
        const before = aTarget({ origin });
        const updated = applyTargetUpdate(before, changes);
        expect(updated).to.deep.include(expected);
        expect(updated.target, 'the address never changes').to.equal('example.com');
        expect(updated.origin).to.equal(origin);
      });
    }

    it('refuses to update a target created from uploaded results', () => {
      expect(() => applyTargetUpdate(aTarget({ origin: 'UPLOADED_RESULTS' }), { label: 'x' })).to.throw(
        InvalidRequestError,
        'uploaded scan results and cannot be updated',
      );
    });

    it('refuses an update of an uploaded-results target even when nothing is sent', () => {
      expect(() => applyTargetUpdate(aTarget({ origin: 'UPLOADED_RESULTS' }), {})).to.throw(InvalidRequestError);
    });

    it('does not mutate the target or the changes', () => {
      const target = deepFreeze(aTarget());
      const changes = deepFreeze({ label: 'New', tags: ['A'], zap: { seed_urls: ['https://example.com/s'] } });
      const updated = applyTargetUpdate(target, changes);
      expect(updated).to.not.equal(target);
      expect(target).to.deep.equal(aTarget());
      expect(changes).to.deep.equal({ label: 'New', tags: ['A'], zap: { seed_urls: ['https://example.com/s'] } });
    });
  });

  describe('assertTargetDeletable', () => {
    const expectations: Record<TargetOrigin, string | null> = {
      MANUAL: null,
      INTERNAL_SCANNER: null,
      CLOUD_PROVIDER: 'managed by a cloud provider',
      CODE_INTEGRATION: 'managed by a code integration',
      UPLOADED_RESULTS: 'created from uploaded scan results',
    };

    for (const origin of TARGET_ORIGINS) {
      const reason = expectations[origin];
      if (reason === null) {
        it(`allows deleting a ${origin} target`, () => {
          expect(() => assertTargetDeletable(aTarget({ origin }))).to.not.throw();
        });
      } else {
        it(`refuses deleting a ${origin} target, saying why`, () => {
          expect(() => assertTargetDeletable(aTarget({ origin }))).to.throw(InvalidRequestError, reason);
          expect(() => assertTargetDeletable(aTarget({ origin }))).to.throw(InvalidRequestError, 'cannot be deleted');
        });
      }
    }
  });

  describe('healthScore', () => {
    const cases: ReadonlyArray<[string, OpenRiskCounts, number, HealthGrade]> = [
      ['no risks score 100, grade A', {}, 100, 'A'],
      ['zero counts cost nothing', { CRITICAL: 0, HIGH: 0 }, 100, 'A'],
      ['one critical scores 60, grade C', { CRITICAL: 1 }, 60, 'C'],
      ['one high scores 80, grade B', { HIGH: 1 }, 80, 'B'],
      ['one medium scores 93, grade A', { MEDIUM: 1 }, 93, 'A'],
      ['one low scores 98, grade A', { LOW: 1 }, 98, 'A'],
      ['informational risks only score 100, grade A', { INFO: 25 }, 100, 'A'],
      ['90 is the lowest A', { LOW: 5 }, 90, 'A'],
      ['89 is a B', { MEDIUM: 1, LOW: 2 }, 89, 'B'],
      ['75 is the lowest B', { MEDIUM: 3, LOW: 2 }, 75, 'B'],
      ['74 is a C', { HIGH: 1, LOW: 3 }, 74, 'C'],
      ['50 is the lowest C', { CRITICAL: 1, LOW: 5 }, 50, 'C'],
      ['49 is a D', { CRITICAL: 1, MEDIUM: 1, LOW: 2 }, 49, 'D'],
      ['25 is the lowest D', { CRITICAL: 1, HIGH: 1, MEDIUM: 1, LOW: 4 }, 25, 'D'],
      ['24 is an F', { CRITICAL: 1, HIGH: 1, MEDIUM: 2, LOW: 1 }, 24, 'F'],
      ['three criticals clamp at 0, grade F', { CRITICAL: 3 }, 0, 'F'],
      ['a hundred highs clamp at 0, grade F', { HIGH: 100 }, 0, 'F'],
    ];
    for (const [name, counts, score, grade] of cases) {
      it(name, () => expect(healthScore(counts)).to.deep.equal({ score, grade }));
    }

    it('gives a new target perfect health', () => {
      expect(PERFECT_HEALTH).to.deep.equal({ score: 100, grade: 'A' });
    });

    it('charges every threat level the penalty the OpenAPI description documents', () => {
      const documented: Record<ThreatLevel, number> = { CRITICAL: 40, HIGH: 20, MEDIUM: 7, LOW: 2, INFO: 0 };
      for (const level of THREAT_LEVELS) {
        expect(healthScore({ [level]: 2 }).score, level).to.equal(Math.max(0, 100 - 2 * documented[level]));
      }
    });
  });
});
