/**
 * Operator-chosen settings of scanner Jobs (images, service account, time
 * limits, resources, scheduling). The composition root builds them from the
 * settings module and Helm values, checks them once with checkJobSettings at
 * start-up, and hands them to buildScanJob for every Scan.
 */
import type { ScanType } from '../../domain/risks/finding.js';
import { WEB_SCAN_TYPES } from '../../domain/scans/scan.js';
import { VIGIL_IMAGE_REPOSITORY } from '../../domain/scanners/images.js';
import type { Affinity, EnvVar, ResourceRequirements, Toleration } from './job-manifest.js';

export interface JobSettings {
  /** Vigil's own image: the `prepare` and `upload` containers, and the OPENVAS and NESSUS scanners unless `images` overrides them. */
  vigilImage: string;
  /** Per-type image overrides (a registry mirror, a patched build); each must be pinned to a tag or digest. */
  images: Partial<Record<ScanType, string>>;
  /** A dedicated account with no RBAC bindings: scanner pods never talk to the API server. */
  serviceAccountName: string;
  /** The whole pod is killed after this; the controller marks the Scan FAILED. */
  activeDeadlineSeconds: number;
  /** Per-type overrides of the scanner container's requests and limits (defaultScannerResources otherwise). */
  resources: Partial<Record<ScanType, ResourceRequirements>>;
  /** Requests and limits of the small `prepare` and `upload` containers. */
  helperResources: ResourceRequirements;
  /** Size limit of the `output` emptyDir the scanner writes its results into. */
  outputSizeLimit: string;
  /** Size limit of the `tmp` emptyDir (scanner home, nuclei's templates, ZAP's home directory). */
  tmpSizeLimit: string;
  /** Extra environment of the scanner container per type, e.g. OPENVAS and NESSUS API credentials from a Secret. */
  scannerEnv?: Partial<Record<ScanType, EnvVar[]>>;
  imagePullSecrets?: string[];
  nodeSelector?: Record<string, string>;
  tolerations?: Toleration[];
  affinity?: Affinity;
  priorityClassName?: string;
  /** Added to the scanner pods' labels; Vigil's own labels (scanLabels) win on a clash, since the NetworkPolicy and informers select by them. */
  podLabels?: Record<string, string>;
  /** E.g. `sidecar.istio.io/inject: "false"`: an injected sidecar keeps running after the upload and the Job never completes. */
  podAnnotations?: Record<string, string>;
  /** A ConfigMap in each tenant namespace holding extra CA certificates (trust-manager distributes one), mounted in every container (caBundleMount). */
  caBundle?: CaBundle;
}

export interface CaBundle {
  configMapName: string;
  /** The key holding the PEM bundle. */
  key: string;
}

const DEFAULT_RESOURCES: ResourceRequirements = {
  requests: { cpu: '250m', memory: '256Mi' },
  limits: { cpu: '1', memory: '1Gi' },
};

/** ZAP is a JVM with a site tree in memory: it needs more than the command-line scanners. */
const ZAP_RESOURCES: ResourceRequirements = {
  requests: { cpu: '250m', memory: '1Gi' },
  limits: { cpu: '1', memory: '2Gi' },
};

/** Node.js copying or posting a few files: about 50 MiB resident, a little headroom for large results. */
const HELPER_RESOURCES: ResourceRequirements = {
  requests: { cpu: '50m', memory: '64Mi' },
  limits: { cpu: '500m', memory: '256Mi' },
};

export function defaultScannerResources(type: ScanType): ResourceRequirements {
  return structuredClone(WEB_SCAN_TYPES.has(type) ? ZAP_RESOURCES : DEFAULT_RESOURCES);
}

/** The scanner container's requests and limits: the type's override, or its default. */
export function scannerResources(settings: JobSettings, type: ScanType): ResourceRequirements {
  return settings.resources[type] ?? defaultScannerResources(type);
}

export function defaultJobSettings(version: string): JobSettings {
  return {
    vigilImage: `${VIGIL_IMAGE_REPOSITORY}:${version}`,
    images: {},
    serviceAccountName: 'vigil-scanner',
    activeDeadlineSeconds: 7200,
    resources: {},
    helperResources: structuredClone(HELPER_RESOURCES),
    outputSizeLimit: '1Gi',
    tmpSizeLimit: '1Gi',
  };
}

