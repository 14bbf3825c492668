/**
 * Issue 16, item 1: risks are recorded a few targets per transaction; a
 * recording that is refused at its end (a stop won), throws, or is cut short
 * by a crash is rolled back whole, so the risk history is as it was.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { loadSettings } from '../../src/config/settings.js';
import type { Account } from '../../src/domain/accounts/account.js';
import { newImportScan } from '../../src/domain/imports/import-scan.js';
import type { Finding } from '../../src/domain/risks/finding.js';
import type { Scan } from '../../src/domain/scans/scan.js';
import type { Target } from '../../src/domain/targets/target.js';
import { composeCore } from '../../src/main/composition-root.js';
import { handing, riskHistoryWith } from '../support/risk-history.js';
import type { RiskHistory } from '../../src/app/risk-history.js';
import { presentScan, type ScanJson } from '../../src/app/present/scan.js';
import { tempDir } from '../support/temp-dir.js';

/** More than one transaction's worth (250 targets). */
const TARGETS = 300;

function openPort(target: Target, port: number): Finding {
  return {
    fingerprint: `nmap:tcp/${port}`,
    location: { host: target.target, port, protocol: 'tcp' },
    definition: { scan_type: 'NMAP', title: `Open port ${port}/tcp`, threat_level: 'INFO', description: '', solution: '', cvss: '', additional_info: {} },
  };
}

