/**
 * Run by large-collect.test.ts in a child process: what the scan controller
 * does with a large in-cluster nmap output, on a real store. The output (an
 * nmap report of `hosts` hosts, real <host> blocks from the fixtures with
 * distinct public addresses, 67 findings each) is read in pieces as from
 * disk and never whole in memory; the collector stages its findings, and the
 * risk history records them from the staging. Prints one JSON line: the
 * findings staged, the risks recorded and what is left staged.
 * Usage: <data dir> <hosts>
 */
import { collectFindings } from '../../src/app/collector.js';
import { loadSettings } from '../../src/config/settings.js';
import { newImportScan } from '../../src/domain/imports/import-scan.js';
import { composeCore } from '../../src/main/composition-root.js';
import { fixtureHostAddress, nmapHostsReport } from '../support/nmap-report.js';

const [dataDir, hostCount] = process.argv.slice(2) as [string, string];
const core = composeCore(loadSettings({ VIGIL_DATA_DIR: dataDir }));
const account = core.accounts.createAccount({ name: 'large-collect', monthlyScanLimit: null }).account;
const source = core.sources.create(account, { source_type: 'IMPORTED', name: 'large-collect' });
// A target per host, as a scan of many hosts has them.
const addresses = Array.from({ length: Number(hostCount) }, (_, index) => fixtureHostAddress(index + 1));
const targets = core.db.transaction(() => addresses.map((address) => core.targets.recordUploaded(account, address, {})))();
const at = new Date().toISOString();
const scan = newImportScan({
  id: 'large-collect-scan',
  accountId: account.id,
  type: 'NMAP',
  targets,
  source,
  skippedHosts: 0,
  resultId: 'large-collect-result',
  contentType: 'application/xml',
  at,
});
core.scanRepository.insertImported(scan, []);

// Read in pieces, as the runner reads a result file from disk.
const output = {
  file: 'nmap.xml',
  contentType: 'application/xml',
  content: async function* () {
    yield* nmapHostsReport(Number(hostCount), 'large.example.com');
  },
};
const collected = await collectFindings(scan, [output], core.staging, 256 * 1024 * 1024);
const staged = targets.reduce((sum, target) => sum + collected.byTarget.countOf(target.id), 0);
const recorded = await core.history.recordScanWhole(scan, 'SCAN', collected.byTarget, {
  scan: (risks) => ({ ...scan, risks }),
  event: 'scan.updated',
  save: (done) => done.risks,
});
core.staging.drop(scan.id);
const left = (core.db.prepare('SELECT COUNT(*) AS n FROM temp.staged_findings').get() as { n: number }).n;
console.log(JSON.stringify({ staged, newOpen: recorded === false ? -1 : recorded.newOpen.length, left }));
core.db.close();
