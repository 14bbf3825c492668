/**
 * The login step of an authenticated ZAP scan's Job (issue 15): an init
 * container running Vigil's own CLI, `vigil login-replay`, in Vigil's image
 * (which carries Chromium), between `prepare` and the scanner:
 *
 *   prepare -> login -> scanner (ZAP) -> upload
 *
 * Its inputs travel in the scan's Secret (beside its upload token), never in arguments, the
 * environment or logs: the recording (login.side) and what ZAP's plan is
 * written from (zap-plan-input.json). It replays the login in the confined
 * browser, then writes ZAP's plan again with the session, over the one
 * `prepare` copied, and removes both inputs from the shared directory.
 *
 * A failed login exits LOGIN_FAILED_EXIT with the sentence in the
 * container's termination message (pod status, not logs); the Job fails
 * before ZAP starts, and the runner reports the login failure
 * (loginFailureOf), which the controller turns into the target's
 * `Authentication Failed` skip, as in the embedded runtime.
 */
import type { ScannerInput, ScannerInputFile } from '../../domain/scanners/definition.js';
import { zapPlanInputOf, type ZapType } from '../../domain/scanners/zap.js';

export const LOGIN_CONTAINER = 'login';
export const LOGIN_RECORDING_FILE = 'login.side';
export const ZAP_PLAN_INPUT_FILE = 'zap-plan-input.json';
/** `vigil login-replay`: the login failed (the sentence is the termination message). 1 stays "the step itself broke". */
export const LOGIN_FAILED_EXIT = 3;
export const TERMINATION_LOG = '/dev/termination-log';

/** Chromium needs more than the helpers' small budget; /dev/shm is avoided (--disable-dev-shm-usage), /tmp holds its profile. */
export const LOGIN_RESOURCES = { requests: { cpu: '250m', memory: '512Mi' }, limits: { cpu: '1', memory: '1Gi' } };

export interface LoginStepInput {
  type: ZapType;
  /** The scanner input as the Job's scanner gets it (outputDir, targets, settings, API definition). */
  scanner: ScannerInput;
  recording: Buffer;
}

/** The files the login step reads, added to the scan's Secret. */
export function loginInputFiles(input: LoginStepInput): ScannerInputFile[] {
  return [
    { file: LOGIN_RECORDING_FILE, content: input.recording.toString('utf8') },
    { file: ZAP_PLAN_INPUT_FILE, content: JSON.stringify(zapPlanInputOf(input.type, input.scanner)) },
  ];
}

export interface LoginContainerInput {
  image: string;
  inputDir: string;
  outputDir: string;
  tmpDir: string;
  planFile: string;
  /** VIGIL_ALLOW_TARGETS of the service: the login browser follows the scanning address rules. */
  allowTargets: string;
  mounts: { input: string; output: string; tmp: string };
  securityContext: object;
}

export function loginContainer(input: LoginContainerInput) {
  return {
    name: LOGIN_CONTAINER,
    image: input.image,
    command: ['vigil'],
    args: [
      'login-replay',
      '--recording',
      `${input.inputDir}/${LOGIN_RECORDING_FILE}`,
      '--plan-input',
      `${input.inputDir}/${ZAP_PLAN_INPUT_FILE}`,
      '--plan',
      `${input.outputDir}/${input.planFile}`,
      '--termination-log',
      TERMINATION_LOG,
    ],
    env: [
      { name: 'HOME', value: input.tmpDir },
      { name: 'VIGIL_ALLOW_TARGETS', value: input.allowTargets },
    ],
    resources: structuredClone(LOGIN_RESOURCES),
    securityContext: input.securityContext,
    volumeMounts: [
      { name: input.mounts.input, mountPath: input.inputDir, readOnly: true },
      { name: input.mounts.output, mountPath: input.outputDir },
      { name: input.mounts.tmp, mountPath: input.tmpDir },
    ],
  };
}

interface PodStatusLike {
  status?: { initContainerStatuses?: Array<{ name: string; state?: { terminated?: { exitCode: number; message?: string } } }> };
}

/** The login step's failure sentence, when the pod's login container ended with LOGIN_FAILED_EXIT. */
export function loginFailureOf(pods: readonly PodStatusLike[]): string | undefined {
  for (const pod of pods) {
    const login = pod.status?.initContainerStatuses?.find((status) => status.name === LOGIN_CONTAINER);
    const terminated = login?.state?.terminated;
    if (terminated?.exitCode === LOGIN_FAILED_EXIT) return (terminated.message ?? '').trim().slice(0, 1024) || 'the login recording failed (no message)';
  }
  return undefined;
}
