/**
 * The ZAP Automation Framework plan for one web scan, as YAML text
 * (`zap.sh -cmd -autorun plan.yaml`). Pure: the runner writes the text into
 * the scan's directory.
 *
 * Jobs, in order: passive scan settings; the target's headers and cookies as
 * replacer rules; seed URLs requested so they are in the site tree; the
 * spider; waiting for the passive scanner; the active scan (OWASP_ZAP_ACTIVE
 * only); the Traditional JSON report that the ZAP parser reads; the exit
 * status.
 *
 * ZAP exits 2 when the plan has warnings (a seed URL or the spider's start
 * answering other than 200 is one), even with failOnWarning: false, and a
 * non-zero exit fails a Kubernetes Job before its results are uploaded. The
 * exitStatus job (automation add-on 0.44.0 and later; ExitStatusJob.java)
 * sets the exit value from the plan's state when it runs last: warnings
 * exit 0, errors still exit 1. It sets no warn/error levels, so alerts do
 * not change the exit code: findings are results, not failures.
 *
 * ZAP replaces `${NAME}` in plan values with its environment variables, so a
 * header value `${SECRET}` would send ZAP's environment to the target. Values
 * from the target's settings that contain `${` are refused.
 */
import { InvalidRequestError } from '../errors.js';
import type { ZapSettingsInputValue } from './zap-settings.js';
import { domainOf as parsedDomain, type DomainScope } from './zap-hosts.js';

export const ZAP_CONTEXT = 'vigil';
export const ZAP_USER = 'vigil';
export const ZAP_REPORT_TEMPLATE = 'traditional-json';

/** The exitStatus job's values: a plan with warnings completed; one with errors did not. */
const ZAP_EXIT_VALUES = { okExitValue: 0, warnExitValue: 0, errorExitValue: 1 } as const;

/** Time boxes, in minutes: a web scan must end even on a site that never stops producing URLs. */
const ZAP_TIME_LIMITS = { spiderMinutes: 10, passiveWaitMinutes: 10, activeScanMinutes: 60, activeRuleMinutes: 10 } as const;

export interface ZapPlanInput {
  /** The http(s) URL to scan. */
  targetUrl: string;
  /** OWASP_ZAP_ACTIVE: add the active scan (attack requests). */
  active: boolean;
  reportDir: string;
  reportFile: string;
  /** The target's scanner_settings.zap; missing fields take their defaults. */
  settings?: ZapSettingsInputValue;
  /** A ZAP client (Zest) login script to replay before crawling. */
  authScriptFile?: string;
  /** The session a replayed login recording left: sent with every request to the target's scope. */
  session?: ZapSession;
  /** Path of an API definition file for the openapi job (OpenAPI 2.0 or 3.x). */
  apiDefinitionFile?: string;
}

/**
 * Cookies the login browser held for the target (domain as the browser
 * reports it: a host-only cookie has the bare host, a domain cookie a
 * leading dot) and an Authorization header the pages sent.
 */
export interface ZapSession {
  cookies: ReadonlyArray<{ name: string; value: string; domain: string }>;
  authorization?: string;
}

type Yaml = string | number | boolean | Yaml[] | { [key: string]: Yaml };

export function zapAutomationPlan(input: ZapPlanInput): string {
  const plan: Yaml = { env: environment(input), jobs: jobs(input) };
  return ['# ZAP Automation Framework plan written by Vigil for one Scan.', ...yamlBlock(plan, ''), ''].join('\n');
}

function environment(input: ZapPlanInput): Yaml {
  const settings = input.settings ?? {};
  const authenticated = input.authScriptFile !== undefined;
  const context: Record<string, Yaml> = {
    name: ZAP_CONTEXT,
    urls: [checked(input.targetUrl, 'the target URL'), ...(settings.seed_urls ?? []).map((url) => checked(url, 'seed_urls'))],
    includePaths: includePaths(input.targetUrl, settings),
    excludePaths: excludePaths(settings),
  };
  if (authenticated) Object.assign(context, authentication(input.authScriptFile!));
  return {
    contexts: [context],
    parameters: { failOnError: true, failOnWarning: false, progressToStdout: true },
  };
}

