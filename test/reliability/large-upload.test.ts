/**
 * Issue 17, bounded memory: an upload's findings go to the store in batches
 * as they are parsed and a chunked recording's events wait there too
 * (RecordingStaging), so neither is ever all in memory; and a crash at any
 * point loses nothing committed and leaves no half-recorded upload. Each
 * upload runs in a child process (large-upload-child.ts) on a real store.
 */
import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import BetterSqlite3 from 'better-sqlite3';
import { loadSettings } from '../../src/config/settings.js';
import { DATABASE_FILE } from '../../src/store/database.js';
import { composeCore } from '../../src/main/composition-root.js';
import { TRANSACTION_MS } from '../../src/app/risk-history.js';
import { fixtureHostAddress, nmapHostsReport, nmapReport } from '../support/nmap-report.js';
import { tempDir } from '../support/temp-dir.js';
import { waitFor } from '../support/wait.js';
import { TurnCounter } from '../support/turn-counter.js';

const CHILD = fileURLToPath(new URL('./large-upload-child.ts', import.meta.url));
/** 620 hosts of 67 distinct findings: 41,540 findings, 35 MB of finding text, a 25 MB file. */
const HOSTS = 620;
const FINDINGS = 41_540;

const count = (db: BetterSqlite3.Database, sql: string, ...params: unknown[]) => (db.prepare(sql).get(...params) as { n: number }).n;

