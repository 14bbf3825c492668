/**
 * The in-process fake API server, driven by the real @kubernetes/client-node
 * 1.4.0: the request shapes the adapter will send, the errors it will see,
 * and how client-node's informers behave when watches break or expire.
 */
import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import { FakeKubeApiServer, type KubeObject, type RecordedRequest } from '../support/fake-kube-apiserver.js';
import { kubeConfig } from '../support/kubeconfig.js';
import { waitFor } from '../support/wait.js';

const NS = 'team-a';
const SCANS = { group: 'vigil.dev', version: 'v1alpha1', plural: 'scans' } as const;
const SCANS_PATH = `/apis/vigil.dev/v1alpha1/namespaces/${NS}/scans`;
const MERGE_PATCH = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
const BOUND_MS = 5_000;

function scan(name: string, labels: Record<string, string> = {}, namespace = NS): KubeObject {
  return { apiVersion: 'vigil.dev/v1alpha1', kind: 'Scan', metadata: { name, namespace, labels }, spec: { type: 'nmap', targets: ['10.0.0.1'] } };
}

function job(name: string): k8s.V1Job {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, labels: { 'vigil.dev/scan': name } },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'scanner', image: 'vigil/nmap:1' }] } } },
  };
}

function podOf(owner: k8s.V1Job, name: string): KubeObject {
  const ownerReferences = [{ apiVersion: 'batch/v1', kind: 'Job', name: owner.metadata!.name!, uid: owner.metadata!.uid!, controller: true }];
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NS, ownerReferences }, spec: { containers: [{ name: 'scanner' }] } };
}

/** The ApiException a call fails with; fails the test when the call succeeds or fails otherwise. */
async function rejection(call: Promise<unknown>): Promise<k8s.ApiException<unknown>> {
  try {
    await call;
  } catch (error) {
    if (error instanceof k8s.ApiException) return error;
    throw error;
  }
  throw new Error('expected the call to fail with an ApiException');
}

/** client-node hands error bodies over as the raw JSON text. */
function statusOf(error: k8s.ApiException<unknown>): Record<string, unknown> {
  return JSON.parse(String(error.body)) as Record<string, unknown>;
}

function lastRequest(fake: FakeKubeApiServer): RecordedRequest {
  return fake.requests[fake.requests.length - 1]!;
}

async function until(what: string, condition: () => boolean): Promise<void> {
  await waitFor(
    async () => condition(),
    (done) => done,
    what,
    BOUND_MS,
  );
}

