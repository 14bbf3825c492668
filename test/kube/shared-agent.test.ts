/**
 * shareAgents (src/runtime/kubernetes/shared-agent.ts): client-node's API
 * calls share one keep-alive Agent instead of a new Agent, and a new
 * connection, per request; a changed cluster or TLS setting gets a new one.
 */
import { expect } from 'chai';
import http from 'node:http';
import * as k8s from '@kubernetes/client-node';
import { shareAgents } from '../../src/runtime/kubernetes/shared-agent.js';
import { startRealHttpServer, type RealHttpServer } from '../support/real-http-server.js';

function kubeConfig(server: string, token = 't'): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'test', server, skipTLSVerify: true }],
    users: [{ name: 'u', token }],
    contexts: [{ name: 'c', cluster: 'test', user: 'u' }],
    currentContext: 'c',
  });
  return kc;
}

type CreateAgent = (cluster: k8s.Cluster | null, options: Record<string, unknown>) => http.Agent;
const createAgent = (kc: k8s.KubeConfig): CreateAgent => (kc as unknown as { createAgent: CreateAgent }).createAgent.bind(kc);

describe('shareAgents: one keep-alive Agent per KubeConfig', () => {
  let server: RealHttpServer;
  let requests = 0;
  let url = '';

  before(async () => {
    server = await startRealHttpServer((req, res) => {
      requests += 1;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'vigil-acme' } }));
    });
    url = server.url;
  });
  after(() => server.close());
  beforeEach(() => {
    server.reset();
    requests = 0;
  });

  it('sequential API calls reuse one connection once shared (each opened its own before)', async () => {
    const plain = kubeConfig(url).makeApiClient(k8s.CoreV1Api);
    for (let i = 0; i < 3; i += 1) await plain.readNamespace({ name: 'vigil-acme' });
    expect({ requests, connections: server.connections }).to.deep.equal({ requests: 3, connections: 3 });

    server.reset();
    requests = 0;
    const kc = kubeConfig(url);
    shareAgents(kc);
    shareAgents(kc); // twice: still one Agent
    const core = kc.makeApiClient(k8s.CoreV1Api);
    for (let i = 0; i < 3; i += 1) expect((await core.readNamespace({ name: 'vigil-acme' })).metadata?.name).to.equal('vigil-acme');
    expect({ requests, connections: server.connections }).to.deep.equal({ requests: 3, connections: 1 });
    // The idle connection closes after 4 s, before the server's 5 s (a request on a connection the server is closing fails).
    const agent = createAgent(kc)(kc.getCurrentCluster(), { rejectUnauthorized: false }); // the options client-node passes for this cluster
    const idle = Object.values(agent.freeSockets).flat();
    expect(idle.map((socket) => socket?.timeout)).to.deep.equal([4000]);
  });

  it('the same settings get the same Agent; another CA or server gets another', () => {
    const kc = kubeConfig('https://kube.test:6443');
    shareAgents(kc);
    const create = createAgent(kc);
    const cluster = kc.getCurrentCluster();
    const first = create(cluster, { ca: Buffer.from('ca-1'), rejectUnauthorized: false });
    expect(create(cluster, { ca: Buffer.from('ca-1'), rejectUnauthorized: false })).to.equal(first);
    expect((first as unknown as { keepAlive: boolean }).keepAlive).to.equal(true);
    const rotated = create(cluster, { ca: Buffer.from('ca-2'), rejectUnauthorized: false });
    expect(rotated).to.not.equal(first);
    expect(create({ ...cluster!, server: 'https://other.test:6443' }, { ca: Buffer.from('ca-2'), rejectUnauthorized: false })).to.not.equal(rotated);
  });

  it('watches and followed logs (applyToHTTPSOptions) keep an Agent of their own, without keep-alive', async () => {
    const kc = kubeConfig('https://kube.test:6443');
    shareAgents(kc);
    const first: { agent?: http.Agent } = {};
    const second: { agent?: http.Agent } = {};
    await kc.applyToHTTPSOptions(first);
    await kc.applyToHTTPSOptions(second);
    expect(first.agent).to.not.equal(second.agent);
    expect((first.agent as unknown as { keepAlive: boolean }).keepAlive).to.equal(false);
  });
});
