/**
 * The one door to @kubernetes/client-node: every other file of Vigil imports
 * the Kubernetes client from here, and only the names below. client-node's
 * own index loads every model and API of the Kubernetes API (thousands of
 * modules, about 75 MiB of a process's memory); `npm run build` bundles this
 * one module with esbuild (scripts/bundle-client-node.ts), so compiled Vigil
 * loads only what these names reach (about 20 MiB), while tsx and the tests
 * resolve it as a plain re-export. A name used elsewhere must be added here,
 * or the compiled build lacks it (test/kube/client-node-bundle.test.ts).
 * Only KubeConfig (cluster, credentials, TLS) and informers are used:
 * requests go as plain JSON through kube-api.ts, so the bundle carries none
 * of the generated API classes and models (1.0 MB instead of 1.7).
 */
export { KubeConfig, makeInformer } from '@kubernetes/client-node';
// Types only (erased from the JavaScript): every client-node type, none of its values.
export type * from '@kubernetes/client-node';
