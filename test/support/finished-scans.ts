/**
 * Finished Scans as a month of use leaves them (200 a day): SUCCEEDED rows
 * in the store, and their Scan CRs as Vigil left them (labelled with the id,
 * holding the finalizer, the status projected from the row), each applied
 * with `kubectl apply`, so carrying managedFields and the last-applied
 * annotation as on a cluster. About 1.2 KB a CR as the API server lists it:
 * 20,000 of them are a list of about 24 MB, over kube-api.ts's bound on one
 * answer. Nothing about them is left to reconcile: a full pass writes nothing.
 */
import { randomUUID } from 'node:crypto';
import type { Scan } from '../../src/domain/scans/scan.js';
import { projectedStatus } from '../../src/runtime/kubernetes/scan-face.js';
import { SCAN_FINALIZER } from '../../src/runtime/kubernetes/reconciler-kit.js';
import { LAST_APPLIED_ANNOTATION } from '../../src/runtime/kubernetes/custom-resource-informer.js';
import type { KubeObject } from './fake-kube-apiserver.js';

export interface FinishedScans {
  rows: Scan[];
  objects: KubeObject[];
}

export function finishedScans(accountId: string, namespace: string, count: number, now = Date.now()): FinishedScans {
  const rows: Scan[] = [];
  const objects: KubeObject[] = [];
  for (let index = 0; index < count; index += 1) {
    const row = finishedRow(accountId, index, new Date(now - (count - index) * 432_000).toISOString());
    rows.push(row);
    objects.push(finishedObject(row, namespace));
  }
  return { rows, objects };
}

function finishedRow(accountId: string, index: number, at: string): Scan {
  const target = `10.${(index >> 16) & 255}.${(index >> 8) & 255}.${index & 255}`;
  const targetId = randomUUID();
  return {
    id: randomUUID(),
    accountId,
    name: `nightly-${String(index).padStart(5, '0')}`,
    type: 'NMAP',
    state: 'SUCCEEDED',
    progress: 100,
    isAuthenticated: false,
    requestedTargets: [{ targetId, target }],
    resolvedTargets: [{ targetId, target, addresses: [target] }],
    skippedTargets: [],
    conditions: [
      { type: 'Succeeded', status: 'True', reason: 'ScanCompleted', message: 'the scanner finished and its results were recorded', lastTransitionTime: at },
    ],
    results: [],
    risks: { newOpen: [], stillOpen: [], closed: [] },
    scheduledBy: null,
    reportId: null,
    createdAt: at,
    startedAt: at,
    finishedAt: at,
  };
}

function finishedObject(row: Scan, namespace: string): KubeObject {
  const spec = { type: row.type, targets: row.requestedTargets.map((requested) => requested.target) };
  const applied = { apiVersion: 'vigil.dev/v1alpha1', kind: 'Scan', metadata: { name: row.name, namespace }, spec };
  return {
    apiVersion: 'vigil.dev/v1alpha1',
    kind: 'Scan',
    metadata: {
      name: row.name,
      namespace,
      generation: 1,
      labels: { 'vigil.dev/scan-id': row.id },
      finalizers: [SCAN_FINALIZER],
      annotations: { [LAST_APPLIED_ANNOTATION]: JSON.stringify(applied) },
      managedFields: [
        {
          manager: 'kubectl-client-side-apply',
          operation: 'Update',
          apiVersion: 'vigil.dev/v1alpha1',
          time: row.createdAt,
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': { 'f:annotations': { '.': {}, [`f:${LAST_APPLIED_ANNOTATION}`]: {} } },
            'f:spec': { '.': {}, 'f:targets': {}, 'f:type': {} },
          },
        },
        {
          manager: 'vigil',
          operation: 'Update',
          apiVersion: 'vigil.dev/v1alpha1',
          time: row.finishedAt,
          fieldsType: 'FieldsV1',
          subresource: 'status',
          fieldsV1: { 'f:status': { '.': {}, 'f:conditions': {}, 'f:counts': {}, 'f:finishedAt': {}, 'f:progress': {}, 'f:scanId': {}, 'f:state': {} } },
        },
      ],
    },
    spec,
    status: JSON.parse(JSON.stringify(projectedStatus(row, 1))) as unknown,
  };
}
