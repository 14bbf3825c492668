/**
 * A Scan reconciler on a fake API server and a real store, the server's
 * objects standing in for the informer's cache: what the reconciler table
 * tests build, with their own options laid over.
 */
import { loadSettings } from '../../../src/config/settings.js';
import type { Account } from '../../../src/domain/accounts/account.js';
import { composeCore } from '../../../src/main/composition-root.js';
import { NO_EVENTS } from '../../../src/runtime/kubernetes/event-recorder.js';
import { ScanReconciler, type ScanObject, type ScanReconcilerOptions } from '../../../src/runtime/kubernetes/scan-reconciler.js';
import { ScanCustomResources } from '../../../src/runtime/kubernetes/scan-resources.js';
import { FakeKubeApiServer } from '../fake-kube-apiserver.js';
import { kubeConfig } from '../kubeconfig.js';
import { tempDir } from '../temp-dir.js';
import { TENANT_NAMESPACE, scanRef } from './scan-object.js';

export type Core = ReturnType<typeof composeCore>;

export function scanReconcilerOn(server: FakeKubeApiServer, core: Core, options: Partial<ScanReconcilerOptions> = {}): ScanReconciler {
  const kc = kubeConfig(server);
  return new ScanReconciler({
    kubeConfig: kc,
    scanResources: new ScanCustomResources(kc),
    accountForNamespace: (namespace) => core.accountRepository.findByNamespace(namespace),
    service: core.scans,
    repository: core.scanRepository,
    marks: core.scanResourceMarks,
    cached: (namespace, name) => server.getObject(scanRef(name, namespace)) as ScanObject | undefined,
    events: NO_EVENTS,
    clock: { now: () => new Date('2026-11-25T00:00:00Z') },
    ...options,
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
