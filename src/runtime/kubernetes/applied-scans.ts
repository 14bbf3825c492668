/**
 * Scans applied with kubectl (DESIGN.md decision 6, tenancy). A Scan CR in a
 * namespace bound to an account is started for that account exactly as one
 * created through the API (targets resolved or created, limits checked,
 * events recorded), and labelled with the Scan's id so it is recognised from
 * then on. A Scan in an unbound namespace, or with a spec Vigil refuses, gets
 * an `Accepted=False` condition saying why, and nothing runs.
 */
import * as k8s from '@kubernetes/client-node';
import type { ScansService } from '../../app/scans-service.js';
import type { Account } from '../../domain/accounts/account.js';
import type { Clock } from '../../domain/clock.js';
import { InvalidRequestError } from '../../domain/errors.js';
import { SCAN_GROUP, SCAN_PLURAL, SCAN_VERSION, parseScanSpec, type ScanSpec } from '../../domain/scans/scan-resource.js';
import type { Condition } from '../../domain/scans/scan.js';
import { namespaceNotBoundMessage, refusedCondition, writeRefusal } from './refusals.js';

export const SCAN_ID_LABEL = 'vigil.dev/scan-id';

interface AppliedScan {
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
  spec?: unknown;
  status?: { conditions?: Condition[] };
}

export interface AppliedScanAdopterOptions {
  kubeConfig: k8s.KubeConfig;
  accountForNamespace: (namespace: string) => Account | undefined;
  scans: ScansService;
  clock: Clock;
}

export class AppliedScanAdopter {
  private readonly api: k8s.CustomObjectsApi;

  constructor(private readonly options: AppliedScanAdopterOptions) {
    this.api = options.kubeConfig.makeApiClient(k8s.CustomObjectsApi);
  }

  /** Handles one Scan CR as the informer sees it (added or updated). */
  async handle(object: AppliedScan): Promise<void> {
    const { name, namespace, labels } = object.metadata ?? {};
    if (name === undefined || namespace === undefined || labels?.[SCAN_ID_LABEL] !== undefined) return;
    const account = this.options.accountForNamespace(namespace);
    if (account === undefined) {
      return this.refuse(object, 'NamespaceNotBound', namespaceNotBoundMessage(namespace));
    }
    const existing = this.options.scans.findByName(account, name);
    if (existing !== undefined) return this.label(namespace, name, existing.id);
    let spec: ScanSpec;
    try {
      spec = parseScanSpec(object.spec);
    } catch (error) {
      return this.refuseInvalid(object, 'InvalidSpec', error);
    }
    try {
      const [scan] = this.options.scans.start(account, requestOf(spec), spec.scheduledBy ?? null, name);
      await this.label(namespace, name, scan!.id);
    } catch (error) {
      await this.refuseInvalid(object, 'Rejected', error);
    }
  }

  private async refuseInvalid(object: AppliedScan, reason: string, error: unknown): Promise<void> {
    if (!(error instanceof InvalidRequestError)) throw error;
    await this.refuse(object, reason, error.message);
  }

  private async refuse(object: AppliedScan, reason: string, message: string): Promise<void> {
    const ref = this.ref(object.metadata!.namespace!, object.metadata!.name!);
    await writeRefusal(this.api, ref, object.status?.conditions, refusedCondition(reason, message, this.options.clock.now()));
  }

  private async label(namespace: string, name: string, scanId: string): Promise<void> {
    await this.api.patchNamespacedCustomObject(
      { ...this.ref(namespace, name), body: { metadata: { labels: { [SCAN_ID_LABEL]: scanId } } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
  }

  private ref(namespace: string, name: string) {
    return { group: SCAN_GROUP, version: SCAN_VERSION, plural: SCAN_PLURAL, namespace, name };
  }
}

function requestOf(spec: ScanSpec) {
  return { type: spec.type, targets: spec.targets, target_ids: spec.targetIds, tags: spec.tags, use_authentication: spec.useAuthentication };
}