function authentication(scriptFile: string): Record<string, Yaml> {
  return {
    authentication: {
      method: 'client',
      // No loginPageWait: zaproxy 2.16.1's automation add-on (0.49.0) reads it only for the `browser` method.
      parameters: { script: checked(scriptFile, 'the login script path'), scriptEngine: 'Mozilla Zest', diagnostics: false },
      verification: { method: 'autodetect' },
    },
    sessionManagement: { method: 'autodetect' },
    users: [{ name: ZAP_USER, credentials: {} }],
  };
}

/**
 * The session joins the target's own headers and cookies (after them, so it
 * wins where both set one): the replacer sends it with every request to the
 * target and its included domains, never to third parties.
 */
function withSession(targetUrl: string, settings: ZapSettingsInputValue, session: ZapSession | undefined): ZapSettingsInputValue {
  if (session === undefined) return settings;
  const targetHost = new URL(targetUrl).hostname;
  const cookies = session.cookies.map((cookie) => ({
    name: cookie.name,
    value: cookie.value,
    // A host-only cookie of the target host goes to that host only.
    ...(cookie.domain === targetHost ? {} : { domain: cookie.domain }),
  }));
  const headers = session.authorization === undefined ? [] : [{ key: 'Authorization', value: session.authorization }];
  return { ...settings, cookies: [...(settings.cookies ?? []), ...cookies], headers: [...(settings.headers ?? []), ...headers] };
}

const SESSION_COOKIE_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/;
const SESSION_TEXT = /^[^\x00-\x1f\x7f;]{0,4096}$/;
const MAX_SESSION_COOKIES = 50;

/**
 * Why a session cannot be handed to ZAP as it is, or undefined: the same
 * rules as the target's own cookies and headers (no line breaks or
 * semicolons that would start another header or attribute, no `${` that ZAP
 * would expand from its environment, bounded counts and lengths).
 */
export function sessionProblem(session: ZapSession): string | undefined {
  if (session.cookies.length > MAX_SESSION_COOKIES)
    return `the browser holds ${session.cookies.length} cookies for the target; at most ${MAX_SESSION_COOKIES} are handed to ZAP`;
  for (const cookie of session.cookies) {
    if (!SESSION_COOKIE_NAME.test(cookie.name) || !SESSION_TEXT.test(cookie.value) || cookie.value.includes('${') || !SESSION_TEXT.test(cookie.domain)) {
      return `the session cookie '${cookie.name.slice(0, 40)}' has characters that cannot go into a Cookie header for ZAP (control characters, ';' or '\${')`;
    }
  }
  const authorization = session.authorization;
  if (authorization !== undefined && (/[\r\n\x00]/.test(authorization) || authorization.includes('${') || authorization.length > 8192)) {
    return "the Authorization header the application sent cannot be handed to ZAP (line breaks, '${' or over 8192 characters)";
  }
  return undefined;
}