describe('reliability: a large upload holds neither its findings nor its events, and a crash leaves it whole or absent', function () {
  this.timeout(300_000);
  let dir: ReturnType<typeof tempDir>;

  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => {
    dir.remove();
  });

  it('records 41,540 findings and their events in a 128 MiB V8 heap (its baseline here is about 75 MB; holding the findings took over 110 MB more)', () => {
    const run = spawnSync(process.execPath, ['--max-old-space-size=128', '--import', 'tsx', CHILD, dir.path, String(HOSTS), 'endpoint'], {
      encoding: 'utf8',
      maxBuffer: 1024 * 1024,
    });
    expect(run.status, run.stderr.slice(-2000)).to.equal(0);
    const result = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { newOpen: number; definitionMb: number; peakOverBaselineMb: number };
    expect(result.newOpen).to.equal(FINDINGS);
    expect(result.definitionMb).to.be.greaterThan(30);
    const db = new BetterSqlite3(join(dir.path, DATABASE_FILE), { readonly: true });
    try {
      // Every event was stored (an endpoint receives them): scan.created and one risk.created per finding.
      expect(count(db, "SELECT COUNT(*) AS n FROM events WHERE type = 'risk.created'")).to.equal(FINDINGS);
      expect(count(db, "SELECT COUNT(*) AS n FROM events WHERE type = 'scan.created'")).to.equal(1);
      expect(count(db, 'SELECT COUNT(*) AS n FROM pending_recordings')).to.equal(0);
    } finally {
      db.close();
    }
  });

  it('stages each finding once when scan_type comes twice, and leaves nothing staged after an upload, recorded or refused', async () => {
    const core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path }));
    try {
      const owner = core.accounts.createAccount({ name: 'staging' }).account;
      const source = core.sources.create(owner, { source_type: 'IMPORTED', name: 'staging' });
      const staged = () => count(core.db, 'SELECT COUNT(*) AS n FROM temp.staged_findings');
      const upload = core.imports.newUpload();
      upload.useScanType('NMAP');
      upload.write(Buffer.from(nmapReport(4, 300)));
      upload.useScanType('NMAP'); // a second scan_type field: the file read so far is parsed again
      const parsed = upload.finish();
      expect(staged()).to.equal(1200);
      const imported = await core.imports.importResult(owner, { source_id: source.id, scan_type: 'NMAP' }, parsed);
      expect(imported.scan.risks.newOpen).to.have.length(1200);
      expect(staged()).to.equal(0);

      const refused = core.imports.newUpload();
      refused.useScanType('NMAP');
      refused.write(Buffer.from(nmapReport(2, 3)));
      const parsedRefused = refused.finish();
      let error: unknown;
      await core.imports.importResult(owner, { source_id: 'no-such-source', scan_type: 'NMAP' }, parsedRefused).catch((caught: unknown) => (error = caught));
      expect(error).to.be.an('error');
      await refused.discard(); // as the upload handler does on any refusal
      expect(staged()).to.equal(0);
    } finally {
      core.db.close();
    }
  });

  it("an upload's targets are written in transactions that end once TRANSACTION_MS have passed, each followed by a turn of the event loop", async () => {
    const core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path }));
    try {
      const owner = core.accounts.createAccount({ name: 'slow targets' }).account;
      const source = core.sources.create(owner, { source_type: 'IMPORTED', name: 'slow' });
      // Each target takes longer than a transaction's time, as on an account of a million risks: one target a transaction.
      const counter = new TurnCounter();
      const turns: number[] = [];
      const recordUploaded = core.targets.recordUploaded.bind(core.targets);
      core.targets.recordUploaded = (...args) => {
        const until = performance.now() + TRANSACTION_MS + 1;
        while (performance.now() < until);
        turns.push(counter.turn);
        return recordUploaded(...args);
      };
      const upload = core.imports.newUpload();
      upload.useScanType('NMAP');
      upload.write(Buffer.from(nmapReport(4, 2)));
      const imported = await core.imports.importResult(owner, { source_id: source.id, scan_type: 'NMAP' }, upload.finish());
      counter.stop();
      expect(imported.targets).to.have.length(4);
      expect(new Set(turns).size, `turns of the four targets: ${turns.join(', ')}`).to.equal(4);
    } finally {
      core.db.close();
    }
  });

  it('killed while recording: what was committed before stays, the upload is either whole or gone after start-up, and no event speaks of a rolled-back risk', async () => {
    // A committed upload first, on another account, with its events.
    let core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path }));
    const earlier = core.accounts.createAccount({ name: 'earlier' }).account;
    core.webhookEndpoints.add(earlier.id, 'https://hooks.example.com/earlier');
    const source = core.sources.create(earlier, { source_type: 'IMPORTED', name: 'earlier' });
    const upload = core.imports.newUpload();
    upload.useScanType('NMAP');
    upload.write(Buffer.from(nmapReport(3, 2, 50)));
    const committed = await core.imports.importResult(earlier, { source_id: source.id, scan_type: 'NMAP' }, upload.finish());
    const before = {
      risks: core.db.prepare('SELECT id, status, last_detected_at FROM risks ORDER BY seq').all(),
      events: core.db.prepare('SELECT id, type, payload FROM events ORDER BY seq').all(),
    };
    expect(before.risks).to.have.length(6);
    expect(before.events).to.have.length(7);
    core.db.close();

    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dir.path, String(HOSTS), 'endpoint'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = once(child, 'exit');
    const reader = new BetterSqlite3(join(dir.path, DATABASE_FILE), { readonly: true });
    try {
      // Killed once some of the upload's chunks are committed (or when it has finished, on a fast machine).
      await waitFor(
        async () =>
          child.exitCode !== null ||
          (count(reader, 'SELECT COUNT(*) AS n FROM pending_recordings') > 0 && count(reader, 'SELECT COUNT(*) AS n FROM risks') > 6),
        (ready) => ready,
        'the upload to be recording',
        120_000,
      );
    } finally {
      reader.close();
    }
    child.kill('SIGKILL');
    await exited;

    // Start-up, as `vigil serve` does it (composition-root.ts, recoverFromCrash).
    core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path }));
    try {
      await core.imports.discardInterrupted(core.history.rollBackInterrupted());
      const db = core.db;
      expect(db.pragma('integrity_check', { simple: true })).to.equal('ok');
      expect(count(db, 'SELECT COUNT(*) AS n FROM pending_recordings')).to.equal(0);
      // A discarded upload's scan leaves no rows to sweep (migration 0029: they no longer cascade from its row).
      expect(count(db, 'SELECT COUNT(*) AS n FROM pending_scan_sweeps')).to.equal(0);
      expect(count(db, 'SELECT COUNT(*) AS n FROM detections d WHERE NOT EXISTS (SELECT 1 FROM scans s WHERE s.id = d.scan_id)')).to.equal(0);
      expect(count(db, 'SELECT COUNT(*) AS n FROM scan_risks r WHERE NOT EXISTS (SELECT 1 FROM scans s WHERE s.seq = r.scan_seq)')).to.equal(0);
      expect(core.scans.get(earlier, committed.scan.id).state).to.equal('SUCCEEDED');
      expect(db.prepare('SELECT id, status, last_detected_at FROM risks WHERE account_id = ? ORDER BY seq').all(earlier.id)).to.deep.equal(before.risks);
      expect(db.prepare('SELECT id, type, payload FROM events WHERE account_id = ? ORDER BY seq').all(earlier.id)).to.deep.equal(before.events);

      const large = db.prepare("SELECT id FROM accounts WHERE name LIKE 'large-%'").pluck().get() as string;
      const scans = count(db, 'SELECT COUNT(*) AS n FROM scans WHERE account_id = ?', large);
      const risks = count(db, 'SELECT COUNT(*) AS n FROM risks WHERE account_id = ?', large);
      const events = count(db, 'SELECT COUNT(*) AS n FROM events WHERE account_id = ?', large);
      // Whole (it finished before the kill) or absent: never part of it.
      if (scans === 0) expect({ risks, events }).to.deep.equal({ risks: 0, events: 0 });
      else expect({ scans, risks, events }).to.deep.equal({ scans: 1, risks: FINDINGS, events: FINDINGS + 1 });
      // No event names a risk that is not there.
      expect(
        count(
          db,
          "SELECT COUNT(*) AS n FROM events e WHERE e.type LIKE 'risk.%' AND NOT EXISTS (SELECT 1 FROM risks r WHERE r.id = json_extract(e.payload, '$.id'))",
        ),
      ).to.equal(0);
    } finally {
      core.db.close();
    }
  });

  it('killed while recording many new hosts: start-up removes every target the upload created and gives those it changed their os, host name and last scan time back', async () => {
    // Three hosts of the coming upload exist already, from an earlier upload of another host name.
    let core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path }));
    const account = core.accounts.createAccount({ name: 'existing' }).account;
    const source = core.sources.create(account, { source_type: 'IMPORTED', name: 'earlier' });
    const earlier = core.imports.newUpload();
    earlier.useScanType('NMAP');
    for (const piece of nmapHostsReport(3, 'before.example.com')) earlier.write(piece);
    await core.imports.importResult(account, { source_id: source.id, scan_type: 'NMAP' }, earlier.finish());
    const targetRows = (db: BetterSqlite3.Database) => db.prepare('SELECT * FROM targets WHERE account_id = ? ORDER BY seq').all(account.id);
    const before = targetRows(core.db);
    expect(before).to.have.length(3);
    expect(before[0]).to.include({ hostname: 'host-1.before.example.com' }).and.have.property('last_scanned_at').that.is.a('string');
    core.db.close();

    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dir.path, String(HOSTS), 'none', account.id], { stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = once(child, 'exit');
    const reader = new BetterSqlite3(join(dir.path, DATABASE_FILE), { readonly: true });
    try {
      // Killed once every target is written and the first chunk of risks has rescanned the existing ones, long before the last chunk.
      await waitFor(
        async () =>
          child.exitCode !== null ||
          (count(reader, 'SELECT COUNT(*) AS n FROM pending_recordings') > 0 &&
            count(reader, 'SELECT COUNT(*) AS n FROM targets WHERE account_id = ?', account.id) === HOSTS &&
            count(
              reader,
              'SELECT COUNT(*) AS n FROM targets WHERE target = ? AND last_scanned_at > ?',
              fixtureHostAddress(1),
              (before[0] as { last_scanned_at: string }).last_scanned_at,
            ) === 1),
        (ready) => ready,
        'the upload to be recording its risks',
        120_000,
      );
      expect(child.exitCode, 'the upload finished before it could be killed').to.equal(null);
      expect(reader.prepare('SELECT hostname FROM targets WHERE target = ?').pluck().get(fixtureHostAddress(1))).to.equal('host-1.large.example.com');
    } finally {
      reader.close();
    }
    child.kill('SIGKILL');
    await exited;

    core = composeCore(loadSettings({ VIGIL_DATA_DIR: dir.path }));
    try {
      await core.imports.discardInterrupted(core.history.rollBackInterrupted());
      expect(count(core.db, "SELECT COUNT(*) AS n FROM targets WHERE origin = 'UPLOADED_RESULTS'")).to.equal(3);
      expect(targetRows(core.db)).to.deep.equal(before);
      expect(count(core.db, 'SELECT COUNT(*) AS n FROM pending_recording_targets')).to.equal(0);
      expect(core.db.pragma('integrity_check', { simple: true })).to.equal('ok');
    } finally {
      core.db.close();
    }
  });
});
