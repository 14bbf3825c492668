import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../support/temp-dir.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('vigil prepare-inputs', function () {
  this.timeout(30_000);

  it('copies the visible files of a Secret volume into the output directory, readable by its owner only', () => {
    const dir = tempDir();
    try {
      // The layout kubelet gives a Secret volume: ..data -> a timestamped folder, each key a symlink through ..data.
      const from = join(dir.path, 'input');
      const data = join(from, '..2026_11_21');
      mkdirSync(data, { recursive: true });
      writeFileSync(join(data, 'plan.yaml'), 'env: {}\n');
      writeFileSync(join(data, 'login.zst'), '{"zest": true}');
      symlinkSync('..2026_11_21', join(from, '..data'));
      symlinkSync('..data/plan.yaml', join(from, 'plan.yaml'));
      symlinkSync('..data/login.zst', join(from, 'login.zst'));
      const to = join(dir.path, 'output');
      mkdirSync(to);
      const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'prepare-inputs', '--from', from, '--to', to], {
        cwd: ROOT,
        encoding: 'utf8',
      });
      expect(result.status, result.stderr).to.equal(0);
      expect(readdirSync(to).sort()).to.deep.equal(['login.zst', 'plan.yaml']);
      expect(readFileSync(join(to, 'plan.yaml'), 'utf8')).to.equal('env: {}\n');
      expect(statSync(join(to, 'login.zst')).mode & 0o777).to.equal(0o600);
    } finally {
      dir.remove();
    }
  });

  it('exits 2 when a directory is missing from the command line', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'prepare-inputs', '--from', '/tmp'], { cwd: ROOT, encoding: 'utf8' });
    expect(result.status).to.equal(2);
    expect(result.stderr).to.match(/--from and --to are required/);
  });
});
