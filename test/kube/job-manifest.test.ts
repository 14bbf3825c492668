import { expect } from 'chai';
import { SCAN_TYPES, type ScanType } from '../../src/domain/risks/finding.js';
import { NUCLEI_TEMPLATES_VERSION } from '../../src/domain/scanners/images.js';
import { scannerFor } from '../../src/domain/scanners/index.js';
import {
  buildScanSecret,
  buildScanJob,
  scanJobName,
  uploadTokenSecretName,
  type Container,
  type Job,
  type ScanJobInput,
  type ScanRef,
} from '../../src/runtime/kubernetes/job-manifest.js';
import { defaultJobSettings, isPinnedImage, jobSettingsFrom, QUANTITY_PATTERN, type JobSettings } from '../../src/runtime/kubernetes/job-settings.js';

const SAMPLE_TARGETS: Record<ScanType, string[]> = {
  NESSUS: ['93.184.216.34', 'www.example.com'],
  NMAP: ['93.184.216.34', 'https://www.example.com/login'],
  NMAP_UDP: ['93.184.216.34'],
  NUCLEI: ['https://www.example.com/', 'api.example.com'],
  OPENVAS: ['93.184.216.34'],
  OWASP_ZAP: ['https://shop.example.com/'],
  OWASP_ZAP_ACTIVE: ['https://shop.example.com/'],
  SSLYZE: ['www.example.com', 'https://api.example.com:8443/v1'],
};

const TOKEN = 'tok_3b9f0c2d7e41a8f65c0d9e2b7a1f4c8d';
/** The scan's Job as its create answered: the Secret's owner. */
const JOB = { name: 'nightly-nmap-scanner', uid: '7d2e9c41-5b3a-4f60-8e1d-2a9c3b4d5e6f' };
const UPLOAD_URL = 'http://vigil-collector.vigil-system.svc:8081/internal/v1/scans/upload';

function scanRef(type: ScanType = 'NMAP', name = 'nightly-nmap'): ScanRef {
  return { name, namespace: 'vigil-acme', uid: '0b6f5a0e-3c1d-4f7e-9a52-8d1c2e3f4a5b', type, id: 'scn_01HZX3K7Q9' };
}

/** The input files of the scan's one Secret (its keys but the token), or undefined when it has none. */
function inputsSecret(input: ScanJobInput) {
  const secret = buildScanSecret(input, TOKEN, JOB);
  const { token, ...files } = secret.stringData;
  expect(token).to.equal(TOKEN);
  return Object.keys(files).length === 0 ? undefined : { ...secret, stringData: files };
}

const CREATED_AT = new Date('2026-11-28T10:00:00.000Z');

function jobInput(type: ScanType = 'NMAP', overrides: Partial<ScanJobInput> = {}): ScanJobInput {
  return {
    scan: scanRef(type),
    targets: SAMPLE_TARGETS[type],
    settings: defaultJobSettings('0.1.0'),
    uploadUrl: UPLOAD_URL,
    uploadTokenSecretName: uploadTokenSecretName('nightly-nmap'),
    createdAt: CREATED_AT,
    ...overrides,
  };
}

/** Every extension point the chart passes through the Job settings (issue 28), set. */
function extendedSettings(): JobSettings {
  return {
    ...defaultJobSettings('0.1.0'),
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'In', values: ['scanners'] }] }] },
      },
    },
    priorityClassName: 'scanners-low',
    podLabels: { team: 'security', 'app.kubernetes.io/name': 'not-vigil' },
    podAnnotations: { 'sidecar.istio.io/inject': 'false' },
    caBundle: { configMapName: 'corporate-ca', key: 'bundle.pem' },
  };
}

function allContainers(job: Job): Container[] {
  return [...job.spec.template.spec.initContainers, ...job.spec.template.spec.containers];
}

function containerNamed(job: Job, name: string): Container {
  const container = allContainers(job).find((candidate) => candidate.name === name);
  expect(container, `container ${name}`).to.not.equal(undefined);
  return container!;
}

// ---- A structural checker for the Kubernetes 1.29 fields we write -----------
// No kube-openapi schema is available offline. This checks what the API
// server and kubelet would refuse for the fields the builder uses: required
// fields and their types, unknown (misspelt) fields, DNS-1123 names, label
// syntax, quantities, references between volumes and mounts, and the
// security-context combinations the API server or kubelet rejects.

