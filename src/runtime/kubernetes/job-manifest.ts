/**
 * The Kubernetes objects one Scan runs as, built by pure functions: the Job
 * and the scan's one Secret, which holds its upload token and the scanner's
 * input files when its type has any (created in one request, deleted in one
 * when the scan ends). Each container reads only its part: the uploader the
 * token (a secretKeyRef), the `prepare` and login steps the input files (a
 * volume projecting those keys only).
 *
 * Pod layout (DESIGN.md decision 1): the scanner is an init container that
 * writes its results into the `output` emptyDir; the main container
 * (`vigil upload-result`) then posts them to the collector. Results never
 * travel through logs, which kubelet rotates at about 10 MiB.
 *
 *   prepare (types with inputs) -> scanner -> upload
 *
 * Names derive from the Scan's name (decision 5), so creating them again is
 * idempotent. The Job is owned by the Scan and the Secret by the Job, so
 * deleting the Job (collected or stopped) deletes the Secret, and deleting
 * the Scan deletes both (scan-names.ts). The shapes written are in job-objects.ts,
 * the security contexts in pod-security.ts.
 */
import type { ScanType } from '../../domain/risks/finding.js';
import { outputPath } from '../../domain/scanners/definition.js';
import { SCANNER_IMAGES, scannerFor, type ScannerInput, type ScannerInputFile } from '../../domain/scanners/index.js';
import { WEB_SCAN_TYPES } from '../../domain/scans/scan.js';
import { ZAP_PLAN, type ZapType } from '../../domain/scanners/zap.js';
import { loginContainer, loginInputFiles } from './login-step.js';
import { checkJobSettings, quantityValue, scannerResources, type JobSettings } from './job-settings.js';
import type { Container, EnvVar, Job, OwnerReference, PodSpec, ResourceRequirements, Secret, Volume, VolumeMount } from './job-objects.js';
import { childMetadata, scanJobName, scanSecretName } from './scan-names.js';
import { containerSecurityContext, podSecurityContext } from './pod-security.js';

// Moved to their own modules; re-exported so that importers keep one entry point.
export * from './job-objects.js';
export { childName, scanJobName, scanSecretName, uploadTokenSecretName, scanLabels, scanOwnerReference } from './scan-names.js';
export { SCANNER_USER } from './pod-security.js';

// ---- Inputs ------------------------------------------------------------------

/** The Scan a child belongs to. */
export interface ScanRef {
  name: string;
  namespace: string;
  uid: string;
  type: ScanType;
  /** The Scan's id in the /v1 API, which the upload names. */
  id: string;
}

/** What the scanner needs besides its targets (the same fields as the embedded runtime's ScannerInput). */
export interface ScannerOptions {
  /** Type-specific settings; for the ZAP types, the target's scanner_settings.zap. */
  settings?: unknown;
  /** The target's login recording (a Zest script) for authenticated ZAP scans. */
  authScript?: string;
  /** The target's API definition, for ZAP's openapi job. */
  apiDefinition?: { fileName: string; content: Buffer };
  /** A Selenium IDE login recording the Job's login step replays (login-step.ts). */
  loginRecording?: Buffer;
}

export interface ScanInputsInput {
  scan: ScanRef;
  targets: string[];
  /** The checked addresses of the targets' host names (scannerTargets in domain/scans/resolve-targets.ts). */
  addresses?: Readonly<Record<string, readonly string[]>>;
  scanner?: ScannerOptions;
}

export interface ScanJobInput extends ScanInputsInput {
  settings: JobSettings;
  /** The collector's internal upload endpoint. */
  uploadUrl: string;
  /** Name of the Secret built by buildScanSecret (scanSecretName); the token itself never enters the Job. */
  uploadTokenSecretName: string;
  /** The service's VIGIL_ALLOW_TARGETS, for the login step's browser. */
  allowTargets?: string;
  /** When the Job is created: its activeDeadlineSeconds count from about then, and the uploader retries until they end. */
  createdAt: Date;
}

// ---- Layout ------------------------------------------------------------------

