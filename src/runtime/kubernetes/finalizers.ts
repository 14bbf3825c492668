/**
 * Adding a finalizer without a resourceVersion precondition and without
 * replacing the list: a JSON Patch that appends, so a finalizer another
 * controller added meanwhile is kept and a stale cache costs no conflict.
 * Removing one is a merge patch of the list as read, with its
 * resourceVersion: a conflict is retried by the work queue on fresh data.
 */
export type JsonPatchOperation = { op: 'add'; path: string; value: unknown };

export function addFinalizerPatch(current: readonly string[] | undefined, finalizer: string): JsonPatchOperation[] {
  return current === undefined || current.length === 0
    ? [{ op: 'add', path: '/metadata/finalizers', value: [finalizer] }]
    : [{ op: 'add', path: '/metadata/finalizers/-', value: finalizer }];
}

/** Adds a label, creating the labels map when the object has none (`/` in a key is `~1` in a JSON Pointer). */
export function addLabelPatch(current: Record<string, string> | undefined, key: string, value: string): JsonPatchOperation[] {
  return current === undefined
    ? [{ op: 'add', path: '/metadata/labels', value: { [key]: value } }]
    : [{ op: 'add', path: `/metadata/labels/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`, value }];
}
