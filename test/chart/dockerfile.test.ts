/**
 * The Dockerfile, read as text (no Docker daemon runs here; `make image`
 * builds it where one does): the stages, the non-root user scanner Jobs
 * expect, `vigil` as the entry point, and production dependencies only.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { SCANNER_USER } from '../../src/runtime/kubernetes/job-manifest.js';
import { dockerfileLines, instructions, runtimeEnv } from '../support/dockerfile.js';

const ROOT = new URL('../../', import.meta.url);
const lines = dockerfileLines();

/** The largest size V8's young generation (new space) reaches in a child Node given NODE_OPTIONS, while it allocates 3 million short-lived objects, in MiB. */
function youngGenerationMib(nodeOptions: string): number {
  const program = `const v8 = require('node:v8'); const ring = new Array(200000); let max = 0;
for (let i = 0; i < 3000000; i++) { ring[i % 200000] = { i, text: 'x' + i }; if (i % 10000 === 0) max = Math.max(max, v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_size); }
process.stdout.write(String(max / 2 ** 20));`;
  return Number(execFileSync(process.execPath, ['-e', program], { env: { ...process.env, NODE_OPTIONS: nodeOptions }, encoding: 'utf8' }));
}

describe('Dockerfile', () => {
  it('builds in stages from a Node 20 Debian slim image', () => {
    expect(instructions('ARG')).to.include('NODE_IMAGE=node:20-bookworm-slim');
    expect(instructions('FROM')).to.deep.equal(['${NODE_IMAGE} AS toolchain', 'toolchain AS deps', 'toolchain AS build', '${NODE_IMAGE} AS runtime']);
  });

  it('runs as uid 65532, the uid of every scanner Job container, in the final stage', () => {
    const runtime = lines.slice(lines.findIndex((line) => line.endsWith('AS runtime')));
    expect(runtime.filter((line) => line.startsWith('USER '))).to.deep.equal([`USER ${SCANNER_USER}:${SCANNER_USER}`]);
  });

  it('starts `vigil` (on PATH) with `serve` as the default command', () => {
    expect(instructions('ENTRYPOINT')).to.deep.equal(['["vigil"]']);
    expect(instructions('CMD')).to.deep.equal(['["serve"]']);
    expect(lines.some((line) => line.includes('ln -s /app/dist/src/cli/main.js /usr/local/bin/vigil'))).to.equal(true);
  });

  it("caps V8's young generation with NODE_OPTIONS in the final stage, and Node takes the flag (the controller's peak memory, bench/operator.ts)", () => {
    const nodeOptions = runtimeEnv().NODE_OPTIONS;
    expect(nodeOptions).to.equal('--max-semi-space-size=4');
    // The same allocations grow the young generation past the cap without the flag: the measure tells them apart.
    expect(youngGenerationMib('')).to.be.greaterThan(8);
    expect(youngGenerationMib(nodeOptions!)).to.be.at.most(8);
  });

  it('ships production dependencies only, built where the compiler toolchain is', () => {
    expect(instructions('RUN').filter((run) => run.startsWith('npm ci'))).to.deep.equal([
      'npm ci --omit=dev --no-audit --no-fund',
      'npm ci --no-audit --no-fund',
    ]);
    expect(instructions('COPY')).to.include('--from=deps /app/node_modules ./node_modules');
    expect(instructions('COPY')).to.include('--from=build /app/dist ./dist');
  });

  it('keeps the build context to what the image needs', () => {
    const ignore = readFileSync(new URL('.dockerignore', ROOT), 'utf8')
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('#'));
    expect(ignore).to.deep.equal([
      '*',
      '!package.json',
      '!package-lock.json',
      '!tsconfig.json',
      '!tsconfig.build.json',
      '!src/',
      '!scripts/bundle-client-node.ts',
    ]);
  });

  it('ships every package the compiled code imports: src uses production dependencies only (npm ci --omit=dev)', () => {
    const pkg = JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')) as { dependencies: Record<string, string> };
    const sources = (readdirSync(new URL('src', ROOT), { recursive: true }) as string[]).filter((file) => file.endsWith('.ts'));
    const imported = new Set<string>();
    for (const file of sources) {
      const text = readFileSync(new URL(`src/${file}`, ROOT), 'utf8');
      // Type-only imports are erased by the compiler and need nothing at run time.
      for (const match of text.matchAll(/^import (?!type )[^;]*?from '([^'.][^']*)'|import\('([^'.][^']*)'\)/gm)) {
        const specifier = match[1] ?? match[2]!;
        if (!specifier.startsWith('node:')) imported.add(specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!);
      }
    }
    expect(imported.size).to.be.greaterThan(5);
    expect([...imported].filter((name) => !(name in pkg.dependencies))).to.deep.equal([]);
    // The one door to client-node (an `export ... from`, not matched above) is bundled whole by `npm run build`, which only Node's modules remain
    // imported by (test/kube/client-node-bundle.test.ts): a build-time dependency.
    expect(pkg.dependencies).not.to.have.property('@kubernetes/client-node');
  });
});
