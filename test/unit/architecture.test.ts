/**
 * DESIGN.md's rings, checked: the inner ring does no I/O and imports nothing
 * outside it; the middle ring depends on ports, not adapters; the HTTP edge
 * calls services, never the store; only the composition root knows adapters.
 */
import { expect } from 'chai';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+'([^']+)'/gms)].map((match) => match[1]!);
}

/** The src/ folder an import lands in ('domain', 'store', ...), or the package name. */
function destination(file: string, specifier: string): string {
  if (!specifier.startsWith('.')) return specifier;
  return relative(SRC, resolve(dirname(file), specifier)).split('/')[0]!;
}

const INNER = ['domain', 'api', 'parsers'];
const RULES: Array<{ ring: string; folders: string[]; forbidden: (target: string) => boolean }> = [
  {
    ring: 'inner ring (domain, api schemas, parsers)',
    folders: INNER,
    forbidden: (target) =>
      !INNER.includes(target) &&
      !['zod', 'saxes', '@asteasolutions/zod-to-openapi', 'node:buffer', 'node:crypto', 'node:url', 'node:util'].includes(target),
  },
  {
    // The domain owns its types: wire schemas check against them, never the other way round.
    ring: 'domain and store (no wire schemas)',
    folders: ['domain', 'store'],
    forbidden: (target) => target === 'api',
  },
  {
    ring: 'middle ring (app)',
    folders: ['app'],
    forbidden: (target) => ['store', 'http', 'cli', 'main', 'config', 'observability'].includes(target),
  },
  {
    ring: 'HTTP edge',
    folders: ['http'],
    forbidden: (target) => ['store', 'cli', 'main'].includes(target),
  },
];

describe('architecture: who may import whom', () => {
  for (const rule of RULES) {
    it(`the ${rule.ring} imports nothing it must not`, () => {
      const violations = rule.folders
        .flatMap((folder) => sourceFiles(join(SRC, folder)))
        .flatMap((file) => importsOf(file).map((specifier) => ({ file: relative(SRC, file), specifier, target: destination(file, specifier) })))
        .filter(({ target }) => rule.forbidden(target))
        .map(({ file, specifier }) => `${file} imports ${specifier}`);
      expect(violations).to.deep.equal([]);
    });
  }

  it('only src/config/settings.ts reads process.env', () => {
    const readers = sourceFiles(SRC)
      .filter((file) => /process\.env/.test(readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '')))
      .map((file) => relative(SRC, file));
    expect(readers).to.deep.equal(['config/settings.ts']);
  });

  it('only the composition roots (the service\'s and its report worker thread\'s) construct store adapters', () => {
    const constructors = sourceFiles(SRC)
      .filter((file) => !file.includes('/store/'))
      .filter((file) => /new Sqlite\w+Repository|open(ReadOnly)?Database\(/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(SRC, file));
    expect(constructors.sort()).to.deep.equal(['main/composition-root.ts', 'main/report-worker.ts']);
  });

  it('the rule itself catches a violation', () => {
    const fake = join(SRC, 'domain', 'fake.ts');
    expect(destination(fake, '../store/database.js')).to.equal('store');
    expect(RULES[0]!.forbidden(destination(fake, '../store/database.js'))).to.equal(true);
    expect(RULES[0]!.forbidden('node:fs')).to.equal(true);
    expect(RULES[0]!.forbidden(destination(fake, './targets/ipv4.js'))).to.equal(false);
  });
});
