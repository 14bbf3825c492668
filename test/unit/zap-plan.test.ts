import { expect } from 'chai';
import { parse } from 'yaml';
import { InvalidRequestError } from '../../src/domain/errors.js';
import { ZAP_CONTEXT, ZAP_REPORT_TEMPLATE, ZAP_USER, sessionProblem, zapAutomationPlan, type ZapPlanInput } from '../../src/domain/scanners/zap-plan.js';

interface Job {
  type: string;
  parameters?: Record<string, unknown>;
  rules?: Array<Record<string, unknown>>;
  requests?: Array<Record<string, unknown>>;
}
interface Context {
  name: string;
  urls: string[];
  includePaths: string[];
  excludePaths: string[];
  authentication?: { method: string; parameters: Record<string, unknown>; verification: { method: string } };
  sessionManagement?: { method: string };
  users?: Array<{ name: string }>;
}
interface Plan {
  env: { contexts: Context[]; parameters: Record<string, unknown> };
  jobs: Job[];
}

const BASE: ZapPlanInput = { targetUrl: 'https://shop.example.com/', active: false, reportDir: '/work/scan-1', reportFile: 'zap-report.json' };

function plan(overrides: Partial<ZapPlanInput> = {}): Plan {
  return parse(zapAutomationPlan({ ...BASE, ...overrides })) as Plan;
}

function job(parsed: Plan, type: string): Job | undefined {
  return parsed.jobs.find((candidate) => candidate.type === type);
}

/** ZAP matches context patterns against the whole URL (Java Matcher.matches). */
function matchesAny(patterns: readonly string[], url: string): boolean {
  return patterns.some((pattern) => new RegExp(`^(?:${pattern})$`).test(url));
}

