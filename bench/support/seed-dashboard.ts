/**
 * Seeds a large account for the dashboard benchmark: seedTargets' targets,
 * then risks spread over them, scans over the last twelve weeks that found
 * and closed those risks (their detections included), and schedules. Rows
 * are written with direct SQL in one transaction, in the shape the
 * repositories write, because going through the collector for 100,000 risks
 * would take minutes and measure ingest, not the pages.
 */
import { randomUUID } from 'node:crypto';
import { loadSettings } from '../../src/config/settings.js';
import { THREAT_LEVELS, type ThreatLevel } from '../../src/domain/risks/finding.js';
import { composeCore } from '../../src/main/composition-root.js';
import { RiskTitles } from '../../src/store/risk-titles.js';
import { countOpenRisks } from '../../test/support/store-rows.js';
import { seedTargets, type Seeded } from './seed.js';

export interface DashboardSeed extends Seeded {
  targetIds: string[];
  riskIds: string[];
  scanIds: string[];
  scheduleIds: string[];
}

export interface DashboardSeedSize {
  targets: number;
  risks: number;
  scans: number;
  schedules: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;
const WINDOW_MS = 84 * DAY_MS;
/** Of every 100 risks, how many of each level: few critical, many informational, as real nmap and ZAP results are. */
const LEVEL_SHARE: Record<ThreatLevel, number> = { CRITICAL: 3, HIGH: 12, MEDIUM: 25, LOW: 25, INFO: 35 };
const LEVEL_BY_PERCENT = THREAT_LEVELS.flatMap((level) => Array<ThreatLevel>(LEVEL_SHARE[level]).fill(level));

type Db = ReturnType<typeof composeCore>['db'];

function targetIdsOf(db: Db, accountId: string): string[] {
  return (db.prepare('SELECT id FROM targets WHERE account_id = ? ORDER BY seq').all(accountId) as Array<{ id: string }>).map((row) => row.id);
}

function insertRisks(db: Db, accountId: string, targetIds: readonly string[], count: number, now: number): string[][] {
  const insert = db.prepare(`INSERT INTO risks (id, account_id, target_id, scan_type, fingerprint, status, first_detected_at, last_detected_at,
      is_accepted, accepted_by, title, threat_level, qod, definition, created_at)
    VALUES (?, ?, ?, 'NMAP', ?, ?, ?, ?, ?, '[]', ?, ?, NULL, ?, ?)`);
  const byTarget: string[][] = targetIds.map(() => []);
  for (let i = 0; i < count; i++) {
    const target = i % targetIds.length;
    const level = LEVEL_BY_PERCENT[(i * 37) % 100]!;
    const title = `Port ${1000 + (i % 5000)}/tcp open: service ${i}`;
    const at = new Date(now - WINDOW_MS + (i / count) * WINDOW_MS).toISOString();
    const definition = JSON.stringify({
      scan_type: 'NMAP',
      title,
      threat_level: level,
      description: 'A port answered.',
      solution: 'Close it if unused.',
      cvss: '',
      additional_info: { port: 1000 + (i % 5000) },
    });
    const id = randomUUID();
    insert.run(id, accountId, targetIds[target], `tcp/${i}`, i % 10 < 7 ? 'OPEN' : 'CLOSED', at, at, i % 50 === 0 ? 1 : 0, title, level, definition, at);
    byTarget[target]!.push(id);
  }
  return byTarget;
}

/** Scan k covers a block of ten targets; the first scan of a block finds its risks, the second finds them still open or closed. */
function insertScans(db: Db, accountId: string, targetIds: readonly string[], risksByTarget: readonly string[][], count: number, now: number): string[] {
  const insert = db.prepare(`INSERT INTO scans (id, account_id, name, type, state, progress, requested_targets, resolved_targets, conditions,
      new_open_count, still_open_count, closed_count, created_at, started_at, finished_at)
    VALUES (@id, @accountId, @name, 'NMAP', @state, @progress, @requested, '[]', @conditions, @newOpen, @stillOpen, @closed, @createdAt, @createdAt, @finishedAt)`);
  // A scan's risk lists (migration 0025): list 0 new_open, 1 still_open, 2 closed, each in order.
  const insertList = db.prepare(`INSERT INTO scan_risks (scan_seq, list, position, risk_id)
    SELECT (SELECT seq FROM scans WHERE id = ?), ?, j.key, j.value FROM json_each(?) j`);
  const detect = db.prepare('INSERT OR IGNORE INTO detections (scan_id, risk_id) VALUES (?, ?)');
  const blocks = Math.max(1, Math.floor(targetIds.length / 10));
  const ids: string[] = [];
  for (let k = 0; k < count; k++) {
    const block = k % blocks;
    const members = targetIds.slice(block * 10, block * 10 + 10);
    const risks = members.flatMap((_, index) => risksByTarget[block * 10 + index] ?? []);
    const failed = k % 25 === 24;
    const first = k < blocks;
    const closed = first || failed ? [] : risks.filter((_, index) => index % 10 >= 7);
    const found = failed ? [] : risks.filter((risk) => !closed.includes(risk));
    const createdAt = new Date(now - WINDOW_MS + (k / count) * WINDOW_MS).toISOString();
    const id = randomUUID();
    insert.run({
      id,
      accountId,
      name: `scan-${id}`,
      state: failed ? 'FAILED' : 'SUCCEEDED',
      progress: failed ? 40 : 100,
      requested: JSON.stringify(members.map((targetId, index) => ({ targetId, target: `block-${block}-${index}` }))),
      conditions: JSON.stringify(
        failed ? [{ type: 'Failed', status: 'True', reason: 'ScannerExited', message: 'nmap exited with code 1', lastTransitionTime: createdAt }] : [],
      ),
      newOpen: first ? found.length : 0,
      stillOpen: first ? 0 : found.length,
      closed: closed.length,
      createdAt,
      finishedAt: new Date(Date.parse(createdAt) + 600_000).toISOString(),
    });
    for (const [list, ids] of [first ? found : [], first ? [] : found, closed].entries()) insertList.run(id, list, JSON.stringify(ids));
    for (const risk of found) detect.run(id, risk);
    ids.push(id);
  }
  return ids;
}

function insertSchedules(db: Db, accountId: string, targetIds: readonly string[], count: number, now: number): string[] {
  const insert =
    db.prepare(`INSERT INTO scheduled_scans (id, account_id, object_name, name, schedule, scan_types, filter_target_ids, filter_tags, email_notification, email_to, start_time, disabled, next_run, created_at)
    VALUES (?, ?, ?, ?, 'WEEKLY', '["NMAP"]', ?, '["production"]', 'ON_CHANGES', '["security@example.com"]', ?, ?, ?, ?)`);
  return Array.from({ length: count }, (_, index) => {
    const id = randomUUID();
    const start = new Date(now + (index + 1) * 3_600_000).toISOString();
    const disabled = index % 7 === 6;
    insert.run(
      id,
      accountId,
      `scheduledscan-${id}`,
      `Weekly sweep ${index + 1}`,
      JSON.stringify(targetIds.slice(index * 3, index * 3 + 3)),
      start,
      disabled ? 1 : 0,
      disabled ? null : start,
      new Date(now).toISOString(),
    );
    return id;
  });
}

export function seedDashboardAccount(dataDir: string, size: DashboardSeedSize): DashboardSeed {
  const seeded = seedTargets(dataDir, size.targets);
  const core = composeCore(loadSettings({ VIGIL_DATA_DIR: dataDir, LOG_LEVEL: 'silent' }));
  try {
    core.db.pragma('cache_size = -262144');
    const now = Date.now();
    return core.db.transaction(() => {
      const targetIds = targetIdsOf(core.db, seeded.accountId);
      const risksByTarget = insertRisks(core.db, seeded.accountId, targetIds, size.risks, now);
      // Rows written with SQL are not counted (migration 0033): the overview's counters made from them.
      countOpenRisks(core.db);
      // And the title filter's table (migration 0034), as the repository's inserts write it: every row merged.
      new RiskTitles(core.db).merge();
      const scanIds = insertScans(core.db, seeded.accountId, targetIds, risksByTarget, size.scans, now);
      const scheduleIds = insertSchedules(core.db, seeded.accountId, targetIds, size.schedules, now);
      return { ...seeded, targetIds, riskIds: risksByTarget.flat(), scanIds, scheduleIds };
    })();
  } finally {
    core.db.close();
  }
}
