// Lint for Vigil: the recommended rules of ESLint and typescript-eslint, and
// DESIGN.md's rings as import boundaries (`npm run lint`, part of `make test`).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * DESIGN.md's rings: for each folder of src/, the other src/ folders it must
 * not import, or (`only`) the only ones it may, and the packages it must not
 * use. Inner first: domain, then parsers, then the application ring; the API
 * schemas, the HTTP edge and the store are adapters at the edge.
 */
const RINGS = [
  {
    folder: 'domain',
    why: 'src/domain is the inner ring: pure, it imports nothing outside src/domain',
    only: [],
    packages: { only: ['zod', 'node:crypto', 'node:url', 'node:buffer', 'node:util'] },
  },
  {
    folder: 'parsers',
    why: 'src/parsers are pure: they import only src/domain',
    only: ['domain'],
    packages: { only: ['zod', 'saxes', 'node:crypto', 'node:url', 'node:buffer', 'node:util'] },
  },
  {
    folder: 'app',
    why: 'src/app (the middle ring) depends on the inner ring (domain, parsers) and its own ports, never on adapters (api, http, store, runtime, reports, ...)',
    only: ['domain', 'parsers'],
    packages: { forbidden: ['express', 'better-sqlite3', '@kubernetes/client-node', 'nodemailer', 'undici', 'pino', 'prom-client', 'openapi-backend'] },
  },
  {
    folder: 'api',
    why: 'the API schemas describe the wire: they use the domain and the app, never the store, the runtime or the wiring',
    forbidden: ['store', 'runtime', 'http', 'cli', 'main'],
  },
  {
    folder: 'http',
    why: 'the HTTP edge calls services, never the store; only the composition root wires',
    forbidden: ['store', 'cli', 'main'],
  },
  {
    folder: 'store',
    why: 'the store is an adapter of the app ports; the domain owns its types, wire schemas check against them',
    forbidden: ['api', 'http', 'cli', 'main'],
  },
];

/** Deepest folder nesting inside one ring folder that the boundary blocks cover. */
const MAX_DEPTH = 4;

const alternatives = (names) => names.map((name) => name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|');

/**
 * A relative import leaves a ring folder when it climbs more levels than the
 * file sits below the folder; what follows the climb names the src/ folder it
 * lands in. One block per depth, so the count of `../` is exact.
 */
function leavingPattern(ring, depth) {
  const climb = `^(\\.\\./){${depth + 1}}`;
  if (ring.only) {
    const allowed = ring.only.length === 0 ? '' : `(?!(${alternatives(ring.only)})/)`;
    return { regex: `${climb}${allowed}`, message: `${ring.why}.` };
  }
  return { regex: `${climb}(${alternatives(ring.forbidden)})(/|$)`, message: `${ring.why}.` };
}

function packagePattern(ring) {
  if (!ring.packages) return [];
  const names = ring.packages.only ?? ring.packages.forbidden;
  const regex = ring.packages.only ? `^(?!\\.|(${alternatives(names)})$)` : `^(${alternatives(names)})(/|$)`;
  return [{ regex, message: `${ring.why}: not this package.` }];
}

function ringBlocks(ring) {
  return Array.from({ length: MAX_DEPTH + 1 }, (_, depth) => ({
    name: `vigil/rings/${ring.folder}/depth-${depth}`,
    files: [`src/${ring.folder}/${'*/'.repeat(depth)}*.ts`],
    rules: { 'no-restricted-imports': ['error', { patterns: [leavingPattern(ring, depth), ...packagePattern(ring)] }] },
  }));
}

export default tseslint.config(
  { ignores: ['dist/**', 'data/**', 'node_modules/**', 'test/fixtures/**', 'charts/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    name: 'vigil/base',
    files: ['**/*.ts', '**/*.js', '**/*.cjs'],
    languageOptions: { ecmaVersion: 2023, sourceType: 'module', globals: { console: 'readonly', process: 'readonly', URL: 'readonly' } },
    rules: {
      // Prettier (printWidth 160, .prettierrc.json) keeps code within it; comments and long strings are not reflowed by it, so the rule watches those.
      'max-len': ['error', { code: 160, ignoreUrls: true, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // Off: rejecting control characters (NUL, C0) in targets, ZAP plans and headers is what these regular expressions are for.
      'no-control-regex': 'off',
    },
  },
  {
    name: 'vigil/tests-and-benchmarks',
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      // Off: chai's property assertions (`expect(x).to.be.true`) are expressions by design.
      '@typescript-eslint/no-unused-expressions': 'off',
      // Off: tests walk untyped documents (rendered charts, parsed YAML, JSON bodies) whose shape is what they assert.
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    name: 'vigil/commonjs',
    files: ['**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', module: 'writable', __dirname: 'readonly', Buffer: 'readonly', setTimeout: 'readonly' },
    },
    // Off: the stand-in scanners and the mocha reporter are CommonJS scripts node runs as they are.
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  ...RINGS.flatMap(ringBlocks),
);
