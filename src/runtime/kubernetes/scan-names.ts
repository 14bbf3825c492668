/**
 * Names, labels and ownership of a Scan's child objects (DESIGN.md decision
 * 5): names derive from the Scan's name, so creating them again is
 * idempotent; the Job is owned by the Scan's CR, the Secret by the Job (moved from
 * job-manifest.ts).
 */
import { createHash } from 'node:crypto';
import { SCAN_API_VERSION, SCAN_KIND } from '../../domain/scans/scan-resource.js';
import type { ScanRef } from './job-manifest.js';
import type { ObjectMeta, OwnerReference } from './job-objects.js';
import { MANAGED_BY_LABEL, SCAN_ID_LABEL, SCAN_NAME_LABEL, SCAN_TYPE_LABEL } from './reconciler-kit.js';

const MAX_NAME_LENGTH = 63;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 8);
}

/**
 * `<scan-name>-<suffix>` when that is a DNS-1123 label of at most 63
 * characters (a Job's name becomes its pods' `job-name` label value, which
 * is capped at 63). Otherwise the name is shortened, dots become dashes and
 * a hash of the full Scan name keeps two long names that share a prefix apart.
 */
export function childName(scanName: string, suffix: string): string {
  const wanted = `${scanName}-${suffix}`;
  if (wanted.length <= MAX_NAME_LENGTH && DNS_LABEL.test(wanted)) return wanted;
  const room = MAX_NAME_LENGTH - suffix.length - 8 - 2;
  const base = scanName
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .slice(0, room)
    .replace(/^-+|-+$/g, '');
  return [base, shortHash(scanName), suffix].filter((part) => part !== '').join('-');
}

export const scanJobName = (scanName: string): string => childName(scanName, 'scanner');
/** The scan's one Secret: its upload token and its scanner inputs (job-manifest.ts). */
export const scanSecretName = (scanName: string): string => childName(scanName, 'secret');
/** The Secret holding the upload token: the scan's one Secret. */
export const uploadTokenSecretName = scanSecretName;

/** Label values are capped at 63 characters; Scan names may have 253. The full name is in an annotation. */
function scanLabelValue(scanName: string): string {
  if (scanName.length <= MAX_NAME_LENGTH) return scanName;
  return `${scanName.slice(0, MAX_NAME_LENGTH - 9).replace(/[-.]+$/, '')}-${shortHash(scanName)}`;
}

export function scanLabels(scan: ScanRef): Record<string, string> {
  return {
    'app.kubernetes.io/name': 'vigil-scanner',
    [MANAGED_BY_LABEL]: 'vigil',
    [SCAN_NAME_LABEL]: scanLabelValue(scan.name),
    [SCAN_TYPE_LABEL]: scan.type.toLowerCase(),
    [SCAN_ID_LABEL]: scan.id,
  };
}

export function scanOwnerReference(scan: ScanRef): OwnerReference {
  return { apiVersion: SCAN_API_VERSION, kind: SCAN_KIND, name: scan.name, uid: scan.uid, controller: true, blockOwnerDeletion: true };
}

export function childMetadata(scan: ScanRef, name: string): ObjectMeta {
  return {
    name,
    namespace: scan.namespace,
    labels: scanLabels(scan),
    annotations: { 'vigil.dev/scan-name': scan.name },
    ownerReferences: [scanOwnerReference(scan)],
  };
}