describe('ZAP automation plan (zap-plan.ts)', () => {
  it('a passive scan spiders, waits for the passive scanner and writes the report, without attacking', () => {
    expect(plan().jobs.map((entry) => entry.type)).to.deep.equal(['passiveScan-config', 'spider', 'passiveScan-wait', 'report', 'exitStatus']);
  });

  it('an active scan adds the active scan after the passive wait and before the report', () => {
    const types = plan({ active: true }).jobs.map((entry) => entry.type);
    expect(types).to.deep.equal(['passiveScan-config', 'spider', 'passiveScan-wait', 'activeScan', 'report', 'exitStatus']);
    expect(job(plan({ active: true }), 'activeScan')!.parameters).to.include({ context: ZAP_CONTEXT });
  });

  it('ends with an exitStatus job that exits 0 on warnings and 1 on errors, whatever the alerts', () => {
    for (const parsed of [plan(), plan({ active: true })]) {
      const exit = parsed.jobs.at(-1)!;
      expect(exit.type).to.equal('exitStatus');
      // The parameters ExitStatusJob.Parameters reads (automation add-on >= 0.44.0); no warnLevel/errorLevel, so findings never fail a scan.
      expect(exit.parameters).to.deep.equal({ okExitValue: 0, warnExitValue: 0, errorExitValue: 1 });
    }
  });

  it('writes the Traditional JSON report into the scan directory', () => {
    expect(job(plan(), 'report')!.parameters).to.include({ template: ZAP_REPORT_TEMPLATE, reportDir: '/work/scan-1', reportFile: 'zap-report.json' });
    expect(ZAP_REPORT_TEMPLATE).to.equal('traditional-json');
  });

  it('fails the plan on errors and prints job progress for the runner to read', () => {
    expect(plan().env.parameters).to.deep.equal({ failOnError: true, failOnWarning: false, progressToStdout: true });
  });

  it('scopes the context to the target host and time-boxes every job', () => {
    const parsed = plan();
    const context = parsed.env.contexts[0]!;
    expect(context.name).to.equal(ZAP_CONTEXT);
    expect(context.urls).to.deep.equal(['https://shop.example.com/']);
    expect(matchesAny(context.includePaths, 'https://shop.example.com/cart?item=1')).to.equal(true);
    expect(matchesAny(context.includePaths, 'http://shop.example.com:8080/')).to.equal(true);
    expect(matchesAny(context.includePaths, 'https://shop.example.com.evil.test/')).to.equal(false);
    expect(matchesAny(context.includePaths, 'https://evil.test/?shop.example.com')).to.equal(false);
    expect(matchesAny(context.includePaths, 'https://api.shop.example.com/')).to.equal(false);
    expect(context.excludePaths).to.deep.equal([]);
    expect(job(parsed, 'spider')!.parameters).to.include({ context: ZAP_CONTEXT, url: 'https://shop.example.com/' });
    expect(job(parsed, 'spider')!.parameters!.maxDuration).to.be.a('number').greaterThan(0);
    expect(job(parsed, 'passiveScan-wait')!.parameters!.maxDuration).to.be.a('number').greaterThan(0);
    expect(job(plan({ active: true }), 'activeScan')!.parameters!.maxScanDurationInMins)
      .to.be.a('number')
      .greaterThan(0);
  });

  it('includes discovered subdomains and included domains, and excludes excluded domains and URLs', () => {
    const context = plan({
      settings: {
        scan_discovered_subdomains: true,
        included_domains: ['cdn.example.com', '*.static.example.net'],
        excluded_domains: ['ads.example.com'],
        excluded_urls: ['.*logout.*'],
      },
    }).env.contexts[0]!;
    expect(matchesAny(context.includePaths, 'https://api.shop.example.com/v1')).to.equal(true);
    expect(matchesAny(context.includePaths, 'https://cdn.example.com/app.js')).to.equal(true);
    expect(matchesAny(context.includePaths, 'https://img.cdn.example.com/a.png')).to.equal(false);
    expect(matchesAny(context.includePaths, 'https://eu.static.example.net/a.css')).to.equal(true);
    expect(matchesAny(context.excludePaths, 'https://ads.example.com/pixel')).to.equal(true);
    expect(matchesAny(context.excludePaths, 'https://shop.example.com/account/logout')).to.equal(true);
    expect(context.excludePaths).to.include('.*logout.*');
  });

  it('crawls from the seed URLs too', () => {
    const parsed = plan({ settings: { seed_urls: ['https://shop.example.com/start', 'https://shop.example.com/hidden'] } });
    expect(parsed.env.contexts[0]!.urls).to.deep.equal(['https://shop.example.com/', 'https://shop.example.com/start', 'https://shop.example.com/hidden']);
    const types = parsed.jobs.map((entry) => entry.type);
    expect(types.indexOf('requestor')).to.be.lessThan(types.indexOf('spider'));
    expect(job(parsed, 'requestor')!.requests!.map((request) => request.url)).to.deep.equal([
      'https://shop.example.com/start',
      'https://shop.example.com/hidden',
    ]);
  });

  it("sends the target's headers only to in-scope hosts, values exactly as given", () => {
    const value = 'Bearer a"b\\c \u00e9\u6f22';
    const replacer = job(plan({ settings: { headers: [{ key: 'Authorization', value }] } }), 'replacer')!;
    const [rule] = replacer.rules!;
    expect(rule).to.include({ matchType: 'req_header', matchString: 'Authorization', matchRegex: false, replacementString: value });
    expect(matchesAny([rule!.url as string], 'https://shop.example.com/api')).to.equal(true);
    expect(matchesAny([rule!.url as string], 'https://third-party.test/')).to.equal(false);
    expect(job(plan(), 'replacer')).to.equal(undefined);
  });

  it('sends cookies as one Cookie header per scope, the narrowest rule last and carrying every cookie that applies', () => {
    const replacer = job(
      plan({
        settings: {
          cookies: [
            { name: 'session', value: 'abc' },
            { name: 'pref', value: 'dark', domain: '.example.com' },
            { name: 'cdn', value: '1', domain: 'cdn.example.com' },
          ],
        },
      }),
      'replacer',
    )!;
    const rules = replacer.rules!.filter((rule) => rule.matchString === 'Cookie');
    expect(rules.map((rule) => rule.replacementString)).to.deep.equal(['pref=dark', 'pref=dark; cdn=1', 'session=abc; pref=dark']);
    const last = rules.at(-1)!;
    expect(matchesAny([last.url as string], 'https://shop.example.com/')).to.equal(true);
    expect(matchesAny([last.url as string], 'https://cdn.example.com/')).to.equal(false);
  });

  it('replays the login script as client authentication, and crawls and attacks as that user', () => {
    const parsed = plan({ active: true, authScriptFile: '/work/scan-1/login.zst' });
    const context = parsed.env.contexts[0]!;
    expect(context.authentication!.method).to.equal('client');
    expect(context.authentication!.parameters).to.include({ script: '/work/scan-1/login.zst', scriptEngine: 'Mozilla Zest' });
    // zaproxy 2.16.1's automation add-on reads loginPageWait only for the browser method; client scripts ignore it.
    expect(context.authentication!.parameters).to.not.have.property('loginPageWait');
    expect(context.sessionManagement!.method).to.equal('autodetect');
    expect(context.users!.map((user) => user.name)).to.deep.equal([ZAP_USER]);
    expect(job(parsed, 'spider')!.parameters).to.include({ user: ZAP_USER });
    expect(job(parsed, 'activeScan')!.parameters).to.include({ user: ZAP_USER });
    expect(plan().env.contexts[0]!.authentication).to.equal(undefined);
    expect(job(plan(), 'spider')!.parameters).to.not.have.property('user');
  });

  it('passively scans third-party responses only when the target asks for third-party JavaScript', () => {
    expect(job(plan(), 'passiveScan-config')!.parameters).to.include({ scanOnlyInScope: true });
    expect(job(plan({ settings: { scan_third_party_javascript: true } }), 'passiveScan-config')!.parameters).to.include({ scanOnlyInScope: false });
  });

  it('refuses values ZAP would expand from its environment', () => {
    expect(() => zapAutomationPlan({ ...BASE, settings: { headers: [{ key: 'X-Leak', value: '${AWS_SECRET_ACCESS_KEY}' }] } })).to.throw(
      InvalidRequestError,
      /must not contain '\$\{'/,
    );
    expect(() => zapAutomationPlan({ ...BASE, settings: { excluded_urls: ['.*${HOME}.*'] } })).to.throw(InvalidRequestError, /excluded_urls/);
    expect(() => zapAutomationPlan({ ...BASE, settings: { cookies: [{ name: 'a', value: '${PATH}' }] } })).to.throw(InvalidRequestError, /cookies/);
  });

  it('refuses line breaks in header and cookie text, which would start another header', () => {
    expect(() => zapAutomationPlan({ ...BASE, settings: { headers: [{ key: 'X-A', value: 'a\r\nX-Injected: 1' }] } })).to.throw(
      InvalidRequestError,
      /line breaks/,
    );
    expect(() => zapAutomationPlan({ ...BASE, settings: { cookies: [{ name: 'a', value: 'b\nc' }] } })).to.throw(InvalidRequestError, /line breaks/);
  });

  it('refuses a domain setting that is not a domain name, saying how to write it', () => {
    expect(() => zapAutomationPlan({ ...BASE, settings: { included_domains: ['exa mple.com'] } })).to.throw(
      InvalidRequestError,
      /example\.com or \*\.example\.com/,
    );
    expect(() => zapAutomationPlan({ ...BASE, settings: { excluded_domains: ['user@ads.example.com'] } })).to.throw(InvalidRequestError, /excluded_domains/);
  });

  it('keeps hostile strings as data: quotes, newlines, YAML syntax and lone surrogates', () => {
    const tricky = 'a: b\n- c # d\t"e" \'f\' {g} [h] &i *j !k |l >m %n @o `p \\';
    const parsed = plan({
      settings: { headers: [{ key: 'X-Tricky', value: tricky.replace(/[\n\t]/g, ' ') }], excluded_urls: [tricky, '^https://shop\\.example\\.com/\\d+$'] },
    });
    expect(job(parsed, 'replacer')!.rules![0]!.replacementString).to.equal(tricky.replace(/[\n\t]/g, ' '));
    expect(parsed.env.contexts[0]!.excludePaths).to.deep.equal([tricky, '^https://shop\\.example\\.com/\\d+$']);
    const surrogate = plan({ settings: { headers: [{ key: 'X-S', value: 'a\ud800b' }] } });
    expect(job(surrogate, 'replacer')!.rules![0]!.replacementString).to.equal('a\ufffdb');
  });

  it("sends a replayed login session with every request to the target: its cookies and Authorization header, after the target's own", () => {
    const parsed = plan({
      settings: { headers: [{ key: 'X-Team', value: 'red' }], cookies: [{ name: 'lang', value: 'en' }] },
      session: {
        cookies: [
          { name: 'sid', value: 's3cret', domain: 'shop.example.com' },
          { name: 'sso', value: 't0k', domain: '.example.com' },
        ],
        authorization: 'Bearer abc',
      },
    });
    const rules = job(parsed, 'replacer')!.rules!;
    expect(rules.map((rule) => [rule.matchString, rule.replacementString])).to.deep.equal([
      ['X-Team', 'red'],
      ['Authorization', 'Bearer abc'],
      ['Cookie', 'sso=t0k'],
      ['Cookie', 'lang=en; sid=s3cret; sso=t0k'],
    ]);
    const hostRule = rules.at(-1)!;
    expect(new RegExp(hostRule.url as string).test('https://shop.example.com/cart')).to.equal(true);
    expect(new RegExp(hostRule.url as string).test('https://cdn.other.com/x.js')).to.equal(false);
  });

  it('imports an API definition with the openapi job against the target URL, before the spider', () => {
    const parsed = plan({ apiDefinitionFile: '/work/scan-1/zap-openapi.yaml' });
    expect(job(parsed, 'openapi')!.parameters).to.deep.equal({
      apiFile: '/work/scan-1/zap-openapi.yaml',
      targetUrl: 'https://shop.example.com/',
      context: ZAP_CONTEXT,
    });
    const types = parsed.jobs.map((candidate) => candidate.type);
    expect(types.indexOf('openapi')).to.be.lessThan(types.indexOf('spider'));
    expect(job(plan(), 'openapi')).to.equal(undefined);
  });

  it('names what keeps a session from ZAP: control characters, semicolons, ${ and too many cookies', () => {
    expect(sessionProblem({ cookies: [{ name: 'sid', value: 'ok', domain: 'a.com' }], authorization: 'Bearer x' })).to.equal(undefined);
    expect(sessionProblem({ cookies: [{ name: 'sid', value: 'a;b', domain: 'a.com' }] })).to.match(/session cookie 'sid'/);
    expect(sessionProblem({ cookies: [{ name: 'sid', value: '${HOME}', domain: 'a.com' }] })).to.match(/session cookie 'sid'/);
    expect(sessionProblem({ cookies: [], authorization: 'Bearer x\r\nX-Evil: 1' })).to.match(/Authorization header/);
    expect(sessionProblem({ cookies: Array.from({ length: 51 }, (_, i) => ({ name: `c${i}`, value: 'v', domain: 'a.com' })) })).to.match(/51 cookies/);
  });
});
