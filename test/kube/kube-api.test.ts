/**
 * KubeApi (src/runtime/kubernetes/kube-api.ts): Vigil's JSON requests to the
 * API server, against a real HTTP server: the kubeconfig's credentials, the
 * content type of each patch kind, query parameters, errors that
 * kube-errors.ts reads as before, the bound on an answer, and the shared
 * keep-alive connection.
 */
import { expect } from 'chai';
import http from 'node:http';
import * as k8s from '@kubernetes/client-node';
import { JSON_PATCH, KubeApi, KubeApiError, MAX_ANSWER_BYTES, kubePaths, observeKubeRequests } from '../../src/runtime/kubernetes/kube-api.js';
import { apiServerMessageOf, isAlreadyExists, isNotFound } from '../../src/runtime/kubernetes/kube-errors.js';
import { shareAgents } from '../../src/runtime/kubernetes/shared-agent.js';
import { startRealHttpServer, type RealHttpServer } from '../support/real-http-server.js';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function kubeConfig(server: string, user: k8s.User = { name: 'u', token: 'secret-token' }): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'test', server, skipTLSVerify: true }],
    users: [user],
    contexts: [{ name: 'c', cluster: 'test', user: user.name }],
    currentContext: 'c',
  });
  return kc;
}

describe('KubeApi: JSON requests to the API server', () => {
  let server: RealHttpServer;
  let url = '';
  let seen: Seen[] = [];
  let answer: (request: Seen, res: http.ServerResponse) => void = (_, res) => res.end('{}');

  before(async () => {
    server = await startRealHttpServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const request = { method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString() };
        seen.push(request);
        res.setHeader('content-type', 'application/json');
        answer(request, res);
      });
    });
    url = server.url;
  });
  after(() => server.close());
  beforeEach(() => {
    seen = [];
    server.reset();
    answer = (request, res) => res.end(request.body === '' ? '{"kind":"Status"}' : request.body);
  });

  it('creates with a JSON POST carrying the kubeconfig token, and returns the parsed answer', async () => {
    const api = new KubeApi(kubeConfig(url));
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'scan-1-secret', namespace: 'tenant a' }, stringData: { token: 't' } };
    const created = await api.create(kubePaths.core('tenant a', 'secrets'), secret);
    expect(created).to.deep.equal(secret);
    expect(seen).to.have.length(1);
    expect(seen[0]!.method).to.equal('POST');
    expect(seen[0]!.url).to.equal('/api/v1/namespaces/tenant%20a/secrets');
    expect(seen[0]!.headers.authorization).to.equal('Bearer secret-token');
    expect(seen[0]!.headers['content-type']).to.equal('application/json');
    expect(JSON.parse(seen[0]!.body)).to.deep.equal(secret);
  });

  it('tells the observer of its kubeconfig each request: verb (a paged GET is a list) and status, 0 when nothing answered', async () => {
    const config = kubeConfig(url);
    const told: Array<[string, number]> = [];
    observeKubeRequests(config, (verb, code) => told.push([verb, code]));
    const api = new KubeApi(config);
    await api.create(kubePaths.core('ns', 'secrets'), { metadata: { name: 's' } });
    answer = (_request, res) => res.end('{"metadata":{"resourceVersion":"7"},"items":[]}');
    await api.listAll(kubePaths.core('ns', 'pods'));
    answer = (_request, res) => {
      res.statusCode = 404;
      res.end('{"kind":"Status","code":404}');
    };
    await api.get(kubePaths.core('ns', 'pods', 'gone')).catch(() => undefined);
    await new KubeApi(kubeConfig('http://127.0.0.1:1')).delete('/api/v1/namespaces/ns/pods/x').catch(() => undefined);
    expect(told).to.deep.equal([
      ['create', 200],
      ['list', 200],
      ['get', 404],
    ]);
    const other = kubeConfig('http://127.0.0.1:1');
    observeKubeRequests(other, (verb, code) => told.push([verb, code]));
    await new KubeApi(other).delete('/api/v1/namespaces/ns/pods/x').catch(() => undefined);
    expect(told.at(-1)).to.deep.equal(['delete', 0]);
  });

  it('patches /status as a merge patch by default, and with a JSON patch when asked', async () => {
    const api = new KubeApi(kubeConfig(url));
    await api.patch(kubePaths.namespaced('vigil.dev', 'v1alpha1', 'ns', 'scans', 'one', 'status'), { status: { state: 'RUNNING' } });
    await api.patch(
      kubePaths.namespaced('vigil.dev', 'v1alpha1', 'ns', 'scans', 'one'),
      [{ op: 'add', path: '/metadata/finalizers', value: ['vigil.dev/scan'] }],
      JSON_PATCH,
    );
    expect(seen.map((request) => [request.method, request.url, request.headers['content-type']])).to.deep.equal([
      ['PATCH', '/apis/vigil.dev/v1alpha1/namespaces/ns/scans/one/status', 'application/merge-patch+json'],
      ['PATCH', '/apis/vigil.dev/v1alpha1/namespaces/ns/scans/one', 'application/json-patch+json'],
    ]);
  });

  it('deletes with query parameters (a label selector, a propagation policy) and no body', async () => {
    const api = new KubeApi(kubeConfig(url));
    await api.delete(kubePaths.core('ns', 'secrets'), { labelSelector: 'vigil.dev/scan-id=abc', propagationPolicy: undefined });
    await api.delete(kubePaths.namespaced('batch', 'v1', 'ns', 'jobs', 'scan-one'), { propagationPolicy: 'Foreground' });
    expect(seen.map((request) => [request.method, request.url, request.body])).to.deep.equal([
      ['DELETE', '/api/v1/namespaces/ns/secrets?labelSelector=vigil.dev%2Fscan-id%3Dabc', ''],
      ['DELETE', '/apis/batch/v1/namespaces/ns/jobs/scan-one?propagationPolicy=Foreground', ''],
    ]);
  });

  it('a non-2xx answer throws with its status code and body, read by kube-errors as client-node ApiException was', async () => {
    const api = new KubeApi(kubeConfig(url));
    answer = (request, res) => {
      res.statusCode = request.method === 'POST' ? 409 : 404;
      res.end(
        JSON.stringify({
          kind: 'Status',
          status: 'Failure',
          message: `jobs "scan-one" ${request.method === 'POST' ? 'already exists' : 'not found'}`,
          code: res.statusCode,
        }),
      );
    };
    const conflict = await api.create(kubePaths.namespaced('batch', 'v1', 'ns', 'jobs'), { metadata: { name: 'scan-one' } }).catch((error: unknown) => error);
    expect(conflict).to.be.instanceOf(KubeApiError);
    expect(isAlreadyExists(conflict)).to.equal(true);
    expect(apiServerMessageOf(conflict)).to.equal('jobs "scan-one" already exists');
    expect((conflict as Error).message).to.equal('POST /apis/batch/v1/namespaces/ns/jobs: HTTP 409: jobs "scan-one" already exists');
    const missing = await api.get(kubePaths.namespaced('batch', 'v1', 'ns', 'jobs', 'scan-one')).catch((error: unknown) => error);
    expect(isNotFound(missing)).to.equal(true);
  });

  it('refuses an answer over the bound instead of holding it', async () => {
    const api = new KubeApi(kubeConfig(url));
    const piece = Buffer.alloc(1024 * 1024, 0x20);
    answer = (_, res) => {
      let sent = 0;
      const more = (): void => {
        while (sent <= MAX_ANSWER_BYTES) {
          sent += piece.length;
          if (!res.write(piece)) return void res.once('drain', more);
        }
        res.end();
      };
      res.on('error', () => undefined);
      more();
    };
    const error = await api.get(kubePaths.core('ns', 'events')).catch((caught: unknown) => caught);
    expect((error as Error).message).to.equal(`GET /api/v1/namespaces/ns/events: the API server's answer is over ${MAX_ANSWER_BYTES} bytes; refused`);
  });

  it('basic-auth users are sent as client-node sends them', async () => {
    const api = new KubeApi(kubeConfig(url, { name: 'basic', username: 'admin', password: 'pw' }));
    await api.get(kubePaths.core('ns', 'pods'));
    expect(seen[0]!.headers.authorization).to.equal(`Basic ${Buffer.from('admin:pw').toString('base64')}`);
  });

  it('with shareAgents, sequential requests reuse one keep-alive connection', async () => {
    const kc = kubeConfig(url);
    shareAgents(kc);
    const api = new KubeApi(kc);
    for (let i = 0; i < 3; i += 1) await api.get(kubePaths.core('ns', 'pods'));
    expect({ requests: seen.length, connections: server.connections }).to.deep.equal({ requests: 3, connections: 1 });
  });
});
