/**
 * What a web scan (OWASP_ZAP, OWASP_ZAP_ACTIVE) needs from its Target before
 * the scanner starts: the target's ZAP settings, its API definition, and, when
 * the Scan is authenticated and the target has a login recording, the login.
 *
 * In the embedded runtime the login is replayed here, as its own step before
 * the workload starts (so before Vigil checks the scanner is installed): a
 * failed login skips that target with skipped_reason `Authentication Failed`
 * and a condition naming the command that failed. On Kubernetes no replayer
 * is given: the recording travels to the Job, whose login step replays it.
 *
 * First, the hosts the target's ZAP settings send ZAP to (seed URLs, included
 * domains) obey the address rules as the target's own host does (issue 26):
 * resolved here, a private or reserved answer skips the target, and the
 * checked addresses are pinned in ZAP's hosts file with the target's. A name
 * that does not resolve is left out, so ZAP cannot reach it either.
 */
import type { ConditionChange } from '../domain/conditions/condition.js';
import { InvalidRequestError } from '../domain/errors.js';
import { hostOf, resolutionProblem, type AddressRefusal } from '../domain/scans/resolve-targets.js';
import type { ResolvedTarget, Scan, SkippedTarget } from '../domain/scans/scan.js';
import { isIpv4Literal, webUrlOf } from '../domain/scanners/targets.js';
import { settingsHosts } from '../domain/scanners/zap-hosts.js';
import { sessionProblem } from '../domain/scanners/zap-plan.js';
import type { ZapSettingsValue } from '../domain/scanners/zap-settings.js';
import type { Cidr } from '../domain/targets/ipv4.js';
import { parseLoginRecording } from '../domain/targets/login-recording.js';
import { parseTargetAddress } from '../domain/targets/target-address.js';
import type { HostResolver, LoginReplayer, TargetRepository, WorkloadInputs } from './ports.js';
import { resolveHost } from './resolve-host.js';

export const AUTHENTICATION_FAILED = 'Authentication Failed';
export const AUTHENTICATION_CONDITION = 'Authenticated' satisfies ConditionChange['type'];

export interface PreparedScan {
  ready: ResolvedTarget[];
  skipped: SkippedTarget[];
  inputs: WorkloadInputs;
  /** Condition changes for the scan, applied by the one condition helper. */
  conditions: ConditionChange[];
  /** Hosts of the settings whose address was refused, for the service's log. */
  refused?: AddressRefusal[];
}

/** The scanning address rules, as the controller applies them to the targets' hosts. */
export interface AddressRules {
  resolver: HostResolver;
  allowTargets: readonly Cidr[];
}

type HostsOutcome = { addresses: Record<string, string[]> } | { skippedReason: string; refused?: AddressRefusal };

const WEB_TYPES = new Set(['OWASP_ZAP', 'OWASP_ZAP_ACTIVE']);

export class WebScanPreparation {
  constructor(
    private readonly targets: TargetRepository,
    /** Undefined where the workload replays the login itself (Kubernetes). */
    private readonly replayer: LoginReplayer | undefined,
    private readonly rules: AddressRules,
  ) {}