export const OUTPUT_DIR = '/vigil/output';
export const INPUT_DIR = '/vigil/input';
export const TMP_DIR = '/tmp';
/** The login recording's file name among the inputs; the ZAP plan points at it. */
export const AUTH_SCRIPT_FILE = 'login.zst';
export const UPLOAD_TOKEN_KEY = 'token';
export const UPLOAD_TOKEN_ENV = 'VIGIL_UPLOAD_TOKEN';
/** Comma-separated result files the uploader sends; inputs share the directory and are never results. */
export const RESULT_FILES_ENV = 'VIGIL_RESULT_FILES';
/** When the Job's deadline ends (ISO 8601): the uploader retries until then, however long Vigil is away. */
export const UPLOAD_DEADLINE_ENV = 'VIGIL_UPLOAD_DEADLINE';
/** The distroless "nonroot" user and group: no entry of any image we run maps to it. */

const VOLUMES = { output: 'output', tmp: 'tmp', input: 'input', caBundle: 'ca-bundle' } as const;
/** Where the operator's CA bundle (JobSettings.caBundle) is mounted in every container. */
export const CA_BUNDLE_DIR = '/etc/vigil/ca';
const SECRET_KEY = /^[-._a-zA-Z0-9]+$/;

// ---- The scanner's ServiceAccount ------------------------------------------------

/**
 * The account scanner pods run under in a tenant namespace. Vigil creates it
 * when a Scan first needs it, so binding an account to a namespace is all a
 * tenant needs. It has no bindings, and no token is mounted: scanners never
 * talk to the API server.
 */
export function buildScannerServiceAccount(namespace: string, name: string) {
  return {
    apiVersion: 'v1' as const,
    kind: 'ServiceAccount' as const,
    metadata: { name, namespace, labels: { 'app.kubernetes.io/managed-by': 'vigil' } },
    automountServiceAccountToken: false,
  };
}

// ---- Secrets -----------------------------------------------------------------

/** The Job a Secret belongs to, as its create answered (its uid) or the Job cache holds it. */
export interface JobOwner {
  name: string;
  uid: string;
}

/**
 * The scan's one Secret, owned by its Job: its upload token (key `token`)
 * and the scanner's input files, each under its file name. A Secret rather
 * than a ConfigMap: the ZAP plan carries the target's headers and cookies
 * (session tokens, API keys) and the login script carries credentials, and
 * ConfigMaps are readable under far broader RBAC. The uploader reads the
 * token through a secretKeyRef (never in the Job, the pod spec or `kubectl
 * describe`); the input volume projects the input files only. The API server
 * refuses a Secret over 1 MiB, token and inputs together.
 */
export function buildScanSecret(input: ScanInputsInput, token: string, job: JobOwner): Secret {
  const stringData: Record<string, string> = { [UPLOAD_TOKEN_KEY]: token };
  for (const file of inputKeys(input)) stringData[file.file] = file.content;
  const metadata = { ...childMetadata(input.scan, scanSecretName(input.scan.name)), ownerReferences: [jobOwnerReference(job)] };
  return { apiVersion: 'v1', kind: 'Secret', metadata, type: 'Opaque', immutable: true, stringData };
}

/**
 * The Job is the Secret's only owner: the garbage collector deletes a
 * dependent once all its owners are gone, so a second owner (the Scan) would
 * keep the Secret after the Job's deletion; the Scan owns the Job, so deleting
 * it still takes the Secret. Not `controller` (the Job controller never
 * manages Secrets), and not `blockOwnerDeletion`: nothing needs the Job's
 * foreground deletion to wait for its Secret, and clusters enforcing
 * owner-reference permissions would ask for `update` on `jobs/finalizers`.
 */
function jobOwnerReference(job: JobOwner): OwnerReference {
  return { apiVersion: 'batch/v1', kind: 'Job', name: job.name, uid: job.uid, controller: false, blockOwnerDeletion: false };
}

/** The input files as Secret keys: each a valid key, none the token's, no two alike. */
function inputKeys(input: ScanInputsInput): ScannerInputFile[] {
  const files = scanInputFiles(input);
  const seen = new Set<string>([UPLOAD_TOKEN_KEY]);
  for (const { file } of files) {
    if (!SECRET_KEY.test(file) || seen.has(file)) throw new Error(`scanner input file name '${file}' cannot be a Secret key`);
    seen.add(file);
  }
  return files;
}

