/**
 * Run by large-upload.test.ts in a child process: uploads an nmap report of
 * `hosts` hosts (real <host> blocks from the fixtures, 73 findings each, with
 * distinct public addresses), generated as it is written and never whole in
 * memory, through the upload path a user meets (ImportsService), on the data
 * directory given. With `endpoint`, a webhook endpoint is registered first
 * (every event stored). Prints one JSON line: the scan's risk counts, the
 * size of the findings' text as stored, and the peak RSS over the baseline.
 * With an account id, the upload goes to that account (and a new source of
 * it), among the targets it already has. The parent may kill it midway (the
 * crash tests).
 * Usage: <data dir> <hosts> [endpoint|none] [account id]
 */
import { loadSettings } from '../../src/config/settings.js';
import { composeCore } from '../../src/main/composition-root.js';
import { nmapHostsReport } from '../support/nmap-report.js';
import { peakRssMb } from '../support/peak-rss.js';

const [dataDir, hostCount, withEndpoint, accountId] = process.argv.slice(2) as [string, string, string | undefined, string | undefined];

const core = composeCore(loadSettings({ VIGIL_DATA_DIR: dataDir }));
const account =
  accountId === undefined
    ? core.accounts.createAccount({ name: `large-${process.pid}`, monthlyScanLimit: null }).account
    : core.accounts.findAccount(accountId);
if (withEndpoint === 'endpoint') core.webhookEndpoints.add(account.id, 'https://hooks.example.com/large');
const source = core.sources.create(account, { source_type: 'IMPORTED', name: 'large' });
const baseline = peakRssMb();

const upload = core.imports.newUpload();
upload.useScanType('NMAP');
for (const piece of nmapHostsReport(Number(hostCount), 'large.example.com')) upload.write(piece);
console.log(JSON.stringify({ parsed: true }));
const imported = await core.imports.importResult(account, { source_id: source.id, scan_type: 'NMAP' }, upload.finish());
const stored = core.db.prepare('SELECT COALESCE(SUM(length(definition)), 0) AS bytes FROM risks WHERE account_id = ?').get(account.id) as { bytes: number };
console.log(
  JSON.stringify({
    scanId: imported.scan.id,
    newOpen: imported.scan.risks.newOpen.length,
    definitionMb: stored.bytes / 1024 / 1024,
    peakOverBaselineMb: peakRssMb() - baseline,
  }),
);
core.db.close();
