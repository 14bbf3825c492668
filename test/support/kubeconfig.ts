/**
 * A client-node KubeConfig for a test API server, built from an object so no
 * file or KUBECONFIG is read. client-node refuses an `http://` server unless
 * the cluster entry sets `skipTLSVerify` (STACK.md).
 */
import { KubeConfig } from '@kubernetes/client-node';
import { DEFAULT_TOKEN } from './fake-kube-apiserver.js';

export interface TestApiServer {
  url: string;
  token?: string;
}

export function kubeConfig(server: TestApiServer, options: { namespace?: string } = {}): KubeConfig {
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: 'fake', server: server.url, skipTLSVerify: true }],
    users: [{ name: 'fake-user', token: server.token ?? DEFAULT_TOKEN }],
    contexts: [{ name: 'fake', cluster: 'fake', user: 'fake-user', namespace: options.namespace ?? 'default' }],
    currentContext: 'fake',
  });
  return config;
}
