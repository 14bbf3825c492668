/**
 * Seeds a data directory for the Targets list benchmark: one account (through
 * the accounts service) and `count` targets with realistic values, written
 * with direct SQL in one transaction: the same rows SqliteTargetRepository
 * writes (targets plus the target_tags index), about 4x faster than calling
 * its insert(), which opens a savepoint per row.
 */
import { randomUUID } from 'node:crypto';
import { loadSettings } from '../../src/config/settings.js';
import { composeCore } from '../../src/main/composition-root.js';
import { DEFAULT_ZAP_SETTINGS, type Target } from '../../src/domain/targets/target.js';
import { PERFECT_HEALTH, healthScore } from '../../src/domain/targets/health-score.js';
import { toParams } from '../../src/store/targets-repository.js';

export interface Seeded {
  apiKey: string;
  accountId: string;
  /** Host names in insertion order (oldest first). */
  count: number;
  firstHost: string;
  lastHost: string;
}

const TAGS = ['production', 'staging', 'dev', 'eu-west', 'us-east', 'web', 'api', 'internal', 'pci', 'team-a', 'team-b'];
const LABELS = ['Customer portal', 'Marketing site', 'Public API', 'Status page', 'Admin console', 'Docs', 'Checkout', 'CDN origin'];

export function hostName(index: number): string {
  return `host-${String(index).padStart(6, '0')}.bench.example.com`;
}

export function seedTargets(dataDir: string, count: number): Seeded {
  const core = composeCore(loadSettings({ VIGIL_DATA_DIR: dataDir, LOG_LEVEL: 'silent' }));
  try {
    const { account, apiKey } = core.accounts.createAccount({ name: 'bench' });
    // Seeding connection only: a large page cache keeps the random-UUID index writes in memory.
    core.db.pragma('cache_size = -262144');
    const insertTarget = core.db
      .prepare(`INSERT INTO targets (id, account_id, target, label, tags, zap_settings, origin, health_score, health_grade, auth_selenium_file, created_at, last_scanned_at)
      VALUES (@id, @accountId, @target, @label, @tags, @zapSettings, @origin, @healthScore, @healthGrade, @authSeleniumFile, @createdAt, @lastScannedAt)`);
    const insertTag = core.db.prepare('INSERT INTO target_tags (account_id, tag, target_seq) VALUES (?, ?, ?)');
    const start = Date.now() - count * 1_000;
    core.db.transaction(() => {
      for (let i = 1; i <= count; i++) {
        const tagCount = 1 + (i % 3);
        const tags = Array.from({ length: tagCount }, (_, k) => TAGS[(i * 7 + k * 3) % TAGS.length]!);
        const scanned = i % 3 === 0;
        const target: Target = {
          id: randomUUID(),
          accountId: account.id,
          target: hostName(i),
          label: `${LABELS[i % LABELS.length]} ${i}`,
          tags: [...new Set(tags)],
          healthScore: scanned ? healthScore({ HIGH: i % 4, MEDIUM: i % 5, LOW: i % 7 }) : PERFECT_HEALTH,
          authSeleniumFile: undefined,
          zap: { ...DEFAULT_ZAP_SETTINGS },
          origin: 'MANUAL',
          createdAt: new Date(start + i * 1_000).toISOString(),
          lastScannedAt: scanned ? new Date(start + i * 1_000 + 600_000).toISOString() : null,
        };
        const { lastInsertRowid } = insertTarget.run(toParams(target));
        for (const tag of target.tags) insertTag.run(target.accountId, tag, lastInsertRowid);
      }
    })();
    return { apiKey, accountId: account.id, count, firstHost: hostName(1), lastHost: hostName(count) };
  } finally {
    core.db.close();
  }
}
