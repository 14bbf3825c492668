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
import { egressRulesAdmitting } from '../support/network-policy.js';
import { Metrics } from '../../src/observability/metrics.js';
import { chartValueRows } from '../../scripts/chart-readme.js';

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
  config: {
    maxConcurrentScans: 4,
    allowTargets: '10.0.0.0/8',
    logLevel: 'debug',
    smtpFrom: 'alerts@example.com',
    bootstrapApiKeySecret: { name: 'vigil-bootstrap', key: 'key' },
  },
  scans: { ttlSecondsAfterFinished: 86400 },
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
    affinity: {
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          {
            weight: 50,
            podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { 'app.kubernetes.io/name': 'vigil-scanner' } } },
          },
        ],
      },
    },
    priorityClassName: 'scanners-low',
    podLabels: { 'example.com/cost-centre': 'security' },
    podAnnotations: { 'sidecar.istio.io/inject': 'false', 'example.com/scanned-by': 'vigil' },
    networkPolicy: {
      enabled: true,
      deniedCIDRs: ['10.244.0.0/16', '10.96.0.0/12', '172.18.0.2/32', 'fd00:10:244::/56'],
      dns: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } }, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }],
      extraEgress: [{ to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'greenbone' } } }], ports: [{ port: 9390, protocol: 'TCP' }] }],
    },
  },
  resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '1', memory: '512Mi' } },
  nodeSelector: { pool: 'system' },
  tolerations: [{ key: 'system', operator: 'Equal', value: 'true', effect: 'NoExecute', tolerationSeconds: 30 }],
  podAnnotations: { 'example.com/team': 'security' },
  podLabels: { 'example.com/cost-centre': 'platform' },
  affinity: {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'In', values: ['system'] }] }] },
    },
  },
  topologySpreadConstraints: [
    {
      maxSkew: 1,
      topologyKey: 'topology.kubernetes.io/zone',
      whenUnsatisfiable: 'ScheduleAnyway',
      labelSelector: { matchLabels: { 'app.kubernetes.io/name': 'vigil' } },
    },
  ],
  priorityClassName: 'platform-critical',
  extraVolumes: [{ name: 'scratch', emptyDir: { sizeLimit: '1Gi' } }],
  extraVolumeMounts: [{ name: 'scratch', mountPath: '/scratch' }],
  caBundle: { configMapName: 'corporate-ca', key: 'bundle.pem' },
  persistence: { size: '50Gi', storageClass: 'fast', existingClaim: '' },
  backup: {
    enabled: true,
    schedule: 'WEEKLY 2026-01-04T03:30:00+01:00 Europe/Berlin',
    keep: 4,
    persistence: { size: '200Gi', storageClass: 'archive', existingClaim: '' },
  },
  service: { type: 'ClusterIP', port: 9000 },
  serviceAccount: { name: 'vigil-operator', annotations: { 'example.com/role': 'operator' } },
  networkPolicy: {
    enabled: true,
    from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } }],
    metricsFrom: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
  },
  metrics: { port: 9102 },
  grafanaDashboard: { enabled: true, labels: { grafana_dashboard: '1' }, namespace: 'monitoring' },
  serviceMonitor: { enabled: true, interval: '15s', labels: { release: 'prometheus' } },
  ingress: {
    enabled: true,
    className: 'nginx',
    host: 'vigil.example.com',
    annotations: { 'cert-manager.io/cluster-issuer': 'letsencrypt' },
    tlsSecretName: 'vigil-tls',
  },
};

/** The scanner Job settings the chart's ConfigMap gives Vigil for these values, as Vigil reads them at start-up. */
function chartJobSettings(values: object) {
  const configMap = renderChart(values).find((object) => object.kind === 'ConfigMap')!;
  return jobSettingsFrom(JSON.parse(configMap.data['job-settings.json']), defaultJobSettings(VIGIL_VERSION));
}

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
    throw new Error(`${object.kind} ${object.metadata.name}: ${(error as Error).message}`, { cause: error });
  }
}

const find = (objects: RenderedObject[], kind: string, name?: string) =>
  objects.find((object) => object.kind === kind && (name === undefined || object.metadata.name === name));

