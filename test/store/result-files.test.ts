import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileSystemResultFiles } from '../../src/store/result-files.js';

describe('result files on disk', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'vigil-result-files-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('writes a file given in pieces as their concatenation, with its size and SHA-256, and no temporary file left', async () => {
    const files = new FileSystemResultFiles(root);
    const pieces = [new TextEncoder().encode('{"site":['), new Uint8Array(200_000).fill(0x20), new TextEncoder().encode(']}\n')];
    const whole = Buffer.concat(pieces);
    const saved = await files.save('scan-1', 'zap.json', pieces);
    expect(saved).to.deep.equal({ size: whole.byteLength, sha256: createHash('sha256').update(whole).digest('hex') });
    expect(Buffer.from((await files.read('scan-1', 'zap.json'))!).equals(whole)).to.equal(true);
    expect(readdirSync(join(root, 'scan-1'))).to.deep.equal(['zap.json']);
  });

  it('writes a file given whole', async () => {
    const files = new FileSystemResultFiles(root);
    const bytes = new TextEncoder().encode('<nmaprun/>');
    expect((await files.save('scan-2', 'nmap.xml', bytes)).size).to.equal(bytes.byteLength);
    expect(Buffer.from((await files.read('scan-2', 'nmap.xml'))!).equals(Buffer.from(bytes))).to.equal(true);
  });
});
