/**
 * charts/vigil, rendered by the real helm 3.17 (from its pinned npm package):
 * lint, every object valid against the Kubernetes schemas (kubernetes-models),
 * the values schema refusing unknown keys at every level, the generated files
 * equal to their sources, and the settings the Deployment gives Vigil.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as models from 'kubernetes-models';
import { parse } from 'yaml';
import { CHART_DIR, ROOT, expectedChartFiles } from '../../scripts/chart-files.js';
import { SCANNER_IMAGES, VIGIL_VERSION } from '../../src/domain/scanners/index.js';
import { VIGIL_IMAGE_REPOSITORY } from '../../src/domain/scanners/images.js';
import { defaultJobSettings, jobSettingsFrom } from '../../src/runtime/kubernetes/job-settings.js';
import { buildScanJob } from '../../src/runtime/kubernetes/job-manifest.js';
import { SCAN_TYPES } from '../../src/domain/risks/finding.js';
import { chartRefusal, helmWithValues, renderChart, renderNotes, type RenderedObject } from '../support/chart.js';

/** Every value the chart has, set to something other than its default. */
export const FULL_VALUES = {
  image: { repository: 'registry.example.com/vigil', tag: '0.1.0-rc1', pullPolicy: 'Always' },
  imagePullSecrets: [{ name: 'registry-login' }],
  tenants: {
    releaseNamespace: false,
    namespaces: [
      { name: 'vigil-acme', create: true, podSecurity: 'restricted' },
      { name: 'vigil-udp', create: true, podSecurity: 'privileged' },
      { name: 'vigil-existing' },
    ],
  },
  publicUrl: 'https://vigil.example.com',
  uploadUrl: 'http://vigil-uploads.vigil.svc:8080',
  config: { maxConcurrentScans: 4, allowTargets: '10.0.0.0/8', logLevel: 'debug', smtpFrom: 'alerts@example.com', bootstrapApiKeySecret: { name: 'vigil-bootstrap', key: 'key' } },
  extraEnv: [{ name: 'VIGIL_SMTP_URL', valueFrom: { secretKeyRef: { name: 'vigil-smtp', key: 'url' } } }],
  jobs: {
    serviceAccountName: 'scanner',
    activeDeadlineSeconds: 3600,
    images: { NMAP: 'registry.example.com/mirror/nmap:7.95' },
    resources: { OWASP_ZAP: { requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '2', memory: '3Gi' } } },
    helperResources: { requests: { cpu: '20m', memory: '32Mi' }, limits: { cpu: '200m', memory: '128Mi' } },
    outputSizeLimit: '2Gi',
    tmpSizeLimit: '512Mi',
    scannerEnv: { NESSUS: [{ name: 'VIGIL_NESSUS_URL', valueFrom: { secretKeyRef: { name: 'nessus', key: 'url' } } }] },
    nodeSelector: { pool: 'scanners' },
    tolerations: [{ key: 'scanners', operator: 'Exists', effect: 'NoSchedule' }],
  },
  resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '1', memory: '512Mi' } },
  nodeSelector: { pool: 'system' },
  tolerations: [{ key: 'system', operator: 'Equal', value: 'true', effect: 'NoExecute', tolerationSeconds: 30 }],
  podAnnotations: { 'example.com/team': 'security' },
  persistence: { size: '50Gi', storageClass: 'fast', existingClaim: '' },
  backup: { enabled: true, schedule: 'WEEKLY 2026-01-04T03:30:00+01:00 Europe/Berlin', keep: 4, persistence: { size: '200Gi', storageClass: 'archive', existingClaim: '' } },
  service: { type: 'ClusterIP', port: 9000 },
  serviceAccount: { name: 'vigil-operator', annotations: { 'example.com/role': 'operator' } },
  networkPolicy: { enabled: true, from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } }] },
  serviceMonitor: { enabled: true, interval: '15s', labels: { release: 'prometheus' } },
  ingress: { enabled: true, className: 'nginx', host: 'vigil.example.com', annotations: { 'cert-manager.io/cluster-issuer': 'letsencrypt' }, tlsSecretName: 'vigil-tls' },
};