function jobs(input: ZapPlanInput): Yaml[] {
  const settings = withSession(input.targetUrl, input.settings ?? {}, input.session);
  const user: Record<string, Yaml> = input.authScriptFile === undefined ? {} : { user: ZAP_USER };
  const list: Yaml[] = [
    {
      type: 'passiveScan-config',
      // Third-party scripts are never in scope (they are not the customer's to
      // attack); passively scanning out-of-scope responses is how they are checked.
      parameters: { maxAlertsPerRule: 10, scanOnlyInScope: settings.scan_third_party_javascript !== true },
    },
  ];
  const rules = replacerRules(input.targetUrl, settings);
  if (rules.length > 0) list.push({ type: 'replacer', parameters: { deleteAllRules: true }, rules });
  const seeds = settings.seed_urls ?? [];
  if (seeds.length > 0)
    list.push({ type: 'requestor', parameters: { ...user }, requests: seeds.map((url) => ({ url: checked(url, 'seed_urls'), method: 'GET' })) });
  if (input.apiDefinitionFile !== undefined) {
    // Every operation of the definition is requested at the target's URL (not the servers the file names), in the context, so the scans below attack them too.
    list.push({
      type: 'openapi',
      parameters: {
        apiFile: checked(input.apiDefinitionFile, 'the API definition path'),
        targetUrl: checked(input.targetUrl, 'the target URL'),
        context: ZAP_CONTEXT,
        ...user,
      },
    });
  }
  list.push(
    { type: 'spider', parameters: { context: ZAP_CONTEXT, ...user, url: input.targetUrl, maxDuration: ZAP_TIME_LIMITS.spiderMinutes } },
    { type: 'passiveScan-wait', parameters: { maxDuration: ZAP_TIME_LIMITS.passiveWaitMinutes } },
  );
  if (input.active) {
    list.push({
      type: 'activeScan',
      parameters: {
        context: ZAP_CONTEXT,
        ...user,
        maxRuleDurationInMins: ZAP_TIME_LIMITS.activeRuleMinutes,
        maxScanDurationInMins: ZAP_TIME_LIMITS.activeScanMinutes,
      },
    });
  }
  list.push(
    {
      type: 'report',
      parameters: { template: ZAP_REPORT_TEMPLATE, reportDir: input.reportDir, reportFile: input.reportFile, reportTitle: 'Vigil web scan' },
    },
    { type: 'exitStatus', parameters: ZAP_EXIT_VALUES },
  );
  return list;
}

function includePaths(targetUrl: string, settings: ZapSettingsInputValue): string[] {
  const host = new URL(targetUrl).hostname;
  return [
    hostPattern({ host, subdomains: settings.scan_discovered_subdomains === true }),
    ...(settings.included_domains ?? []).map((domain) => hostPattern(domainOf(domain, 'included_domains'))),
  ];
}

function excludePaths(settings: ZapSettingsInputValue): string[] {
  return [
    ...(settings.excluded_domains ?? []).map((domain) => hostPattern(domainOf(domain, 'excluded_domains'))),
    // Already regular expressions over the whole URL, as ZAP takes them.
    ...(settings.excluded_urls ?? []).map((pattern) => checked(String(pattern), 'excluded_urls')),
  ];
}

/** Headers and cookies go only to the target and its included domains, never to third parties. */
function replacerRules(targetUrl: string, settings: ZapSettingsInputValue): Yaml[] {
  const inScope = includePaths(targetUrl, settings);
  const scopeUrl = inScope.length === 1 ? inScope[0]! : `(?:${inScope.join(')|(?:')})`;
  const headerRules: Yaml[] = (settings.headers ?? []).map((header) => ({
    description: `Vigil: header ${checkedHeaderText(header.key, 'headers')}`,
    url: scopeUrl,
    matchType: 'req_header',
    matchString: header.key,
    matchRegex: false,
    replacementString: checkedHeaderText(header.value, 'headers'),
    tokenProcessing: false,
  }));
  return [...headerRules, ...cookieRules(targetUrl, settings)];
}

/**
 * Cookies as Cookie headers. A cookie without a domain goes to the target host
 * only; one with a domain goes to that domain and its subdomains. ZAP's
 * replacer sets the header once per matching rule, the last rule winning, so
 * the rules run from the widest domain to the narrowest and each carries
 * every cookie that applies to its hosts. Path, expiry and the browser-only
 * attributes do not apply to ZAP's requests.
 * The rule does not clobber the session ZAP keeps for an authenticated user:
 * the network add-on runs request listeners (the replacer) before it applies
 * the user's session (BaseHttpSender: notifyRequestListeners, then
 * sendAuthenticated), which merges the session tokens into the header set here.
 */
