/**
 * ZAP for OWASP_ZAP (spider and passive scan) and OWASP_ZAP_ACTIVE (the same
 * plus the active scan), run by the Automation Framework from a plan the
 * runner writes first (inputs()). One URL per Scan. Locally it needs a ZAP
 * installation with zap.sh on PATH; each run gets its own ZAP home directory
 * under outputDir so that two scans do not share (and lock) ~/.ZAP.
 *
 * Exit codes (automation add-on, ExtensionAutomation and ExitStatusJob,
 * checked for zaproxy 2.16.1): with -cmd -autorun ZAP exits 1 when the plan
 * has errors, 2 when it has only warnings (a seed URL answering 404 is one),
 * else 0. The plan's exitStatus job turns warnings into 0 so that the Job's
 * init container completes; locally 2 also counts as complete, since the
 * plan ran to its end (failOnWarning: false) and the report job wrote.
 *
 * Pinning (issue 16): ZAP keeps the host name (virtual hosting, SNI, cookies)
 * but resolves it only from a hosts file holding the addresses Vigil
 * checked. zap.sh passes no -D options to the JVM, so the property
 * jdk.net.hosts.file goes in JAVA_TOOL_OPTIONS, which every JVM reads. With
 * that property the JDK resolves names from the file alone, never DNS (ZAP's
 * HTTP client resolves through InetAddress): a name not in the file, such as
 * an included domain that did not resolve, cannot be reached. The hosts of
 * the target's settings were checked as its own host was, before the scan
 * started (web-scan-preparation.ts), and are in the file with it.
 */
import { InvalidRequestError } from '../errors.js';
import { ZapSettingsInput, type ZapSettingsInputValue } from './zap-settings.js';
import type { ScannerDefinition, ScannerInput, ScannerInputFile } from './definition.js';
import { outputPath } from './definition.js';
import { SCANNER_IMAGES } from './images.js';
import { checkTargetCount, hostsFileLines, webUrlOf } from './targets.js';
import { zapAutomationPlan, type ZapPlanInput } from './zap-plan.js';

export const ZAP_PLAN = 'zap-plan.yaml';
const ZAP_REPORT = 'zap-report.json';
const ZAP_HOSTS = 'zap-hosts';
/** The target's API definition as the openapi job reads it; the extension keeps the uploaded format. */
const zapApiDefinitionFile = (uploaded: string): string => (/\.json$/i.test(uploaded) ? 'zap-openapi.json' : 'zap-openapi.yaml');
const ZAP_HOME = 'zap-home';

/**
 * ZAP's built-in anti-CSRF token names. Setting token(0..n) on the command
 * line replaces list entries by index, so the defaults are written first and
 * the target's names appended, never overwriting them.
 */
const DEFAULT_ANTI_CSRF_TOKENS = [
  'anticsrf',
  'CSRFToken',
  '__RequestVerificationToken',
  'csrfmiddlewaretoken',
  'authenticity_token',
  'OWASP_CSRFTOKEN',
  'anoncsrf',
  'csrf_token',
  '_csrf',
  '_csrfSecret',
  '__csrf_magic',
  'CSRF',
  '_token',
  '_csrf_token',
  '_csrfToken',
];

export type ZapType = 'OWASP_ZAP' | 'OWASP_ZAP_ACTIVE';

/** Job start lines ("Job spider started") mapped to the share of the scan done when they appear. */
const PHASES: Record<ZapType, Record<string, number>> = {
  OWASP_ZAP: { requestor: 2, spider: 5, 'passiveScan-wait': 70, report: 95 },
  OWASP_ZAP_ACTIVE: { requestor: 2, spider: 5, 'passiveScan-wait': 25, activeScan: 30, report: 95 },
};
const JOB_STARTED = /\bJob (\S+) started\s*$/;
const PLAN_SUCCEEDED = /\bAutomation plan succeeded\b/;

function zapSettingsFrom(settings: unknown): ZapSettingsInputValue {
  if (settings === undefined || settings === null) return {};
  const result = ZapSettingsInput.safeParse(settings);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new InvalidRequestError(`scanner_settings.zap.${issue.path.join('.')}: ${issue.message}`);
  }
  return result.data;
}

