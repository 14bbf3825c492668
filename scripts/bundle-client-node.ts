/**
 * The second step of `npm run build` (after tsc): bundles
 * src/runtime/kubernetes/client-node.ts, Vigil's one door to
 * @kubernetes/client-node, with esbuild over tsc's output of it. Only what
 * the names it re-exports reach is kept (tree-shaken, client-node and its
 * dependencies inlined), so compiled Vigil loads about 1.7 MB for the
 * Kubernetes client instead of client-node's index, which loads every model
 * and API of the Kubernetes API (thousands of ES modules, about 75 MiB of a
 * process's memory). Licence comments are kept at the end of the file.
 *
 *   npx tsx scripts/bundle-client-node.ts [OUTFILE]   (default dist/src/runtime/kubernetes/client-node.js)
 */
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const CLIENT_NODE_ENTRY = `${ROOT}src/runtime/kubernetes/client-node.ts`;
export const CLIENT_NODE_OUTFILE = `${ROOT}dist/src/runtime/kubernetes/client-node.js`;

export async function bundleClientNode(outfile = CLIENT_NODE_OUTFILE): Promise<void> {
  await build({
    entryPoints: [CLIENT_NODE_ENTRY],
    outfile,
    allowOverwrite: true,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    minify: true,
    keepNames: true,
    legalComments: 'eof',
    logLevel: 'warning',
    // client-node's CommonJS dependencies (ws, form-data, …) require Node's modules; an ES module has no `require` of its own.
    banner: { js: "import { createRequire as vigilCreateRequire } from 'node:module'; const require = vigilCreateRequire(import.meta.url);" },
  });
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) await bundleClientNode(process.argv[2]);
