/**
 * The login step of authenticated ZAP scans on Kubernetes (issue 15): the
 * Job's shape (prepare -> login -> scanner -> upload, the recording and the
 * plan input only in the inputs Secret, valid against the Kubernetes
 * schemas), and the Scan controller with the Kubernetes runner on the fake
 * API server: the Job carries the target's recording, settings and API
 * definition, and a login step that exits 3 skips the target as
 * Authentication Failed with the step's message.
 */
import { expect } from 'chai';
import * as models from 'kubernetes-models';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { ScanReconciler } from '../../src/app/controller/scan-reconciler.js';
import { WebScanPreparation } from '../../src/app/web-scan-preparation.js';
import { loadSettings } from '../../src/config/settings.js';
import type { Account } from '../../src/domain/accounts/account.js';
import { composeCore } from '../../src/main/composition-root.js';
import {
  buildScanJob,
  buildScanSecret,
  scanSecretName,
  scanJobName,
  uploadTokenSecretName,
  type ScanJobInput,
} from '../../src/runtime/kubernetes/job-manifest.js';
import { type JobObserver, MANAGED_BY_VIGIL } from '../../src/runtime/kubernetes/job-observer.js';
import { waitFor } from '../support/wait.js';
import { defaultJobSettings } from '../../src/runtime/kubernetes/job-settings.js';
import { LOGIN_FAILED_EXIT, loginFailureOf } from '../../src/runtime/kubernetes/login-step.js';
import { kubeScanHarness } from '../support/kube-scan-harness.js';
import { FakeKubeApiServer } from '../support/fake-kube-apiserver.js';
import { tempDir } from '../support/temp-dir.js';

const fixture = (path: string): Buffer => readFileSync(new URL(`../fixtures/${path}`, import.meta.url));
const RECORDING = fixture('selenium/demo-login.side');
const DEFINITION = fixture('openapi/demo-shop-3.0.yaml');
const PASSWORD = 'correct horse';

function jobInput(overrides: Partial<ScanJobInput> = {}): ScanJobInput {
  return {
    scan: { name: 'shop-zap', namespace: 'vigil-acme', uid: '0b6f5a0e-3c1d-4f7e-9a52-8d1c2e3f4a5b', type: 'OWASP_ZAP', id: 'scn_1' },
    targets: ['https://shop.example.com/'],
    addresses: { 'shop.example.com': ['93.184.216.34'] },
    settings: defaultJobSettings('0.1.0'),
    uploadUrl: 'http://vigil.vigil.svc:8080',
    uploadTokenSecretName: uploadTokenSecretName('shop-zap'),
    allowTargets: '203.0.113.0/24',
    createdAt: new Date('2026-11-28T10:00:00.000Z'),
    scanner: {
      settings: { seed_urls: ['https://shop.example.com/catalog'] },
      loginRecording: RECORDING,
      apiDefinition: { fileName: 'shop.yaml', content: DEFINITION },
    },
    ...overrides,
  };
}