function scannerInput(input: ScanInputsInput): ScannerInput {
  const { settings, authScript, apiDefinition } = input.scanner ?? {};
  return {
    ...(apiDefinition === undefined ? {} : { apiDefinition: { fileName: apiDefinition.fileName, content: apiDefinition.content.toString('utf8') } }),
    targets: input.targets,
    ...(input.addresses === undefined ? {} : { addresses: input.addresses }),
    outputDir: OUTPUT_DIR,
    ...(settings === undefined ? {} : { settings }),
    // `prepare` copies every input into OUTPUT_DIR, the login script included.
    ...(authScript === undefined ? {} : { authScriptFile: outputPath(OUTPUT_DIR, AUTH_SCRIPT_FILE) }),
  };
}

/** The files `prepare` writes before the scanner starts: the definition's inputs and the login script. */
export function scanInputFiles(input: ScanInputsInput): ScannerInputFile[] {
  const files = scannerFor(input.scan.type).inputs?.(scannerInput(input)) ?? [];
  const authScript = input.scanner?.authScript;
  const recording = input.scanner?.loginRecording;
  const login =
    recording === undefined || !WEB_SCAN_TYPES.has(input.scan.type)
      ? []
      : loginInputFiles({ type: input.scan.type as ZapType, scanner: scannerInput(input), recording });
  return [...files, ...(authScript === undefined ? [] : [{ file: AUTH_SCRIPT_FILE, content: authScript }]), ...login];
}

// ---- Containers --------------------------------------------------------------

const outputMount: VolumeMount = { name: VOLUMES.output, mountPath: OUTPUT_DIR };

/** Images that are Vigil's own CLI follow settings.vigilImage (a registry mirror) unless overridden per type. */
function scannerImage(settings: JobSettings, type: ScanType, definitionImage: string): string {
  const override = settings.images[type];
  if (override !== undefined) return override;
  return definitionImage === SCANNER_IMAGES.vigil ? settings.vigilImage : definitionImage;
}

/**
 * zap.sh sizes the heap at a quarter of /proc/meminfo, which in a container
 * is the node's memory, not the limit: on a large node the JVM would grow
 * past the limit and be OOM-killed. An -Xmx argument overrides it (zap.sh
 * takes it out of ZAP's arguments); three quarters of the limit leaves room
 * for metaspace and threads.
 */
function zapHeapArgs(type: ScanType, resources: ResourceRequirements): string[] {
  const limit = resources.limits?.memory;
  const bytes = limit === undefined ? undefined : quantityValue(limit);
  if (!WEB_SCAN_TYPES.has(type) || bytes === undefined) return [];
  return [`-Xmx${Math.floor((bytes * 0.75) / 2 ** 20)}m`];
}

/**
 * The images' own users have home directories on the read-only root
 * filesystem, and our user has none: nuclei keeps its templates and config
 * under $HOME, and Java reads user.home (ZAP's ~/.ZAP) from the password
 * database, not from $HOME.
 */
function scannerEnv(settings: JobSettings, type: ScanType, definitionEnv: Record<string, string> = {}): EnvVar[] {
  const { JAVA_TOOL_OPTIONS: javaOptions, ...rest } = definitionEnv;
  const env: EnvVar[] = [{ name: 'HOME', value: TMP_DIR }];
  if (WEB_SCAN_TYPES.has(type))
    env.push({ name: 'JAVA_TOOL_OPTIONS', value: [`-Duser.home=${TMP_DIR}`, ...(javaOptions === undefined ? [] : [javaOptions])].join(' ') });
  const own = Object.entries(rest).map(([name, value]) => ({ name, value }));
  return [...env, ...own, ...(settings.scannerEnv?.[type] ?? [])];
}

function scannerContainer(input: ScanJobInput): Container {
  const { type } = input.scan;
  const definition = scannerFor(type).container(scannerInput(input));
  const resources = scannerResources(input.settings, type);
  return {
    name: 'scanner',
    image: scannerImage(input.settings, type, definition.image),
    ...(definition.command === undefined ? {} : { command: [...definition.command] }),
    args: [...definition.args, ...zapHeapArgs(type, resources)],
    env: scannerEnv(input.settings, type, definition.env),
    resources,
    securityContext: containerSecurityContext(definition.capabilities),
    volumeMounts: [outputMount, { name: VOLUMES.tmp, mountPath: TMP_DIR }],
  };
}

