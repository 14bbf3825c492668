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
import { openDatabase, type Database } from '../../src/store/database.js';
import { SqliteRecordingStaging } from '../../src/store/recording-staging.js';
import { tempDir } from '../support/temp-dir.js';

const MiB = 1024 * 1024;
const report = readFileSync(new URL('../fixtures/zap/securecodebox-zap-example.com.json', import.meta.url));
/** The same report with 26 MiB of whitespace before its closing brace: valid JSON, the same findings. */
const padded = Buffer.concat([report.subarray(0, report.lastIndexOf('}')), Buffer.alloc(26 * MiB, 0x20), Buffer.from('}\n')]);

const scanWithId = (id: string) =>
  ({
    id,
    type: 'OWASP_ZAP',
    resolvedTargets: [{ targetId: 'target-1', target: 'https://www.example.com', addresses: ['93.184.216.34'] }],
  }) as unknown as Scan;
const outputs = (content: Buffer) => [{ file: 'zap.json', contentType: 'application/json', content }];

describe('the collector and the result-file limit', () => {
  let dir: ReturnType<typeof tempDir>;
  let db: Database;
  let staging: SqliteRecordingStaging;

  beforeEach(() => {
    dir = tempDir();
    db = openDatabase(dir.path);
    staging = new SqliteRecordingStaging(db);
  });
  afterEach(() => {
    db.close();
    dir.remove();
  });

  it('collects a ZAP report over 25 MiB when the limit allows it, with the findings of the unpadded report', async () => {
    const plain = await collectFindings(scanWithId('plain'), outputs(report), staging, 256 * MiB);
    const large = await collectFindings(scanWithId('large'), outputs(padded), staging, 256 * MiB);
    expect(padded.byteLength).to.be.greaterThan(25 * MiB);
    const fingerprints = (collected: typeof plain) => collected.byTarget.findingsOf('target-1').map((finding) => finding.fingerprint);
    expect(plain.byTarget.countOf('target-1')).to.be.greaterThan(0);
    expect(fingerprints(large)).to.deep.equal(fingerprints(plain));
  });

  it('refuses it at the 25 MiB upload default when no limit is given, and past a smaller limit, naming the file and the limit', async () => {
    for (const [limit, words] of [
      [undefined, '25 MiB'],
      [20 * MiB, '20 MiB'],
    ] as const) {
      const error = await collectFindings(scanWithId('refused'), outputs(padded), staging, limit).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error).to.be.instanceOf(MalformedResultError);
      expect((error as Error).message)
        .to.match(/^zap\.json: /)
        .and.to.include(words);
    }
  });
});
