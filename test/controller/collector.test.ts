/**
 * The result collector (src/app/collector.ts) stages a finished scan's
 * findings in the store under their targets as the parser hands them over,
 * instead of holding them all until they are recorded; on a real SQLite
 * store's staging (RecordingStaging).
 */
import { expect } from 'chai';
import { collectFindings } from '../../src/app/collector.js';
import type { FindingSink } from '../../src/domain/risks/finding.js';
import { MalformedResultError } from '../../src/domain/errors.js';
import type { ResolvedTarget, Scan } from '../../src/domain/scans/scan.js';
import { openDatabase, type Database } from '../../src/store/database.js';
import { SqliteRecordingStaging } from '../../src/store/recording-staging.js';
import { nmapReport } from '../support/nmap-report.js';
import { tempDir } from '../support/temp-dir.js';

/** nmapReport's address of host n (45.0.x.y). */
const hostAddress = (n: number) => `45.0.${(n >> 8) & 255}.${n & 255}`;

function scanOf(type: Scan['type'], resolvedTargets: ResolvedTarget[]): Scan {
  return { id: `scan-${type}`, type, resolvedTargets } as unknown as Scan;
}

const output = (file: string, text: string) => ({ file, contentType: 'application/xml', content: Buffer.from(text) });

describe('the collector stages findings under their targets as they are parsed', () => {
  let dir: ReturnType<typeof tempDir>;
  let db: Database;
  let staging: SqliteRecordingStaging;
  /** The size of every batch handed to the staging, by key (target id). */
  let batches: Array<[key: string | undefined, size: number]>;

  const staged = () => (db.prepare('SELECT COUNT(*) AS n FROM temp.staged_findings').get() as { n: number }).n;

  beforeEach(() => {
    dir = tempDir();
    db = openDatabase(dir.path);
    staging = new SqliteRecordingStaging(db);
    batches = [];
    const sinkOf = staging.findingSink.bind(staging);
    staging.findingSink = (scanId: string, key?: string): FindingSink => {
      const sink = sinkOf(scanId, key);
      return { add: (findings) => (batches.push([key, findings.length]), sink.add(findings)) };
    };
  });
  afterEach(() => {
    db.close();
    dir.remove();
  });

  it("hands an nmap output's findings over in the parser's batches while it parses, each under the target whose address it reports", async () => {
    const targets = [1, 2, 3, 4].map((n) => ({ targetId: `t${n}`, target: hostAddress(n), addresses: [hostAddress(n)] }));
    const scan = scanOf('NMAP', targets);
    const collected = await collectFindings(scan, [output('nmap.xml', nmapReport(4, 300))], staging);
    for (const target of targets) {
      expect(collected.byTarget.countOf(target.targetId)).to.equal(300);
      expect(collected.byTarget.findingsOf(target.targetId).map((finding) => finding.fingerprint)).to.deep.equal(
        Array.from({ length: 300 }, (_, port) => `nmap:tcp/${port + 1}`),
      );
    }
    // 1,200 findings in batches of at most 100 (the parser's), never all at the end.
    expect(batches.reduce((sum, [, size]) => sum + size, 0)).to.equal(1200);
    expect(Math.max(...batches.map(([, size]) => size))).to.be.at.most(100);
    expect(collected.skipped).to.deep.equal([]);
  });

  it('stages a finding under every target that checked its address, drops one that belongs to none, and stages it as a risk of the scan type', async () => {
    const shared = hostAddress(1);
    const targets = [
      { targetId: 'www', target: 'www.example.com', addresses: [shared] },
      { targetId: 'api', target: 'api.example.com', addresses: [shared] },
    ];
    const scan = scanOf('NMAP_UDP', targets);
    // Host 2 was scanned but is no target's: its findings go nowhere.
    const collected = await collectFindings(scan, [output('nmap.xml', nmapReport(2, 3))], staging);
    expect(collected.byTarget.countOf('www')).to.equal(3);
    expect(collected.byTarget.countOf('api')).to.equal(3);
    expect(staged()).to.equal(6);
    const types = db.prepare("SELECT DISTINCT definition ->> '$.scan_type' AS type FROM temp.staged_findings").pluck().all();
    expect(types).to.deep.equal(['NMAP_UDP']);
  });

  it('skips a target the scanner reports it never reached when nothing was staged for it', async () => {
    const report = JSON.stringify({
      server_scan_results: [],
      invalid_server_strings: [{ server_string: 'down.example.com:443', error_message: 'Connection timed out' }],
    });
    const scan = scanOf('SSLYZE', [
      { targetId: 'down', target: 'down.example.com', addresses: ['93.184.216.40'] },
      { targetId: 'other', target: 'other.example.com', addresses: ['93.184.216.41'] },
    ]);
    const collected = await collectFindings(scan, [{ file: 'sslyze.json', contentType: 'application/json', content: Buffer.from(report) }], staging);
    expect(collected.skipped.map((target) => target.targetId)).to.deep.equal(['down']);
    expect(collected.byTarget.countOf('down')).to.equal(0);
  });

  it('leaves nothing staged when an output cannot be read, though findings of the outputs before it were staged', async () => {
    const scan = scanOf('NMAP', [{ targetId: 't1', target: hostAddress(1), addresses: [hostAddress(1)] }]);
    const broken = nmapReport(1, 5).replace('</nmaprun>', '<host>');
    const error = await collectFindings(scan, [output('first.xml', nmapReport(1, 200)), output('second.xml', broken)], staging).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).to.be.instanceOf(MalformedResultError);
    expect((error as Error).message).to.match(/^second\.xml: /);
    expect(batches.length).to.be.greaterThan(0);
    expect(staged()).to.equal(0);
  });
});
