/**
 * Issue 17, bounded memory for in-cluster results: the collector stages a
 * finished scan's findings in the store as its output is parsed
 * (RecordingStaging), so a large nmap output's findings are never all in
 * memory, from the parse to the risk history. The collection runs in a
 * child process (large-collect-child.ts) on a real store, in a small V8 heap.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../support/temp-dir.js';

const CHILD = fileURLToPath(new URL('./large-collect-child.ts', import.meta.url));
/** 620 hosts of 67 distinct findings: 41,540 findings, a 25 MB output. */
const HOSTS = 620;
const FINDINGS = 41_540;

describe('reliability: a large scan output is collected and recorded without holding its findings', function () {
  this.timeout(300_000);

  it('collects and records the 41,540 findings of a 25 MB nmap output in a 128 MiB V8 heap, and leaves nothing staged (holding them took over 110 MB more)', () => {
    const dir = tempDir();
    try {
      const run = spawnSync(process.execPath, ['--max-old-space-size=128', '--import', 'tsx', CHILD, dir.path, String(HOSTS)], {
        encoding: 'utf8',
        maxBuffer: 1024 * 1024,
      });
      expect(run.status, run.stderr.slice(-2000)).to.equal(0);
      const result = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { staged: number; newOpen: number; left: number };
      expect(result).to.deep.equal({ staged: FINDINGS, newOpen: FINDINGS, left: 0 });
    } finally {
      dir.remove();
    }
  });
});
