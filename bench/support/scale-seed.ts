/**
 * Seeds the account of bench/scale.ts as issue 29 did: weekly nmap sweeps of
 * 400 hosts with 100 open ports each, of which 20 ports also carry a vulners
 * entry of CVSS 7.5 (40,020 findings an upload: 40,000 INFO and 20 HIGH),
 * uploaded through the imports service, the path POST /v1/imports takes
 * after the multipart framing (parse as the bytes arrive, the result file,
 * targets, the risk history in chunks), so the rows are exactly what
 * uploads leave. Not over HTTP: the framing adds nothing to the rows, and
 * in-process the 25 uploads of a million risks take about two minutes here.
 * Then tags are put on the targets (in the store: the API does not change
 * targets made from uploads), so the tags filters have something to
 * find: `weekly` on every target, `pci` on every tenth, `dmz` on every
 * 200th; and the first target is made a manual one, which the API deletes
 * (it does not delete targets made from uploads).
 *
 * The seeded data directory is kept under the OS temp dir, named by its
 * size, so a rerun copies it instead of seeding again; migrations newer than
 * the copy are applied when the service opens it, as at an upgrade (remove
 * the directory to seed afresh).
 */
import { cpSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadVigil } from './compiled.js';

export const HOSTS_PER_UPLOAD = 400;
export const PORTS_PER_HOST = 100;
export const HIGH_PER_UPLOAD = 20;
export const FINDINGS_PER_UPLOAD = HOSTS_PER_UPLOAD * PORTS_PER_HOST + HIGH_PER_UPLOAD;

export interface ScaleSeed {
  apiKey: string;
  accountId: string;
  uploads: number;
  targets: number;
  risks: number;
  seedSeconds: number;
}

const SEED_FILE = 'bench-seed.json';

/** A public-looking address for host n, outside every special-purpose range. */
function addressOf(n: number): string {
  return `45.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
}

const VULNERS = (port: number) =>
  `<script id="vulners" output="cpe:/a:openbsd:openssh:7.4"><table key="cpe:/a:openbsd:openssh:7.4"><table>` +
  `<elem key="cvss">7.5</elem><elem key="id">CVE-2023-${10000 + port}</elem><elem key="is_exploit">false</elem><elem key="type">cve</elem></table></table></script>`;

/** Upload `index`'s nmap XML, in pieces of about 256 KB. */
export function* nmapXml(index: number): Generator<Buffer> {
  let part = '<?xml version="1.0" encoding="UTF-8"?>\n<nmaprun scanner="nmap" args="nmap -sV --script vulners" version="7.93">\n';
  for (let host = 0; host < HOSTS_PER_UPLOAD; host++) {
    const n = index * HOSTS_PER_UPLOAD + host + 1;
    part += `<host><status state="up"/><address addr="${addressOf(n)}" addrtype="ipv4"/><ports>\n`;
    for (let port = 1; port <= PORTS_PER_HOST; port++) {
      const vulnerable = port === 1 && host < HIGH_PER_UPLOAD;
      part += `<port protocol="tcp" portid="${port + 1000}"><state state="open"/><service name="ssh" product="OpenSSH" version="7.4" method="probed" conf="10"/>${vulnerable ? VULNERS(n) : ''}</port>\n`;
    }
    part += '</ports></host>\n';
    if (part.length > 256 * 1024) {
      yield Buffer.from(part);
      part = '';
    }
  }
  yield Buffer.from(`${part}</nmaprun>\n`);
}

/** The tags of the target at position `index` (0-based, in creation order). */
function tagsOf(index: number): string[] {
  return ['weekly', ...(index % 10 === 0 ? ['pci'] : []), ...(index % 200 === 0 ? ['dmz'] : [])];
}

async function seed(dataDir: string, uploads: number, log: (line: string) => void): Promise<ScaleSeed> {
  const { loadSettings } = await loadVigil<typeof import('../../src/config/settings.js')>('config/settings.js');
  const { composeCore } = await loadVigil<typeof import('../../src/main/composition-root.js')>('main/composition-root.js');
  const started = performance.now();
  const core = composeCore(loadSettings({ VIGIL_DATA_DIR: dataDir, LOG_LEVEL: 'silent' }));
  try {
    const { account, apiKey } = core.accounts.createAccount({ name: 'bench', monthlyScanLimit: null });
    // The CSV report needs the csv_export feature.
    core.db.prepare(`UPDATE accounts SET features = '["csv_export"]' WHERE id = ?`).run(account.id);
    const source = core.sources.create(account, { source_type: 'IMPORTED', name: 'weekly sweeps' });
    for (let index = 0; index < uploads; index++) {
      const upload = core.imports.newUpload();
      upload.useScanType('NMAP');
      for (const piece of nmapXml(index)) upload.write(piece);
      await core.imports.importResult(account, { source_id: source.id, scan_type: 'NMAP' }, upload.finish());
      log(`  upload ${index + 1}/${uploads} recorded, ${((performance.now() - started) / 1000).toFixed(0)} s`);
    }
    const targetIds = core.db.prepare('SELECT id FROM targets WHERE account_id = ? ORDER BY seq').pluck().all(account.id) as string[];
    // Through the repository: the API refuses to change targets made from uploads, and tags are what the filters need here.
    core.db.transaction(() =>
      targetIds.forEach((id, index) => core.targetRepository.update({ ...core.targetRepository.findById(account.id, id)!, tags: tagsOf(index) })),
    )();
    // The API deletes only targets not made from uploads: the first target becomes a manual one to delete.
    core.db.prepare(`UPDATE targets SET origin = 'MANUAL' WHERE id = ?`).run(targetIds[0]);
    core.targetRepository.update({ ...core.targetRepository.findById(account.id, targetIds[0]!)!, tags: ['deletable'] });
    const risks = core.db.prepare('SELECT count(*) FROM risks WHERE account_id = ?').pluck().get(account.id) as number;
    return { apiKey, accountId: account.id, uploads, targets: targetIds.length, risks, seedSeconds: (performance.now() - started) / 1000 };
  } finally {
    await core.reportWorkers.close();
    core.db.close();
  }
}

/**
 * A data directory holding the seeded account, at `workDir`: copied from the
 * cache, which is seeded first when it is missing.
 */
export async function seededCopy(uploads: number, workDir: string, log: (line: string) => void): Promise<ScaleSeed & { cached: string; fromCache: boolean }> {
  const cached = join(tmpdir(), `vigil-bench-scale-${uploads * FINDINGS_PER_UPLOAD}`);
  const fromCache = existsSync(join(cached, SEED_FILE));
  if (!fromCache) {
    const partial = `${cached}.partial`;
    rmSync(partial, { recursive: true, force: true });
    log(`Seeding ${uploads} uploads of ${FINDINGS_PER_UPLOAD} findings into ${cached} (kept for reruns) ...`);
    const seeded = await seed(partial, uploads, log);
    writeFileSync(join(partial, SEED_FILE), JSON.stringify(seeded));
    renameSync(partial, cached);
  }
  cpSync(cached, workDir, { recursive: true });
  return { ...(JSON.parse(readFileSync(join(cached, SEED_FILE), 'utf8')) as ScaleSeed), cached, fromCache };
}
