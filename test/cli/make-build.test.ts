/**
 * `make build` is a file make knows about (issue 30): right after a build
 * `make -q build` says nothing is left to do, so `make run` starts in
 * seconds; a changed source makes it due again. Runs after `make test`'s
 * own build; skipped when dist/ was never built by make.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const STAMP = `${ROOT}dist/.build-stamp`;

/** make's answer for the target without running anything: 0 up to date, 1 due. */
function makeQuestion(...args: string[]): number | null {
  return spawnSync('make', ['-q', ...args], { cwd: ROOT, stdio: 'ignore' }).status;
}

describe('make build', () => {
  before(function () {
    if (!existsSync(STAMP)) this.skip();
  });

  it('is up to date right after a build, so make run does not compile again', () => {
    expect(makeQuestion('build')).to.equal(0);
  });

  it('is due again once a source is newer than the last build (asked with -W, nothing touched)', () => {
    const source = 'src/cli/main.ts';
    expect(makeQuestion('-W', source, 'build')).to.equal(1);
  });
});