/** Copies the input Secret's files into the output directory, where the definitions say the scanner finds them. */
function prepareContainer(settings: JobSettings): Container {
  return {
    name: 'prepare',
    image: settings.vigilImage,
    command: ['vigil'],
    args: ['prepare-inputs', '--from', INPUT_DIR, '--to', OUTPUT_DIR],
    resources: structuredClone(settings.helperResources),
    securityContext: containerSecurityContext(),
    volumeMounts: [{ name: VOLUMES.input, mountPath: INPUT_DIR, readOnly: true }, outputMount],
  };
}

function uploadContainer(input: ScanJobInput): Container {
  const results = scannerFor(input.scan.type).outputs.map((output) => output.file);
  return {
    name: 'upload',
    image: input.settings.vigilImage,
    command: ['vigil'],
    args: ['upload-result', '--scan', input.scan.id, '--url', input.uploadUrl, '--dir', OUTPUT_DIR],
    env: [
      { name: UPLOAD_TOKEN_ENV, valueFrom: { secretKeyRef: { name: input.uploadTokenSecretName, key: UPLOAD_TOKEN_KEY } } },
      { name: RESULT_FILES_ENV, value: results.join(',') },
      { name: UPLOAD_DEADLINE_ENV, value: uploadDeadline(input).toISOString() },
    ],
    resources: structuredClone(input.settings.helperResources),
    securityContext: containerSecurityContext(),
    // Read-only: the uploader has no reason to change what the scanner wrote.
    volumeMounts: [{ ...outputMount, readOnly: true }],
  };
}

/**
 * The Job's activeDeadlineSeconds counted from its creation. The Job's own
 * startTime is set a moment later and the pod cannot read it (no API
 * credentials, and the downward API does not carry it): the uploader stops
 * at most that moment early, and Kubernetes ends the pod at the true deadline.
 */
export function uploadDeadline(input: Pick<ScanJobInput, 'createdAt' | 'settings'>): Date {
  return new Date(input.createdAt.getTime() + input.settings.activeDeadlineSeconds * 1000);
}

// ---- The Job -----------------------------------------------------------------

function volumes(input: ScanJobInput, inputFiles: readonly ScannerInputFile[]): Volume[] {
  const list: Volume[] = [
    { name: VOLUMES.output, emptyDir: { sizeLimit: input.settings.outputSizeLimit } },
    { name: VOLUMES.tmp, emptyDir: { sizeLimit: input.settings.tmpSizeLimit } },
  ];
  // The scan's Secret, its input files only (`items`): the token never lands in a file.
  // 0440 with fsGroup: readable by the pod's group, by nobody else.
  if (inputFiles.length > 0) {
    const items = inputFiles.map(({ file }) => ({ key: file, path: file }));
    list.push({ name: VOLUMES.input, secret: { secretName: input.uploadTokenSecretName, defaultMode: 0o440, items } });
  }
  return list;
}

function schedulingFields(settings: JobSettings): Partial<PodSpec> {
  return {
    ...(settings.imagePullSecrets?.length ? { imagePullSecrets: settings.imagePullSecrets.map((name) => ({ name })) } : {}),
    ...(settings.nodeSelector === undefined ? {} : { nodeSelector: { ...settings.nodeSelector } }),
    ...(settings.tolerations === undefined ? {} : { tolerations: settings.tolerations.map((toleration) => ({ ...toleration })) }),
    ...(settings.affinity === undefined ? {} : { affinity: structuredClone(settings.affinity) }),
    ...(settings.priorityClassName === undefined ? {} : { priorityClassName: settings.priorityClassName }),
  };
}

/**
 * The operator's CA bundle in every container: Node.js (prepare, upload, the
 * login step, the OPENVAS and NESSUS drivers) trusts it through
 * NODE_EXTRA_CA_CERTS, the OpenVAS driver through VIGIL_OPENVAS_CA_FILE.
 * Scanners probing targets do not verify certificates, so their system
 * bundle is left as it is.
 */
