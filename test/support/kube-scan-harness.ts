/**
 * The Scan reconciler on the Kubernetes runner and face, wired to a fake API
 * server as the service wires them (a Job and pod informer cache, the Scan
 * CRs read from the server as the informer's cache, no polling): the shared
 * set-up of the tests that drive scans through Jobs.
 */
import { ScanReconciler, type ScanReconcilerOptions } from '../../src/app/controller/scan-reconciler.js';
import type { composeCore } from '../../src/main/composition-root.js';
import { JobObserver } from '../../src/runtime/kubernetes/job-observer.js';
import { KubernetesJobRunner } from '../../src/runtime/kubernetes/job-runner.js';
import { defaultJobSettings } from '../../src/runtime/kubernetes/job-settings.js';
import { ScanCustomResources } from '../../src/runtime/kubernetes/scan-resources.js';
import { FakeTimers } from './fake-timers.js';
import type { FakeKubeApiServer } from './fake-kube-apiserver.js';
import { kubeConfig } from './kubeconfig.js';
import { fixedNamespaces } from '../../src/runtime/kubernetes/namespace-set.js';
import type { ScanObject, ScanResourceFace } from '../../src/runtime/kubernetes/scan-face.js';
import { scanFaceOn } from './gen/scan-reconciler.js';
import { scanRef } from './gen/scan-object.js';

export interface KubeScanHarness {
  observer: JobObserver;
  runner: KubernetesJobRunner;
  controller: ScanReconciler;
  /** The Scans' face, shared with the runner's owner lookup as the runtime shares it. */
  face: ScanResourceFace;
  scanResources: ScanCustomResources;
  timers: FakeTimers;
  stop(): Promise<void>;
}

/** Every Scan lives in `namespace`; the controller resolves every host to a public address. */
export async function kubeScanHarness(
  server: FakeKubeApiServer,
  core: ReturnType<typeof composeCore>,
  options: { namespace?: string; allowTargets?: string; controller?: Partial<Pick<ScanReconcilerOptions, 'preparation' | 'onError'>> } = {},
): Promise<KubeScanHarness> {
  const namespace = options.namespace ?? 'vigil-acme';
  const kc = kubeConfig(server);
  const timers = new FakeTimers(Date.now());
  const observer = new JobObserver({ kubeConfig: kc, namespaces: fixedNamespaces([namespace], timers), timers, onError: () => undefined });
  await observer.start();
  const scanResources = new ScanCustomResources(kc, undefined, (ns, name) => (server.getObject(scanRef(name, ns)) as ScanObject | undefined)?.metadata?.uid);
  const face = scanFaceOn(server, core, { scanResources, clock: { now: () => new Date() } });
  const runner = new KubernetesJobRunner({
    observer,
    kubeConfig: kc,
    scanResources,
    uploads: core.uploads,
    jobSettings: defaultJobSettings('0.1.0'),
    uploadUrl: 'http://vigil.vigil.svc:8080',
    ...(options.allowTargets === undefined ? {} : { allowTargets: options.allowTargets }),
    locate: (scanId) => {
      const scan = core.scanRepository.findByIdUnscoped(scanId);
      return scan && { name: scan.name, namespace, type: scan.type };
    },
  });
  const controller = new ScanReconciler({
    scans: core.scanRepository,
    accounts: core.accountRepository,
    face,
    runner,
    resolver: { resolve4: async () => ['93.184.216.34'] },
    resultFiles: core.resultFiles,
    // As the composition root wires it: both runtimes make each SUCCEEDED scan's PDF.
    scanPdfs: core.scanPdfs,
    history: core.history,
    staging: core.staging,
    clock: { now: () => new Date() },
    timers,
    maxConcurrentScans: 10,
    allowTargets: [],
    onError: () => undefined,
    pollMs: null,
    ...options.controller,
  });
  return { observer, runner, controller, face, scanResources, timers, stop: () => observer.stop() };
}