  async prepare(scan: Scan, resolved: readonly ResolvedTarget[]): Promise<PreparedScan> {
    const unchanged: PreparedScan = { ready: [...resolved], skipped: [], inputs: {}, conditions: [] };
    // ZAP scans take one target each (TARGETS_PER_SCAN).
    const target = resolved[0];
    if (!WEB_TYPES.has(scan.type) || target === undefined) return unchanged;
    const stored = this.targets.findById(scan.accountId, target.targetId);
    if (stored === undefined) return unchanged;
    const hosts = await this.settingsHostAddresses(scan, target, stored.zap);
    if ('skippedReason' in hosts) {
      return {
        ready: resolved.slice(1),
        skipped: [{ targetId: target.targetId, skippedReason: hosts.skippedReason }],
        inputs: {},
        conditions: [],
        ...(hosts.refused === undefined ? {} : { refused: [hosts.refused] }),
      };
    }
    const definition = stored.openApiFile === undefined ? undefined : this.targets.attachment(scan.accountId, stored.id, 'openapi');
    const inputs: WorkloadInputs = {
      settings: stored.zap,
      settingsHostAddresses: hosts.addresses,
      ...(definition === undefined ? {} : { apiDefinition: { fileName: definition.fileName, content: definition.content } }),
    };
    const recording =
      scan.isAuthenticated && stored.authSeleniumFile !== undefined ? this.targets.attachment(scan.accountId, stored.id, 'selenium') : undefined;
    if (recording === undefined) return { ...unchanged, inputs };
    if (this.replayer === undefined)
      return { ...unchanged, inputs: { ...inputs, loginRecording: { fileName: recording.fileName, content: recording.content } } };
    const outcome = await this.replayer.replay(parseLoginRecording(recording.fileName, recording.content), webUrlOf(target.target));
    const problem = outcome.ok ? sessionProblem(outcome.session) : outcome.message;
    if (problem !== undefined || !outcome.ok) {
      return {
        ready: resolved.slice(1),
        skipped: [{ targetId: target.targetId, skippedReason: AUTHENTICATION_FAILED }],
        inputs: {},
        conditions: [this.condition('False', 'LoginFailed', `the login recording '${recording.fileName}' for ${target.target} failed: ${problem}`)],
      };
    }
    const { cookies, authorization } = outcome.session;
    const carried = `${cookies.length} cookie${cookies.length === 1 ? '' : 's'}${authorization === undefined ? '' : ' and an Authorization header'}`;
    return {
      ...unchanged,
      inputs: { ...inputs, session: outcome.session },
      conditions: [
        this.condition(
          'True',
          'LoginReplayed',
          `the login recording '${recording.fileName}' logged in to ${target.target}; ZAP scans with its session (${carried})`,
        ),
      ],
    };
  }

  /** The checked addresses of the settings' host names, or why the target is skipped (settings stored before the rules held them). */
  private async settingsHostAddresses(scan: Scan, target: ResolvedTarget, zap: ZapSettingsValue): Promise<HostsOutcome> {
    let hosts;
    try {
      hosts = settingsHosts(zap, hostOf(target.target));
    } catch (error) {
      // An included domain that is not a domain name at all (stored before it was checked on write).
      if (error instanceof InvalidRequestError) return { skippedReason: error.message };
      throw error;
    }
    const outcomes = await Promise.all(hosts.map((host) => this.checkHost(scan, host.host, host.setting)));
    const addresses: Record<string, string[]> = {};
    for (const outcome of outcomes) {
      if ('skippedReason' in outcome) return outcome;
      Object.assign(addresses, outcome.addresses);
    }
    return { addresses };
  }

  private async checkHost(scan: Scan, host: string, setting: string): Promise<HostsOutcome> {
    try {
      // The written rules first: an IPv6 or private literal never reaches DNS (and ZAP connects to a literal without the hosts file).
      parseTargetAddress(host, this.rules.allowTargets, setting);
    } catch (error) {
      if (error instanceof InvalidRequestError) return { skippedReason: error.message };
      throw error;
    }
    const resolution = await resolveHost(this.rules.resolver, host);
    if (!resolution.ok || resolution.addresses.length === 0) return { addresses: {} };
    const problem = resolutionProblem(resolution, this.rules.allowTargets);
    if (problem === undefined) return { addresses: isIpv4Literal(host) ? {} : { [host]: resolution.addresses } };
    const skippedReason = `${setting} names '${host}', which ${problem.reason}`;
    return { skippedReason, ...(problem.address === undefined ? {} : { refused: { scanId: scan.id, host, address: problem.address, reason: skippedReason } }) };
  }

  private condition(status: 'True' | 'False', reason: string, message: string): ConditionChange {
    return { type: AUTHENTICATION_CONDITION, status, reason, message };
  }
}