function withCaBundle(settings: JobSettings, containers: Container[]): Container[] {
  if (settings.caBundle === undefined) return containers;
  const file = `${CA_BUNDLE_DIR}/${settings.caBundle.key}`;
  const env: EnvVar[] = [
    { name: 'NODE_EXTRA_CA_CERTS', value: file },
    { name: 'VIGIL_OPENVAS_CA_FILE', value: file },
  ];
  return containers.map((container) => ({
    ...container,
    env: [...(container.env ?? []), ...env],
    volumeMounts: [...container.volumeMounts, { name: VOLUMES.caBundle, mountPath: CA_BUNDLE_DIR, readOnly: true }],
  }));
}

function caBundleVolume(settings: JobSettings): Volume[] {
  const bundle = settings.caBundle;
  if (bundle === undefined) return [];
  return [{ name: VOLUMES.caBundle, configMap: { name: bundle.configMapName, items: [{ key: bundle.key, path: bundle.key }] } }];
}

function podSpec(input: ScanJobInput): PodSpec {
  const inputFiles = inputKeys(input);
  const withInputs = inputFiles.length > 0;
  const { settings } = input;
  return {
    restartPolicy: 'Never',
    serviceAccountName: input.settings.serviceAccountName,
    // Scanners run third-party code against untrusted hosts: no API credentials, no service environment variables.
    automountServiceAccountToken: false,
    enableServiceLinks: false,
    securityContext: podSecurityContext(),
    initContainers: withCaBundle(settings, [...(withInputs ? [prepareContainer(settings)] : []), ...loginStep(input), scannerContainer(input)]),
    containers: withCaBundle(settings, [uploadContainer(input)]),
    volumes: [...volumes(input, inputFiles), ...caBundleVolume(settings)],
    ...schedulingFields(input.settings),
  };
}

/** The login step before ZAP, when the Scan replays a recorded login (login-step.ts). */
function loginStep(input: ScanJobInput): Container[] {
  if (input.scanner?.loginRecording === undefined || !WEB_SCAN_TYPES.has(input.scan.type)) return [];
  return [
    loginContainer({
      image: input.settings.vigilImage,
      inputDir: INPUT_DIR,
      outputDir: OUTPUT_DIR,
      tmpDir: TMP_DIR,
      planFile: ZAP_PLAN,
      allowTargets: input.allowTargets ?? '',
      mounts: { input: VOLUMES.input, output: VOLUMES.output, tmp: VOLUMES.tmp },
      securityContext: containerSecurityContext(),
    }) as Container,
  ];
}

/**
 * The scanner Job of one Scan. Create the Secret of buildScanSecret right
 * after it (the Secret names the Job's uid as its owner): a pod whose Secret
 * is missing waits in ContainerCreating, which kubelet retries, and the
 * uploader, which reads the token, starts only once the scanner finished. Throws when the settings are unusable
 * (checkJobSettings) rather than create a Job that would not run as intended.
 */
export function buildScanJob(input: ScanJobInput): Job {
  checkJobSettings(input.settings);
  const metadata = childMetadata(input.scan, scanJobName(input.scan.name));
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata,
    spec: {
      // Never retried blindly: a retry scans the customer's hosts again and
      // doubles results. The controller sees the failure and decides.
      backoffLimit: 0,
      activeDeadlineSeconds: input.settings.activeDeadlineSeconds,
      // No ttlSecondsAfterFinished: a finished Job holds its pod's uploads-to-be and its outcome until Vigil has
      // collected it, however long Vigil was away; the runner deletes it then (deleteCollectedWorkload in job-runner.ts).
      template: {
        // `kubectl logs job/<name>` shows the scanner, where progress and errors are.
        // Vigil's labels last: the scanner NetworkPolicy and the informers select pods by them.
        metadata: {
          labels: { ...input.settings.podLabels, ...metadata.labels },
          annotations: { ...input.settings.podAnnotations, 'kubectl.kubernetes.io/default-container': 'scanner' },
        },
        spec: podSpec(input),
      },
    },
  };
}
