/**
 * A target's list row and its attachments, as stored. Moved from src/app/ports/targets.ts; the
 * port keeps only the repository interfaces (and re-exports these).
 */
import type { HealthGrade } from './health-score.js';
import type { TargetOrigin } from './target.js';

/**
 * A target as a list reads it: the read model of the hot list path. Its JSON
 * fields stay as the stored text so that a page can be rendered without
 * parsing and re-serialising them.
 */
export interface TargetListRow {
  id: string;
  target: string;
  label: string;
  tagsJson: string;
  zapSettingsJson: string;
  origin: TargetOrigin;
  healthScore: number;
  healthGrade: HealthGrade;
  authSeleniumFile: string | null;
  createdAt: string;
  lastScannedAt: string | null;
  os: string | null;
  hostname: string | null;
  openApiFile: string | null;
}

export type AttachmentKind = 'selenium' | 'openapi';

/** A login recording or an API definition attached to a target (at most 1 MiB, checked at upload). */
export interface TargetAttachment {
  kind: AttachmentKind;
  fileName: string;
  content: Buffer;
  updatedAt: string;
}
