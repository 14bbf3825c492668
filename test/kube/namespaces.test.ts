/**
 * An operator that runs for a year on a shared cluster (issue 27): every
 * informer lists in pages, so a month of finished Scans (20,000 CRs, a list
 * far over the 16 MiB bound on one answer) syncs and a Scan applied after
 * them is served; an install lists, watches and writes only in the
 * namespaces bound to its accounts, so two installs on one API server never
 * send a request into each other's namespaces (asserted from the fake API
 * server's own record of every request, each install known by its token);
 * and a namespace bound while the service runs is watched without a restart.
 */
import { expect } from 'chai';
import { loadSettings } from '../../src/config/settings.js';
import { composeCore } from '../../src/main/composition-root.js';
import { FakeKubeApiServer, type RecordedRequest } from '../support/fake-kube-apiserver.js';
import { finishedScans } from '../support/finished-scans.js';
import { kubeConfig } from '../support/kubeconfig.js';
import { startKubeService, stopKubeService, type KubeService } from '../support/kube-service.js';
import { tempDir } from '../support/temp-dir.js';
import { TestService } from '../support/test-service.js';
import { waitFor } from '../support/wait.js';

const KUBERNETES = { VIGIL_RUNTIME: 'kubernetes', VIGIL_ALLOW_TARGETS: '127.0.0.0/8' };
const SCANS = { apiVersion: 'vigil.dev/v1alpha1', kind: 'Scan' };

type ScanCr = { metadata: { labels?: Record<string, string> }; status?: unknown };

function apply(server: FakeKubeApiServer, namespace: string, name: string, target = '127.0.0.1'): void {
  server.setObject({ ...SCANS, metadata: { name, namespace }, spec: { type: 'NMAP', targets: [target] } } as never);
}

const read = (server: FakeKubeApiServer, namespace: string, name: string) => server.getObject({ ...SCANS, namespace, name }) as unknown as ScanCr | undefined;

/** Waits until the CR is labelled with a scan id (adopted), and answers that id. */
async function adopted(server: FakeKubeApiServer, namespace: string, name: string): Promise<string> {
  const cr = await waitFor(
    async () => read(server, namespace, name),
    (found) => found?.metadata.labels?.['vigil.dev/scan-id'] !== undefined,
    `${namespace}/${name} adopted`,
  );
  return cr!.metadata.labels!['vigil.dev/scan-id']!;
}

const described = (request: RecordedRequest) => `${request.method} ${request.path}${request.watch ? ' (watch)' : ''}`;

