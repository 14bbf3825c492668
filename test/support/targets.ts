import { randomUUID } from 'node:crypto';
import { PERFECT_HEALTH } from '../../src/domain/targets/health-score.js';
import { DEFAULT_ZAP_SETTINGS, type Target } from '../../src/domain/targets/target.js';

/** A valid Target for store-level seeding; the API only creates MANUAL ones, tests need every origin. */
export function aTarget(accountId: string, address: string, overrides: Partial<Target> = {}): Target {
  return {
    id: randomUUID(),
    accountId,
    target: address,
    label: '',
    tags: [],
    healthScore: PERFECT_HEALTH,
    authSeleniumFile: undefined,
    zap: { ...DEFAULT_ZAP_SETTINGS },
    origin: 'MANUAL',
    createdAt: new Date().toISOString(),
    lastScannedAt: null,
    ...overrides,
  };
}
