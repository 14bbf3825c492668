/**
 * The Scan reconciler with its Kubernetes face on a fake API server and a
 * real store, the server's objects standing in for the informer's cache:
 * what the table tests build, with their own face options laid over. The
 * workload side is held still, so a pass shows what the face does: no slot
 * is free (a QUEUED scan stays QUEUED) and a running workload keeps running
 * (its runner is this stand-in, the Job runner has tests of its own).
 */
import { loadSettings } from '../../../src/config/settings.js';
import type { Account } from '../../../src/domain/accounts/account.js';
import { composeCore } from '../../../src/main/composition-root.js';
import { ScanReconciler, type ScanReconcilerOptions } from '../../../src/app/controller/scan-reconciler.js';
import type { WorkloadRunner } from '../../../src/app/ports.js';
import { NO_EVENTS } from '../../../src/runtime/kubernetes/event-recorder.js';
import { ScanResourceFace, type ScanFaceOptions, type ScanObject } from '../../../src/runtime/kubernetes/scan-face.js';
import { ScanCustomResources } from '../../../src/runtime/kubernetes/scan-resources.js';
import { FakeTimers } from '../fake-timers.js';
import { FakeKubeApiServer } from '../fake-kube-apiserver.js';
import { kubeConfig } from '../kubeconfig.js';
import { tempDir } from '../temp-dir.js';
import { TENANT_NAMESPACE, scanRef } from './scan-object.js';

export type Core = ReturnType<typeof composeCore>;

/** The Scans' face on the fake API server, its objects read as the informer's cache. */
export function scanFaceOn(server: FakeKubeApiServer, core: Core, options: Partial<ScanFaceOptions> = {}): ScanResourceFace {
  const kc = kubeConfig(server);
  const cached = (namespace: string, name: string) => server.getObject(scanRef(name, namespace)) as ScanObject | undefined;
  return new ScanResourceFace({
    kubeConfig: kc,
    scanResources: new ScanCustomResources(kc, undefined, (namespace, name) => cached(namespace, name)?.metadata?.uid),
    service: core.scans,
    marks: core.scanResourceMarks,
    cached,
    events: NO_EVENTS,
    clock: { now: () => new Date('2026-11-25T00:00:00Z') },
    ...options,
  });
}

/** A workload that keeps running: the face's passes are the only thing that moves. */
export const RUNNING_WORKLOADS: WorkloadRunner = {
  start: async () => undefined,
  observe: async () => ({ phase: 'Running' }),
  stop: async () => undefined,
  release: async () => undefined,
  deleteCollectedWorkload: async () => undefined,
  onChange: () => undefined,
};

export function scanReconcilerOn(
  server: FakeKubeApiServer,
  core: Core,
  options: Partial<ScanFaceOptions> = {},
  reconcilerOptions: Partial<ScanReconcilerOptions> = {},
): ScanReconciler {
  const face = scanFaceOn(server, core, options);
  return new ScanReconciler({
    scans: core.scanRepository,
    accounts: core.accountRepository,
    face,
    runner: RUNNING_WORKLOADS,
    resolver: { resolve4: async () => ['93.184.216.34'] },
    resultFiles: core.resultFiles,
    history: core.history,
    staging: core.staging,
    clock: options.clock ?? { now: () => new Date('2026-11-25T00:00:00Z') },
    timers: new FakeTimers(Date.parse('2026-11-25T00:00:00Z')),
    maxConcurrentScans: 0,
    allowTargets: [],
    pollMs: null,
    onError: () => undefined,
    ...reconcilerOptions,
  });
}

export interface StoreAndServer {
  server: FakeKubeApiServer;
  core: Core;
  account: Account;
  stop(): Promise<void>;
}

/** A fresh fake API server and store, with account acme bound to the tenant namespace. */
export async function storeAndServer(): Promise<StoreAndServer> {
  const server = new FakeKubeApiServer();
  await server.start();
  const dir = tempDir();
  const core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path, VIGIL_ALLOW_TARGETS: '127.0.0.0/8' }));
  const account = core.accounts.createAccount({ name: 'acme', namespace: TENANT_NAMESPACE }).account;
  return {
    server,
    core,
    account,
    stop: async () => {
      await server.stop();
      core.db.close();
      dir.remove();
    },
  };
}
