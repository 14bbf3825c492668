/**
 * A 256 MiB in-cluster result upload (the default VIGIL_RESULT_FILE_MAX_MB)
 * through the real service in a child process, sent from this process: the
 * service appends it to disk as it arrives and parses and stores it from
 * the file in pieces, so its peak memory stays far below the file's size.
 * Before, it gathered the pieces and joined them (two copies, ~512 MiB),
 * read the staged file back whole, and parsed that.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';

const MiB = 1024 * 1024;
const TOTAL = 256 * MiB;
const report = readFileSync(new URL('../fixtures/zap/securecodebox-zap-example.com.json', import.meta.url));
const head = report.subarray(0, report.lastIndexOf('}'));
const tail = Buffer.from('}\n');
const spaces = Buffer.alloc(MiB, 0x20);

/** The report with whitespace before its closing brace, exactly 256 MiB: valid JSON with the report's findings. */
function* body(): Generator<Buffer> {
  yield head;
  let left = TOTAL - head.byteLength - tail.byteLength;
  while (left > 0) {
    const piece = spaces.subarray(0, Math.min(left, spaces.byteLength));
    left -= piece.byteLength;
    yield piece;
  }
  yield tail;
}

describe('a 256 MiB in-cluster result upload', function () {
  this.timeout(600_000);

  it('is received, parsed and stored with the service peak far below the file size', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./large-upload-child.ts', import.meta.url))], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    try {
      const lines = createInterface({ input: child.stdout });
      const next = async () => JSON.parse(((await once(lines, 'line')) as [string])[0]);
      const { url, token, startMb, startPeakMb } = (await next()) as { url: string; token: string; startMb: number; startPeakMb: number };

      const hash = createHash('sha256');
      for (const piece of body()) hash.update(piece);
      const req = request(url, { method: 'PUT', headers: { Authorization: `Bearer ${token}`, 'Content-Length': String(TOTAL) } });
      const answered = once(req, 'response') as Promise<[import('node:http').IncomingMessage]>;
      await pipeline(Readable.from(body()), req);
      const [response] = await answered;
      let text = '';
      for await (const chunk of response) text += chunk;
      expect(response.statusCode, text).to.equal(200);
      expect(JSON.parse(text).data).to.include({ size: TOTAL, sha256: hash.digest('hex') });

      child.stdin.write('collect\n');
      const result = (await next()) as { findings: number; stored: { size: number; sha256: string }; uploadMb: number; collectMb: number };
      console.log(
        `      service RSS ${startMb.toFixed(0)} MiB once started (peak ${startPeakMb.toFixed(0)} MiB); peak ${result.uploadMb.toFixed(0)} MiB after the upload, ${result.collectMb.toFixed(0)} MiB after parsing and storing`,
      );
      expect(result.findings).to.be.greaterThan(0);
      expect(result.stored.size).to.equal(TOTAL);
      // Generous: half the file above what the started service held. Holding the
      // file once would add 256 MiB on its own (the old code held it twice while
      // receiving, then read it back whole to parse it).
      expect(result.uploadMb - startMb, 'peak growth during the upload').to.be.lessThan(128);
      expect(result.collectMb - startMb, 'peak growth after parsing and storing').to.be.lessThan(128);
    } finally {
      child.kill();
    }
  });
});