describe('an install on a shared cluster (VIGIL_RUNTIME=kubernetes)', function () {
  this.timeout(180_000);

  it('syncs 20,000 finished Scans through lists in pages, rewrites none of them, and serves a Scan applied after them', async () => {
    const dir = tempDir();
    const server = new FakeKubeApiServer();
    await server.start();
    let service: TestService | undefined;
    try {
      const seeding = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path }));
      const history = seeding.accounts.createAccount({ name: 'history', namespace: 'vigil-history' });
      const { rows, objects } = finishedScans(history.account.id, 'vigil-history', 20_000);
      seeding.scanRepository.insert(rows, []);
      seeding.db.close();
      for (const object of objects) server.setObject(object);

      // Kept for a year (the install's TTL): 20,000 resources stay, as with a longer TTL or a busier month; the default week would expire most.
      service = await TestService.start({
        env: { ...KUBERNETES, VIGIL_SCAN_TTL_AFTER_FINISHED: String(365 * 86_400) },
        kubeConfig: kubeConfig(server),
        dataDir: dir.path,
      });
      apply(server, 'vigil-history', 'applied-after');
      const id = await adopted(server, 'vigil-history', 'applied-after');
      const listed = (await service.get('/v1/scans', { key: history.apiKey, query: { page_size: 1 } })).body.data as Array<{ id: string }>;
      expect(
        listed.map((scan) => scan.id),
        'the newest scan of the account',
      ).to.deep.equal([id]);

      const scanLists = server.requests.filter(
        (request) => request.method === 'GET' && !request.watch && request.path === '/apis/vigil.dev/v1alpha1/namespaces/vigil-history/scans',
      );
      expect(scanLists, 'one list, 40 pages of 500').to.have.length(40);
      expect(scanLists.every((request) => request.query.limit === '500')).to.equal(true);
      expect(
        scanLists.filter((request) => request.query.continue === undefined),
        'one first page',
      ).to.have.length(1);
      const rewritten = server.requests.filter((request) => request.method !== 'GET' && /\/scans\/nightly-/.test(request.path));
      expect(rewritten.map(described), 'writes to the finished Scans').to.deep.equal([]);
    } finally {
      await service?.stop();
      await server.stop();
      dir.remove();
    }
  });

  it("lets two installs with different accounts share one API server: neither sends a request into the other's namespace", async () => {
    const server = new FakeKubeApiServer({ moreTokens: ['install-acme', 'install-globex'] });
    await server.start();
    const installs: TestService[] = [];
    try {
      for (const name of ['acme', 'globex'])
        installs.push(await TestService.start({ env: KUBERNETES, kubeConfig: kubeConfig({ url: server.url, token: `install-${name}` }), accountName: name }));
      const [acme, globex] = installs as [TestService, TestService];
      // The same name in both namespaces: each install takes its own, and only its own.
      apply(server, 'vigil-acme', 'nightly', '127.0.0.1');
      apply(server, 'vigil-globex', 'nightly', '127.0.0.2');
      for (const [install, namespace] of [
        [acme, 'vigil-acme'],
        [globex, 'vigil-globex'],
      ] as const) {
        const created = (await install.post('/v1/scans', { type: 'NMAP', targets: ['127.0.0.3'] })).body.data;
        await waitFor(
          async () => (await install.get(`/v1/scans/${created.id}`)).body.data.state,
          (state) => state === 'RUNNING',
          `${namespace}: RUNNING`,
        );
        const id = await adopted(server, namespace, 'nightly');
        expect((await install.get(`/v1/scans/${id}`)).status, `${namespace}/nightly is a scan of its own install`).to.equal(200);
      }
      for (const [token, namespace] of [
        ['install-acme', 'vigil-acme'],
        ['install-globex', 'vigil-globex'],
      ]) {
        const sent = server.requests.filter((request) => request.headers.authorization === `Bearer ${token}`);
        expect(sent.length, `${token} sent requests`).to.be.greaterThan(0);
        expect(
          sent.filter((request) => !request.path.includes(`/namespaces/${namespace}/`)).map(described),
          `${token}: requests outside ${namespace}`,
        ).to.deep.equal([]);
      }
    } finally {
      for (const install of installs) await install.stop();
      await server.stop();
    }
  });

  describe('a namespace bound while the service runs', () => {
    let kube: KubeService;
    beforeEach(async () => (kube = await startKubeService()));
    afterEach(() => stopKubeService(kube));

    const watchedIn = (namespace: string) =>
      kube.server.openWatches
        .filter((watch) => watch.namespace === namespace)
        .map((watch) => watch.path)
        .sort();
    const EVERY_INFORMER = ['/jobs.batch', '/pods', '/scans.vigil.dev', '/scheduledscans.vigil.dev'];

    it('by `vigil accounts create` in another process (another connection to the data directory) is watched, and its Scans run for its account', async () => {
      expect(watchedIn('vigil-late')).to.deep.equal([]);
      const cli = composeCore(kube.service.settings);
      const { apiKey } = cli.accounts.createAccount({ name: 'late', namespace: 'vigil-late' });
      cli.db.close();
      await waitFor(
        async () => watchedIn('vigil-late'),
        (paths) => paths.length === EVERY_INFORMER.length,
        'the watches in vigil-late',
      );
      expect(watchedIn('vigil-late')).to.deep.equal(EVERY_INFORMER);
      apply(kube.server, 'vigil-late', 'first');
      const id = await adopted(kube.server, 'vigil-late', 'first');
      expect((await kube.service.get(`/v1/scans/${id}`, { key: apiKey })).status).to.equal(200);
    });

    it('by an account created in the service itself is watched too', async () => {
      kube.service.createAccount('inproc', { namespace: 'vigil-inproc' });
      await waitFor(
        async () => watchedIn('vigil-inproc'),
        (paths) => paths.length === EVERY_INFORMER.length,
        'the watches in vigil-inproc',
      );
      apply(kube.server, 'vigil-inproc', 'first');
      await adopted(kube.server, 'vigil-inproc', 'first');
    });
  });
});