/** A Kubernetes resource quantity (apimachinery's resource.Quantity grammar, without signs). */
export const QUANTITY_PATTERN = /^(\d+(\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$/;

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * True for an image reference pinned to a release: a digest, or a tag other
 * than `latest`. An unpinned image would change the scanner, its output
 * format and so the risk fingerprints under a running service.
 */
export function isPinnedImage(image: string): boolean {
  if (/@sha256:[0-9a-f]{64}$/.test(image)) return true;
  const slash = image.lastIndexOf('/');
  const colon = image.lastIndexOf(':');
  if (colon <= slash) return false;
  const tag = image.slice(colon + 1);
  return /^[\w][\w.-]{0,127}$/.test(tag) && tag !== 'latest';
}

/** Every problem with the settings, each a sentence saying what to change; empty when they are usable. */
export function jobSettingsProblems(settings: JobSettings): string[] {
  const problems: string[] = [];
  const images: Array<[string, string]> = [
    ['vigilImage', settings.vigilImage],
    ...Object.entries(settings.images).map(([type, image]): [string, string] => [`images.${type}`, image ?? '']),
  ];
  for (const [field, image] of images) {
    if (!isPinnedImage(image)) problems.push(`${field} '${image}' must be pinned to a version tag or digest, not latest or untagged`);
  }
  if (!DNS_SUBDOMAIN.test(settings.serviceAccountName) || settings.serviceAccountName.length > 253) {
    problems.push(`serviceAccountName '${settings.serviceAccountName}' must be a lowercase DNS subdomain such as vigil-scanner`);
  }
  if (!Number.isInteger(settings.activeDeadlineSeconds) || settings.activeDeadlineSeconds < 1) {
    problems.push(`activeDeadlineSeconds must be a whole number of seconds, got ${settings.activeDeadlineSeconds}`);
  }
  const quantities: Array<[string, string]> = [
    ['outputSizeLimit', settings.outputSizeLimit],
    ['tmpSizeLimit', settings.tmpSizeLimit],
    ...resourceQuantities('helperResources', settings.helperResources),
    ...Object.entries(settings.resources).flatMap(([type, resources]) => resourceQuantities(`resources.${type}`, resources ?? {})),
  ];
  for (const [field, quantity] of quantities) {
    if (!QUANTITY_PATTERN.test(quantity)) problems.push(`${field} '${quantity}' is not a Kubernetes quantity such as 500m, 1 or 256Mi`);
  }
  for (const name of settings.imagePullSecrets ?? []) {
    if (!DNS_SUBDOMAIN.test(name)) problems.push(`imagePullSecrets entry '${name}' must be a Secret name`);
  }
  if (settings.priorityClassName !== undefined && !DNS_SUBDOMAIN.test(settings.priorityClassName)) {
    problems.push(`priorityClassName '${settings.priorityClassName}' must be a PriorityClass name`);
  }
  if (settings.caBundle !== undefined) problems.push(...caBundleProblems(settings.caBundle));
  return problems;
}

const CONFIG_MAP_KEY = /^[-._a-zA-Z0-9]+$/;

function caBundleProblems(bundle: CaBundle): string[] {
  const problems: string[] = [];
  if (!DNS_SUBDOMAIN.test(bundle.configMapName)) problems.push(`caBundle.configMapName '${bundle.configMapName}' must be a ConfigMap name`);
  if (!CONFIG_MAP_KEY.test(bundle.key)) problems.push(`caBundle.key '${bundle.key}' must be a ConfigMap key such as ca.crt`);
  return problems;
}

/** Throws with every problem at once, so that one start-up shows everything to fix. */
export function checkJobSettings(settings: JobSettings): JobSettings {
  const problems = jobSettingsProblems(settings);
  if (problems.length > 0) throw new Error(`invalid scanner Job settings: ${problems.join('; ')}`);
  return settings;
}

function resourceQuantities(field: string, resources: ResourceRequirements): Array<[string, string]> {
  return (['requests', 'limits'] as const).flatMap((kind) =>
    Object.entries(resources[kind] ?? {}).map(([name, quantity]): [string, string] => [`${field}.${kind}.${name}`, quantity]),
  );
}

const BINARY_SUFFIX: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL_SUFFIX: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };

/** A quantity as a number (bytes for memory), or undefined when it is not a quantity. */
export function quantityValue(quantity: string): number | undefined {
  const match = QUANTITY_PATTERN.exec(quantity);
  if (!match) return undefined;
  const number = Number.parseFloat(match[1]!);
  const suffix = match[3] ?? '';
  if (suffix in BINARY_SUFFIX) return number * BINARY_SUFFIX[suffix]!;
  if (suffix in DECIMAL_SUFFIX) return number * DECIMAL_SUFFIX[suffix]!;
  return number * 10 ** Number.parseInt(suffix.slice(1), 10);
}

const SETTING_KEYS: ReadonlyArray<keyof JobSettings> = [
  'vigilImage',
  'images',
  'serviceAccountName',
  'activeDeadlineSeconds',
  'resources',
  'helperResources',
  'outputSizeLimit',
  'tmpSizeLimit',
  'scannerEnv',
  'imagePullSecrets',
  'nodeSelector',
  'tolerations',
  'affinity',
  'priorityClassName',
  'podLabels',
  'podAnnotations',
  'caBundle',
];

/**
 * Accepted and ignored, so settings files of earlier versions still load:
 * Jobs have no TTL any more, Vigil deletes each once it has collected it.
 */
const RETIRED_KEY = 'ttlSecondsAfterFinished';

/**
 * The operator's overrides (VIGIL_JOB_SETTINGS_FILE, a JSON object) laid over
 * the defaults, then checked. An unknown key is refused rather than ignored:
 * a misspelt `resoures` would otherwise silently keep the defaults.
 */
export function jobSettingsFrom(overrides: unknown, defaults: JobSettings): JobSettings {
  if (overrides === null || typeof overrides !== 'object' || Array.isArray(overrides)) {
    throw new Error('scanner Job settings must be a JSON object');
  }
  const { [RETIRED_KEY]: _retired, ...rest } = overrides as Record<string, unknown>;
  const unknown = Object.keys(rest).filter((key) => !(SETTING_KEYS as readonly string[]).includes(key));
  if (unknown.length > 0) throw new Error(`scanner Job settings have unknown keys ${unknown.join(', ')}; allowed: ${SETTING_KEYS.join(', ')}`);
  return checkJobSettings({ ...defaults, ...(rest as Partial<JobSettings>) });
}
