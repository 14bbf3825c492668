/**
 * Vigil's one door to @kubernetes/client-node (src/runtime/kubernetes/
 * client-node.ts) and the bundle `npm run build` makes of it
 * (scripts/bundle-client-node.ts): no other source file imports the package,
 * and the bundle, loaded by plain Node as compiled Vigil loads it, exports
 * exactly the door's values, inlines the client instead of importing it,
 * and works against the fake API server (a list, a custom object created
 * and merge-patched through its status, an informer's list and watch).
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { builtinModules } from 'node:module';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { bundleClientNode, CLIENT_NODE_ENTRY } from '../../scripts/bundle-client-node.js';
import { DEFAULT_TOKEN, FakeKubeApiServer, type KubeObject } from '../support/fake-kube-apiserver.js';
import { tempDir } from '../support/temp-dir.js';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

/** The value names the door re-exports: `export { A, B } from '@kubernetes/client-node'`. */
function doorValues(): string[] {
  const match = /^export \{([^}]*)\} from '@kubernetes\/client-node';$/m.exec(readFileSync(CLIENT_NODE_ENTRY, 'utf8'));
  return match![1]!
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean)
    .sort();
}

/** What the child prints: the bundle's exports and what it did against the server. */
const CHILD = `
const [bundle, url, token] = process.argv.slice(1);
const k8s = await import(bundle);
const kc = new k8s.KubeConfig();
kc.loadFromOptions({ clusters: [{ name: 'fake', server: url, skipTLSVerify: true }], users: [{ name: 'u', token }], contexts: [{ name: 'fake', cluster: 'fake', user: 'u' }], currentContext: 'fake' });
// What KubeApi (kube-api.ts) takes from the KubeConfig: the credentials as headers (and the Agent), then a plain JSON request.
async function call(method, path, body, type = 'application/json') {
  const headers = {};
  let agent;
  await kc.applySecurityAuthentication({ setHeaderParam: (name, value) => { headers[name] = value; }, setAgent: (given) => { agent = given; } });
  if (agent === undefined) throw new Error('no Agent from applySecurityAuthentication');
  const answer = await fetch(url + path, { method, headers: { ...headers, ...(body === undefined ? {} : { 'content-type': type }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  if (!answer.ok) throw Object.assign(new Error('HTTP ' + answer.status), { code: answer.status });
  return answer.json();
}
const pods = await call('GET', '/api/v1/namespaces/ns/pods');
await call('POST', '/apis/vigil.dev/v1alpha1/namespaces/ns/scans', { apiVersion: 'vigil.dev/v1alpha1', kind: 'Scan', metadata: { name: 'one', namespace: 'ns' }, spec: { type: 'NMAP', targets: ['127.0.0.1'] } });
await call('PATCH', '/apis/vigil.dev/v1alpha1/namespaces/ns/scans/one/status', { status: { state: 'RUNNING' } }, 'application/merge-patch+json');
let notFound;
try { await call('GET', '/api/v1/namespaces/ns/secrets/missing'); } catch (error) { notFound = error.code; }
const informer = k8s.makeInformer(kc, '/api/v1/namespaces/ns/pods', () => call('GET', '/api/v1/namespaces/ns/pods'));
await informer.start();
const cached = informer.list().map((pod) => pod.metadata.name);
await informer.stop();
process.stdout.write(JSON.stringify({ exports: Object.keys(k8s).sort(), pods: pods.items.map((pod) => pod.metadata.name), notFound, cached }));
`;

describe('the Kubernetes client: one door, bundled by the build', function () {
  this.timeout(60_000);

  it('no source file but the door imports @kubernetes/client-node', () => {
    const files = (readdirSync(SRC, { recursive: true }) as string[]).filter((file) => file.endsWith('.ts')).map((file) => join(SRC, file));
    const importers = files
      .filter((file) => /from '@kubernetes\/client-node'|import\('@kubernetes\/client-node'\)/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(SRC, file));
    expect(importers).to.deep.equal(['runtime/kubernetes/client-node.ts']);
  });

  it('the bundle inlines the client, exports exactly the door values, and works under plain Node', async () => {
    const dir = tempDir('vigil-client-node-bundle-');
    const outfile = join(dir.path, 'client-node.js');
    await bundleClientNode(outfile);
    const text = readFileSync(outfile, 'utf8');
    expect(text, 'client-node inlined, not imported').not.to.match(/["']@kubernetes\/client-node["']/);
    // Nothing but Node's own modules is imported: the image ships client-node's bundle, not the package (a devDependency).
    const specifiers = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*)["']((?:node:)?[@a-z][a-z0-9@._/-]*)["']/g)].map(
      (match) => match[1]!,
    );
    expect(specifiers.length).to.be.greaterThan(0);
    expect(specifiers.filter((specifier) => !builtinModules.includes(specifier.replace(/^node:/, '')))).to.deep.equal([]);

    const server = new FakeKubeApiServer();
    await server.start();
    try {
      server.setObject({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'pod-a', namespace: 'ns' } } as KubeObject);
      const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', CHILD, outfile, server.url, DEFAULT_TOKEN], {
        env: { ...process.env, NODE_OPTIONS: '' },
      });
      const result = JSON.parse(stdout) as { exports: string[]; pods: string[]; notFound: number; cached: string[] };
      expect(result.exports).to.deep.equal(doorValues());
      expect(result.pods).to.deep.equal(['pod-a']);
      expect(result.notFound, 'the missing Secret answers 404').to.equal(404);
      expect(result.cached).to.deep.equal(['pod-a']);
      expect((server.getObject({ apiVersion: 'vigil.dev/v1alpha1', kind: 'Scan', namespace: 'ns', name: 'one' })?.status as { state?: string }).state).to.equal(
        'RUNNING',
      );
    } finally {
      await server.stop();
      dir.remove();
    }
  });
});
