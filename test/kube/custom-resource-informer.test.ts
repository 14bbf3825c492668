/**
 * The Scan and ScheduledScan caches (custom-resource-informer.ts) keep each
 * CR without managedFields and kubectl's last-applied-configuration
 * annotation, from the first list and from every watch event; other
 * annotations, the spec and the status stay.
 */
import { expect } from 'chai';
import type * as k8s from '@kubernetes/client-node';
import { customResourceInformer, LAST_APPLIED_ANNOTATION } from '../../src/runtime/kubernetes/custom-resource-informer.js';
import { FakeKubeApiServer, type KubeObject } from '../support/fake-kube-apiserver.js';
import { FakeTimers } from '../support/fake-timers.js';
import { kubeConfig } from '../support/kubeconfig.js';
import { waitFor } from '../support/wait.js';
import { fixedNamespaces } from '../../src/runtime/kubernetes/namespace-set.js';

const NS = 'vigil-acme';
const managedFields = [{ manager: 'kubectl-client-side-apply', operation: 'Update', fieldsV1: { 'f:spec': { 'f:targets': {} } } }];

function scan(name: string, annotations: Record<string, string>): KubeObject {
  const spec = { type: 'NMAP', targets: ['203.0.113.7'] };
  return {
    apiVersion: 'vigil.dev/v1alpha1',
    kind: 'Scan',
    metadata: {
      name,
      namespace: NS,
      managedFields,
      annotations: {
        [LAST_APPLIED_ANNOTATION]: JSON.stringify({ apiVersion: 'vigil.dev/v1alpha1', kind: 'Scan', metadata: { name, namespace: NS }, spec }),
        ...annotations,
      },
    },
    spec,
  } as unknown as KubeObject;
}

describe('the custom resource caches: trimmed to what Vigil reads', () => {
  let server: FakeKubeApiServer;
  let informer: ReturnType<typeof customResourceInformer> | undefined;

  beforeEach(async () => {
    server = new FakeKubeApiServer();
    await server.start();
  });
  afterEach(async () => {
    await informer?.stop();
    await server.stop();
  });

  it('drops managedFields and the last-applied annotation from listed and watched Scans, and keeps the rest', async () => {
    server.setObject(scan('listed', {}));
    const seen = new Map<string, k8s.KubernetesObject>();
    informer = customResourceInformer({
      kubeConfig: kubeConfig(server),
      namespaces: fixedNamespaces([NS], new FakeTimers()),
      group: 'vigil.dev',
      version: 'v1alpha1',
      plural: 'scans',
      onObject: (_event, object) => seen.set(object.metadata!.name!, object),
      onError: () => undefined,
      timers: new FakeTimers(),
    });
    await informer.start();
    await waitFor(
      async () => seen.get('listed'),
      (object) => object !== undefined,
      'the listed Scan',
    );
    const listed = seen.get('listed') as k8s.KubernetesObject & { spec?: unknown };
    expect(listed.metadata?.managedFields).to.equal(undefined);
    expect(listed.metadata?.annotations, 'the annotations object goes with its only entry').to.equal(undefined);
    expect(listed.spec).to.deep.equal({ type: 'NMAP', targets: ['203.0.113.7'] });

    server.setObject(scan('watched', { 'team.example.com/owner': 'blue' }));
    await waitFor(
      async () => seen.get('watched'),
      (object) => object !== undefined,
      'the watched Scan',
    );
    const watched = seen.get('watched')!;
    expect(watched.metadata?.managedFields).to.equal(undefined);
    expect(watched.metadata?.annotations).to.deep.equal({ 'team.example.com/owner': 'blue' });
    expect(watched.metadata?.name).to.equal('watched');
  });
});
