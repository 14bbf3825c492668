import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
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

  it('writes a small file given whole (up to 1 MiB, written synchronously and synced) and a larger one alike: the same bytes, size and SHA-256, no temporary file left', async () => {
    const files = new FileSystemResultFiles(root);
    for (const [scanId, bytes] of [
      ['small', new Uint8Array(1024 * 1024).fill(0x61)],
      ['large', new Uint8Array(1024 * 1024 + 1).fill(0x62)],
    ] as const) {
      const saved = await files.save(scanId, 'out.xml', bytes);
      expect(saved).to.deep.equal({ size: bytes.byteLength, sha256: createHash('sha256').update(bytes).digest('hex') });
      expect(Buffer.from((await files.read(scanId, 'out.xml'))!).equals(Buffer.from(bytes))).to.equal(true);
      expect(readdirSync(join(root, scanId))).to.deep.equal(['out.xml']);
    }
    // Saved again, the file is replaced whole.
    await files.save('small', 'out.xml', new TextEncoder().encode('<nmaprun/>'));
    expect(Buffer.from((await files.read('small', 'out.xml'))!).toString()).to.equal('<nmaprun/>');
  });

  it('saves a stream of pieces as they come, and a stream that fails leaves the files saved before and no temporary file', async () => {
    const files = new FileSystemResultFiles(root);
    async function* pieces(fail: boolean) {
      yield new Uint8Array(70_000).fill(0x61);
      yield new Uint8Array(5).fill(0x62);
      if (fail) throw new Error('the reader failed');
    }
    const whole = Buffer.concat([Buffer.alloc(70_000, 0x61), Buffer.alloc(5, 0x62)]);
    expect(await files.save('scan-6', 'zap.json', pieces(false))).to.deep.equal({
      size: whole.byteLength,
      sha256: createHash('sha256').update(whole).digest('hex'),
    });
    expect(await files.sizeOf('scan-6', 'zap.json')).to.equal(whole.byteLength);
    let error: unknown;
    await files.save('scan-6', 'other.json', pieces(true)).catch((thrown: unknown) => (error = thrown));
    expect((error as Error).message).to.equal('the reader failed');
    expect(readdirSync(join(root, 'scan-6'))).to.deep.equal(['zap.json']);
    expect(await files.sizeOf('scan-6', 'other.json')).to.equal(undefined);
    await files.save('scan-7', 'zap.json', pieces(true)).catch(() => undefined);
    expect(existsSync(join(root, 'scan-7')), 'a folder holding nothing else goes').to.equal(false);
  });

  describe('a file written as it arrives (an upload)', () => {
    const piece = (size: number, byte: number) => new Uint8Array(size).fill(byte);

    it('is on disk under a temporary name as each piece arrives, reads back what was written, and is renamed into place with its size and SHA-256', async () => {
      const files = new FileSystemResultFiles(root);
      const incoming = files.incoming('scan-3');
      expect(existsSync(join(root, 'scan-3')), 'nothing before the first piece').to.equal(false);
      const pieces = [piece(100_000, 0x61), piece(300_000, 0x62), piece(7, 0x63)];
      let written = 0;
      for (const part of pieces) {
        incoming.write(part);
        written += part.byteLength;
        expect(statSync(join(root, 'scan-3', 'upload.partial')).size).to.equal(written);
      }
      const whole = Buffer.concat(pieces);
      expect(Buffer.concat([...incoming.written()]).equals(whole)).to.equal(true);
      expect(await incoming.commit('zap.json')).to.deep.equal({ size: whole.byteLength, sha256: createHash('sha256').update(whole).digest('hex') });
      expect(readdirSync(join(root, 'scan-3'))).to.deep.equal(['zap.json']);
      expect(Buffer.from((await files.read('scan-3', 'zap.json'))!).equals(whole)).to.equal(true);
      await incoming.discard();
      expect(readdirSync(join(root, 'scan-3')), 'a committed file is not discarded').to.deep.equal(['zap.json']);
    });

    it('leaves nothing behind when discarded', async () => {
      const files = new FileSystemResultFiles(root);
      const incoming = files.incoming('scan-4');
      incoming.write(piece(1000, 0x61));
      await incoming.discard();
      expect(existsSync(join(root, 'scan-4'))).to.equal(false);
      expect(() => incoming.write(piece(1, 0x61))).to.throw(/after commit or discard/);
    });

    it('leaves only a temporary file when the process stops mid-upload, which the start-up sweep removes with its folder', async () => {
      const files = new FileSystemResultFiles(root);
      files.incoming('scan-5').write(piece(1000, 0x61));
      expect(await files.sweep(() => true)).to.deep.equal(['scan-5/upload.partial']);
      expect(existsSync(join(root, 'scan-5'))).to.equal(false);
    });

    it("an in-cluster upload cut short by a crash: the sweep removes its temporary file and keeps the scan's files uploaded before", async () => {
      const files = new FileSystemResultFiles(root);
      await files.save('scan-8', 'nmap.xml', piece(10, 0x61));
      files.incoming('scan-8', 'zap.json.0123456789ab').write(piece(1000, 0x61));
      expect(readdirSync(join(root, 'scan-8')).sort()).to.deep.equal(['nmap.xml', 'zap.json.0123456789ab.partial']);
      expect(await files.sweep(() => true)).to.deep.equal(['scan-8/zap.json.0123456789ab.partial']);
      expect(readdirSync(join(root, 'scan-8'))).to.deep.equal(['nmap.xml']);
    });
  });
});