describe('reliability: risks recorded in chunks are rolled back whole', () => {
  let dir: ReturnType<typeof tempDir>;
  let core: ReturnType<typeof composeCore>;
  let account: Account;
  let targets: Target[];

  function insertScan(): Scan {
    const source = { id: randomUUID(), accountId: account.id, sourceType: 'IMPORTED' as const, name: 'chunks', createdAt: new Date().toISOString() };
    const scan = newImportScan({
      id: randomUUID(),
      accountId: account.id,
      type: 'NMAP',
      targets,
      source,
      skippedHosts: 0,
      resultId: randomUUID(),
      contentType: 'application/xml',
      at: new Date().toISOString(),
    });
    core.scanRepository.insertImported(scan, []);
    return scan;
  }

  function findings(ports: number[]): Map<string, Finding[]> {
    return new Map(targets.map((target) => [target.id, ports.map((port) => openPort(target, port))]));
  }

  function snapshot() {
    return core.db.prepare('SELECT fingerprint, status, first_detected_at, last_detected_at FROM risks ORDER BY seq').all();
  }

  beforeEach(async () => {
    dir = tempDir();
    core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path }));
    account = core.accounts.createAccount({ name: 'chunks' }).account;
    targets = Array.from({ length: TARGETS }, (_, index) => core.targets.recordUploaded(account, `45.9.${index >> 8}.${index & 255}`, {}));
    const first = insertScan();
    const recorded = await core.history.recordScanInChunks(
      first,
      'SCAN',
      findings([22, 80]),
      handing((risks) => risks),
    );
    expect(recorded && recorded.newOpen).to.have.length(2 * TARGETS);
  });
  afterEach(() => {
    core.db.close();
    dir.remove();
  });

  it('rolls back every chunk when the last step refuses (a stop won): risks, coverage and markers as before', async () => {
    const before = snapshot();
    const second = insertScan();
    const result = await core.history.recordScanInChunks(
      second,
      'SCAN',
      findings([80, 443]),
      handing(() => false),
    );
    expect(result).to.equal(false);
    expect(snapshot()).to.deep.equal(before);
    expect(core.riskRepository.coveredBy(second.id)).to.deep.equal([]);
    expect(core.db.prepare('SELECT COUNT(*) AS n FROM pending_recordings').get()).to.deep.equal({ n: 0 });
  });

  it('gives the targets a refused recording rescanned their last scan time back', async () => {
    const lastScans = () => core.db.prepare('SELECT id, last_scanned_at FROM targets ORDER BY seq').all();
    const before = lastScans();
    const second = insertScan();
    let during: unknown[] = [];
    const result = await core.history.recordScanInChunks(
      second,
      'SCAN',
      findings([80]),
      handing(() => {
        during = lastScans();
        return false;
      }),
    );
    expect(result).to.equal(false);
    expect(during).to.not.deep.equal(before);
    expect(lastScans()).to.deep.equal(before);
    expect(core.db.prepare('SELECT COUNT(*) AS n FROM pending_recording_targets').get()).to.deep.equal({ n: 0 });
  });

  it('rolls back every chunk when the last step throws, and passes the error on', async () => {
    const before = snapshot();
    const second = insertScan();
    let failure: unknown;
    await core.history
      .recordScanInChunks(
        second,
        'SCAN',
        findings([443]),
        handing(() => {
          throw new Error('disk full');
        }),
      )
      .catch((error: unknown) => (failure = error));
    expect((failure as Error).message).to.equal('disk full');
    expect(snapshot()).to.deep.equal(before);
    expect(core.riskRepository.coveredBy(second.id)).to.deep.equal([]);
  });

  it('rolls back at start-up a recording a crash cut short after some of its chunks', () => {
    const before = snapshot();
    const second = insertScan();
    // As a crash leaves it: the marker and the first chunk, never the last.
    core.db
      .prepare("INSERT INTO pending_recordings (scan_id, account_id, kind, started_at) VALUES (?, ?, 'SCAN', ?)")
      .run(second.id, account.id, new Date().toISOString());
    core.history.transaction(() => core.history.recordScan({ ...second, resolvedTargets: second.resolvedTargets.slice(0, 100) }, findings([443])));
    expect(snapshot()).to.not.deep.equal(before);
    expect(core.history.rollBackInterrupted()).to.deep.equal([{ scanId: second.id, accountId: account.id, kind: 'SCAN' }]);
    expect(snapshot()).to.deep.equal(before);
    expect(core.riskRepository.coveredBy(second.id)).to.deep.equal([]);
  });

  it("rolls back at start-up a recording a crash cut short while it wrote its scan event's parts: the event and its parts go", () => {
    core.webhookEndpoints.add(account.id, 'https://hooks.example.com/crash');
    const second = insertScan();
    core.db
      .prepare("INSERT INTO pending_recordings (scan_id, account_id, kind, started_at) VALUES (?, ?, 'SCAN', ?)")
      .run(second.id, account.id, new Date().toISOString());
    core.history.transaction(() => {
      const seq = core.staging.holdEvent(second.id, { id: randomUUID(), accountId: account.id, type: 'scan.updated', createdAt: new Date() })!;
      core.staging.addEventPart(seq, '{"id":');
    });
    expect(core.db.prepare('SELECT COUNT(*) FROM event_parts').pluck().get()).to.equal(1);
    core.history.rollBackInterrupted();
    expect(core.db.prepare('SELECT COUNT(*) FROM events').pluck().get()).to.equal(0);
    expect(core.db.prepare('SELECT COUNT(*) FROM event_parts').pluck().get()).to.equal(0);
  });

  it('with a webhook endpoint, stores no event of a refused recording (its chunks held them) and every event of a completed one, in order, written by its chunks', async () => {
    core.webhookEndpoints.add(account.id, 'https://hooks.example.com/chunks');
    const events = () =>
      core.db.prepare("SELECT type, iif(parts = 0, payload ->> '$.status', NULL) AS status FROM events ORDER BY seq").all() as Array<{
        type: string;
        status: string;
      }>;
    const refused = insertScan();
    expect(
      await core.history.recordScanInChunks(
        refused,
        'SCAN',
        findings([80, 443]),
        handing(() => false),
      ),
    ).to.equal(false);
    expect(events()).to.deep.equal([]);
    expect(core.db.prepare('SELECT COUNT(*) AS n FROM temp.staged_events').get()).to.deep.equal({ n: 0 });

    const second = insertScan();
    let heldAtTheEnd = 0;
    const result = await core.history.recordScanInChunks(
      second,
      'SCAN',
      findings([80, 443]),
      handing((risks) => {
        // The last transaction moves none: the chunks wrote them, held back from delivery until this one ends the marker.
        heldAtTheEnd = (core.db.prepare('SELECT COUNT(*) AS n FROM events WHERE held_by = ?').get(second.id) as { n: number }).n;
        return risks;
      }),
    );
    expect(result).to.not.equal(false);
    // The risk events and the scan's own, written before the last transaction (holdScanEvent).
    expect(heldAtTheEnd).to.equal(3 * TARGETS + 1);
    const stored = events();
    expect(stored).to.have.length(3 * TARGETS + 1);
    expect(stored.at(-1)!.type).to.equal('scan.updated');
    // Per chunk as one transaction writes them: new risks, then the existing ones (port 22 closed, port 80 still open).
    expect(stored.slice(0, 3)).to.deep.equal([
      { type: 'risk.created', status: 'OPEN' },
      { type: 'risk.updated', status: 'CLOSED' },
      { type: 'risk.updated', status: 'OPEN' },
    ]);
    expect(core.db.prepare('SELECT COUNT(*) AS n FROM temp.staged_events').get()).to.deep.equal({ n: 0 });
  });

  it("holds the scan's own event in parts written before the last transaction: its data is the Scan as the API presents it, every risk id in it", async () => {
    core.webhookEndpoints.add(account.id, 'https://hooks.example.com/parts');
    const history = riskHistoryWith(core.db, { transactionMs: 15, eventPartChars: 1000 });
    const second = insertScan();
    const partsOfScanEvent = () =>
      core.db.prepare("SELECT COUNT(*) FROM event_parts p JOIN events e ON e.seq = p.event_seq WHERE e.type = 'scan.updated'").pluck().get() as number;
    let partsAtTheEnd = 0;
    const result = await history.recordScanInChunks(
      second,
      'SCAN',
      findings([80, 443]),
      handing((risks) => {
        partsAtTheEnd = partsOfScanEvent();
        return risks;
      }),
    );
    const lists = result as Exclude<typeof result, false>;
    // Its JSON comes in pieces of up to 2,000 risk ids, one list's here (300 ids, 15,600 characters): each piece is past the 1,000 characters
    // of a part, so each is a part. All are written when the last transaction starts.
    const row = core.db.prepare("SELECT payload, parts FROM events WHERE type = 'scan.updated'").get() as { payload: string; parts: number };
    expect(row.payload).to.equal('');
    expect(row.parts).to.equal(3);
    expect(partsAtTheEnd).to.equal(row.parts);
    const [event] = core.scanRepository.eventsFor(account.id).filter((stored) => stored.type === 'scan.updated');
    expect(event!.data).to.deep.equal(JSON.parse(JSON.stringify(presentScan({ ...second, risks: lists }))));
    expect((event!.data as ScanJson).risks.closed).to.have.length(TARGETS);

    // A refused recording's scan event goes with its parts.
    const refused = insertScan();
    expect(
      await history.recordScanInChunks(
        refused,
        'SCAN',
        findings([80]),
        handing(() => false),
      ),
    ).to.equal(false);
    expect(core.db.prepare('SELECT COUNT(*) FROM events WHERE held_by = ?').pluck().get(refused.id)).to.equal(0);
    expect(core.db.prepare('SELECT COUNT(*) FROM event_parts').pluck().get()).to.equal(row.parts);
  });

  it('records a completed recording with every chunk: each risk once, closed and still open as one transaction would', async () => {
    const second = insertScan();
    const result = await core.history.recordScanInChunks(
      second,
      'SCAN',
      findings([80, 443]),
      handing((risks) => risks),
    );
    expect(result).to.not.equal(false);
    const lists = result as Exclude<typeof result, false>;
    expect([lists.newOpen.length, lists.stillOpen.length, lists.closed.length]).to.deep.equal([TARGETS, TARGETS, TARGETS]);
    expect(core.db.prepare('SELECT COUNT(*) AS n FROM risks').get()).to.deep.equal({ n: 3 * TARGETS });
    expect(core.db.prepare('SELECT COUNT(*) AS n FROM pending_recordings').get()).to.deep.equal({ n: 0 });
  });

  /** The same store, with a budget no target fits in: each transaction records one target. */
  function historyOfOneTargetChunks(): RiskHistory {
    return riskHistoryWith(core.db, { transactionMs: 0 });
  }

  const listEntries = (scanId: string) =>
    core.db.prepare('SELECT COUNT(*) FROM scan_risks WHERE scan_seq = (SELECT seq FROM scans WHERE id = ?)').pluck().get(scanId) as number;

  it("stores each chunk's risk list entries as it goes, shown only once the last step stores the lists: in order, each once", async () => {
    const history = historyOfOneTargetChunks();
    const second = insertScan();
    const seen: Array<[entries: number, shown: number]> = [];
    let watching = true;
    const watch = () => {
      if (!watching) return;
      const shown = core.scanRepository.findById(account.id, second.id)!.risks;
      seen.push([listEntries(second.id), shown.newOpen.length + shown.stillOpen.length + shown.closed.length]);
      setImmediate(watch);
    };
    setImmediate(watch);
    const result = await history.recordScanInChunks(
      second,
      'SCAN',
      findings([80, 443]),
      handing((risks) => {
        watching = false;
        // All of them are stored already; the scan's own write keeps them and stores their lengths.
        expect(listEntries(second.id)).to.equal(3 * TARGETS);
        return core.scanRepository.saveWithResults({ ...second, risks }, [], [], second.state) ? risks : false;
      }),
    );
    expect(result).to.not.equal(false);
    const risks = result as Exclude<typeof result, false>;
    expect(
      seen.some(([entries]) => entries > 0 && entries < 3 * TARGETS),
      'entries stored between chunks',
    ).to.equal(true);
    expect(
      seen.every(([, shown]) => shown === 0),
      'no list shown before the last step',
    ).to.equal(true);
    const scan = core.scanRepository.findById(account.id, second.id)!;
    expect(scan.risks).to.deep.equal(risks);
    expect([scan.risks.newOpen.length, scan.risks.stillOpen.length, scan.risks.closed.length]).to.deep.equal([TARGETS, TARGETS, TARGETS]);
    expect(listEntries(second.id)).to.equal(3 * TARGETS);
  });

  it('leaves no risk list entry of a refused recording, and a scan whose lists are written again keeps none past their end', async () => {
    const second = insertScan();
    expect(
      await historyOfOneTargetChunks().recordScanInChunks(
        second,
        'SCAN',
        findings([80, 443]),
        handing(() => false),
      ),
    ).to.equal(false);
    expect(listEntries(second.id)).to.equal(0);

    const third = insertScan();
    const risks = { newOpen: ['r1', 'r2', 'r3'], stillOpen: ['r4'], closed: [] };
    core.riskRepository.appendRiskLists(
      third.id,
      { newOpen: ['r1', 'r2', 'r3', 'stale'], stillOpen: [], closed: ['stale'] },
      { newOpen: 0, stillOpen: 0, closed: 0 },
    );
    expect(core.scanRepository.findById(account.id, third.id)!.risks).to.deep.equal({ newOpen: [], stillOpen: [], closed: [] });
    expect(core.scanRepository.saveWithResults({ ...third, risks }, [], [], third.state)).to.equal(true);
    expect(core.scanRepository.findById(account.id, third.id)!.risks).to.deep.equal(risks);
    expect(listEntries(third.id)).to.equal(4);
  });

  it('ends a chunk at its time budget, after the target that reached it: on a large account 1,000 findings held the loop 150 ms', async () => {
    const history = historyOfOneTargetChunks();
    const covered = () => core.db.prepare('SELECT COUNT(*) FROM scan_coverage WHERE scan_id = ?').pluck();
    const second = insertScan();
    const seen: number[] = [];
    let watching = true;
    const watch = () => {
      if (!watching) return;
      seen.push(covered().get(second.id) as number);
      setImmediate(watch);
    };
    setImmediate(watch);
    const result = await history.recordScanInChunks(
      second,
      'SCAN',
      findings([80, 443]),
      handing((risks) => risks),
    );
    watching = false;
    expect(result).to.not.equal(false);
    const between = [...new Set(seen)].filter((n) => n > 0);
    expect(between.slice(0, 5), 'targets recorded as seen between transactions').to.deep.equal([1, 2, 3, 4, 5]);
    expect(covered().get(second.id)).to.equal(TARGETS);
  });
});
