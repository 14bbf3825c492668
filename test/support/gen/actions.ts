/**
 * The fake API server's recorded requests as actions ("PATCH scans/status",
 * "DELETE jobs"), compared in order by table tests as sample-controller's
 * checkAction compares a fake clientset's actions. Watches are left out.
 */
import type { RecordedRequest } from '../fake-kube-apiserver.js';

export function actionOf(request: RecordedRequest): string {
  const parts = request.path.split('/').filter(Boolean);
  const at = parts.indexOf('namespaces');
  const rest = at === -1 ? parts.slice(-1) : parts.slice(at + 2);
  return `${request.method} ${rest[0]}${rest[2] === undefined ? '' : `/${rest[2]}`}`;
}

/** The requests the server recorded, in order, as actions; watches left out. */
export function actionsOf(requests: readonly RecordedRequest[]): string[] {
  return requests.filter((request) => !request.watch).map(actionOf);
}
