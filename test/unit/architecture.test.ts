/**
 * DESIGN.md's rings, checked. Who may import whom is eslint's
 * no-restricted-imports, one block per ring folder and depth in
 * eslint.config.js (`npm run lint`, part of `make test`): these tests prove
 * those rules catch each kind of violation and cover every source file, and
 * check what an import rule cannot see: who reads process.env and who
 * constructs store adapters.
 */
import { expect } from 'chai';
import { ESLint } from 'eslint';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SRC = join(ROOT, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** The boundary messages eslint gives a file at `path` (relative to the repository) holding one import. */
async function boundaryErrors(eslint: ESLint, path: string, specifier: string): Promise<string[]> {
  const [result] = await eslint.lintText(`import { x } from '${specifier}';\nexport { x };\n`, { filePath: join(ROOT, path) });
  return result!.messages.filter((message) => message.ruleId === 'no-restricted-imports').map((message) => message.message);
}

async function hasBoundaryRule(eslint: ESLint, file: string): Promise<boolean> {
  const config = (await eslint.calculateConfigForFile(file)) as { rules?: Record<string, unknown> } | undefined;
  return config?.rules?.['no-restricted-imports'] !== undefined;
}

const CASES: Array<{ file: string; specifier: string; refused: boolean }> = [
  { file: 'src/domain/fake.ts', specifier: '../store/database.js', refused: true },
  { file: 'src/domain/targets/fake.ts', specifier: '../../app/ports.js', refused: true },
  { file: 'src/domain/targets/fake.ts', specifier: '../scans/scan.js', refused: false },
  { file: 'src/domain/fake.ts', specifier: 'node:fs', refused: true },
  { file: 'src/domain/fake.ts', specifier: 'zod', refused: false },
  { file: 'src/parsers/xml/fake.ts', specifier: '../../store/database.js', refused: true },
  { file: 'src/parsers/xml/fake.ts', specifier: '../../domain/risks/risk.js', refused: false },
  { file: 'src/app/fake.ts', specifier: '../api/schemas/targets.js', refused: true },
  { file: 'src/app/controller/fake.ts', specifier: '../../api/schemas/scans.js', refused: true },
  { file: 'src/app/controller/fake.ts', specifier: '../../http/app.js', refused: true },
  { file: 'src/app/fake.ts', specifier: '../store/database.js', refused: true },
  { file: 'src/app/fake.ts', specifier: '../runtime/embedded/runner.js', refused: true },
  { file: 'src/app/fake.ts', specifier: 'better-sqlite3', refused: true },
  { file: 'src/app/controller/fake.ts', specifier: '../present/scan.js', refused: false },
  { file: 'src/app/controller/fake.ts', specifier: '../../domain/scans/scan.js', refused: false },
  { file: 'src/api/schemas/fake.ts', specifier: '../../store/database.js', refused: true },
  { file: 'src/api/schemas/fake.ts', specifier: '../../app/present/scan.js', refused: false },
  { file: 'src/http/dashboard/views/fake.ts', specifier: '../../../store/database.js', refused: true },
  { file: 'src/http/handlers/fake.ts', specifier: '../../main/composition-root.js', refused: true },
  { file: 'src/http/handlers/fake.ts', specifier: '../../app/present/scan.js', refused: false },
  { file: 'src/store/fake.ts', specifier: '../api/schemas/targets.js', refused: true },
];

describe('architecture: who may import whom', () => {
  const eslint = new ESLint({ cwd: ROOT });

  for (const { file, specifier, refused } of CASES) {
    it(`eslint ${refused ? 'refuses' : 'allows'} ${specifier} in ${file}`, async () => {
      const errors = await boundaryErrors(eslint, file, specifier);
      expect(errors.length > 0, errors.join('; ')).to.equal(refused);
    });
  }

  it('every file of a ring folder falls under its boundary rule (the blocks go one folder depth at a time)', async () => {
    const uncovered: string[] = [];
    for (const folder of readdirSync(SRC).filter((name) => statSync(join(SRC, name)).isDirectory())) {
      if (!(await hasBoundaryRule(eslint, join(SRC, folder, 'fake.ts')))) continue;
      for (const file of sourceFiles(join(SRC, folder))) {
        if (!(await hasBoundaryRule(eslint, file))) uncovered.push(relative(ROOT, file));
      }
    }
    expect(uncovered).to.deep.equal([]);
  });

  it('only src/config/settings.ts reads process.env', () => {
    const readers = sourceFiles(SRC)
      .filter((file) => /process\.env/.test(readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '')))
      .map((file) => relative(SRC, file));
    expect(readers).to.deep.equal(['config/settings.ts']);
  });

  it("only the composition roots (the service's and its report worker thread's) construct store adapters", () => {
    const constructors = sourceFiles(SRC)
      .filter((file) => !file.includes('/store/'))
      .filter((file) => /new Sqlite\w+Repository|open(ReadOnly)?Database\(/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(SRC, file));
    expect(constructors.sort()).to.deep.equal(['main/composition-root.ts', 'main/report-worker.ts']);
  });
});
