/**
 * Messages shown after a redirect. The address carries only a code from this
 * table, so no text in a URL ever reaches the page.
 */
import type { Request } from 'express';
import { queryText } from './context.js';
import type { Notice } from './views/components.js';

const NOTICES = {
  'signed-out': { kind: 'ok', text: 'You are signed out.' },
  'key-revoked': { kind: 'ok', text: 'The key is revoked. Requests that use it are refused from now on.' },
  'own-key-revoked': { kind: 'ok', text: 'You revoked the key this session was signed in with, so you are signed out. Sign in with another key.' },
  'endpoint-added': { kind: 'ok', text: 'Endpoint added. New events are sent to it from now on.' },
  'endpoint-deleted': { kind: 'ok', text: 'Endpoint deleted. No more events are sent to it.' },
  'test-sent': { kind: 'ok', text: 'Test event queued. It is delivered within a few seconds; refresh to see the attempt in the delivery log.' },
  'risk-accepted': { kind: 'ok', text: 'Risk accepted.' },
  'risk-unaccepted': { kind: 'ok', text: 'Risk no longer accepted.' },
  'report-created': { kind: 'ok', text: 'Report created. Download it below in any format.' },
  'target-saved': { kind: 'ok', text: 'Target saved.' },
  'target-deleted': { kind: 'ok', text: 'Target deleted, with its risks.' },
  'scan-started': { kind: 'ok', text: 'Scan started. It waits in QUEUED until a slot is free; refresh to follow its progress.' },
  'scan-stopping': { kind: 'ok', text: 'Stop requested. A queued scan stops at once; a running one stops once its scanner has ended.' },
  'scan-deleted': { kind: 'ok', text: 'Scan deleted. The risks it found were recomputed from the scans that remain.' },
  'schedule-created': { kind: 'ok', text: 'Scheduled scan created.' },
  'schedule-saved': { kind: 'ok', text: 'Scheduled scan saved. Its next run was recalculated.' },
  'schedule-disabled': { kind: 'ok', text: 'Scheduled scan disabled. It keeps its settings but does not run.' },
  'schedule-enabled': { kind: 'ok', text: 'Scheduled scan enabled. Its next run was calculated from now.' },
  'schedule-deleted': { kind: 'ok', text: 'Scheduled scan deleted. Scans it already started are kept.' },
} as const satisfies Record<string, Notice>;

export type NoticeCode = keyof typeof NOTICES;

export function noticeFrom(req: Request): Notice | undefined {
  const code = queryText(req, 'notice');
  return Object.hasOwn(NOTICES, code) ? NOTICES[code as NoticeCode] : undefined;
}

export function withNotice(path: string, code: NoticeCode): string {
  return `${path}?notice=${code}`;
}

/** Service messages often start in lowercase ("note must ..."); on a page they read as sentences. */
export function asSentence(message: string): string {
  const capitalised = message.charAt(0).toUpperCase() + message.slice(1);
  return /[.!?]$/.test(capitalised) ? capitalised : `${capitalised}.`;
}
