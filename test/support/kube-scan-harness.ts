/**
 * The Scan controller on the Kubernetes runner, wired to a fake API server as
 * the service wires them (a Job and pod informer cache, no polling): the
 * shared set-up of the tests that drive scans through Jobs.
 */
import { ScanController, type ScanControllerOptions } from '../../src/app/controller/scan-controller.js';
import type { composeCore } from '../../src/main/composition-root.js';
import { JobObserver } from '../../src/runtime/kubernetes/job-observer.js';
import { KubernetesJobRunner } from '../../src/runtime/kubernetes/job-runner.js';
import { defaultJobSettings } from '../../src/runtime/kubernetes/job-settings.js';
import { ScanCustomResources } from '../../src/runtime/kubernetes/scan-resources.js';
import { FakeTimers } from './fake-timers.js';
import type { FakeKubeApiServer } from './fake-kube-apiserver.js';
import { kubeConfig } from './kubeconfig.js';
import { fixedNamespaces } from '../../src/runtime/kubernetes/namespace-set.js';

export interface KubeScanHarness {
  observer: JobObserver;
  runner: KubernetesJobRunner;
  controller: ScanController;
  timers: FakeTimers;
  stop(): Promise<void>;
}

/** Every Scan lives in `namespace`; the controller resolves every host to a public address. */
export async function kubeScanHarness(
  server: FakeKubeApiServer,
  core: ReturnType<typeof composeCore>,
  options: { namespace?: string; allowTargets?: string; controller?: Partial<Pick<ScanControllerOptions, 'preparation' | 'onError'>> } = {},
): Promise<KubeScanHarness> {
  const namespace = options.namespace ?? 'vigil-acme';
  const kc = kubeConfig(server);
  const timers = new FakeTimers(Date.now());
  const observer = new JobObserver({ kubeConfig: kc, namespaces: fixedNamespaces([namespace], timers), timers, onError: () => undefined });
  await observer.start();
  const runner = new KubernetesJobRunner({
    observer,
    kubeConfig: kc,
    scanResources: new ScanCustomResources(kc),
    uploads: core.uploads,
    jobSettings: defaultJobSettings('0.1.0'),
    uploadUrl: 'http://vigil.vigil.svc:8080',
    ...(options.allowTargets === undefined ? {} : { allowTargets: options.allowTargets }),
    locate: (scanId) => {
      const scan = core.scanRepository.findByIdUnscoped(scanId);
      return scan && { name: scan.name, namespace, type: scan.type };
    },
  });
  const controller = new ScanController({
    scans: core.scanRepository,
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
  return { observer, runner, controller, timers, stop: () => observer.stop() };
}
