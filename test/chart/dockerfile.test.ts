/**
 * The Dockerfile, read as text (no Docker daemon runs here; `make image`
 * builds it where one does): the stages, the non-root user scanner Jobs
 * expect, `vigil` as the entry point, and production dependencies only.
 */
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { SCANNER_USER } from '../../src/runtime/kubernetes/job-manifest.js';

const ROOT = new URL('../../', import.meta.url);
const lines = readFileSync(new URL('Dockerfile', ROOT), 'utf8')
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line !== '' && !line.startsWith('#'));
const instructions = (name: string) => lines.filter((line) => line.toUpperCase().startsWith(`${name} `)).map((line) => line.slice(name.length + 1).trim());

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

  it('ships production dependencies only, built where the compiler toolchain is', () => {
    expect(instructions('RUN').filter((run) => run.startsWith('npm ci'))).to.deep.equal(['npm ci --omit=dev --no-audit --no-fund', 'npm ci --no-audit --no-fund']);
    expect(instructions('COPY')).to.include('--from=deps /app/node_modules ./node_modules');
    expect(instructions('COPY')).to.include('--from=build /app/dist ./dist');
  });

  it('keeps the build context to what the image needs', () => {
    const ignore = readFileSync(new URL('.dockerignore', ROOT), 'utf8').split('\n').filter((line) => line !== '' && !line.startsWith('#'));
    expect(ignore).to.deep.equal(['*', '!package.json', '!package-lock.json', '!tsconfig.json', '!tsconfig.build.json', '!src/', '!scripts/bundle-client-node.ts']);
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
  });
});
