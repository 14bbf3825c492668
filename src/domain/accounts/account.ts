/** Accounts: the tenant boundary. Every resource belongs to exactly one. */
import { InvalidRequestError } from '../errors.js';

export const PLANS = ['free', 'paid'] as const;
export type Plan = (typeof PLANS)[number];

export const FEATURES = ['nessus', 'csv_export'] as const;
export type Feature = (typeof FEATURES)[number];

/** Greenbone's own default minimum Quality of Detection. */
export const DEFAULT_MIN_OPENVAS_QOD = 70;

export interface Account {
  id: string;
  name: string;
  plan: Plan;
  features: Feature[];
  /** Scans that may be started per calendar month (UTC); null means unlimited. */
  monthlyScanLimit: number | null;
  /** OpenVAS risks below this Quality of Detection (0-100) are not listed. */
  minOpenvasQod: number;
  /** The Kubernetes namespace whose Scan objects belong to this account. */
  namespace: string;
  createdAt: string;
}

export function hasFeature(account: Account, feature: Feature): boolean {
  return account.features.includes(feature);
}

const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** `vigil-` followed by the name made DNS-safe (CONTRACT.md). */
export function defaultNamespaceFor(name: string): string {
  const safe = `vigil-${name}`
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/-+/g, '-')
    .slice(0, 63)
    .replace(/-+$/, '');
  return safe;
}

/**
 * The cluster's own namespaces: scanner Jobs, their Secrets and the scanner
 * ServiceAccount have no place among the control plane's objects, and a
 * tenant bound there could read what Vigil writes next to them.
 */
const SYSTEM_NAMESPACES: readonly string[] = ['kube-system', 'kube-public', 'kube-node-lease'];

export function assertValidNamespace(namespace: string): void {
  if (!NAMESPACE.test(namespace)) {
    throw new InvalidRequestError(`namespace '${namespace}' is not a valid Kubernetes namespace name (lowercase letters, digits and -, at most 63 characters)`);
  }
  if (SYSTEM_NAMESPACES.includes(namespace)) {
    throw new InvalidRequestError(
      `namespace '${namespace}' is a Kubernetes system namespace; bind the account to a namespace of its own, such as vigil-${namespace.replace(/^kube-/, '')}`,
    );
  }
}

export function assertValidAccountName(name: string): void {
  if (name.trim() === '' || name.length > 100) {
    throw new InvalidRequestError('account name must be 1 to 100 characters');
  }
}