type Check = (value: unknown, path: string, problems: string[]) => void;

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;
const SECRET_KEY = /^[-._a-zA-Z0-9]+$/;
/** apimachinery's quantity grammar: signed decimal, then a binary, decimal or exponent suffix. */
const K8S_QUANTITY = /^[+-]?(\d+(\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$/;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const str: Check = (value, path, problems) => {
  if (typeof value !== 'string') problems.push(`${path}: expected a string`);
};
const nonEmpty: Check = (value, path, problems) => {
  if (typeof value !== 'string' || value.trim() === '') problems.push(`${path}: expected a non-empty string`);
};
const bool: Check = (value, path, problems) => {
  if (typeof value !== 'boolean') problems.push(`${path}: expected a boolean`);
};
const int =
  (min: number, max = Number.MAX_SAFE_INTEGER): Check =>
  (value, path, problems) => {
    if (!Number.isInteger(value) || (value as number) < min || (value as number) > max) problems.push(`${path}: expected an integer in ${min}..${max}`);
  };
const matching =
  (pattern: RegExp, max: number, what: string): Check =>
  (value, path, problems) => {
    if (typeof value !== 'string' || value.length > max || !pattern.test(value)) problems.push(`${path}: '${String(value)}' is not ${what}`);
  };
const oneOf =
  (...allowed: unknown[]): Check =>
  (value, path, problems) => {
    if (!allowed.includes(value)) problems.push(`${path}: '${String(value)}' is not one of ${allowed.join(', ')}`);
  };
const array =
  (item: Check, min = 0): Check =>
  (value, path, problems) => {
    if (!Array.isArray(value)) return void problems.push(`${path}: expected an array`);
    if (value.length < min) problems.push(`${path}: expected at least ${min} item(s)`);
    value.forEach((element, index) => item(element, `${path}[${index}]`, problems));
  };
const map =
  (key: Check, value: Check): Check =>
  (input, path, problems) => {
    if (!isRecord(input)) return void problems.push(`${path}: expected an object`);
    for (const [name, element] of Object.entries(input)) {
      key(name, `${path} key`, problems);
      value(element, `${path}.${name}`, problems);
    }
  };
const anyObject: Check = (value, path, problems) => {
  if (!isRecord(value)) problems.push(`${path}: expected an object`);
};
const object =
  (fields: Record<string, Check>, required: string[] = []): Check =>
  (value, path, problems) => {
    if (!isRecord(value)) return void problems.push(`${path}: expected an object`);
    for (const name of required) if (value[name] === undefined) problems.push(`${path}.${name}: required`);
    for (const [name, element] of Object.entries(value)) {
      const check = fields[name];
      if (check === undefined) problems.push(`${path}.${name}: unknown field`);
      else if (element !== undefined) check(element, `${path}.${name}`, problems);
    }
  };

const dnsLabel = matching(DNS_LABEL, 63, 'a DNS-1123 label');
const dnsSubdomain = matching(DNS_SUBDOMAIN, 253, 'a DNS-1123 subdomain');
const quantity = matching(K8S_QUANTITY, 64, 'a Kubernetes quantity');
const qualifiedName: Check = (value, path, problems) => {
  const text = String(value);
  const slash = text.indexOf('/');
  const [prefix, name] = slash < 0 ? [undefined, text] : [text.slice(0, slash), text.slice(slash + 1)];
  if (prefix !== undefined) dnsSubdomain(prefix, `${path} prefix`, problems);
  matching(LABEL_NAME, 63, 'a qualified name')(name, path, problems);
};
const labelValue: Check = (value, path, problems) => {
  if (value !== '') matching(LABEL_NAME, 63, 'a label value')(value, path, problems);
};
const labels = map(qualifiedName, labelValue);
const annotations = map(qualifiedName, str);
const strings = array(str);

const ownerReference = object({ apiVersion: nonEmpty, kind: nonEmpty, name: nonEmpty, uid: nonEmpty, controller: bool, blockOwnerDeletion: bool }, [
  'apiVersion',
  'kind',
  'name',
  'uid',
]);
const objectMeta = (name: Check) => object({ name, namespace: dnsLabel, labels, annotations, ownerReferences: array(ownerReference) }, ['name', 'namespace']);

const keyRef = object({ name: dnsSubdomain, key: matching(SECRET_KEY, 253, 'a key'), optional: bool }, ['key']);
const envVar = object(
  { name: matching(ENV_NAME, 4096, 'an environment variable name'), value: str, valueFrom: object({ secretKeyRef: keyRef, configMapKeyRef: keyRef }) },
  ['name'],
);
const resources = object({
  requests: map(matching(/^[a-z0-9./-]+$/, 253, 'a resource name'), quantity),
  limits: map(matching(/^[a-z0-9./-]+$/, 253, 'a resource name'), quantity),
});
const seccompProfile = object({ type: oneOf('RuntimeDefault', 'Localhost', 'Unconfined'), localhostProfile: str }, ['type']);
const capability = matching(/^[A-Z_]+$/, 64, 'a capability name');
const securityContext = object({
  allowPrivilegeEscalation: bool,
  readOnlyRootFilesystem: bool,
  runAsNonRoot: bool,
  runAsUser: int(0, 2 ** 31 - 1),
  runAsGroup: int(0, 2 ** 31 - 1),
  privileged: bool,
  capabilities: object({ add: array(capability), drop: array(capability) }),
  seccompProfile,
});
const volumeMount = object({ name: dnsLabel, mountPath: matching(/^\/[^:]*$/, 4096, 'an absolute path'), readOnly: bool }, ['name', 'mountPath']);
const container = object(
  { name: dnsLabel, image: nonEmpty, command: strings, args: strings, env: array(envVar), resources, securityContext, volumeMounts: array(volumeMount) },
  ['name', 'image'],
);
const volume = object(
  {
    name: dnsLabel,
    emptyDir: object({ medium: oneOf('', 'Memory'), sizeLimit: quantity }),
    secret: object(
      {
        secretName: dnsSubdomain,
        defaultMode: int(0, 0o777),
        optional: bool,
        items: array(object({ key: nonEmpty, path: nonEmpty, mode: int(0, 0o777) }, ['key', 'path'])),
      },
      ['secretName'],
    ),
    configMap: object({ name: dnsSubdomain, items: array(object({ key: matching(SECRET_KEY, 253, 'a ConfigMap key'), path: nonEmpty }, ['key', 'path'])) }, [
      'name',
    ]),
  },
  ['name'],
);
const toleration = object({
  key: qualifiedName,
  operator: oneOf('Exists', 'Equal'),
  value: str,
  effect: oneOf('NoSchedule', 'PreferNoSchedule', 'NoExecute'),
  tolerationSeconds: int(0),
});
const podSpec = object(
  {
    restartPolicy: oneOf('Never', 'OnFailure'),
    serviceAccountName: dnsSubdomain,
    automountServiceAccountToken: bool,
    enableServiceLinks: bool,
    securityContext: object({ runAsNonRoot: bool, runAsUser: int(0), runAsGroup: int(0), fsGroup: int(0), seccompProfile }),
    initContainers: array(container),
    containers: array(container, 1),
    volumes: array(volume),
    imagePullSecrets: array(object({ name: dnsSubdomain }, ['name'])),
    nodeSelector: labels,
    tolerations: array(toleration),
    priorityClassName: dnsSubdomain,
    // Passed through as the operator wrote it (the chart's schema and the API server check its shape).
    affinity: object({ nodeAffinity: anyObject, podAffinity: anyObject, podAntiAffinity: anyObject }),
  },
  ['containers', 'restartPolicy'],
);
const jobShape = object(
  {
    apiVersion: oneOf('batch/v1'),
    kind: oneOf('Job'),
    metadata: objectMeta(dnsLabel),
    spec: object(
      {
        backoffLimit: int(0),
        activeDeadlineSeconds: int(1),
        template: object({ metadata: object({ labels, annotations }), spec: podSpec }, ['spec']),
      },
      ['template'],
    ),
  },
  ['apiVersion', 'kind', 'metadata', 'spec'],
);
const secretShape = object(
  {
    apiVersion: oneOf('v1'),
    kind: oneOf('Secret'),
    metadata: objectMeta(dnsSubdomain),
    type: nonEmpty,
    immutable: bool,
    stringData: map(matching(SECRET_KEY, 253, 'a Secret key'), str),
  },
  ['apiVersion', 'kind', 'metadata'],
);

function quantityNumber(text: string): number {
  const match = /^([+-]?[\d.]+)(.*)$/.exec(text)!;
  const factors: Record<string, number> = { '': 1, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 };
  return Number(match[1]) * (factors[match[2]!] ?? Number.NaN);
}

/** Rules that span fields: what validation in the API server and kubelet refuse. */
function crossFieldProblems(job: Job): string[] {
  const problems: string[] = [];
  const pod = job.spec.template.spec;
  const containers = [...(pod.initContainers ?? []), ...pod.containers];
  const volumeNames = pod.volumes.map((candidate) => candidate.name);
  if (new Set(volumeNames).size !== volumeNames.length) problems.push('volume names are not unique');
  const containerNames = containers.map((candidate) => candidate.name);
  if (new Set(containerNames).size !== containerNames.length) problems.push('container names are not unique');
  for (const candidate of pod.volumes) {
    const sources = ['emptyDir', 'secret', 'configMap'].filter((source) => source in candidate);
    if (sources.length !== 1) problems.push(`volume ${candidate.name}: needs exactly one source, has ${sources.length}`);
  }
  for (const each of containers) {
    const paths = each.volumeMounts.map((mount) => mount.mountPath);
    if (new Set(paths).size !== paths.length) problems.push(`${each.name}: two mounts at one path`);
    for (const mount of each.volumeMounts) {
      if (!volumeNames.includes(mount.name)) problems.push(`${each.name}: mount of unknown volume ${mount.name}`);
    }
    for (const env of each.env ?? []) {
      if ((env.value === undefined) === (env.valueFrom === undefined)) problems.push(`${each.name}: env ${env.name} needs exactly one of value and valueFrom`);
      if (env.valueFrom && Object.keys(env.valueFrom).length !== 1) problems.push(`${each.name}: env ${env.name} valueFrom needs exactly one source`);
    }
    for (const [name, limit] of Object.entries(each.resources.limits ?? {})) {
      const request = each.resources.requests?.[name];
      if (request !== undefined && quantityNumber(request) > quantityNumber(limit))
        problems.push(`${each.name}: ${name} request ${request} exceeds its limit ${limit}`);
    }
    const context = each.securityContext;
    const nonRoot = context.runAsNonRoot ?? pod.securityContext.runAsNonRoot;
    const user = context.runAsUser ?? pod.securityContext.runAsUser;
    if (nonRoot && user === 0) problems.push(`${each.name}: runAsNonRoot with runAsUser 0 never starts`);
    if (context.allowPrivilegeEscalation === false && (context.capabilities.add ?? []).includes('SYS_ADMIN')) {
      problems.push(`${each.name}: allowPrivilegeEscalation false with SYS_ADMIN`);
    }
  }
  if (!['Never', 'OnFailure'].includes(pod.restartPolicy)) problems.push('a Job pod must restart Never or OnFailure');
  return problems;
}

function jobProblems(job: unknown): string[] {
  const problems: string[] = [];
  jobShape(job, 'job', problems);
  return problems.length > 0 ? problems : crossFieldProblems(job as Job);
}

function secretProblems(secret: unknown): string[] {
  const problems: string[] = [];
  secretShape(secret, 'secret', problems);
  return problems;
}

// ---- Tests ---------------------------------------------------------------------

describe('scanner Job manifest', () => {
  describe('names', () => {
    it('derives the Job name from the Scan name, the same every time', () => {
      expect(buildScanJob(jobInput()).metadata.name).to.equal('nightly-nmap-scanner');
      expect(buildScanJob(jobInput()).metadata.name).to.equal(buildScanJob(jobInput()).metadata.name);
      expect(scanJobName('nightly-nmap')).to.equal('nightly-nmap-scanner');
      expect(buildScanSecret(jobInput(), TOKEN, JOB).metadata.name).to.equal('nightly-nmap-secret');
    });

    it('shortens a long Scan name to a DNS-1123 label of at most 63 characters with a hash that tells names apart', () => {
      const long = `${'weekly-full-range-'.repeat(12)}a`;
      const other = `${'weekly-full-range-'.repeat(12)}b`;
      const name = scanJobName(long);
      expect(name.length).to.be.at.most(63);
      expect(name).to.match(DNS_LABEL);
      expect(name).to.match(/^weekly-full-range-.*-[0-9a-f]{8}-scanner$/);
      expect(scanJobName(long)).to.equal(name);
      expect(scanJobName(other)).to.not.equal(name);
      expect(uploadTokenSecretName(long).length).to.be.at.most(63);
    });

    it('turns a Scan name with dots (a DNS subdomain) into a label, hashed so that a.b and a-b differ', () => {
      const dotted = scanJobName('nightly.nmap');
      expect(dotted).to.match(DNS_LABEL);
      expect(dotted).to.not.equal(scanJobName('nightly-nmap'));
      expect(scanJobName('a'.repeat(253))).to.match(DNS_LABEL);
    });
  });

  describe('ownership and labels', () => {
    const owner = {
      apiVersion: 'vigil.dev/v1alpha1',
      kind: 'Scan',
      name: 'nightly-nmap',
      uid: '0b6f5a0e-3c1d-4f7e-9a52-8d1c2e3f4a5b',
      controller: true,
      blockOwnerDeletion: true,
    };

    it('owns the Job by the Scan and its one Secret by the Job alone (deleting the Job takes it), in the Scan namespace', () => {
      const job = buildScanJob(jobInput('NUCLEI'));
      const secret = buildScanSecret(jobInput('NUCLEI'), TOKEN, JOB);
      expect(job.metadata.ownerReferences).to.deep.equal([owner]);
      // Neither controller nor blocking: the chart grants no update on jobs/finalizers, which blockOwnerDeletion would need.
      expect(secret.metadata.ownerReferences).to.deep.equal([{ apiVersion: 'batch/v1', kind: 'Job', ...JOB, controller: false, blockOwnerDeletion: false }]);
      for (const object of [job, secret]) expect(object.metadata.namespace).to.equal('vigil-acme');
    });

    it('labels the Job, its pods and the Secrets with the scanner, the manager, the Scan and its type', () => {
      const input = jobInput('OWASP_ZAP_ACTIVE');
      const expected = {
        'app.kubernetes.io/name': 'vigil-scanner',
        'app.kubernetes.io/managed-by': 'vigil',
        'vigil.dev/scan': 'nightly-nmap',
        'vigil.dev/scan-type': 'owasp_zap_active',
        'vigil.dev/scan-id': input.scan.id,
      };
      const job = buildScanJob(input);
      expect(job.metadata.labels).to.deep.equal(expected);
      expect(job.spec.template.metadata.labels).to.deep.equal(expected);
      expect(buildScanSecret(input, TOKEN, JOB).metadata.labels).to.deep.equal(expected);
    });

    it('keeps the scan label valid for a Scan name longer than a label value may be', () => {
      const name = `${'a'.repeat(100)}.example`;
      const job = buildScanJob({ ...jobInput(), scan: scanRef('NMAP', name) });
      expect(job.metadata.labels['vigil.dev/scan']!.length).to.be.at.most(63);
      expect(job.metadata.annotations?.['vigil.dev/scan-name']).to.equal(name);
      expect(job.metadata.ownerReferences[0]!.name).to.equal(name);
      expect(jobProblems(job)).to.deep.equal([]);
    });
  });

  describe('Job spec', () => {
    it('never retries, stops at the deadline, and has no TTL: a Job finished while Vigil is away waits to be collected', () => {
      const { spec } = buildScanJob(jobInput());
      expect(spec.backoffLimit).to.equal(0);
      expect(spec.activeDeadlineSeconds).to.equal(7200);
      expect(spec).not.to.have.property('ttlSecondsAfterFinished');
      expect(spec.template.spec.restartPolicy).to.equal('Never');
    });

    it('takes the deadline from the settings, and tells the uploader when it ends (the Job created plus the deadline)', () => {
      const settings = { ...defaultJobSettings('0.1.0'), activeDeadlineSeconds: 900 };
      const job = buildScanJob(jobInput('NMAP', { settings }));
      expect(job.spec.activeDeadlineSeconds).to.equal(900);
      expect(containerNamed(job, 'upload').env).to.deep.include({ name: 'VIGIL_UPLOAD_DEADLINE', value: '2026-11-28T10:15:00.000Z' });
    });

    it('loads settings files of earlier versions that still set ttlSecondsAfterFinished, and ignores it', () => {
      const settings = jobSettingsFrom({ ttlSecondsAfterFinished: 3600, activeDeadlineSeconds: 900 }, defaultJobSettings('0.1.0'));
      expect(settings.activeDeadlineSeconds).to.equal(900);
      expect(buildScanJob(jobInput('NMAP', { settings })).spec).not.to.have.property('ttlSecondsAfterFinished');
    });

    it('runs pods under the dedicated service account without API credentials or service links', () => {
      const pod = buildScanJob(jobInput()).spec.template.spec;
      expect(pod.serviceAccountName).to.equal('vigil-scanner');
      expect(pod.automountServiceAccountToken).to.equal(false);
      expect(pod.enableServiceLinks).to.equal(false);
      const custom = buildScanJob(jobInput('NMAP', { settings: { ...defaultJobSettings('0.1.0'), serviceAccountName: 'scanner-sa' } }));
      expect(custom.spec.template.spec.serviceAccountName).to.equal('scanner-sa');
    });
  });

  describe('security', () => {
    for (const type of SCAN_TYPES) {
      it(`${type}: every container drops ALL, has a read-only root filesystem and cannot escalate`, () => {
        const job = buildScanJob(jobInput(type));
        for (const each of allContainers(job)) {
          const context = each.securityContext;
          expect(context.capabilities.drop, each.name).to.deep.equal(['ALL']);
          expect(context.readOnlyRootFilesystem, each.name).to.equal(true);
          expect(context.allowPrivilegeEscalation, each.name).to.equal(false);
          expect(context).to.not.have.property('privileged');
        }
      });
    }

    for (const type of SCAN_TYPES.filter((candidate) => candidate !== 'NMAP_UDP')) {
      it(`${type}: every container runs as the non-root user with no added capability`, () => {
        const job = buildScanJob(jobInput(type));
        expect(job.spec.template.spec.securityContext).to.deep.equal({
          runAsNonRoot: true,
          runAsUser: 65532,
          runAsGroup: 65532,
          fsGroup: 65532,
          seccompProfile: { type: 'RuntimeDefault' },
        });
        for (const each of allContainers(job)) {
          expect(each.securityContext.runAsNonRoot, each.name).to.equal(true);
          expect(each.securityContext).to.not.have.property('runAsUser');
          expect(each.securityContext.capabilities, each.name).to.not.have.property('add');
        }
      });
    }

    it('NMAP_UDP: only the scanner runs as root, with exactly NET_RAW added', () => {
      const job = buildScanJob(jobInput('NMAP_UDP'));
      const scanner = containerNamed(job, 'scanner').securityContext;
      expect(scanner).to.deep.equal({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        runAsNonRoot: false,
        runAsUser: 0,
        capabilities: { drop: ['ALL'], add: ['NET_RAW'] },
      });
      const upload = containerNamed(job, 'upload').securityContext;
      expect(upload.runAsNonRoot).to.equal(true);
      expect(upload.capabilities).to.deep.equal({ drop: ['ALL'] });
      expect(job.spec.template.spec.securityContext.seccompProfile).to.deep.equal({ type: 'RuntimeDefault' });
    });
  });

  describe('containers', () => {
    it('runs the scanner as an init container and the uploader as the only main container', () => {
      const pod = buildScanJob(jobInput('NMAP')).spec.template.spec;
      expect(pod.initContainers.map((each) => each.name)).to.deep.equal(['scanner']);
      expect(pod.containers.map((each) => each.name)).to.deep.equal(['upload']);
    });

    it('runs the definition image, command and args with outputs under /vigil/output', () => {
      const scanner = containerNamed(buildScanJob(jobInput('NMAP')), 'scanner');
      const expected = scannerFor('NMAP').container({ targets: SAMPLE_TARGETS.NMAP, outputDir: '/vigil/output' });
      expect(scanner.image).to.equal(expected.image);
      expect(scanner.command).to.deep.equal(expected.command);
      expect(scanner.args).to.deep.equal(expected.args);
      expect(scanner.args).to.include('/vigil/output/nmap.xml');
    });

    it('uploads with vigil upload-result for the Scan id, the collector URL and the output directory', () => {
      const upload = containerNamed(buildScanJob(jobInput()), 'upload');
      expect(upload.image).to.equal('ghcr.io/vigil-dev/vigil:0.1.0');
      expect(upload.args).to.deep.equal(['upload-result', '--scan', 'scn_01HZX3K7Q9', '--url', UPLOAD_URL, '--dir', '/vigil/output']);
      expect(upload.env).to.deep.include({ name: 'VIGIL_RESULT_FILES', value: 'nmap.xml' });
    });

    it("prepares the input files first for the types that have them, from the scan's Secret mounted read-only with its input keys only", () => {
      for (const type of ['NUCLEI', 'OWASP_ZAP', 'OWASP_ZAP_ACTIVE'] as const) {
        const input = jobInput(type);
        const job = buildScanJob(input);
        const pod = job.spec.template.spec;
        expect(
          pod.initContainers.map((each) => each.name),
          type,
        ).to.deep.equal(['prepare', 'scanner']);
        const prepare = containerNamed(job, 'prepare');
        expect(prepare.args).to.deep.equal(['prepare-inputs', '--from', '/vigil/input', '--to', '/vigil/output']);
        expect(prepare.volumeMounts).to.deep.include({ name: 'input', mountPath: '/vigil/input', readOnly: true });
        const secret = inputsSecret(input)!;
        const items = Object.keys(secret.stringData).map((key) => ({ key, path: key }));
        expect(
          items.map((item) => item.key),
          'never the token',
        ).to.not.include('token');
        expect(pod.volumes).to.deep.include({ name: 'input', secret: { secretName: secret.metadata.name, defaultMode: 0o440, items } });
        expect(pod.volumes.find((volume) => volume.name === 'input')!.secret!.secretName).to.equal(
          containerNamed(job, 'upload').env!.find((env) => env.name === 'VIGIL_UPLOAD_TOKEN')!.valueFrom!.secretKeyRef!.name,
          'one Secret',
        );
        expect(secretProblems(secret)).to.deep.equal([]);
        for (const file of scannerFor(type).inputs!({ targets: input.targets, outputDir: '/vigil/output' })) {
          expect(secret.stringData[file.file]).to.equal(file.content);
        }
      }
    });

    it('puts only the token in the Secret, and builds no prepare container, for types without inputs', () => {
      for (const type of ['NMAP', 'NMAP_UDP', 'SSLYZE', 'OPENVAS', 'NESSUS'] as const) {
        expect(Object.keys(buildScanSecret(jobInput(type), TOKEN, JOB).stringData), type).to.deep.equal(['token']);
        const pod = buildScanJob(jobInput(type)).spec.template.spec;
        expect(pod.initContainers.map((each) => each.name)).to.deep.equal(['scanner']);
        expect(pod.volumes.map((each) => each.name)).to.not.include('input');
      }
    });

    it('ships a ZAP login script as an input the plan points to', () => {
      const input = jobInput('OWASP_ZAP', { scanner: { authScript: '{"type":"ZestScript","title":"login"}', settings: { anti_csrf_tokens: ['xsrf'] } } });
      const secret = inputsSecret(input)!;
      expect(secret.stringData['login.zst']).to.equal('{"type":"ZestScript","title":"login"}');
      expect(secret.stringData['zap-plan.yaml']).to.include('/vigil/output/login.zst');
      expect(containerNamed(buildScanJob(input), 'scanner').args.join(' ')).to.include('anticsrf.tokens.token(15).name=xsrf');
    });

    it('sizes resources per type, ZAP larger, with a JVM heap within the memory limit', () => {
      const nmap = containerNamed(buildScanJob(jobInput('NMAP')), 'scanner');
      expect(nmap.resources).to.deep.equal({ requests: { cpu: '250m', memory: '256Mi' }, limits: { cpu: '1', memory: '1Gi' } });
      const zap = containerNamed(buildScanJob(jobInput('OWASP_ZAP')), 'scanner');
      expect(zap.resources).to.deep.equal({ requests: { cpu: '250m', memory: '1Gi' }, limits: { cpu: '1', memory: '2Gi' } });
      expect(zap.args.at(-1)).to.equal('-Xmx1536m');
      const settings: JobSettings = {
        ...defaultJobSettings('0.1.0'),
        resources: { NMAP: { requests: { cpu: '2', memory: '2Gi' }, limits: { cpu: '4', memory: '4Gi' } } },
      };
      expect(containerNamed(buildScanJob(jobInput('NMAP', { settings })), 'scanner').resources.limits).to.deep.equal({ cpu: '4', memory: '4Gi' });
      const upload = containerNamed(buildScanJob(jobInput('NMAP')), 'upload');
      expect(upload.resources.limits?.memory).to.equal('256Mi');
    });

    it('gives scanners a writable home under /tmp and adds the configured environment', () => {
      const settings: JobSettings = {
        ...defaultJobSettings('0.1.0'),
        scannerEnv: { OPENVAS: [{ name: 'VIGIL_OPENVAS_PASSWORD', valueFrom: { secretKeyRef: { name: 'openvas', key: 'password' } } }] },
      };
      const openvas = containerNamed(buildScanJob(jobInput('OPENVAS', { settings })), 'scanner');
      expect(openvas.env).to.deep.equal([
        { name: 'HOME', value: '/tmp' },
        { name: 'VIGIL_OPENVAS_PASSWORD', valueFrom: { secretKeyRef: { name: 'openvas', key: 'password' } } },
      ]);
      const zap = containerNamed(buildScanJob(jobInput('OWASP_ZAP')), 'scanner');
      expect(zap.env).to.deep.include({ name: 'JAVA_TOOL_OPTIONS', value: '-Duser.home=/tmp' });
    });
  });

  describe('upload token', () => {
    it('reaches the uploader only through a secretKeyRef, never inline in the Job', () => {
      const secret = buildScanSecret(jobInput(), TOKEN, JOB);
      const job = buildScanJob(jobInput('NMAP', { uploadTokenSecretName: secret.metadata.name }));
      const upload = containerNamed(job, 'upload');
      const tokenEnv = upload.env?.find((env) => env.name === 'VIGIL_UPLOAD_TOKEN');
      expect(tokenEnv).to.deep.equal({ name: 'VIGIL_UPLOAD_TOKEN', valueFrom: { secretKeyRef: { name: 'nightly-nmap-secret', key: 'token' } } });
      expect(JSON.stringify(job)).to.not.include(TOKEN);
      for (const each of allContainers(job).filter((candidate) => candidate.name !== 'upload')) {
        expect(JSON.stringify(each.env ?? [])).to.not.include('VIGIL_UPLOAD_TOKEN');
      }
    });

    it('keeps the token in an immutable Opaque Secret', () => {
      const secret = buildScanSecret(jobInput(), TOKEN, JOB);
      expect(secret).to.deep.include({ apiVersion: 'v1', kind: 'Secret', type: 'Opaque', immutable: true, stringData: { token: TOKEN } });
      expect(secretProblems(secret)).to.deep.equal([]);
    });
  });

  describe('volumes', () => {
    for (const type of SCAN_TYPES) {
      it(`${type}: the scanner writes its outputs into the emptyDir the uploader reads`, () => {
        const job = buildScanJob(jobInput(type));
        const pod = job.spec.template.spec;
        const scanner = containerNamed(job, 'scanner');
        const upload = containerNamed(job, 'upload');
        const outputMount = scanner.volumeMounts.find((mount) => mount.mountPath === '/vigil/output')!;
        expect(outputMount.readOnly ?? false).to.equal(false);
        expect(pod.volumes.find((each) => each.name === outputMount.name)).to.deep.equal({ name: 'output', emptyDir: { sizeLimit: '1Gi' } });
        expect(upload.volumeMounts).to.deep.include({ name: outputMount.name, mountPath: '/vigil/output', readOnly: true });
        expect(scanner.volumeMounts).to.deep.include({ name: 'tmp', mountPath: '/tmp' });
        expect(pod.volumes.find((each) => each.name === 'tmp')?.emptyDir).to.not.equal(undefined);
        const written = [...scanner.args, ...Object.values(inputsSecret(jobInput(type))?.stringData ?? {})].join('\n');
        for (const output of scannerFor(type).outputs) {
          expect(
            written.includes(`/vigil/output/${output.file}`) || (written.includes('/vigil/output') && written.includes(output.file)),
            output.file,
          ).to.equal(true);
        }
      });
    }

    it('takes the output size limit from the settings', () => {
      const settings = { ...defaultJobSettings('0.1.0'), outputSizeLimit: '5Gi' };
      const volumes = buildScanJob(jobInput('NMAP', { settings })).spec.template.spec.volumes;
      expect(volumes.find((each) => each.name === 'output')?.emptyDir?.sizeLimit).to.equal('5Gi');
    });
  });

  describe('scanners that end their Job with exit 0 on findings (issue 19)', () => {
    const scanner = (type: ScanType, overrides: Partial<ScanJobInput> = {}) => containerNamed(buildScanJob(jobInput(type, overrides)), 'scanner');

    it('sslyze skips the Mozilla check, whose exit 1 would fail the pod before the upload', () => {
      expect(scanner('SSLYZE').args[0]).to.equal('--mozilla_config=disable');
    });

    it('the ZAP plan in the inputs Secret ends with an exitStatus job: warnings exit 0, errors 1', () => {
      for (const type of ['OWASP_ZAP', 'OWASP_ZAP_ACTIVE'] as const) {
        const plan = inputsSecret(jobInput(type))!.stringData['zap-plan.yaml']!;
        expect(
          plan.trimEnd().endsWith('- type: "exitStatus"\n    parameters:\n      okExitValue: 0\n      warnExitValue: 0\n      errorExitValue: 1'),
          plan,
        ).to.equal(true);
      }
    });

    it('nuclei runs the derived image with its baked-in templates, never updating', () => {
      const nuclei = scanner('NUCLEI');
      expect(nuclei.image).to.equal(`ghcr.io/vigil-dev/vigil-nuclei:v3.11.1-templates-${NUCLEI_TEMPLATES_VERSION}`);
      expect(nuclei.args.slice(0, 3)).to.deep.equal(['-t', '/opt/nuclei-templates', '-duc']);
    });
  });

  describe('vetted addresses (issue 16: scanners never resolve a target name again)', () => {
    const addresses = {
      'scanme.example.com': ['93.184.216.34'],
      'shop.example.com': ['93.184.216.35'],
      'www.example.com': ['93.184.216.36'],
      'api.example.com': ['93.184.216.37'],
    };
    const scanner = (type: ScanType, targets: string[]) => containerNamed(buildScanJob(jobInput(type, { targets, addresses })), 'scanner');
    const inputsOf = (type: ScanType, targets: string[]) => inputsSecret(jobInput(type, { targets, addresses }))!.stringData;

    it('nmap scans the addresses, not the names', () => {
      expect(scanner('NMAP', ['scanme.example.com', '198.51.100.7']).args.slice(-2)).to.deep.equal(['93.184.216.34', '198.51.100.7']);
    });

    it('sslyze connects to the address and keeps the name for SNI (host:port{ip})', () => {
      expect(scanner('SSLYZE', ['www.example.com', 'https://api.example.com:8443/']).args.slice(-2)).to.deep.equal([
        'www.example.com:443{93.184.216.36}',
        'api.example.com:8443{93.184.216.37}',
      ]);
    });

    it('nuclei keeps the names and reads their addresses from a hosts file ($HOSTS_PATH)', () => {
      expect(scanner('NUCLEI', ['https://www.example.com/']).env).to.deep.include({ name: 'HOSTS_PATH', value: '/vigil/output/nuclei-hosts' });
      expect(inputsOf('NUCLEI', ['https://www.example.com/', 'api.example.com'])['nuclei-hosts']).to.equal(
        '93.184.216.36 www.example.com\n93.184.216.37 api.example.com\n',
      );
    });

    it('ZAP keeps the name and resolves only from its hosts file (jdk.net.hosts.file beside user.home)', () => {
      expect(scanner('OWASP_ZAP', ['https://shop.example.com/']).env).to.deep.include({
        name: 'JAVA_TOOL_OPTIONS',
        value: '-Duser.home=/tmp -Djdk.net.hosts.file=/vigil/output/zap-hosts',
      });
      // Every checked name the scan carries (its target's, and the hosts of its ZAP settings since issue 26), and nothing else.
      expect(inputsOf('OWASP_ZAP', ['https://shop.example.com/'])['zap-hosts']).to.equal(
        '127.0.0.1 localhost\n93.184.216.35 shop.example.com\n93.184.216.34 scanme.example.com\n93.184.216.36 www.example.com\n93.184.216.37 api.example.com\n',
      );
    });

    it('refuses to build a Job for a name without a checked address rather than let the scanner resolve it', () => {
      expect(() => scanner('NMAP', ['other.example.com'])).to.throw(/no checked address for 'other\.example\.com'/);
    });
  });

  describe('images', () => {
    for (const type of SCAN_TYPES) {
      it(`${type} builds a structurally valid Job whose images are all pinned`, () => {
        const job = buildScanJob(jobInput(type));
        expect(jobProblems(job)).to.deep.equal([]);
        for (const each of allContainers(job)) expect(isPinnedImage(each.image), each.image).to.equal(true);
        expect(containerNamed(job, 'scanner').image).to.not.match(/:latest$/);
      });
    }

    it('honours per-type image overrides and runs the vigil-driven scanners from settings.vigilImage', () => {
      const settings: JobSettings = {
        ...defaultJobSettings('0.1.0'),
        vigilImage: 'registry.internal/vigil:0.1.0',
        images: { NMAP: 'registry.internal/nmap:7.95' },
      };
      expect(containerNamed(buildScanJob(jobInput('NMAP', { settings })), 'scanner').image).to.equal('registry.internal/nmap:7.95');
      expect(containerNamed(buildScanJob(jobInput('OPENVAS', { settings })), 'scanner').image).to.equal('registry.internal/vigil:0.1.0');
      expect(containerNamed(buildScanJob(jobInput('NESSUS', { settings })), 'upload').image).to.equal('registry.internal/vigil:0.1.0');
    });

    it('refuses unpinned images and malformed quantities with a message naming the field', () => {
      const unpinned: JobSettings = { ...defaultJobSettings('0.1.0'), images: { NUCLEI: 'projectdiscovery/nuclei:latest' } };
      expect(() => buildScanJob(jobInput('NUCLEI', { settings: unpinned }))).to.throw(/images\.NUCLEI .* pinned/);
      const untagged: JobSettings = { ...defaultJobSettings('0.1.0'), vigilImage: 'registry:5000/vigil' };
      expect(() => buildScanJob(jobInput('NMAP', { settings: untagged }))).to.throw(/vigilImage/);
      const badSize: JobSettings = { ...defaultJobSettings('0.1.0'), outputSizeLimit: '1 GB' };
      expect(() => buildScanJob(jobInput('NMAP', { settings: badSize }))).to.throw(/outputSizeLimit/);
    });
  });

  describe('extension points (issue 28)', () => {
    it('puts the affinity and priority class on the pod', () => {
      const spec = buildScanJob(jobInput('NMAP', { settings: extendedSettings() })).spec.template.spec;
      expect(spec.affinity).to.deep.equal(extendedSettings().affinity);
      expect(spec.priorityClassName).to.equal('scanners-low');
    });

    it("adds the pod labels and annotations, Vigil's own labels winning a clash", () => {
      const job = buildScanJob(jobInput('NMAP', { settings: extendedSettings() }));
      const { labels, annotations } = job.spec.template.metadata;
      expect(labels['team']).to.equal('security');
      expect(labels['app.kubernetes.io/name']).to.equal('vigil-scanner');
      expect(annotations['sidecar.istio.io/inject']).to.equal('false');
      expect(annotations['kubectl.kubernetes.io/default-container']).to.equal('scanner');
    });

    for (const type of ['NMAP', 'OPENVAS', 'OWASP_ZAP'] as const) {
      it(`${type}: mounts the CA bundle read-only in every container and points Node.js and the OpenVAS driver at it`, () => {
        const job = buildScanJob(jobInput(type, { settings: extendedSettings() }));
        expect(job.spec.template.spec.volumes).to.deep.include({
          name: 'ca-bundle',
          configMap: { name: 'corporate-ca', items: [{ key: 'bundle.pem', path: 'bundle.pem' }] },
        });
        for (const container of allContainers(job)) {
          expect(container.volumeMounts, container.name).to.deep.include({ name: 'ca-bundle', mountPath: '/etc/vigil/ca', readOnly: true });
          expect(container.env, container.name).to.deep.include({ name: 'NODE_EXTRA_CA_CERTS', value: '/etc/vigil/ca/bundle.pem' });
          expect(container.env, container.name).to.deep.include({ name: 'VIGIL_OPENVAS_CA_FILE', value: '/etc/vigil/ca/bundle.pem' });
        }
      });
    }

    it('adds nothing when the settings leave them out', () => {
      const job = buildScanJob(jobInput('NMAP'));
      expect(job.spec.template.spec).to.not.have.any.keys('affinity', 'priorityClassName');
      expect(job.spec.template.spec.volumes.map((volume) => volume.name)).to.not.include('ca-bundle');
      expect(Object.keys(job.spec.template.metadata.annotations)).to.deep.equal(['kubectl.kubernetes.io/default-container']);
    });

    it('refuses a CA bundle or priority class that is not a name', () => {
      const settings: JobSettings = {
        ...defaultJobSettings('0.1.0'),
        caBundle: { configMapName: 'Corporate CA', key: 'a/b' },
        priorityClassName: 'Low_Priority',
      };
      expect(() => buildScanJob(jobInput('NMAP', { settings }))).to.throw(/caBundle\.configMapName.*caBundle\.key.*|priorityClassName/);
      expect(() => buildScanJob(jobInput('NMAP', { settings }))).to.throw(/priorityClassName 'Low_Priority'/);
    });
  });

  describe('structural check against the Kubernetes 1.29 Job fields', () => {
    it('passes with scheduling settings: pull secrets, node selector and tolerations', () => {
      const settings: JobSettings = {
        ...defaultJobSettings('0.1.0'),
        imagePullSecrets: ['registry-credentials'],
        nodeSelector: { 'vigil.dev/pool': 'scanners' },
        tolerations: [{ key: 'vigil.dev/scanners', operator: 'Exists', effect: 'NoSchedule' }],
      };
      const job = buildScanJob(jobInput('OWASP_ZAP_ACTIVE', { settings }));
      expect(job.spec.template.spec.imagePullSecrets).to.deep.equal([{ name: 'registry-credentials' }]);
      expect(jobProblems(job)).to.deep.equal([]);
    });

    it('passes with the extension points: affinity, priority class, pod labels and annotations, a CA bundle', () => {
      const job = buildScanJob(jobInput('OWASP_ZAP', { settings: extendedSettings() }));
      expect(jobProblems(job)).to.deep.equal([]);
    });

    it('every quantity the defaults use is a Kubernetes quantity', () => {
      for (const text of ['250m', '1', '256Mi', '1Gi', '2Gi', '0.5', '1e3', '500M']) {
        expect(QUANTITY_PATTERN.test(text), text).to.equal(true);
        expect(K8S_QUANTITY.test(text), text).to.equal(true);
      }
      for (const text of ['1 Gi', '1GB', 'Gi', '', '1.2.3', '-1']) expect(QUANTITY_PATTERN.test(text), text).to.equal(false);
    });

    it('the checker itself finds what the API server would refuse', () => {
      const broken = (mutate: (job: Job) => void): string[] => {
        const job = structuredClone(buildScanJob(jobInput('NMAP')));
        mutate(job);
        return jobProblems(job);
      };
      expect(broken((job) => (containerNamed(job, 'upload').volumeMounts[0]!.name = 'results'))).to.deep.equal(['upload: mount of unknown volume results']);
      expect(broken((job) => (containerNamed(job, 'scanner').resources.limits!.memory = '1 GB'))).to.have.length(1);
      expect(
        broken((job) => ((containerNamed(job, 'scanner').securityContext as unknown as Record<string, unknown>).readOnlyRootFileSystem = true)),
      ).to.deep.equal(['job.spec.template.spec.initContainers[0].securityContext.readOnlyRootFileSystem: unknown field']);
      expect(broken((job) => (containerNamed(job, 'scanner').securityContext.runAsUser = 0))).to.deep.equal([
        'scanner: runAsNonRoot with runAsUser 0 never starts',
      ]);
      expect(broken((job) => (containerNamed(job, 'scanner').name = 'Scanner_1'))).to.have.length(1);
      expect(broken((job) => (job.metadata.name = `${'x'.repeat(60)}-scanner`))).to.have.length(1);
      expect(broken((job) => (containerNamed(job, 'upload').image = ''))).to.have.length(1);
      expect(broken((job) => (containerNamed(job, 'scanner').resources.requests!.memory = '4Gi'))).to.deep.equal([
        'scanner: memory request 4Gi exceeds its limit 1Gi',
      ]);
      expect(broken((job) => (job.spec.template.spec.containers = []))).to.have.length(1);
      expect(broken((job) => (job.metadata.labels['vigil.dev/scan'] = 'x'.repeat(64)))).to.have.length(1);
    });
  });
});
