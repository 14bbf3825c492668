/**
 * Lists in pages (KubeApi.listAll, which every informer lists through):
 * `limit` and `continue` to the end, one list at the first page's
 * resourceVersion; a continue token that expired starts the list again from
 * scratch; and an informer whose watch gets 410 after a compaction lists
 * again in pages and keeps serving what is applied after.
 */
import { expect } from 'chai';
import type * as k8s from '@kubernetes/client-node';
import { customResourceInformer } from '../../src/runtime/kubernetes/custom-resource-informer.js';
import { KubeApi, LIST_PAGE_SIZE } from '../../src/runtime/kubernetes/kube-api.js';
import { fixedNamespaces } from '../../src/runtime/kubernetes/namespace-set.js';
import { FakeKubeApiServer, type KubeObject } from '../support/fake-kube-apiserver.js';
import { FakeTimers } from '../support/fake-timers.js';
import { kubeConfig } from '../support/kubeconfig.js';
import { waitFor } from '../support/wait.js';

const NS = 'vigil-acme';
const PATH = `/apis/vigil.dev/v1alpha1/namespaces/${NS}/scans`;
const COUNT = 2 * LIST_PAGE_SIZE + 1;

const scan = (index: number): KubeObject => ({
  apiVersion: 'vigil.dev/v1alpha1',
  kind: 'Scan',
  metadata: { name: `scan-${String(index).padStart(4, '0')}`, namespace: NS },
  spec: { type: 'NMAP', targets: ['203.0.113.7'] },
});

describe('lists in pages', () => {
  let server: FakeKubeApiServer;

  beforeEach(async () => {
    server = new FakeKubeApiServer();
    await server.start();
    for (let index = 0; index < COUNT; index += 1) server.setObject(scan(index));
  });
  afterEach(() => server.stop());

  const lists = () =>
    server.requests
      .filter((request) => request.path === PATH && !request.watch)
      .map((request) => (request.query.continue === undefined ? 'first' : 'continue'));

  it("lists every object in pages of 500, as one list at the first page's resourceVersion, each object seen as its page arrives", async () => {
    const listedAt = server.resourceVersion;
    let seen = 0;
    const list = await new KubeApi(kubeConfig(server)).listAll<k8s.KubernetesObject>(PATH, { each: () => (seen += 1) });
    expect(list.items).to.have.length(COUNT);
    expect(seen).to.equal(COUNT);
    expect(list.metadata?.resourceVersion).to.equal(listedAt);
    expect(lists()).to.deep.equal(['first', 'continue', 'continue']);
    expect(server.requests.every((request) => request.query.limit === String(LIST_PAGE_SIZE))).to.equal(true);
  });

  it('starts again from the first page when its continue token expired (410 Gone)', async () => {
    let seen = 0;
    const each = () => {
      seen += 1;
      if (seen === 1) server.expireContinueTokens(); // after the first page came, before the second is asked for
    };
    const list = await new KubeApi(kubeConfig(server)).listAll<k8s.KubernetesObject>(PATH, { each });
    expect(list.items.map((item) => item.metadata!.name)).to.deep.equal(Array.from({ length: COUNT }, (_, index) => scan(index).metadata.name));
    expect(lists()).to.deep.equal(['first', 'continue', 'first', 'continue', 'continue']);
  });

  it('lists again in pages when the watch is answered 410 after a compaction, and keeps serving new objects', async () => {
    const timers = new FakeTimers();
    const seen = new Set<string>();
    const informer = customResourceInformer({
      kubeConfig: kubeConfig(server),
      namespaces: fixedNamespaces([NS], timers),
      group: 'vigil.dev',
      version: 'v1alpha1',
      plural: 'scans',
      onObject: (_event, object) => seen.add(object.metadata!.name!),
      onError: () => undefined,
      timers,
    });
    try {
      await informer.start();
      expect(informer.list()).to.have.length(COUNT);
      server.setObject(scan(COUNT));
      server.compactHistory(); // the event of that Scan included: a watch from the list's resourceVersion answers 410
      expect(server.breakWatches()).to.equal(1);
      await waitFor(
        async () => timers.pending,
        (pending) => pending > 0,
        'the restart to be scheduled',
      );
      timers.advance(60_000);
      await waitFor(
        async () => seen.has(scan(COUNT).metadata.name!),
        (found) => found,
        'the Scan applied while the watch was down',
      );
      expect(lists()).to.deep.equal(['first', 'continue', 'continue', 'first', 'continue', 'continue']);
      server.setObject(scan(COUNT + 1));
      await waitFor(
        async () => seen.has(scan(COUNT + 1).metadata.name!),
        (found) => found,
        'a Scan applied after the new list',
      );
      expect(informer.list()).to.have.length(COUNT + 2);
    } finally {
      await informer.stop();
    }
  });
});