describe('FakeKubeApiServer driven by the real client-node', () => {
  let fake: FakeKubeApiServer;
  let kc: k8s.KubeConfig;
  let custom: k8s.CustomObjectsApi;
  let batch: k8s.BatchV1Api;
  let core: k8s.CoreV1Api;

  beforeEach(async () => {
    fake = new FakeKubeApiServer();
    await fake.start();
    kc = kubeConfig(fake, { namespace: NS });
    custom = kc.makeApiClient(k8s.CustomObjectsApi);
    batch = kc.makeApiClient(k8s.BatchV1Api);
    core = kc.makeApiClient(k8s.CoreV1Api);
  });

  afterEach(async () => {
    await fake.stop();
  });

  describe('custom resources', () => {
    it('creates a Scan with uid, resourceVersion, creationTimestamp and generation 1, dropping status', async () => {
      const created = await custom.createNamespacedCustomObject({ ...SCANS, namespace: NS, body: { ...scan('nightly'), status: { state: 'done' } } });

      expect(created.metadata.uid).to.match(/^[0-9a-f-]{36}$/);
      expect(created.metadata.resourceVersion).to.equal(fake.resourceVersion);
      expect(created.metadata.creationTimestamp).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      expect(created.metadata.generation).to.equal(1);
      expect(created.status).to.equal(undefined);
      expect(lastRequest(fake)).to.include({ method: 'POST', path: SCANS_PATH, contentType: 'application/json' });
    });

    it('gets one Scan, lists by label selector with the list resourceVersion, and lists across namespaces', async () => {
      fake.setObject(scan('red', { team: 'red' }));
      fake.setObject(scan('blue', { team: 'blue' }));
      fake.setObject(scan('other', { team: 'red' }, 'team-b'));

      const red = await custom.getNamespacedCustomObject({ ...SCANS, namespace: NS, name: 'red' });
      const selected = await custom.listNamespacedCustomObject({ ...SCANS, namespace: NS, labelSelector: 'team=red' });
      const both = await custom.listNamespacedCustomObject({ ...SCANS, namespace: NS, labelSelector: 'team in (red,blue),team!=green' });
      const everywhere = await custom.listClusterCustomObject({ ...SCANS });

      expect(red.metadata.name).to.equal('red');
      expect(selected.kind).to.equal('ScanList');
      expect(selected.metadata.resourceVersion).to.equal(fake.resourceVersion);
      expect(selected.items.map((item: KubeObject) => item.metadata.name)).to.deep.equal(['red']);
      expect(both.items.map((item: KubeObject) => item.metadata.name)).to.deep.equal(['blue', 'red']);
      expect(everywhere.items.map((item: KubeObject) => `${item.metadata.namespace}/${item.metadata.name}`)).to.deep.equal([
        'team-a/blue',
        'team-a/red',
        'team-b/other',
      ]);
      expect(fake.requests[1]!.query).to.deep.equal({ labelSelector: 'team=red' });
    });

    it('patches status with a merge patch: the content type is recorded, spec and generation stay', async () => {
      const created = await custom.createNamespacedCustomObject({ ...SCANS, namespace: NS, body: scan('nightly') });
      const body = { spec: { type: 'zap' }, status: { state: 'running', progress: 10 } };

      const patched = await custom.patchNamespacedCustomObjectStatus({ ...SCANS, namespace: NS, name: 'nightly', body }, MERGE_PATCH);

      expect(lastRequest(fake)).to.deep.include({
        method: 'PATCH',
        path: `${SCANS_PATH}/nightly/status`,
        contentType: 'application/merge-patch+json',
        body,
      });
      expect(patched.status).to.deep.equal({ state: 'running', progress: 10 });
      expect(patched.spec).to.deep.equal(created.spec);
      expect(patched.metadata.generation).to.equal(1);
      expect(Number(patched.metadata.resourceVersion)).to.be.greaterThan(Number(created.metadata.resourceVersion));
    });

    it('answers a merge patch with a stale resourceVersion with 409 Conflict, an ApiException with code 409', async () => {
      const created = await custom.createNamespacedCustomObject({ ...SCANS, namespace: NS, body: scan('nightly') });
      await custom.patchNamespacedCustomObject({ ...SCANS, namespace: NS, name: 'nightly', body: { spec: { targets: ['10.0.0.2'] } } }, MERGE_PATCH);
      const stale = { metadata: { resourceVersion: created.metadata.resourceVersion }, status: { state: 'done' } };

      const error = await rejection(custom.patchNamespacedCustomObjectStatus({ ...SCANS, namespace: NS, name: 'nightly', body: stale }, MERGE_PATCH));

      expect(error.code).to.equal(409);
      expect(statusOf(error)).to.deep.include({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Conflict', code: 409 });
      expect(statusOf(error).message).to.equal(
        'Operation cannot be fulfilled on scans.vigil.dev "nightly": the object has been modified; please apply your changes to the latest version and try again',
      );
      expect(fake.getObject({ apiVersion: 'vigil.dev/v1alpha1', kind: 'Scan', namespace: NS, name: 'nightly' })!.status).to.equal(undefined);
    });

    it("refuses a merge-style body sent with client-node's default patch content type, JSON Patch", async () => {
      await custom.createNamespacedCustomObject({ ...SCANS, namespace: NS, body: scan('nightly') });

      const error = await rejection(
        custom.patchNamespacedCustomObjectStatus({ ...SCANS, namespace: NS, name: 'nightly', body: { status: { state: 'running' } } }),
      );

      expect(lastRequest(fake).contentType).to.equal('application/json-patch+json');
      expect(error.code).to.equal(400);
      expect(statusOf(error).reason).to.equal('BadRequest');
    });

    it('applies a JSON Patch guarded by a test on resourceVersion, and answers 422 once it is stale', async () => {
      const created = await custom.createNamespacedCustomObject({ ...SCANS, namespace: NS, body: scan('nightly') });
      const body = [
        { op: 'test', path: '/metadata/resourceVersion', value: created.metadata.resourceVersion },
        { op: 'replace', path: '/spec/targets', value: ['10.0.0.9'] },
      ];

      const patched = await custom.patchNamespacedCustomObject({ ...SCANS, namespace: NS, name: 'nightly', body });
      const error = await rejection(custom.patchNamespacedCustomObject({ ...SCANS, namespace: NS, name: 'nightly', body }));

      expect(patched.spec.targets).to.deep.equal(['10.0.0.9']);
      expect(patched.metadata.generation).to.equal(2);
      expect(error.code).to.equal(422);
      expect(statusOf(error).reason).to.equal('Invalid');
    });

    it('bumps generation only on spec changes through the main endpoint, ignores status there, and guards PUT', async () => {
      const created = await custom.createNamespacedCustomObject({ ...SCANS, namespace: NS, body: scan('nightly') });
      const relabelled = await custom.replaceNamespacedCustomObject({
        ...SCANS,
        namespace: NS,
        name: 'nightly',
        body: { ...created, metadata: { ...created.metadata, labels: { team: 'red' } } },
      });
      const respecced = await custom.replaceNamespacedCustomObject({
        ...SCANS,
        namespace: NS,
        name: 'nightly',
        body: { ...relabelled, spec: { type: 'zap', targets: [] }, status: { state: 'done' } },
      });
      const stale = await rejection(custom.replaceNamespacedCustomObject({ ...SCANS, namespace: NS, name: 'nightly', body: relabelled }));
      const unconditional = { ...respecced, metadata: { ...respecced.metadata, resourceVersion: undefined } };
      const missing = await rejection(custom.replaceNamespacedCustomObject({ ...SCANS, namespace: NS, name: 'nightly', body: unconditional }));

      expect([relabelled.metadata.generation, respecced.metadata.generation]).to.deep.equal([1, 2]);
      expect(relabelled.metadata.resourceVersion).to.not.equal(created.metadata.resourceVersion);
      expect(respecced.status).to.equal(undefined);
      expect([stale.code, missing.code]).to.deep.equal([409, 422]);
    });
  });

  describe('jobs, pods and logs', () => {
    it('creates a Job with 201, then answers AlreadyExists 409 with a Status body for the same name', async () => {
      const created = await batch.createNamespacedJobWithHttpInfo({ namespace: NS, body: job('scan-nightly') });

      const error = await rejection(batch.createNamespacedJob({ namespace: NS, body: job('scan-nightly') }));

      expect(created.httpStatusCode).to.equal(201);
      expect(created.data.metadata?.uid).to.be.a('string');
      expect(created.data.status).to.deep.equal({});
      expect(error.code).to.equal(409);
      expect(statusOf(error)).to.deep.equal({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'jobs.batch "scan-nightly" already exists',
        reason: 'AlreadyExists',
        details: { name: 'scan-nightly', group: 'batch', kind: 'jobs' },
        code: 409,
      });
    });

    it('records propagationPolicy Foreground on delete, takes the pods with the Job, and answers 404 after', async () => {
      const created = await batch.createNamespacedJob({ namespace: NS, body: job('scan-nightly') });
      fake.setObject(podOf(created, 'scan-nightly-abcde'));

      const deleted = await batch.deleteNamespacedJob({ namespace: NS, name: 'scan-nightly', propagationPolicy: 'Foreground' });
      const again = await rejection(batch.deleteNamespacedJob({ namespace: NS, name: 'scan-nightly', propagationPolicy: 'Foreground' }));

      expect(fake.requests.find((request) => request.method === 'DELETE')!.query).to.deep.equal({ propagationPolicy: 'Foreground' });
      expect(fake.deletions).to.deep.equal([
        {
          apiVersion: 'batch/v1',
          kind: 'Job',
          namespace: NS,
          name: 'scan-nightly',
          propagationPolicy: 'Foreground',
          appliedPolicy: 'Foreground',
          gracePeriodSeconds: undefined,
        },
      ]);
      // The server answers the Job marked for deletion; client-node types the answer as V1Status anyway.
      expect(deleted.kind).to.equal('Job');
      expect(fake.listObjects('v1', 'Pod', NS)).to.deep.equal([]);
      expect(fake.listObjects('batch/v1', 'Job', NS)).to.deep.equal([]);
      expect(again.code).to.equal(404);
      expect(statusOf(again)).to.include({ reason: 'NotFound', message: 'jobs.batch "scan-nightly" not found' });
    });

    it('orphans the pods of a Job deleted without a policy (the batch/v1 default) and deletes them with Background', async () => {
      const orphaning = await batch.createNamespacedJob({ namespace: NS, body: job('scan-one') });
      const cascading = await batch.createNamespacedJob({ namespace: NS, body: job('scan-two') });
      fake.setObject(podOf(orphaning, 'scan-one-pod'));
      fake.setObject(podOf(cascading, 'scan-two-pod'));

      await batch.deleteNamespacedJob({ namespace: NS, name: 'scan-one' });
      await batch.deleteNamespacedJob({ namespace: NS, name: 'scan-two', body: { propagationPolicy: 'Background' } });

      const pods = fake.listObjects('v1', 'Pod', NS);
      expect(pods.map((pod) => [pod.metadata.name, pod.metadata.ownerReferences])).to.deep.equal([['scan-one-pod', undefined]]);
      expect(fake.deletions.map((deletion) => [deletion.propagationPolicy, deletion.appliedPolicy])).to.deep.equal([
        [undefined, 'Orphan'],
        ['Background', 'Background'],
      ]);
      expect(lastRequest(fake).body).to.deep.equal({ propagationPolicy: 'Background' });
    });

    it('answers readNamespacedPodLog with the text the test set, honours tailLines, and 404 for a missing pod', async () => {
      fake.setObject({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'scan-pod', namespace: NS }, spec: {} });
      fake.setPodLog(NS, 'scan-pod', 'progress 10\nprogress 55\n');

      const whole = await core.readNamespacedPodLog({ namespace: NS, name: 'scan-pod' });
      const tail = await core.readNamespacedPodLog({ namespace: NS, name: 'scan-pod', tailLines: 1 });
      const missing = await rejection(core.readNamespacedPodLog({ namespace: NS, name: 'gone' }));

      expect(whole).to.equal('progress 10\nprogress 55\n');
      expect(tail).to.equal('progress 55\n');
      expect(missing.code).to.equal(404);
    });
  });

  describe('lists in pages', () => {
    async function page(query: string): Promise<{
      status: number;
      body: { metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number }; items: KubeObject[]; reason?: string };
    }> {
      const response = await fetch(`${fake.url}${SCANS_PATH}?${query}`, { headers: { Authorization: `Bearer ${fake.token}` } });
      return { status: response.status, body: (await response.json()) as never };
    }

    it('serves limit and continue from a snapshot at the first page, at its resourceVersion', async () => {
      for (const name of ['a', 'b', 'c', 'd', 'e']) fake.setObject(scan(name));
      const listedAt = fake.resourceVersion;
      const first = await page('limit=2');
      expect(first.body.items.map((item) => item.metadata.name)).to.deep.equal(['a', 'b']);
      expect(first.body.metadata).to.include({ resourceVersion: listedAt, remainingItemCount: 3 });
      fake.setObject(scan('f'));
      const second = await page(`limit=2&continue=${encodeURIComponent(first.body.metadata.continue!)}`);
      const third = await page(`limit=2&continue=${encodeURIComponent(second.body.metadata.continue!)}`);
      expect(
        [...second.body.items, ...third.body.items].map((item) => item.metadata.name),
        'f came after the snapshot',
      ).to.deep.equal(['c', 'd', 'e']);
      expect(third.body.metadata).to.deep.equal({ resourceVersion: listedAt });
    });

    it('answers 410 Expired to a continue token whose snapshot expired', async () => {
      for (const name of ['a', 'b', 'c']) fake.setObject(scan(name));
      const first = await page('limit=1');
      fake.expireContinueTokens();
      const expired = await page(`limit=1&continue=${encodeURIComponent(first.body.metadata.continue!)}`);
      expect(expired.status).to.equal(410);
      expect(expired.body.reason).to.equal('Expired');
    });
  });

  describe('test hooks', () => {
    it('fails the next matching request once with the injected status, then serves normally', async () => {
      fake.setObject(scan('nightly'));
      fake.failNext({ method: 'GET', path: `${SCANS_PATH}/nightly` }, 503);

      const error = await rejection(custom.getNamespacedCustomObject({ ...SCANS, namespace: NS, name: 'nightly' }));
      const scanAfter = await custom.getNamespacedCustomObject({ ...SCANS, namespace: NS, name: 'nightly' });

      expect(error.code).to.equal(503);
      expect(statusOf(error)).to.include({ kind: 'Status', reason: 'ServiceUnavailable', code: 503 });
      expect(scanAfter.metadata.name).to.equal('nightly');
    });

    it('refuses a client without the bearer token with 401', async () => {
      const stranger = kubeConfig({ url: fake.url, token: 'someone-else' }).makeApiClient(k8s.CustomObjectsApi);

      const error = await rejection(stranger.listClusterCustomObject({ ...SCANS }));

      expect(error.code).to.equal(401);
      expect(lastRequest(fake).headers.authorization).to.equal('Bearer someone-else');
    });
  });

  describe('informers from k8s.makeInformer on scans', () => {
    let informer: k8s.Informer<k8s.KubernetesObject> & k8s.ObjectCache<k8s.KubernetesObject>;
    let events: string[];
    let errors: unknown[];

    beforeEach(() => {
      informer = k8s.makeInformer(kc, SCANS_PATH, () => custom.listNamespacedCustomObject({ ...SCANS, namespace: NS }));
      events = [];
      errors = [];
      informer.on(k8s.ADD, (object) => events.push(`add ${object.metadata?.name}`));
      informer.on(k8s.UPDATE, (object) => events.push(`update ${object.metadata?.name}`));
      informer.on(k8s.DELETE, (object) => events.push(`delete ${object.metadata?.name}`));
      informer.on(k8s.ERROR, (error) => errors.push(error));
    });

    afterEach(async () => {
      await informer.stop();
    });

    const watchRequests = () => fake.requests.filter((request) => request.method === 'GET' && request.path === SCANS_PATH);
    const shape = (request: RecordedRequest) => (request.watch ? `watch from ${request.query.resourceVersion}` : 'list');

    it('lists, then watches from the list resourceVersion, and sees ADDED, MODIFIED and DELETED', async () => {
      fake.setObject(scan('preloaded'));
      await informer.start();
      const listedAt = fake.resourceVersion;

      await custom.createNamespacedCustomObject({ ...SCANS, namespace: NS, body: scan('fresh') });
      await custom.patchNamespacedCustomObjectStatus({ ...SCANS, namespace: NS, name: 'fresh', body: { status: { state: 'running' } } }, MERGE_PATCH);
      await custom.deleteNamespacedCustomObject({ ...SCANS, namespace: NS, name: 'fresh' });
      await until('the informer to see the delete', () => events.length === 4);

      expect(events).to.deep.equal(['add preloaded', 'add fresh', 'update fresh', 'delete fresh']);
      expect(informer.list(NS).map((object) => object.metadata?.name)).to.deep.equal(['preloaded']);
      expect(watchRequests().map(shape)).to.deep.equal(['list', `watch from ${listedAt}`]);
      expect(errors).to.deep.equal([]);
    });

    it('reports an error after breakWatches and stays down; start() resumes the watch from its last resourceVersion', async () => {
      await informer.start();
      await custom.createNamespacedCustomObject({ ...SCANS, namespace: NS, body: scan('first') });
      await until('the first add', () => events.length === 1);
      const lastSeen = fake.resourceVersion;

      fake.breakWatches();
      await until('the informer to report the broken watch', () => errors.length === 1);
      await custom.createNamespacedCustomObject({ ...SCANS, namespace: NS, body: scan('missed') });
      await custom.deleteNamespacedCustomObject({ ...SCANS, namespace: NS, name: 'first' });
      const watchesWhileDown = watchRequests().filter((request) => request.watch).length;
      fake.clearRequests();
      await informer.start();
      await until('the missed events', () => events.length === 3);
      await custom.createNamespacedCustomObject({ ...SCANS, namespace: NS, body: scan('later') });
      await until('an event after the restart', () => events.length === 4);

      expect((errors[0] as Error).message).to.equal('Premature close');
      expect(watchesWhileDown).to.equal(1);
      expect(watchRequests().map(shape)).to.deep.equal([`watch from ${lastSeen}`]);
      expect(events).to.deep.equal(['add first', 'add missed', 'delete first', 'add later']);
    });

    it('after compaction, a restart from an old resourceVersion gets 410 and the informer re-lists by itself', async () => {
      fake.setObject(scan('kept'));
      fake.setObject(scan('removed'));
      await informer.start();
      fake.breakWatches();
      await until('the informer to report the broken watch', () => errors.length === 1);
      const oldVersion = fake.resourceVersion;
      await custom.deleteNamespacedCustomObject({ ...SCANS, namespace: NS, name: 'removed' });
      await custom.createNamespacedCustomObject({ ...SCANS, namespace: NS, body: scan('created') });
      fake.compactHistory();
      fake.clearRequests();

      await informer.start();
      await until('the re-list to settle', () => events.length === 4);
      const relistedAt = fake.resourceVersion;
      await custom.patchNamespacedCustomObject({ ...SCANS, namespace: NS, name: 'kept', body: { spec: { targets: [] } } }, MERGE_PATCH);
      await until('an update after the re-list', () => events.length === 5);

      expect(watchRequests().map(shape)).to.deep.equal([`watch from ${oldVersion}`, 'list', `watch from ${relistedAt}`]);
      expect(events).to.deep.equal(['add kept', 'add removed', 'delete removed', 'add created', 'update kept']);
      expect(errors).to.have.length(1);
    });

    it('reconnects by itself when the server ends a watch cleanly, as on a watch timeout', async () => {
      await informer.start();

      fake.endWatches();
      await until('the informer to watch again', () => fake.openWatches.length === 1);
      await custom.createNamespacedCustomObject({ ...SCANS, namespace: NS, body: scan('after') });
      await until('the add', () => events.length === 1);

      expect(watchRequests().map(shape)).to.deep.equal(['list', 'watch from 1', 'watch from 1']);
      expect(errors).to.deep.equal([]);
    });
  });

  describe('the watch protocol', () => {
    async function watchLines(query: string, whileOpen: () => void = () => undefined): Promise<Array<{ type: string; object: KubeObject }>> {
      const response = await fetch(`${fake.url}${SCANS_PATH}?${query}`, { headers: { Authorization: `Bearer ${fake.token}` } });
      whileOpen();
      fake.endWatches();
      const text = await response.text();
      return text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as { type: string; object: KubeObject });
    }

    it('with watch=1 replays the events after the given resourceVersion as JSON lines', async () => {
      fake.setObject(scan('before'));
      const from = fake.resourceVersion;
      fake.setObject(scan('after'));
      fake.deleteObject({ apiVersion: 'vigil.dev/v1alpha1', kind: 'Scan', namespace: NS, name: 'before' });

      const lines = await watchLines(`watch=1&resourceVersion=${from}`);

      expect(lines.map(({ type, object }) => `${type} ${object.metadata.name} ${object.metadata.resourceVersion}`)).to.deep.equal([
        `ADDED after ${Number(from) + 1}`,
        `DELETED before ${Number(from) + 2}`,
      ]);
    });

    it('sends an object leaving a label selector as DELETED, and bookmarks when asked', async () => {
      fake.setObject(scan('nightly', { team: 'red' }));

      const lines = await watchLines(`watch=true&labelSelector=team%3Dred&allowWatchBookmarks=true&resourceVersion=${fake.resourceVersion}`, () => {
        fake.setObject(scan('nightly', { team: 'blue' }));
        fake.sendBookmarks();
      });

      expect(lines.map(({ type, object }) => `${type} ${object.metadata.name ?? object.metadata.resourceVersion}`)).to.deep.equal([
        'DELETED nightly',
        `BOOKMARK ${fake.resourceVersion}`,
      ]);
    });

    it("answers a watch from a compacted resourceVersion with an ERROR event carrying a 410 Status, through client-node's Watch", async () => {
      fake.setObject(scan('nightly'));
      const old = fake.resourceVersion;
      fake.setObject(scan('nightly', { team: 'red' }));
      fake.compactHistory();
      const received: Array<[string, unknown]> = [];

      const ended = new Promise<unknown>((resolve) => {
        void new k8s.Watch(kc).watch(SCANS_PATH, { resourceVersion: old }, (type, object) => received.push([type, object]), resolve);
      });

      expect(await ended).to.equal(null);
      expect(received).to.deep.equal([
        [
          'ERROR',
          {
            kind: 'Status',
            apiVersion: 'v1',
            metadata: {},
            status: 'Failure',
            message: `too old resource version: ${old} (${fake.resourceVersion})`,
            reason: 'Expired',
            code: 410,
          },
        ],
      ]);
    });
  });
});
