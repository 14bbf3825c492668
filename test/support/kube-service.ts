/**
 * The service in the kubernetes runtime against a fresh fake API server: what
 * the test/kube suites start before each test and stop after it.
 */
import { FakeKubeApiServer } from './fake-kube-apiserver.js';
import { kubeConfig } from './kubeconfig.js';
import { TestService } from './test-service.js';

export interface KubeService {
  server: FakeKubeApiServer;
  service: TestService;
}

export async function startKubeService(env: Record<string, string> = {}): Promise<KubeService> {
  const server = new FakeKubeApiServer();
  await server.start();
  const service = await TestService.start({ env: { VIGIL_RUNTIME: 'kubernetes', VIGIL_ALLOW_TARGETS: '127.0.0.0/8', ...env }, kubeConfig: kubeConfig(server) });
  return { server, service };
}

export async function stopKubeService({ server, service }: KubeService): Promise<void> {
  await service.stop();
  await server.stop();
}