describe('Kubernetes: the login step in the scan Job', () => {
  it("runs `vigil login-replay` in Vigil's image between prepare and ZAP, confined like the scanner, reading its inputs from the Secret", () => {
    const job = buildScanJob(jobInput());
    new models.batch.v1.Job(job as never).validate();
    const pod = job.spec.template.spec;
    expect(pod.initContainers.map((container) => container.name)).to.deep.equal(['prepare', 'login', 'scanner']);
    const login = pod.initContainers[1]!;
    expect(login).to.deep.include({ image: 'ghcr.io/vigil-dev/vigil:0.1.0', command: ['vigil'] });
    expect(login.args).to.deep.equal([
      'login-replay',
      '--recording',
      '/vigil/input/login.side',
      '--plan-input',
      '/vigil/input/zap-plan-input.json',
      '--plan',
      '/vigil/output/zap-plan.yaml',
      '--termination-log',
      '/dev/termination-log',
    ]);
    expect(login.env).to.deep.equal([
      { name: 'HOME', value: '/tmp' },
      { name: 'VIGIL_ALLOW_TARGETS', value: '203.0.113.0/24' },
    ]);
    expect(login.securityContext).to.deep.equal({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(login.volumeMounts).to.deep.equal([
      { name: 'input', mountPath: '/vigil/input', readOnly: true },
      { name: 'output', mountPath: '/vigil/output' },
      { name: 'tmp', mountPath: '/tmp' },
    ]);
    // The recording (with its password) is in the Secret only, never in the Job.
    expect(JSON.stringify(job)).to.not.include(PASSWORD);
  });

  it("puts the recording, the plan input and the API definition in the scan's Secret beside its token; the plan has the openapi job and the target settings", () => {
    const secret = buildScanSecret(jobInput(), 'tok_login', { name: scanJobName('shop-zap'), uid: '7d2e9c41-5b3a-4f60-8e1d-2a9c3b4d5e6f' });
    new models.v1.Secret(secret as never).validate();
    expect(Object.keys(secret.stringData).sort()).to.deep.equal([
      'login.side',
      'token',
      'zap-hosts',
      'zap-openapi.yaml',
      'zap-plan-input.json',
      'zap-plan.yaml',
    ]);
    expect(secret.stringData['login.side']).to.equal(RECORDING.toString());
    expect(secret.stringData['zap-openapi.yaml']).to.equal(DEFINITION.toString());
    const planInput = JSON.parse(secret.stringData['zap-plan-input.json']!);
    expect(planInput).to.deep.include({
      targetUrl: 'https://shop.example.com/',
      active: false,
      reportDir: '/vigil/output',
      apiDefinitionFile: '/vigil/output/zap-openapi.yaml',
    });
    const plan = parse(secret.stringData['zap-plan.yaml']!);
    expect(plan.jobs.find((job: { type: string }) => job.type === 'openapi').parameters).to.deep.include({
      apiFile: '/vigil/output/zap-openapi.yaml',
      targetUrl: 'https://shop.example.com/',
    });
    expect(plan.jobs.find((job: { type: string }) => job.type === 'requestor').requests).to.deep.equal([
      { url: 'https://shop.example.com/catalog', method: 'GET' },
    ]);
  });

  it('has no login step without a recording, and none for other types', () => {
    expect(buildScanJob(jobInput({ scanner: {} })).spec.template.spec.initContainers.map((container) => container.name)).to.deep.equal(['prepare', 'scanner']);
    const nmap = buildScanJob(jobInput({ scan: { ...jobInput().scan, type: 'NMAP' }, targets: ['93.184.216.34'] }));
    expect(nmap.spec.template.spec.initContainers.map((container) => container.name)).to.deep.equal(['scanner']);
  });

  it("reads a login failure from the login container's termination message, and nothing else as one", () => {
    const terminated = (exitCode: number, message?: string) => ({
      status: {
        initContainerStatuses: [
          { name: 'prepare', state: { terminated: { exitCode: 0 } } },
          { name: 'login', state: { terminated: { exitCode, ...(message === undefined ? {} : { message }) } } },
        ],
      },
    });
    expect(loginFailureOf([terminated(LOGIN_FAILED_EXIT, "command 3 ... click 'id=login' failed: Timeout\n")])).to.equal(
      "command 3 ... click 'id=login' failed: Timeout",
    );
    expect(loginFailureOf([terminated(1, 'crashed')])).to.equal(undefined);
    expect(loginFailureOf([{ status: {} }])).to.equal(undefined);
  });
});

describe('Kubernetes: an authenticated ZAP scan through the controller and the fake API server', () => {
  let server: FakeKubeApiServer;
  let dir: ReturnType<typeof tempDir>;
  let core: ReturnType<typeof composeCore>;
  let account: Account;
  let controller: ScanReconciler;
  let observer: JobObserver;

  beforeEach(async () => {
    server = new FakeKubeApiServer();
    await server.start();
    dir = tempDir();
    core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path }));
    account = core.accounts.createAccount({ name: 'acme', namespace: 'vigil-acme' }).account;
    ({ observer, controller } = await kubeScanHarness(server, core, {
      allowTargets: '',
      controller: {
        // No replayer: on Kubernetes the Job replays the login.
        preparation: new WebScanPreparation(core.targetRepository, undefined, { resolver: { resolve4: async () => ['93.184.216.34'] }, allowTargets: [] }),
        onError: (key, error) => {
          throw new Error(`reconcile of ${key} failed: ${String(error)}`);
        },
      },
    }));
  });
  afterEach(async () => {
    await observer.stop();
    await server.stop();
    core.db.close();
    dir.remove();
  });

  it('hands the recording to the Job and skips the target as Authentication Failed when the login step fails', async () => {
    const target = core.targets.create(
      account,
      { target: 'https://shop.example.com/', scanner_settings: { zap: { seed_urls: ['https://shop.example.com/catalog'] } } },
      false,
    );
    core.targetAttachments.attachLoginRecording(account, target.id, 'demo-login.side', RECORDING);
    await core.targetAttachments.attachApiDefinition(account, target.id, 'shop.yaml', DEFINITION);
    const scan = core.scans.start(account, { type: 'OWASP_ZAP', target_ids: [target.id] })[0]!;
    expect(scan.isAuthenticated).to.equal(true);
    await controller.reconcile(controller.keyOf(scan)!);
    expect(core.scans.get(account, scan.id).state).to.equal('RUNNING');
    const job = server.getObject({ apiVersion: 'batch/v1', kind: 'Job', namespace: 'vigil-acme', name: scanJobName(scan.name) }) as never as {
      spec: { template: { spec: { initContainers: Array<{ name: string }> } } };
    };
    expect(job.spec.template.spec.initContainers.map((container) => container.name)).to.deep.equal(['prepare', 'login', 'scanner']);
    const secret = server.getObject({ apiVersion: 'v1', kind: 'Secret', namespace: 'vigil-acme', name: scanSecretName(scan.name) }) as never as {
      data?: Record<string, string>;
      stringData?: Record<string, string>;
    };
    const recording = secret.stringData?.['login.side'] ?? Buffer.from(secret.data!['login.side']!, 'base64').toString();
    expect(recording).to.equal(RECORDING.toString());
    // The target's own settings and its API definition reach the Job's plan too.
    const file = (name: string) => secret.stringData?.[name] ?? Buffer.from(secret.data![name]!, 'base64').toString();
    const plan = parse(file('zap-plan.yaml'));
    expect(plan.jobs.map((job: { type: string }) => job.type)).to.include.members(['requestor', 'openapi', 'spider']);
    expect(file('zap-openapi.yaml')).to.equal(DEFINITION.toString());

    server.setObject({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'shop-zap-pod',
        namespace: 'vigil-acme',
        labels: { 'vigil.dev/scan-id': scan.id, [MANAGED_BY_VIGIL.split('=')[0]!]: MANAGED_BY_VIGIL.split('=')[1]! },
      },
      status: {
        phase: 'Failed',
        initContainerStatuses: [
          {
            name: 'login',
            state: {
              terminated: { exitCode: LOGIN_FAILED_EXIT, message: "command 7 of test 'log in as alice', waitForElementVisible 'css=.welcome' failed: Timeout" },
            },
          },
        ],
      },
    } as never);
    server.setObject({
      ...(job as object),
      status: { conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' }] },
    } as never);
    // Both changes reach the runner through the informer caches, a watch event away.
    await waitFor(
      async () => observer.podsOf(scan.id).length,
      (count) => count === 1,
      'the pod in the cache',
    );
    await waitFor(
      async () => observer.job('vigil-acme', scanJobName(scan.name))?.status?.conditions?.length ?? 0,
      (count) => count === 1,
      'the failed Job in the cache',
    );
    await controller.reconcile(controller.keyOf(scan)!);
    const failed = core.scans.get(account, scan.id);
    expect(failed.state).to.equal('FAILED');
    expect(failed.skippedTargets).to.deep.equal([{ targetId: target.id, skippedReason: 'Authentication Failed' }]);
    expect(failed.resolvedTargets).to.deep.equal([]);
    expect(failed.conditions.find((condition) => condition.type === 'Authenticated')).to.include({
      status: 'False',
      reason: 'LoginFailed',
      message: "the login recording failed in the scan's Job: command 7 of test 'log in as alice', waitForElementVisible 'css=.welcome' failed: Timeout",
    });
    expect(failed.conditions.at(-1)).to.include({ reason: 'NoScannableTargets' });
  });
});
