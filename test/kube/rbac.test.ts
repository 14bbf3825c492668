/**
 * The chart's rendered RBAC (and config/rbac/operator.yaml, generated from
 * it) grants every request the Kubernetes adapters make, and nothing outside
 * the tenant namespaces: no ClusterRole at all. The fake API server
 * enforces the rendered rules as the API server's authorizer would, through
 * a whole Scan's life (API scan, kubectl-applied scan, progress, stop) and a
 * ScheduledScan's (API create with a run, update, delete; kubectl apply,
 * delete), while objects applied in another namespace draw no request. A
 * Scan whose namespace is not a tenant fails with a condition saying what to
 * add to the values.
 */
import { expect } from 'chai';
import { parseAllDocuments } from 'yaml';
import { readFileSync } from 'node:fs';
import { FakeKubeApiServer } from '../support/fake-kube-apiserver.js';
import { renderChart, type RenderedObject } from '../support/chart.js';
import { Authorizer, describePermission, permissionOf, type Rule } from '../support/rbac.js';
import { kubeConfig } from '../support/kubeconfig.js';
import { TestService } from '../support/test-service.js';
import { waitFor } from '../support/wait.js';

/** A ScheduledScan through the API (a run included, whose Scan it owns) and one applied, edited, refused and deleted with kubectl. */
async function scheduledScanLife(server: FakeKubeApiServer, service: TestService): Promise<void> {
  const scheduledScan = (
    await service.post('/v1/scans/scheduled', { schedule: 'DAILY', scan_types: ['NMAP'], filter_set: { tags: ['prod'] }, email_notification: 'NEVER' })
  ).body.data;
  const name = `scheduledscan-${scheduledScan.id}`;
  const crOf = (objectName: string, namespace = 'vigil-test-account') =>
    server.getObject({ apiVersion: 'vigil.dev/v1alpha1', kind: 'ScheduledScan', namespace, name: objectName });
  await waitFor(
    async () => crOf(name),
    (cr) => (cr?.status as { lastRan?: string } | undefined)?.lastRan !== undefined,
    'the run on the CR',
  );
  await service.put(`/v1/scans/scheduled/${scheduledScan.id}`, { schedule: 'WEEKLY', filter_set: { tags: ['prod'] }, email_notification: 'NEVER' });
  await waitFor(
    async () => crOf(name),
    (cr) => cr?.spec !== undefined && (cr.spec as { schedule: string }).schedule === 'WEEKLY',
    'the replaced spec',
  );
  await service.delete(`/v1/scans/scheduled/${scheduledScan.id}`);
  const spec = { schedule: 'DAILY', scanTypes: ['NMAP'], filterSet: { tags: ['prod'] }, emailNotification: 'NEVER', startTime: '2099-01-01T00:00:00Z' };
  server.setObject({ apiVersion: 'vigil.dev/v1alpha1', kind: 'ScheduledScan', metadata: { name: 'applied', namespace: 'vigil-test-account' }, spec } as never);
  // Another install's: Vigil watches only its tenants, so any request about it would be denied (and listed below).
  server.setObject({ apiVersion: 'vigil.dev/v1alpha1', kind: 'ScheduledScan', metadata: { name: 'stray', namespace: 'elsewhere' }, spec } as never);
  await waitFor(
    async () => (await service.get('/v1/scans/scheduled')).body.data,
    (rows) => rows.length === 1,
    'the applied schedule',
  );
  // kubectl delete: the finalizer holds the CR until the reconciler has deleted its schedule.
  await fetch(`${server.url}/apis/vigil.dev/v1alpha1/namespaces/vigil-test-account/scheduledscans/applied`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${server.token}` },
  });
  await waitFor(
    async () => (await service.get('/v1/scans/scheduled')).body.data,
    (rows) => rows.length === 0,
    'the schedule deleted with its CR',
  );
}

const VIGIL = { name: 'vigil', namespace: 'vigil' };
const TENANT = 'vigil-test-account';

/** A Scan through the API to its end (progress from the log, stop), one applied with kubectl, and one applied in a namespace no account is bound to. */
async function scanLife(server: FakeKubeApiServer, service: TestService): Promise<void> {
  const scan = (await service.post('/v1/scans', { type: 'NMAP', targets: ['127.0.0.1'] })).body.data;
  await waitFor(
    async () => (await service.get(`/v1/scans/${scan.id}`)).body.data.state,
    (state) => state === 'RUNNING',
    'RUNNING',
  );
  server.setPodLog(TENANT, 'p', 'Connect Scan Timing: About 10.00% done\n', 'scanner');
  server.setObject({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'p',
      namespace: TENANT,
      labels: { 'app.kubernetes.io/managed-by': 'vigil', 'vigil.dev/scan-id': scan.id, 'vigil.dev/scan-type': 'nmap' },
    },
    status: {
      phase: 'Pending',
      initContainerStatuses: [{ name: 'scanner', image: 'nmap', imageID: '', ready: false, restartCount: 0, state: { running: {} } }],
    },
  } as never);
  server.setObject({
    apiVersion: 'vigil.dev/v1alpha1',
    kind: 'Scan',
    metadata: { name: 'applied', namespace: 'elsewhere' },
    spec: { type: 'NMAP', targets: ['127.0.0.2'] },
  } as never);
  await waitFor(
    async () => (await service.get(`/v1/scans/${scan.id}`)).body.data.progress,
    (progress) => progress >= 10,
    'progress from the log',
  );
  server.setObject({
    apiVersion: 'vigil.dev/v1alpha1',
    kind: 'Scan',
    metadata: { name: 'applied-here', namespace: TENANT },
    spec: { type: 'NMAP', targets: ['127.0.0.3'] },
  } as never);
  await waitFor(
    async () =>
      server.getObject({ apiVersion: 'vigil.dev/v1alpha1', kind: 'Scan', namespace: TENANT, name: 'applied-here' })?.metadata.labels?.['vigil.dev/scan-id'],
    (id) => id !== undefined,
    'the applied Scan adopted',
  );
  await service.post(`/v1/scans/${scan.id}/stop`);
  await waitFor(
    async () => (await service.get(`/v1/scans/${scan.id}`)).body.data.state,
    (state) => state === 'STOPPED',
    'STOPPED',
  );
  await service.delete(`/v1/scans/${scan.id}`);
  await waitFor(
    async () => server.getObject({ apiVersion: 'vigil.dev/v1alpha1', kind: 'Scan', namespace: TENANT, name: `scan-${scan.id}` }),
    (cr) => cr === undefined,
    'the CR deleted with its Scan',
  );
}

async function withService<T>(
  rbac: readonly RenderedObject[],
  run: (server: FakeKubeApiServer, service: TestService) => Promise<T>,
): Promise<{ result: T; server: FakeKubeApiServer; authorizer: Authorizer }> {
  const authorizer = new Authorizer(rbac as never, VIGIL);
  const server = new FakeKubeApiServer({ authorize: authorizer.authorize });
  await server.start();
  const service = await TestService.start({ env: { VIGIL_RUNTIME: 'kubernetes', VIGIL_ALLOW_TARGETS: '127.0.0.0/8' }, kubeConfig: kubeConfig(server) });
  try {
    return { result: await run(server, service), server, authorizer };
  } finally {
    await service.stop();
    await server.stop();
  }
}

const rbacKinds = new Set(['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding']);

describe('the chart RBAC', function () {
  this.timeout(60_000);

  it("allows every request the operator makes in a Scan's and a ScheduledScan's life, in a tenant namespace", async () => {
    const rbac = renderChart({ tenants: { releaseNamespace: true, namespaces: [{ name: TENANT }] } }).filter((object) => rbacKinds.has(object.kind));
    const { server, authorizer } = await withService(rbac, async (server, service) => {
      await scanLife(server, service);
      await scheduledScanLife(server, service);
    });
    const used = server.requests.map(permissionOf);
    const kinds = new Set(used.map((permission) => `${permission.group} ${permission.resource} ${permission.verb}`));
    for (const verb of ['list', 'watch', 'create', 'patch', 'delete'])
      expect(kinds, 'the ScheduledScan life was exercised').to.include(`vigil.dev scheduledscans ${verb}`);
    for (const exercised of [
      'vigil.dev scheduledscans/status patch',
      'vigil.dev scans/status patch',
      'batch jobs create',
      ' serviceaccounts create',
      ' pods/log get',
    ])
      expect(kinds).to.include(exercised);
    const denied = [...new Set(used.filter((permission) => !authorizer.allows(permission)).map(describePermission))];
    expect(denied, 'requests the chart RBAC does not allow').to.deep.equal([]);
    const granted = rbac.flatMap((object) =>
      ((object.rules ?? []) as Rule[]).flatMap((rule) =>
        rule.resources.flatMap((resource) => rule.verbs.map((verb) => `${rule.apiGroups[0]} ${resource} ${verb}`)),
      ),
    );
    // A repeated Event is counted up with a patch, which this life may or may not take.
    const unused = [...new Set(granted)].filter((grant) => !kinds.has(grant) && grant !== ' events patch').sort();
    // A ScheduledScan CR's uid read after a restart, a pod-less Job's events, a token Secret replaced after a crash, the Secret of a failed scan's
    // Job (which stays; a stopped or collected Job takes its Secret) and a Scan CR read after a create answered 409 (paths this life does not
    // take), and the finalizers
    // updates that OwnerReferencesPermissionEnforcement checks for blockOwnerDeletion (a Job and a Secret owned by their Scan, a run's Scan by its
    // ScheduledScan) without any request.
    expect(unused, 'permissions granted but never used').to.deep.equal([
      ' events list',
      ' secrets delete',
      ' secrets deletecollection',
      'vigil.dev scans get',
      'vigil.dev scans/finalizers update',
      'vigil.dev scheduledscans get',
      'vigil.dev scheduledscans/finalizers update',
    ]);
    expect(used.filter((permission) => permission.namespace !== TENANT).map(describePermission), 'requests outside the tenant namespace').to.deep.equal([]);
  });

  it('grants nothing cluster-wide: no ClusterRole lists or watches anything, pods and Jobs included', () => {
    for (const tenants of [
      { releaseNamespace: true, namespaces: [{ name: TENANT }] },
      { releaseNamespace: false, namespaces: [{ name: 'vigil-acme' }] },
    ]) {
      const kinds = renderChart({ tenants }).map((object) => object.kind);
      expect(kinds).not.to.include('ClusterRole');
      expect(kinds).not.to.include('ClusterRoleBinding');
    }
  });

  it('lets the tenant Role watch what Vigil caches and update the finalizers of the owners it names with blockOwnerDeletion', () => {
    const role = renderChart({ tenants: { releaseNamespace: false, namespaces: [{ name: 'vigil-acme' }] } }).find((object) => object.kind === 'Role')!;
    const allows = (group: string, resource: string, verb: string) =>
      new Authorizer(
        [
          role,
          {
            kind: 'RoleBinding',
            metadata: { name: 'b', namespace: 'vigil-acme' },
            roleRef: { kind: 'Role', name: role.metadata.name },
            subjects: [{ kind: 'ServiceAccount', ...VIGIL }],
          },
        ] as never,
        VIGIL,
      ).allows({ group, resource, verb, namespace: 'vigil-acme' });
    for (const [group, resource] of [
      ['vigil.dev', 'scans'],
      ['vigil.dev', 'scheduledscans'],
      ['batch', 'jobs'],
      ['', 'pods'],
    ] as const) {
      for (const verb of ['list', 'watch']) expect(allows(group, resource, verb), `${resource} ${verb}`).to.equal(true);
    }
    expect(allows('vigil.dev', 'scans/finalizers', 'update')).to.equal(true);
    expect(allows('vigil.dev', 'scheduledscans/finalizers', 'update')).to.equal(true);
  });

  it('binds a Role in the release namespace and in every listed tenant namespace, and nowhere else', () => {
    const objects = renderChart({
      tenants: { releaseNamespace: false, namespaces: [{ name: 'vigil-acme' }, { name: 'vigil-globex', create: true, podSecurity: 'privileged' }] },
    });
    const bound = objects
      .filter((object) => object.kind === 'RoleBinding')
      .map((binding) => `${binding.metadata.namespace} ${binding.roleRef.kind}/${binding.roleRef.name}`);
    expect(bound).to.deep.equal(['vigil-acme Role/vigil-tenant', 'vigil-globex Role/vigil-tenant']);
    expect(objects.filter((object) => object.kind === 'Role').map((role) => role.metadata.namespace)).to.deep.equal(['vigil-acme', 'vigil-globex']);
  });

  it('has no wildcard in any rule', () => {
    const rules = renderChart({ tenants: { releaseNamespace: true, namespaces: [{ name: TENANT }] } }).flatMap((object) => (object.rules ?? []) as Rule[]);
    expect(rules.length).to.be.greaterThan(5);
    for (const rule of rules) expect([...rule.apiGroups, ...rule.resources, ...rule.verbs]).not.to.include('*');
  });

  it('fails a Scan whose namespace Vigil may not write to, with a condition naming the namespace and the value to change', async () => {
    const rbac = renderChart({ tenants: { releaseNamespace: true, namespaces: [] } }).filter((object) => rbacKinds.has(object.kind));
    type Conditions = Array<{ type: string; reason: string; message: string }>;
    const { result } = await withService(rbac, async (_server, service) => {
      const created = (await service.post('/v1/scans', { type: 'NMAP', targets: ['127.0.0.1'] })).body.data;
      const scan = await waitFor(
        async () => (await service.get(`/v1/scans/${created.id}`)).body.data,
        (current) => current.state === 'FAILED',
        'FAILED',
      );
      return { conditions: scan.conditions as Conditions };
    });
    const failed = result.conditions.find((condition) => condition.type === 'Failed');
    expect(failed?.reason).to.equal('NamespaceNotWritable');
    expect(failed?.message).to.match(new RegExp(`namespace ${TENANT} .*add ${TENANT} to tenants\\.namespaces in the Helm chart's values and run helm upgrade`));
  });
});

describe('config/rbac/operator.yaml', () => {
  it('is the chart RBAC rendered with the default values, for installs without Helm', () => {
    const file = parseAllDocuments(readFileSync(new URL('../../config/rbac/operator.yaml', import.meta.url), 'utf8'))
      .map((document) => document.toJS())
      .filter(Boolean);
    const chart = renderChart().filter((object) => rbacKinds.has(object.kind) || object.kind === 'ServiceAccount');
    expect(file).to.deep.equal(chart);
  });
});
