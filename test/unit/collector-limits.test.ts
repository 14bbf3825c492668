/**
 * The collector parses a scanner's own output up to the result-file limit it
 * is given (VIGIL_RESULT_FILE_MAX_MB), not the JSON parsers' 25 MiB default
 * for uploaded results: a real ZAP report padded past 25 MiB is collected
 * with the limit, refused without it, and refused past a smaller limit.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { collectFindings } from '../../src/app/collector.js';
import { MalformedResultError } from '../../src/domain/errors.js';
import type { Scan } from '../../src/domain/scans/scan.js';

const MiB = 1024 * 1024;
const report = readFileSync(new URL('../fixtures/zap/securecodebox-zap-example.com.json', import.meta.url));
/** The same report with 26 MiB of whitespace before its closing brace: valid JSON, the same findings. */
const padded = Buffer.concat([report.subarray(0, report.lastIndexOf('}')), Buffer.alloc(26 * MiB, 0x20), Buffer.from('}\n')]);

const scan = {
  id: 'scan-1',
  type: 'OWASP_ZAP',
  resolvedTargets: [{ targetId: 'target-1', target: 'https://www.example.com', addresses: ['93.184.216.34'] }],
} as unknown as Scan;
const outputs = (content: Buffer) => [{ file: 'zap.json', contentType: 'application/json', content }];

describe('the collector and the result-file limit', () => {
  it('collects a ZAP report over 25 MiB when the limit allows it, with the findings of the unpadded report', async () => {
    const plain = await collectFindings(scan, outputs(report), 256 * MiB);
    const large = await collectFindings(scan, outputs(padded), 256 * MiB);
    expect(padded.byteLength).to.be.greaterThan(25 * MiB);
    expect(plain.byTarget.get('target-1')!.length).to.be.greaterThan(0);
    expect(large.byTarget.get('target-1')).to.deep.equal(plain.byTarget.get('target-1'));
  });

  it('refuses it at the 25 MiB upload default when no limit is given, and past a smaller limit, naming the file and the limit', async () => {
    for (const [limit, words] of [[undefined, '25 MiB'], [20 * MiB, '20 MiB']] as const) {
      const error = await collectFindings(scan, outputs(padded), limit).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error).to.be.instanceOf(MalformedResultError);
      expect((error as Error).message).to.match(/^zap\.json: /).and.to.include(words);
    }
  });
});