function antiCsrfOptions(settings: ZapSettingsInputValue): string[] {
  const extra = (settings.anti_csrf_tokens ?? []).filter((name) => !DEFAULT_ANTI_CSRF_TOKENS.includes(name));
  if (extra.length === 0) return [];
  return [...DEFAULT_ANTI_CSRF_TOKENS, ...extra].flatMap((name, index) => [
    '-config',
    `anticsrf.tokens.token(${index}).name=${name}`,
    '-config',
    `anticsrf.tokens.token(${index}).enabled=true`,
  ]);
}

function zapArgs(type: ZapType, input: ScannerInput, ownHome: boolean): string[] {
  checkTargetCount(type, input.targets);
  const settings = zapSettingsFrom(input.settings);
  return [
    '-cmd',
    // No update checks or other calls home: ZAP only talks to the target.
    '-silent',
    ...(ownHome ? ['-dir', outputPath(input.outputDir, ZAP_HOME)] : []),
    ...antiCsrfOptions(settings),
    '-autorun',
    outputPath(input.outputDir, ZAP_PLAN),
  ];
}

function zapProgress(type: ZapType, line: string): number | undefined {
  if (PLAN_SUCCEEDED.test(line)) return 100;
  const job = JOB_STARTED.exec(line)?.[1];
  return job === undefined ? undefined : PHASES[type][job];
}

function pinningEnv(input: ScannerInput): { env: Record<string, string> } | Record<string, never> {
  if (input.addresses === undefined) return {};
  return { env: { JAVA_TOOL_OPTIONS: `-Djdk.net.hosts.file=${outputPath(input.outputDir, ZAP_HOSTS)}` } };
}

/**
 * The target host and the host names of its settings (seed URLs, included
 * domains) at their checked addresses; localhost too, which ZAP's own local
 * services name.
 */
function zapHostsFile(input: ScannerInput): ScannerInputFile {
  const hosts = [...input.targets, ...Object.keys(input.addresses ?? {})];
  return { file: ZAP_HOSTS, content: ['127.0.0.1 localhost', ...hostsFileLines(hosts, input.addresses), ''].join('\n') };
}

/**
 * What the plan is written from. Kubernetes' login step (vigil login-replay)
 * writes the plan again from this, with the session it got, once the login
 * ran in the Job.
 */
export function zapPlanInputOf(type: ZapType, input: ScannerInput): ZapPlanInput {
  checkTargetCount(type, input.targets);
  const apiFile = input.apiDefinition === undefined ? undefined : zapApiDefinitionFile(input.apiDefinition.fileName);
  return {
    targetUrl: webUrlOf(input.targets[0]!),
    active: type === 'OWASP_ZAP_ACTIVE',
    reportDir: input.outputDir,
    reportFile: ZAP_REPORT,
    settings: zapSettingsFrom(input.settings),
    ...(input.authScriptFile === undefined ? {} : { authScriptFile: input.authScriptFile }),
    ...(input.session === undefined ? {} : { session: input.session }),
    ...(apiFile === undefined ? {} : { apiDefinitionFile: outputPath(input.outputDir, apiFile) }),
  };
}

function zapDefinition(type: ZapType): ScannerDefinition {
  return {
    type,
    container: (input) => ({ image: SCANNER_IMAGES.zap, command: ['zap.sh'], args: zapArgs(type, input, false), ...pinningEnv(input) }),
    local: (input) => ({ program: 'zap.sh', args: zapArgs(type, input, true), ...pinningEnv(input) }),
    installHint: 'the ZAP 2.16.1 Linux package from zaproxy.org/download, with its directory (holding zap.sh) on PATH',
    inputs(input) {
      const apiFile = input.apiDefinition === undefined ? undefined : zapApiDefinitionFile(input.apiDefinition.fileName);
      return [
        { file: ZAP_PLAN, content: zapAutomationPlan(zapPlanInputOf(type, input)) },
        ...(input.addresses === undefined ? [] : [zapHostsFile(input)]),
        ...(apiFile === undefined ? [] : [{ file: apiFile, content: input.apiDefinition!.content }]),
      ];
    },
    completeExitCodes: [0, 2],
    outputs: [{ file: ZAP_REPORT, contentType: 'application/json' }],
    progressFrom: (line) => zapProgress(type, line),
  };
}

export const zap = zapDefinition('OWASP_ZAP');
export const zapActive = zapDefinition('OWASP_ZAP_ACTIVE');
