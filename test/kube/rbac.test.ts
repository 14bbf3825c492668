/**
 * The operator's ClusterRole grants every verb the Kubernetes adapters use,
 * checked against the requests they actually sent to the fake API server in
 * a whole Scan's life (API scan, kubectl-applied scan, stop) and a
 * ScheduledScan's (API create with a run, update, delete; kubectl apply,
 * refusal, delete).
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { FakeKubeApiServer } from '../support/fake-kube-apiserver.js';
import { kubeConfig } from '../support/kubeconfig.js';
import { TestService } from '../support/test-service.js';
import { waitFor } from '../support/wait.js';

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

function verbOf(method: string, watch: boolean, isCollection: boolean): string {
  if (watch) return 'watch';
  switch (method) {
    case 'GET':
      return isCollection ? 'list' : 'get';
    case 'POST':
      return 'create';
    case 'PATCH':
      return 'patch';
    case 'PUT':
      return 'update';
    default:
      return 'delete';
  }
}

/** group, resource (with subresource), verb of one request path. */
function permissionOf(method: string, path: string, watch: boolean): [string, string, string] {
  const parts = path.split('/').filter(Boolean);
  const [group, rest] = parts[0] === 'api' ? ['', parts.slice(2)] : [parts[1]!, parts.slice(3)];
  const afterNamespace = rest[0] === 'namespaces' ? rest.slice(2) : rest;
  const [resource, name, subresource] = afterNamespace;
  return [group, subresource === undefined ? resource! : `${resource}/${subresource}`, verbOf(method, watch, name === undefined)];
}

/** A ScheduledScan through the API (a run included, whose Scan it owns) and one applied, edited, refused and deleted with kubectl. */
async function scheduledScanLife(server: FakeKubeApiServer, service: TestService): Promise<void> {
  const scheduledScan = (await service.post('/v1/scans/scheduled', { schedule: 'DAILY', scan_types: ['NMAP'], filter_set: { tags: ['prod'] }, email_notification: 'NEVER' })).body.data;
  const name = `scheduledscan-${scheduledScan.id}`;
  const crOf = (objectName: string, namespace = 'vigil-test-account') => server.getObject({ apiVersion: 'vigil.dev/v1alpha1', kind: 'ScheduledScan', namespace, name: objectName });
  await waitFor(async () => crOf(name), (cr) => (cr?.status as { lastRan?: string } | undefined)?.lastRan !== undefined, 'the run on the CR');
  await service.put(`/v1/scans/scheduled/${scheduledScan.id}`, { schedule: 'WEEKLY', filter_set: { tags: ['prod'] }, email_notification: 'NEVER' });
  await waitFor(async () => crOf(name), (cr) => cr?.spec !== undefined && (cr.spec as { schedule: string }).schedule === 'WEEKLY', 'the replaced spec');
  await service.delete(`/v1/scans/scheduled/${scheduledScan.id}`);
  const spec = { schedule: 'DAILY', scanTypes: ['NMAP'], filterSet: { tags: ['prod'] }, emailNotification: 'NEVER', startTime: '2099-01-01T00:00:00Z' };
  server.setObject({ apiVersion: 'vigil.dev/v1alpha1', kind: 'ScheduledScan', metadata: { name: 'applied', namespace: 'vigil-test-account' }, spec } as never);
  server.setObject({ apiVersion: 'vigil.dev/v1alpha1', kind: 'ScheduledScan', metadata: { name: 'stray', namespace: 'elsewhere' }, spec } as never);
  await waitFor(async () => crOf('stray', 'elsewhere')?.status, (status) => status !== undefined, 'the refusal');
  await waitFor(async () => (await service.get('/v1/scans/scheduled')).body.data, (rows) => rows.length === 1, 'the applied schedule');
  server.deleteObject({ apiVersion: 'vigil.dev/v1alpha1', kind: 'ScheduledScan', namespace: 'vigil-test-account', name: 'applied' });
  await waitFor(async () => (await service.get('/v1/scans/scheduled')).body.data, (rows) => rows.length === 0, 'the schedule deleted with its CR');
}

describe('config/rbac/operator.yaml', function () {
  this.timeout(30_000);

  it("allows every request the operator makes in a Scan's and a ScheduledScan's life", async () => {
    const rules = parseAllDocuments(readFileSync(new URL('../../config/rbac/operator.yaml', import.meta.url), 'utf8'))
      .map((document) => document.toJS())
      .find((object) => object.kind === 'ClusterRole').rules as Rule[];
    const server = new FakeKubeApiServer();
    await server.start();
    const service = await TestService.start({ env: { VIGIL_RUNTIME: 'kubernetes', VIGIL_ALLOW_TARGETS: '127.0.0.0/8' }, kubeConfig: kubeConfig(server) });
    try {
      const scan = (await service.post('/v1/scans', { type: 'NMAP', targets: ['127.0.0.1'] })).body.data;
      await waitFor(async () => (await service.get(`/v1/scans/${scan.id}`)).body.data.state, (state) => state === 'RUNNING', 'RUNNING');
      server.setObject({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'vigil-test-account', labels: { 'vigil.dev/scan-id': scan.id } } } as never);
      server.setPodLog('vigil-test-account', 'p', 'Connect Scan Timing: About 10.00% done', 'scanner');
      server.setObject({ apiVersion: 'vigil.dev/v1alpha1', kind: 'Scan', metadata: { name: 'applied', namespace: 'elsewhere' }, spec: { type: 'NMAP', targets: ['127.0.0.2'] } } as never);
      await waitFor(async () => (await service.get(`/v1/scans/${scan.id}`)).body.data.progress, (progress) => progress >= 10, 'progress from the log');
      await service.post(`/v1/scans/${scan.id}/stop`);
      await waitFor(async () => (await service.get(`/v1/scans/${scan.id}`)).body.data.state, (state) => state === 'STOPPED', 'STOPPED');
      await scheduledScanLife(server, service);
    } finally {
      await service.stop();
      await server.stop();
    }
    const used = new Set(server.requests.map((request) => permissionOf(request.method, request.path, request.watch).join(' ')));
    expect(used.size).to.be.greaterThan(8);
    for (const verb of ['list', 'watch', 'create', 'patch', 'delete']) expect(used, 'the ScheduledScan life was exercised').to.include(`vigil.dev scheduledscans ${verb}`);
    expect(used).to.include('vigil.dev scheduledscans/status patch');
    const denied = [...used].filter((permission) => {
      const [group, resource, verb] = permission.split(' ');
      return !rules.some((rule) => rule.apiGroups.includes(group!) && rule.resources.includes(resource!) && rule.verbs.includes(verb!));
    });
    expect(denied, 'requests the ClusterRole does not allow').to.deep.equal([]);
  });
});
