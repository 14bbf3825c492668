/** Every dashboard address in one place; ids are always URL-encoded. */
const id = (value: string) => encodeURIComponent(value);

export const PATHS = {
  home: '/dashboard',
  signIn: '/dashboard/sign-in',
  signOut: '/dashboard/sign-out',
  keys: '/dashboard/keys',
  revokeKey: (keyId: string) => `/dashboard/keys/${id(keyId)}/revoke`,
  webhooks: '/dashboard/webhooks',
  webhook: (endpointId: string) => `/dashboard/webhooks/${id(endpointId)}`,
  revealSecret: (endpointId: string) => `/dashboard/webhooks/${id(endpointId)}/reveal`,
  testWebhook: (endpointId: string) => `/dashboard/webhooks/${id(endpointId)}/test`,
  deleteWebhook: (endpointId: string) => `/dashboard/webhooks/${id(endpointId)}/delete`,
  reports: '/dashboard/reports',
  reportDownload: (reportId: string, format: string) => `/dashboard/reports/${id(reportId)}/download?format=${encodeURIComponent(format)}`,
  targets: '/dashboard/targets',
  target: (targetId: string) => `/dashboard/targets/${id(targetId)}`,
  editTarget: (targetId: string) => `/dashboard/targets/${id(targetId)}/edit`,
  scanTarget: (targetId: string) => `/dashboard/targets/${id(targetId)}/scan`,
  deleteTarget: (targetId: string) => `/dashboard/targets/${id(targetId)}/delete`,
  scans: '/dashboard/scans',
  scan: (scanId: string) => `/dashboard/scans/${id(scanId)}`,
  stopScan: (scanId: string) => `/dashboard/scans/${id(scanId)}/stop`,
  deleteScan: (scanId: string) => `/dashboard/scans/${id(scanId)}/delete`,
  result: (resultId: string) => `/dashboard/results/${id(resultId)}`,
  scheduledScans: '/dashboard/scheduled-scans',
  newScheduledScan: '/dashboard/scheduled-scans/new',
  scheduledScan: (scheduleId: string) => `/dashboard/scheduled-scans/${id(scheduleId)}`,
  disableScheduledScan: (scheduleId: string) => `/dashboard/scheduled-scans/${id(scheduleId)}/disable`,
  enableScheduledScan: (scheduleId: string) => `/dashboard/scheduled-scans/${id(scheduleId)}/enable`,
  deleteScheduledScan: (scheduleId: string) => `/dashboard/scheduled-scans/${id(scheduleId)}/delete`,
  risks: '/dashboard/risks',
  risk: (riskId: string) => `/dashboard/risks/${id(riskId)}`,
  acceptRisk: (riskId: string) => `/dashboard/risks/${id(riskId)}/accept`,
  unacceptRisk: (riskId: string) => `/dashboard/risks/${id(riskId)}/unaccept`,
} as const;

/** A path with query parameters; empty values are left out. */
export function withQuery(path: string, params: Record<string, string | undefined>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== '') query.set(name, value);
  const text = query.toString();
  return text === '' ? path : `${path}?${text}`;
}
