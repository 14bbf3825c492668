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
 */
import type { ConditionChange } from '../domain/conditions/condition.js';
import type { ResolvedTarget, Scan, SkippedTarget } from '../domain/scans/scan.js';
import { webUrlOf } from '../domain/scanners/targets.js';
import { sessionProblem } from '../domain/scanners/zap-plan.js';
import { parseLoginRecording } from '../domain/targets/login-recording.js';
import type { LoginReplayer, TargetRepository, WorkloadInputs } from './ports.js';

export const AUTHENTICATION_FAILED = 'Authentication Failed';
export const AUTHENTICATION_CONDITION = 'Authenticated' satisfies ConditionChange['type'];

export interface PreparedScan {
  ready: ResolvedTarget[];
  skipped: SkippedTarget[];
  inputs: WorkloadInputs;
  /** Condition changes for the scan, applied by the one condition helper. */
  conditions: ConditionChange[];
}

const WEB_TYPES = new Set(['OWASP_ZAP', 'OWASP_ZAP_ACTIVE']);

export class WebScanPreparation {
  constructor(
    private readonly targets: TargetRepository,
    /** Undefined where the workload replays the login itself (Kubernetes). */
    private readonly replayer: LoginReplayer | undefined,
  ) {}

  async prepare(scan: Scan, resolved: readonly ResolvedTarget[]): Promise<PreparedScan> {
    const unchanged: PreparedScan = { ready: [...resolved], skipped: [], inputs: {}, conditions: [] };
    // ZAP scans take one target each (TARGETS_PER_SCAN).
    const target = resolved[0];
    if (!WEB_TYPES.has(scan.type) || target === undefined) return unchanged;
    const stored = this.targets.findById(scan.accountId, target.targetId);
    if (stored === undefined) return unchanged;
    const definition = stored.openApiFile === undefined ? undefined : this.targets.attachment(scan.accountId, stored.id, 'openapi');
    const inputs: WorkloadInputs = {
      settings: stored.zap,
      ...(definition === undefined ? {} : { apiDefinition: { fileName: definition.fileName, content: definition.content } }),
    };
    const recording = scan.isAuthenticated && stored.authSeleniumFile !== undefined ? this.targets.attachment(scan.accountId, stored.id, 'selenium') : undefined;
    if (recording === undefined) return { ...unchanged, inputs };
    if (this.replayer === undefined) return { ...unchanged, inputs: { ...inputs, loginRecording: { fileName: recording.fileName, content: recording.content } } };
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
      conditions: [this.condition('True', 'LoginReplayed', `the login recording '${recording.fileName}' logged in to ${target.target}; ZAP scans with its session (${carried})`)],
    };
  }

  private condition(status: 'True' | 'False', reason: string, message: string): ConditionChange {
    return { type: AUTHENTICATION_CONDITION, status, reason, message };
  }
}