function cookieRules(targetUrl: string, settings: ZapSettingsInputValue): Yaml[] {
  const cookies = (settings.cookies ?? []).map((cookie) => ({
    domain: cookie.domain === undefined || cookie.domain === '' ? undefined : domainOf(cookie.domain, 'cookies').host,
    pair: `${checkedHeaderText(cookie.name, 'cookies')}=${checkedHeaderText(cookie.value, 'cookies')}`,
  }));
  if (cookies.length === 0) return [];
  const targetHost = new URL(targetUrl).hostname;
  const covers = (domain: string, host: string) => host === domain || host.endsWith(`.${domain}`);
  const domains = [...new Set(cookies.flatMap((cookie) => (cookie.domain === undefined ? [] : [cookie.domain])))].sort((a, b) => a.length - b.length);
  const domainRules = domains.map((domain) => ({
    scope: domain,
    url: hostPattern({ host: domain, subdomains: true }),
    pairs: cookies.filter((cookie) => cookie.domain !== undefined && covers(cookie.domain, domain)).map((cookie) => cookie.pair),
  }));
  const hostRule = {
    scope: 'the target host',
    url: hostPattern({ host: targetHost }),
    pairs: cookies.filter((cookie) => cookie.domain === undefined || covers(cookie.domain, targetHost)).map((cookie) => cookie.pair),
  };
  return [...domainRules, hostRule]
    .filter((rule) => rule.pairs.length > 0)
    .map((rule) => ({
      description: `Vigil: cookies for ${rule.scope}`,
      url: rule.url,
      matchType: 'req_header',
      matchString: 'Cookie',
      matchRegex: false,
      replacementString: rule.pairs.join('; '),
      tokenProcessing: false,
    }));
}

/** A domain setting as ZAP gets it: with no `${` for ZAP to expand. */
function domainOf(raw: string, setting: string): DomainScope {
  return parsedDomain(checked(raw.trim(), setting), setting);
}

/** ZAP matches include and exclude patterns against the whole URL. */
function hostPattern({ host, subdomains = false }: DomainScope): string {
  return `^https?://${subdomains ? '(?:[^/?#@:]+\\.)?' : ''}${escapeRegex(host)}(?::\\d+)?(?:[/?#].*)?$`;
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** Header and cookie text: also no line breaks or NUL, which would start another header. */
function checkedHeaderText(value: string, setting: string): string {
  if (/[\r\n\x00]/.test(value)) {
    throw new InvalidRequestError(`scanner_settings.zap.${setting}: values must not contain line breaks; remove them`);
  }
  return checked(value, setting);
}

function checked(value: string, setting: string): string {
  if (value.includes('${')) {
    throw new InvalidRequestError(
      `scanner_settings.zap.${setting}: values must not contain '\${' (ZAP would replace it with an environment variable); remove it`,
    );
  }
  return value;
}

// --- YAML text: block style, every string double-quoted (JSON string syntax is valid YAML). ---

const PLAIN_KEY = /^[A-Za-z][A-Za-z0-9_-]*$/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function isInline(value: Yaml): boolean {
  return typeof value !== 'object' || (Array.isArray(value) ? value.length === 0 : Object.keys(value).length === 0);
}

function inline(value: Yaml): string {
  if (typeof value === 'string') return JSON.stringify(value.replace(LONE_SURROGATE, '\uFFFD'));
  if (typeof value !== 'object') return String(value);
  return Array.isArray(value) ? '[]' : '{}';
}

function yamlBlock(value: Yaml, indent: string): string[] {
  if (Array.isArray(value)) {
    return value.flatMap((item) => {
      if (isInline(item)) return [`${indent}- ${inline(item)}`];
      const lines = yamlBlock(item, `${indent}  `);
      return [`${indent}- ${lines[0]!.slice(indent.length + 2)}`, ...lines.slice(1)];
    });
  }
  if (typeof value !== 'object') return [`${indent}${inline(value)}`];
  return Object.entries(value).flatMap(([key, child]) => {
    const name = PLAIN_KEY.test(key) ? key : JSON.stringify(key);
    return isInline(child) ? [`${indent}${name}: ${inline(child)}`] : [`${indent}${name}:`, ...yamlBlock(child, `${indent}  `)];
  });
}
