/**
 * The rules of "Start a scan" that need no store: which selector was sent,
 * whether the account may run the type, and whether authentication applies.
 */
import type { Account } from '../accounts/account.js';
import { hasFeature } from '../accounts/account.js';
import { InvalidRequestError } from '../errors.js';
import type { ScanType } from '../risks/finding.js';
import { WEB_SCAN_TYPES } from './scan.js';

export interface StartScanRequest {
  type: ScanType;
  targets?: string[] | undefined;
  target_ids?: string[] | undefined;
  tags?: string[] | undefined;
  use_authentication?: boolean | undefined;
}

export type TargetSelector = { kind: 'targets'; values: string[] } | { kind: 'target_ids'; values: string[] } | { kind: 'tags'; values: string[] };

export function selectorOf(request: StartScanRequest): TargetSelector {
  const sent = (['targets', 'target_ids', 'tags'] as const).filter((key) => request[key] !== undefined);
  if (sent.length !== 1) {
    throw new InvalidRequestError(
      sent.length === 0
        ? 'send one of targets, target_ids or tags to choose what to scan'
        : `send exactly one of targets, target_ids or tags (got ${sent.join(' and ')})`,
    );
  }
  const kind = sent[0]!;
  return { kind, values: request[kind]! } as TargetSelector;
}

/** SPEC.md rules 3 and 4: the account must have what the type needs (shared by scans and scheduled scans). */
export function assertAccountMayRun(account: Account, type: ScanType): void {
  if (type === 'NESSUS' && !hasFeature(account, 'nessus')) {
    throw new InvalidRequestError('NESSUS scans need the Nessus third-party scanner option enabled on the account');
  }
  if (type === 'OWASP_ZAP_ACTIVE' && account.plan !== 'paid') {
    throw new InvalidRequestError('OWASP_ZAP_ACTIVE scans need a paid plan; use OWASP_ZAP for a passive web scan');
  }
}

/** SPEC.md rules 3 and 4 and the authenticated-scanning rule 3. */
export function assertTypeAllowed(account: Account, request: StartScanRequest): void {
  assertAccountMayRun(account, request.type);
  if (request.use_authentication === true && !WEB_SCAN_TYPES.has(request.type)) {
    throw new InvalidRequestError(`use_authentication is only for OWASP_ZAP and OWASP_ZAP_ACTIVE scans, not ${request.type}`);
  }
}

/** Authentication is on by default for the two ZAP types; it applies when a target has a login recording. */
export function isAuthenticated(type: ScanType, useAuthentication: boolean | undefined, anyRecording: boolean): boolean {
  return WEB_SCAN_TYPES.has(type) && useAuthentication !== false && anyRecording;
}