describe('charts/vigil', function () {
  this.timeout(60_000);

  for (const [what, values] of [
    ['the default values', {}],
    ['a full set of values', FULL_VALUES],
  ] as const) {
    describe(`with ${what}`, () => {
      it('passes helm lint --strict', () => {
        const output = helmWithValues(['lint', '--strict', CHART_DIR], values);
        expect(output).to.match(/1 chart\(s\) linted, 0 chart\(s\) failed/);
      });

      it('renders only objects valid against the Kubernetes schemas, CRDs included', () => {
        const text = helmWithValues(['template', 'vigil', CHART_DIR, '--namespace', 'vigil', '--include-crds'], values);
        const objects = text
          .split(/^---$/m)
          .map((document) => parse(document) as RenderedObject | null)
          .filter((object): object is RenderedObject => object !== null);
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
      const job = buildScanJob({
        scan,
        targets,
        settings,
        uploadUrl: 'http://vigil.vigil.svc:8080',
        uploadTokenSecretName: 'nightly-upload',
        createdAt: new Date(),
      });
      validateObject(job as unknown as RenderedObject);
      const pod = job.spec.template.spec;
      expect(pod.serviceAccountName).to.equal('scanner');
      expect(pod.containers.find((container) => container.name === 'upload')!.image).to.equal('registry.example.com/vigil:0.1.0-rc1');
    }
  });

  it('runs one vigil serve, replaced with Recreate, non-root on a read-only root filesystem, started and kept alive on /livez, ready on /readyz', () => {
    const deployment = find(renderChart(), 'Deployment')!;
    expect([deployment.spec.replicas, deployment.spec.strategy.type]).to.deep.equal([1, 'Recreate']);
    const pod = deployment.spec.template.spec;
    expect(pod.securityContext).to.deep.include({ runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: 'RuntimeDefault' } });
    const [container] = pod.containers;
    expect(container.securityContext).to.deep.equal({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
    });
    expect([container.startupProbe.httpGet.path, container.livenessProbe.httpGet.path, container.readinessProbe.httpGet.path]).to.deep.equal([
      '/livez',
      '/livez',
      '/readyz',
    ]);
    expect(container.startupProbe.periodSeconds * container.startupProbe.failureThreshold, 'seconds allowed for migrations').to.be.at.least(300);
    expect(container.resources.limits).to.have.keys('cpu', 'memory');
    expect(container.volumeMounts.map((mount: { mountPath: string }) => mount.mountPath).sort()).to.deep.equal([
      '/etc/vigil/settings',
      '/tmp',
      '/var/lib/vigil',
    ]);
  });

  it('sets the runtime, the listening address, the data directory, the job settings file and an upload URL separate from the public URL', () => {
    const envOf = (objects: RenderedObject[]) =>
      Object.fromEntries(
        find(objects, 'Deployment')!
          .spec.template.spec.containers[0].env.filter((variable: { value?: string }) => 'value' in variable)
          .map((variable: { name: string; value: string }) => [variable.name, variable.value]),
      );
    expect(envOf(renderChart())).to.deep.include({
      VIGIL_RUNTIME: 'kubernetes',
      VIGIL_HOST: '0.0.0.0',
      VIGIL_DATA_DIR: '/var/lib/vigil',
      VIGIL_NAMESPACE: 'vigil',
      VIGIL_JOB_SETTINGS_FILE: '/etc/vigil/settings/job-settings.json',
      VIGIL_UPLOAD_URL: 'http://vigil.vigil.svc:8080',
      VIGIL_PUBLIC_URL: 'http://vigil.vigil.svc:8080',
      VIGIL_SCAN_TTL_AFTER_FINISHED: '604800',
    });
    expect(envOf(renderChart(FULL_VALUES))).to.deep.include({
      VIGIL_PUBLIC_URL: 'https://vigil.example.com',
      VIGIL_UPLOAD_URL: 'http://vigil-uploads.vigil.svc:8080',
      VIGIL_SCAN_TTL_AFTER_FINISHED: '86400',
    });
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
    const backupEnv = (objects: RenderedObject[]) =>
      deployment(objects).containers[0].env.filter((variable: { name: string }) => variable.name.startsWith('VIGIL_BACKUP_'));
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
    const unlabelled = renderChart({ tenants: { releaseNamespace: true, namespaces: [{ name: 'vigil-acme', create: true }] } }).find(
      (object) => object.kind === 'Namespace',
    )!;
    expect(unlabelled.metadata.labels!['pod-security.kubernetes.io/enforce'], 'the default level').to.equal('restricted');
  });

  it("renders the optional NetworkPolicy of Vigil's pod, ServiceMonitor and Ingress only when enabled", () => {
    const optional = ['NetworkPolicy', 'ServiceMonitor', 'Ingress'];
    const byDefault = renderChart().filter((object) => optional.includes(object.kind));
    expect(
      byDefault.map((object) => object.metadata.name),
      'the scanner policy only',
    ).to.deep.equal(['vigil-scanners']);
    const full = renderChart(FULL_VALUES);
    const policy = full.find((object) => object.kind === 'NetworkPolicy' && object.metadata.name === 'vigil')!;
    expect(policy.spec.ingress[0].from[0].namespaceSelector.matchExpressions[0].values).to.deep.equal(['vigil-acme', 'vigil-udp', 'vigil-existing']);
    const closed = renderChart({ networkPolicy: { enabled: true, from: [] }, tenants: { releaseNamespace: false, namespaces: [] } }).find(
      (object) => object.metadata.name === 'vigil',
    )!;
    expect(closed.spec.ingress, 'no peer: nobody, not everybody').to.deep.equal([]);
    expect(find(full, 'ServiceMonitor')!.spec.endpoints).to.deep.equal([{ port: 'metrics', path: '/metrics', interval: '15s' }]);
    expect(find(full, 'Ingress')!.spec.tls).to.deep.equal([{ hosts: ['vigil.example.com'], secretName: 'vigil-tls' }]);
  });

  it('tells in its notes how to create the first account with kubectl exec', () => {
    const notes = renderNotes({ tenants: { releaseNamespace: true, namespaces: [{ name: 'vigil-acme' }] } });
    expect(notes).to.include('kubectl -n vigil exec deploy/vigil -- \\\n       vigil accounts create --name acme --namespace vigil-acme');
  });

  describe('metrics and the Grafana dashboard (issue 28)', () => {
    it('serves /metrics on a port of its own, which the Service names metrics, the ServiceMonitor scrapes and the Ingress never routes', () => {
      const full = renderChart(FULL_VALUES);
      const container = find(full, 'Deployment')!.spec.template.spec.containers[0];
      expect(container.env).to.deep.include({ name: 'VIGIL_METRICS_PORT', value: '9102' });
      expect(container.ports).to.deep.include({ name: 'metrics', containerPort: 9102, protocol: 'TCP' });
      expect(find(full, 'Service')!.spec.ports).to.deep.include({ name: 'metrics', port: 9102, targetPort: 'metrics', protocol: 'TCP' });
      const ingressPorts = find(full, 'Ingress')!.spec.rules.flatMap((rule: any) => rule.http.paths.map((path: any) => path.backend.service.port));
      expect(ingressPorts.every((port: { name?: string; number?: number }) => port.name !== 'metrics' && port.number !== 9102)).to.equal(true);
    });

    it("lets only the metricsFrom peers reach the metrics port through Vigil's NetworkPolicy", () => {
      const policy = renderChart(FULL_VALUES).find((object) => object.kind === 'NetworkPolicy' && object.metadata.name === 'vigil')!;
      const metricsRule = policy.spec.ingress.find((rule: any) => rule.ports[0].port === 'metrics');
      expect(metricsRule.from).to.deep.equal(FULL_VALUES.networkPolicy.metricsFrom);
      expect(policy.spec.ingress.filter((rule: any) => rule.ports.some((port: any) => port.port === 'metrics'))).to.have.length(1);
    });

    it("ships the dashboard in a ConfigMap labelled for Grafana's sidecar, only when enabled", () => {
      expect(renderChart().filter((object) => object.metadata.name === 'vigil-grafana-dashboard')).to.deep.equal([]);
      const configMap = renderChart(FULL_VALUES).find((object) => object.metadata.name === 'vigil-grafana-dashboard')!;
      expect(configMap.metadata.namespace).to.equal('monitoring');
      expect(configMap.metadata.labels).to.include({ grafana_dashboard: '1' });
      expect(JSON.parse(configMap.data['vigil.json']).uid).to.equal('vigil-overview');
    });

    it('queries only metrics Vigil exports, and shows every domain figure', async () => {
      const dashboard = JSON.parse(readFileSync(`${CHART_DIR}/dashboards/vigil.json`, 'utf8'));
      const expressions: string[] = dashboard.panels.flatMap((panel: any) => (panel.targets ?? []).map((target: any) => target.expr));
      const used = new Set(expressions.flatMap((expression) => expression.match(/\bvigil_[a-z0-9_]+/g) ?? []));
      const exported = new Set<string>();
      const metrics = new Metrics();
      metrics.watchRecord({ scansByStateAndType: () => [], pendingWebhookDeliveries: () => 0 });
      for (const metric of await metrics.registry.getMetricsAsJSON()) {
        exported.add(metric.name);
        for (const suffix of ['_bucket', '_count', '_sum']) exported.add(`${metric.name}${suffix}`);
      }
      expect([...used].filter((name) => !exported.has(name))).to.deep.equal([]);
      const domain = [...exported].filter(
        (name) => /^vigil_(workqueue|reconcile|scans|kubernetes|informer|webhook|upload|wal)/.test(name) && !/_(bucket|sum)$/.test(name),
      );
      expect(domain.filter((name) => !used.has(name) && !used.has(`${name}_bucket`) && !name.endsWith('_count'))).to.deep.equal([]);
    });
  });

  describe('the scanner NetworkPolicy (issue 28)', () => {
    const scannerPolicies = (values: object) =>
      renderChart(values).filter((object) => object.kind === 'NetworkPolicy' && object.metadata.name === 'vigil-scanners');

    it('is in every tenant namespace, selecting the pods scanner Jobs run, with no ingress at all', () => {
      const policies = scannerPolicies(FULL_VALUES);
      expect(policies.map((policy) => policy.metadata.namespace)).to.deep.equal(['vigil-acme', 'vigil-udp', 'vigil-existing']);
      const scan = { name: 'nightly', namespace: 'vigil-acme', uid: 'uid-1', type: 'NMAP' as const, id: '3f1c2a9e-7b4d-4c1e-9a53-2d0f6b8e4a17' };
      const job = buildScanJob({
        scan,
        targets: ['93.184.216.34'],
        settings: chartJobSettings(FULL_VALUES),
        uploadUrl: 'http://vigil.vigil.svc:8080',
        uploadTokenSecretName: 'nightly-upload',
        createdAt: new Date(),
      });
      for (const policy of policies) {
        expect(job.spec.template.metadata.labels).to.include(policy.spec.podSelector.matchLabels);
        expect(policy.spec.policyTypes).to.deep.equal(['Ingress', 'Egress']);
        expect(policy.spec.ingress).to.deep.equal([]);
      }
    });

    for (const [what, values] of [
      ['the default values', {}],
      ['a full set of values', FULL_VALUES],
    ] as const) {
      it(`with ${what}, no egress rule admits cloud metadata or link-local addresses, and the internet stays reachable`, () => {
        const [policy] = scannerPolicies(values);
        for (const address of ['169.254.169.254', '169.254.170.2', '169.254.20.10', 'fd00:ec2::254', 'fe80::1']) {
          expect(egressRulesAdmitting(policy!, address), address).to.deep.equal([]);
        }
        for (const address of ['93.184.216.34', '8.8.8.8', '2606:2800:220:1::1']) expect(egressRulesAdmitting(policy!, address), address).to.have.length(1);
      });
    }

    it('admits none of the denied CIDRs (pod and Service ranges, the API server)', () => {
      const [policy] = scannerPolicies(FULL_VALUES);
      for (const address of ['10.244.3.7', '10.96.0.1', '172.18.0.2', 'fd00:10:244::5'])
        expect(egressRulesAdmitting(policy!, address), address).to.deep.equal([]);
      expect(egressRulesAdmitting(policy!, '172.18.0.3'), 'the next address').to.have.length(1);
    });

    it("allows DNS on port 53 only, Vigil's upload port on Vigil's pod only, and the extra egress rules", () => {
      const [policy] = scannerPolicies(FULL_VALUES);
      const [dns, upload, , extra] = policy!.spec.egress;
      expect(dns.ports).to.deep.equal([
        { port: 53, protocol: 'UDP' },
        { port: 53, protocol: 'TCP' },
      ]);
      expect(dns.to).to.deep.equal(FULL_VALUES.jobs.networkPolicy.dns);
      expect(upload.to).to.deep.equal([
        {
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'vigil' } },
          podSelector: { matchLabels: { 'app.kubernetes.io/name': 'vigil', 'app.kubernetes.io/instance': 'vigil' } },
        },
      ]);
      expect(upload.ports).to.deep.equal([{ port: 8080, protocol: 'TCP' }]);
      expect(extra).to.deep.equal(FULL_VALUES.jobs.networkPolicy.extraEgress[0]);
    });

    it('is left out when jobs.networkPolicy.enabled is false', () => {
      expect(scannerPolicies({ jobs: { networkPolicy: { enabled: false } } })).to.deep.equal([]);
    });
  });

  describe('extension points (issue 28)', () => {
    it("puts the pod's affinity, spread, priority class, labels and extra volumes on the Deployment", () => {
      const pod = find(renderChart(FULL_VALUES), 'Deployment')!.spec.template;
      expect(pod.spec.affinity).to.deep.equal(FULL_VALUES.affinity);
      expect(pod.spec.topologySpreadConstraints).to.deep.equal(FULL_VALUES.topologySpreadConstraints);
      expect(pod.spec.priorityClassName).to.equal('platform-critical');
      expect(pod.metadata.labels).to.include({ 'example.com/cost-centre': 'platform', 'app.kubernetes.io/name': 'vigil' });
      expect(pod.spec.volumes).to.deep.include(FULL_VALUES.extraVolumes[0]);
      expect(pod.spec.containers[0].volumeMounts).to.deep.include(FULL_VALUES.extraVolumeMounts[0]);
    });

    it('mounts the CA bundle in the Vigil pod and points webhooks, OpenVAS and Node.js at it', () => {
      const pod = find(renderChart(FULL_VALUES), 'Deployment')!.spec.template.spec;
      expect(pod.volumes).to.deep.include({ name: 'ca-bundle', configMap: { name: 'corporate-ca', items: [{ key: 'bundle.pem', path: 'bundle.pem' }] } });
      const container = pod.containers[0];
      expect(container.volumeMounts).to.deep.include({ name: 'ca-bundle', mountPath: '/etc/vigil/ca', readOnly: true });
      const env = Object.fromEntries(container.env.map((variable: { name: string; value?: string }) => [variable.name, variable.value]));
      for (const name of ['NODE_EXTRA_CA_CERTS', 'VIGIL_WEBHOOK_CA_FILE', 'VIGIL_OPENVAS_CA_FILE'])
        expect(env[name], name).to.equal('/etc/vigil/ca/bundle.pem');
      const byDefault = find(renderChart(), 'Deployment')!.spec.template.spec;
      expect(byDefault.volumes.map((volume: { name: string }) => volume.name)).to.not.include('ca-bundle');
    });

    it("passes the scanner pods' affinity, priority class, labels, annotations and CA bundle through the Job settings", () => {
      const settings = chartJobSettings(FULL_VALUES);
      expect(settings.affinity).to.deep.equal(FULL_VALUES.jobs.affinity);
      expect(settings.priorityClassName).to.equal('scanners-low');
      expect(settings.podLabels).to.deep.equal(FULL_VALUES.jobs.podLabels);
      expect(settings.podAnnotations).to.deep.equal(FULL_VALUES.jobs.podAnnotations);
      expect(settings.caBundle).to.deep.equal({ configMapName: 'corporate-ca', key: 'bundle.pem' });
      const defaults = chartJobSettings({});
      expect(defaults.podAnnotations, 'no Istio sidecar in scanner Jobs by default').to.deep.equal({ 'sidecar.istio.io/inject': 'false' });
      expect(defaults).to.not.have.any.keys('affinity', 'priorityClassName', 'caBundle');
    });
  });

  describe('values.schema.json', () => {
    const refusals: Array<[string, object, RegExp]> = [
      ['a misspelt top-level key', { imagee: {} }, /imagee/],
      ['a misspelt key in jobs', { jobs: { resoures: {} } }, /resoures/],
      ['a misspelt key two levels down', { jobs: { helperResources: { request: { cpu: '1' } } } }, /request/],
      [
        'a misspelt key in a tenant namespace',
        { tenants: { releaseNamespace: true, namespaces: [{ name: 'vigil-acme', podsecurity: 'restricted' }] } },
        /podsecurity/,
      ],
      ['an unknown scan type', { jobs: { images: { NMAPP: 'nmap:7.95' } } }, /NMAPP/],
      ['a system namespace as a tenant', { tenants: { releaseNamespace: true, namespaces: [{ name: 'kube-system' }] } }, /kube-system|tenants/],
      ['an unknown Pod Security level', { tenants: { releaseNamespace: true, namespaces: [{ name: 'vigil-acme', podSecurity: 'strict' }] } }, /podSecurity/],
      ['the latest tag', { image: { repository: 'ghcr.io/vigil-dev/vigil', tag: 'latest', pullPolicy: 'IfNotPresent' } }, /tag/],
      ['a scanner image on latest', { jobs: { images: { NMAP: 'nmap:latest' } } }, /NMAP/],
      ['an untagged scanner image', { jobs: { images: { NMAP: 'registry.example.com/nmap' } } }, /NMAP/],
      ['a scanner image that is no registry path', { jobs: { images: { NUCLEI: 'Registry.Example.com/Nuclei:3.4' } } }, /NUCLEI/],
      ['a denied CIDR that is not one', { jobs: { networkPolicy: { deniedCIDRs: ['10.0.0.0'] } } }, /deniedCIDRs/],
      ['a CA bundle key with a slash', { caBundle: { configMapName: 'corporate-ca', key: 'certs/ca.crt' } }, /key/],
    ];
    for (const [what, values, message] of refusals) {
      it(`refuses ${what}`, () => {
        expect(chartRefusal(values))
          .to.match(/values don't meet the specifications of the schema/)
          .and.to.match(message);
      });
    }

    for (const image of [
      'nmap:7.95',
      'registry.example.com:5000/mirror/nmap:7.95',
      `nmap@sha256:${'a'.repeat(64)}`,
      `ghcr.io/x/nuclei:3.4.1@sha256:${'b'.repeat(64)}`,
    ]) {
      it(`accepts the pinned scanner image ${image.slice(0, 50)}`, () => expect(chartRefusal({ jobs: { images: { NMAP: image } } })).to.equal(undefined));
    }

    it('closes every object it describes: additionalProperties is false, or a typed map of strings for labels, annotations and selectors', () => {
      const schema = JSON.parse(readFileSync(`${CHART_DIR}/values.schema.json`, 'utf8'));
      const open: string[] = [];
      const walk = (node: Record<string, any>, path: string): void => {
        // Kubernetes types passed through (affinity, volumes) are checked against their own schemas where they are rendered.
        const kubernetesType = node['x-kubernetes-type'] !== undefined;
        if (
          node.type === 'object' &&
          !kubernetesType &&
          node.additionalProperties !== false &&
          node.additionalProperties?.type !== 'string' &&
          node.propertyNames === undefined
        )
          open.push(path);
        for (const [key, child] of Object.entries(node.properties ?? {})) walk(child as Record<string, any>, `${path}.${key}`);
        if (typeof node.additionalProperties === 'object') walk(node.additionalProperties, `${path}.*`);
        if (node.items !== undefined) walk(node.items, `${path}[]`);
        for (const choice of node.anyOf ?? []) walk(choice, path);
      };
      walk(schema, '$');
      expect(open).to.deep.equal([]);
    });
  });

  describe('the chart README (charts/vigil/README.md, from the comments in values.yaml)', () => {
    it('documents every value with a comment of its own', () => {
      const rows = chartValueRows(CHART_DIR);
      expect(rows.filter((row) => !row.group && row.description === '').map((row) => row.key)).to.deep.equal([]);
      expect(rows.map((row) => row.key)).to.include.members(['image.repository', 'jobs.networkPolicy.deniedCIDRs', 'caBundle.key', 'ingress.host']);
    });

    it('keeps the examples of a comment as lines of code, and escapes what would break the table', () => {
      const namespaces = chartValueRows(CHART_DIR).find((row) => row.key === 'tenants.namespaces')!;
      expect(namespaces.description).to.include('For example:<br><code>- name: vigil-acme</code><br><code>&nbsp;&nbsp;create: true');
      const publicUrl = chartValueRows(CHART_DIR).find((row) => row.key === 'publicUrl')!;
      expect(publicUrl.description).to.include('https://&lt;ingress.host&gt;');
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