const MODELS: Record<string, Record<string, unknown>> = {
  v1: models.v1,
  'apps/v1': models.apps.v1,
  'rbac.authorization.k8s.io/v1': models.rbacAuthorizationK8sIo.v1,
  'networking.k8s.io/v1': models.networkingK8sIo.v1,
  'apiextensions.k8s.io/v1': models.apiextensionsK8sIo.v1,
  'batch/v1': models.batch.v1,
};

/** Validates one object against its Kubernetes schema; throws naming the object and the failing field. */
function validateObject(object: RenderedObject): void {
  const Model = MODELS[object.apiVersion]?.[object.kind] as (new (data: unknown) => { validate(): void }) | undefined;
  if (Model === undefined) throw new Error(`no Kubernetes schema for ${object.apiVersion} ${object.kind}`);
  try {
    new Model(object).validate();
  } catch (error) {
    throw new Error(`${object.kind} ${object.metadata.name}: ${(error as Error).message}`);
  }
}

const find = (objects: RenderedObject[], kind: string, name?: string) => objects.find((object) => object.kind === kind && (name === undefined || object.metadata.name === name));

describe('charts/vigil', function () {
  this.timeout(60_000);

  for (const [what, values] of [['the default values', {}], ['a full set of values', FULL_VALUES]] as const) {
    describe(`with ${what}`, () => {
      it('passes helm lint --strict', () => {
        const output = helmWithValues(['lint', '--strict', CHART_DIR], values);
        expect(output).to.match(/1 chart\(s\) linted, 0 chart\(s\) failed/);
      });

      it('renders only objects valid against the Kubernetes schemas, CRDs included', () => {
        const text = helmWithValues(['template', 'vigil', CHART_DIR, '--namespace', 'vigil', '--include-crds'], values);
        const objects = text.split(/^---$/m).map((document) => parse(document) as RenderedObject | null).filter((object): object is RenderedObject => object !== null);
        expect(objects.filter((object) => object.kind === 'CustomResourceDefinition')).to.have.length(2);
        // The Prometheus Operator's ServiceMonitor has no schema in kubernetes-models; its fields are checked below.
        for (const object of objects.filter((candidate) => candidate.kind !== 'ServiceMonitor')) validateObject(object);
      });

      it('gives the scanner Job settings that Vigil accepts at start-up', () => {
        const configMap = find(renderChart(values), 'ConfigMap')!;
        const settings = jobSettingsFrom(JSON.parse(configMap.data['job-settings.json']), defaultJobSettings(VIGIL_VERSION));
        expect(settings.vigilImage).to.equal(values === FULL_VALUES ? 'registry.example.com/vigil:0.1.0-rc1' : SCANNER_IMAGES.vigil);
      });
    });
  }

  it("builds, from the chart's job settings, scanner Jobs valid against the Kubernetes schemas whose Vigil containers run the chart's image", () => {
    const configMap = find(renderChart(FULL_VALUES), 'ConfigMap')!;
    const settings = jobSettingsFrom(JSON.parse(configMap.data['job-settings.json']), defaultJobSettings(VIGIL_VERSION));
    for (const type of SCAN_TYPES) {
      const scan = { name: 'nightly', namespace: 'vigil-acme', uid: 'uid-1', type, id: '3f1c2a9e-7b4d-4c1e-9a53-2d0f6b8e4a17' };
      const targets = type.startsWith('OWASP_ZAP') || type === 'NUCLEI' ? ['https://shop.example.com/'] : ['93.184.216.34'];
      const job = buildScanJob({ scan, targets, settings, uploadUrl: 'http://vigil.vigil.svc:8080', uploadTokenSecretName: 'nightly-upload', createdAt: new Date() });
      validateObject(job as unknown as RenderedObject);
      const pod = job.spec.template.spec;
      expect(pod.serviceAccountName).to.equal('scanner');
      expect(pod.containers.find((container) => container.name === 'upload')!.image).to.equal('registry.example.com/vigil:0.1.0-rc1');
    }
  });

  it('runs one vigil serve, replaced with Recreate, non-root on a read-only root filesystem, probed on /healthz', () => {
    const deployment = find(renderChart(), 'Deployment')!;
    expect([deployment.spec.replicas, deployment.spec.strategy.type]).to.deep.equal([1, 'Recreate']);
    const pod = deployment.spec.template.spec;
    expect(pod.securityContext).to.deep.include({ runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: 'RuntimeDefault' } });
    const [container] = pod.containers;
    expect(container.securityContext).to.deep.equal({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ['ALL'] } });
    expect([container.readinessProbe.httpGet.path, container.livenessProbe.httpGet.path]).to.deep.equal(['/healthz', '/healthz']);
    expect(container.resources.limits).to.have.keys('cpu', 'memory');
    expect(container.volumeMounts.map((mount: { mountPath: string }) => mount.mountPath).sort()).to.deep.equal(['/etc/vigil', '/tmp', '/var/lib/vigil']);
  });

  it('sets the runtime, the listening address, the data directory, the job settings file and an upload URL separate from the public URL', () => {
    const envOf = (objects: RenderedObject[]) =>
      Object.fromEntries(find(objects, 'Deployment')!.spec.template.spec.containers[0].env.filter((variable: { value?: string }) => 'value' in variable).map((variable: { name: string; value: string }) => [variable.name, variable.value]));
    expect(envOf(renderChart())).to.deep.include({
      VIGIL_RUNTIME: 'kubernetes',
      VIGIL_HOST: '0.0.0.0',
      VIGIL_DATA_DIR: '/var/lib/vigil',
      VIGIL_NAMESPACE: 'vigil',
      VIGIL_JOB_SETTINGS_FILE: '/etc/vigil/job-settings.json',
      VIGIL_UPLOAD_URL: 'http://vigil.vigil.svc:8080',
      VIGIL_PUBLIC_URL: 'http://vigil.vigil.svc:8080',
    });
    expect(envOf(renderChart(FULL_VALUES))).to.deep.include({ VIGIL_PUBLIC_URL: 'https://vigil.example.com', VIGIL_UPLOAD_URL: 'http://vigil-uploads.vigil.svc:8080' });
  });

  it('restarts the pod when the job settings change (checksum annotation)', () => {
    const checksum = (values: object) => find(renderChart(values), 'Deployment')!.spec.template.metadata.annotations['checksum/job-settings'];
    expect(checksum({})).to.match(/^[0-9a-f]{64}$/);
    expect(checksum({ jobs: { activeDeadlineSeconds: 60 } })).not.to.equal(checksum({}));
    expect(checksum({ config: { logLevel: 'debug' } })).to.equal(checksum({}));
  });

  it('keeps the data volume claim on uninstall, and uses an existing claim instead when given', () => {
    const claim = find(renderChart(), 'PersistentVolumeClaim')!;
    expect(claim.metadata.annotations).to.deep.equal({ 'helm.sh/resource-policy': 'keep' });
    const withExisting = renderChart({ persistence: { existingClaim: 'old-data' } });
    expect(find(withExisting, 'PersistentVolumeClaim')).to.equal(undefined);
    expect(find(withExisting, 'Deployment')!.spec.template.spec.volumes[0].persistentVolumeClaim.claimName).to.equal('old-data');
  });

  it("makes backups only when backup.enabled: their own volume claim (kept on uninstall), mounted, and the schedule and count in serve's environment", () => {
    const claims = (objects: RenderedObject[]) => objects.filter((object) => object.kind === 'PersistentVolumeClaim').map((claim) => claim.metadata.name);
    const deployment = (objects: RenderedObject[]) => find(objects, 'Deployment')!.spec.template.spec;
    const backupEnv = (objects: RenderedObject[]) => deployment(objects).containers[0].env.filter((variable: { name: string }) => variable.name.startsWith('VIGIL_BACKUP_'));
    expect(claims(renderChart())).to.deep.equal(['vigil-data']);
    expect(backupEnv(renderChart())).to.deep.equal([]);
    const full = renderChart(FULL_VALUES);
    const claim = find(full, 'PersistentVolumeClaim', 'vigil-backups')!;
    expect(claim.metadata.annotations).to.deep.equal({ 'helm.sh/resource-policy': 'keep' });
    expect(claim.spec).to.deep.include({ storageClassName: 'archive', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '200Gi' } } });
    expect(backupEnv(full)).to.deep.equal([
      { name: 'VIGIL_BACKUP_DIR', value: '/var/backups/vigil' },
      { name: 'VIGIL_BACKUP_SCHEDULE', value: 'WEEKLY 2026-01-04T03:30:00+01:00 Europe/Berlin' },
      { name: 'VIGIL_BACKUP_KEEP', value: '4' },
    ]);
    expect(deployment(full).containers[0].volumeMounts).to.deep.include({ name: 'backups', mountPath: '/var/backups/vigil' });
    expect(deployment(full).volumes).to.deep.include({ name: 'backups', persistentVolumeClaim: { claimName: 'vigil-backups' } });
    const existing = renderChart({ backup: { enabled: true, persistence: { existingClaim: 'old-backups' } } });
    expect(claims(existing)).to.deep.equal(['vigil-data']);
    expect(deployment(existing).volumes).to.deep.include({ name: 'backups', persistentVolumeClaim: { claimName: 'old-backups' } });
  });

  it('refuses a backup schedule that is not one Vigil reads (a cron expression)', () => {
    expect(chartRefusal({ backup: { enabled: true, schedule: '0 2 * * *' } })).to.include('backup.schedule');
  });

  it('creates the tenant namespaces asked for, labelled for Pod Security admission and kept on uninstall', () => {
    const namespaces = renderChart(FULL_VALUES).filter((object) => object.kind === 'Namespace');
    expect(namespaces.map((namespace) => [namespace.metadata.name, namespace.metadata.labels!['pod-security.kubernetes.io/enforce']])).to.deep.equal([
      ['vigil-acme', 'restricted'],
      ['vigil-udp', 'privileged'],
    ]);
    for (const namespace of namespaces) expect(namespace.metadata.annotations).to.deep.equal({ 'helm.sh/resource-policy': 'keep' });
    const unlabelled = renderChart({ tenants: { releaseNamespace: true, namespaces: [{ name: 'vigil-acme', create: true }] } }).find((object) => object.kind === 'Namespace')!;
    expect(unlabelled.metadata.labels!['pod-security.kubernetes.io/enforce'], 'the default level').to.equal('restricted');
  });

  it('renders the optional NetworkPolicy, ServiceMonitor and Ingress only when enabled', () => {
    const optional = ['NetworkPolicy', 'ServiceMonitor', 'Ingress'];
    expect(renderChart().filter((object) => optional.includes(object.kind))).to.deep.equal([]);
    const full = renderChart(FULL_VALUES);
    const policy = find(full, 'NetworkPolicy')!;
    expect(policy.spec.ingress[0].from[0].namespaceSelector.matchExpressions[0].values).to.deep.equal(['vigil-acme', 'vigil-udp', 'vigil-existing']);
    const closed = find(renderChart({ networkPolicy: { enabled: true, from: [] }, tenants: { releaseNamespace: false, namespaces: [] } }), 'NetworkPolicy')!;
    expect(closed.spec.ingress, 'no peer: nobody, not everybody').to.deep.equal([]);
    expect(find(full, 'ServiceMonitor')!.spec.endpoints).to.deep.equal([{ port: 'http', path: '/metrics', interval: '15s' }]);
    expect(find(full, 'Ingress')!.spec.tls).to.deep.equal([{ hosts: ['vigil.example.com'], secretName: 'vigil-tls' }]);
  });

  it('tells in its notes how to create the first account with kubectl exec', () => {
    const notes = renderNotes({ tenants: { releaseNamespace: true, namespaces: [{ name: 'vigil-acme' }] } });
    expect(notes).to.include('kubectl -n vigil exec deploy/vigil -- \\\n       vigil accounts create --name acme --namespace vigil-acme');
  });

  describe('values.schema.json', () => {
    const refusals: Array<[string, object, RegExp]> = [
      ['a misspelt top-level key', { imagee: {} }, /imagee/],
      ['a misspelt key in jobs', { jobs: { resoures: {} } }, /resoures/],
      ['a misspelt key two levels down', { jobs: { helperResources: { request: { cpu: '1' } } } }, /request/],
      ['a misspelt key in a tenant namespace', { tenants: { releaseNamespace: true, namespaces: [{ name: 'vigil-acme', podsecurity: 'restricted' }] } }, /podsecurity/],
      ['an unknown scan type', { jobs: { images: { NMAPP: 'nmap:7.95' } } }, /NMAPP/],
      ['a system namespace as a tenant', { tenants: { releaseNamespace: true, namespaces: [{ name: 'kube-system' }] } }, /kube-system|tenants/],
      ['an unknown Pod Security level', { tenants: { releaseNamespace: true, namespaces: [{ name: 'vigil-acme', podSecurity: 'strict' }] } }, /podSecurity/],
      ['the latest tag', { image: { repository: 'ghcr.io/vigil-dev/vigil', tag: 'latest', pullPolicy: 'IfNotPresent' } }, /tag/],
    ];
    for (const [what, values, message] of refusals) {
      it(`refuses ${what}`, () => {
        expect(chartRefusal(values)).to.match(/values don't meet the specifications of the schema/).and.to.match(message);
      });
    }

    it('closes every object it describes: additionalProperties is false, or a typed map of strings for labels, annotations and selectors', () => {
      const schema = JSON.parse(readFileSync(`${CHART_DIR}/values.schema.json`, 'utf8'));
      const open: string[] = [];
      const walk = (node: Record<string, any>, path: string): void => {
        if (node.type === 'object' && node.additionalProperties !== false && node.additionalProperties?.type !== 'string' && node.propertyNames === undefined) open.push(path);
        for (const [key, child] of Object.entries(node.properties ?? {})) walk(child as Record<string, any>, `${path}.${key}`);
        if (typeof node.additionalProperties === 'object') walk(node.additionalProperties, `${path}.*`);
        if (node.items !== undefined) walk(node.items, `${path}[]`);
        for (const choice of node.anyOf ?? []) walk(choice, path);
      };
      walk(schema, '$');
      expect(open).to.deep.equal([]);
    });
  });

  describe('files generated from one source (make chart-files)', () => {
    for (const [path, content] of expectedChartFiles()) {
      it(`${path} is up to date`, () => expect(readFileSync(`${ROOT}/${path}`, 'utf8')).to.equal(content));
    }
  });

  describe("Vigil's image name and version, written once in src/domain/scanners/images.ts", () => {
    const chart = parse(readFileSync(`${CHART_DIR}/Chart.yaml`, 'utf8')) as { appVersion: string };
    const values = parse(readFileSync(`${CHART_DIR}/values.yaml`, 'utf8')) as { image: { repository: string; tag: string } };

    it("are the chart's default image and the Job settings' vigilImage", () => {
      expect([values.image.repository, values.image.tag, chart.appVersion]).to.deep.equal([VIGIL_IMAGE_REPOSITORY, '', VIGIL_VERSION]);
      expect(defaultJobSettings(VIGIL_VERSION).vigilImage).to.equal(`${VIGIL_IMAGE_REPOSITORY}:${VIGIL_VERSION}`);
    });

    it('are what make image tags', () => {
      const printed = execFileSync('make', ['-s', 'print-image'], { cwd: ROOT, encoding: 'utf8' });
      expect(printed.trim()).to.equal(`${VIGIL_IMAGE_REPOSITORY}:${VIGIL_VERSION}`);
    });

    it('include the NUCLEI image, which make nuclei-image tags as the scanner definitions name it, and only with a checksum', () => {
      const planned = execFileSync('make', ['-n', 'nuclei-image', 'NUCLEI_TEMPLATES_SHA256=0123abcd'], { cwd: ROOT, encoding: 'utf8' });
      expect(planned).to.include(`--build-arg NUCLEI_TEMPLATES_SHA256=0123abcd --tag ${SCANNER_IMAGES.nuclei} images/nuclei`);
      expect(() => execFileSync('make', ['-s', 'nuclei-image'], { cwd: ROOT, stdio: 'pipe' })).to.throw(/NUCLEI_TEMPLATES_SHA256/);
    });
  });
});
