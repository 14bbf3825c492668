import type { DashboardSession } from '../../domain/accounts/dashboard-session.js';
export type { DashboardSession } from '../../domain/accounts/dashboard-session.js';

export interface DashboardSessionRepository {
  insert(session: DashboardSession): void;
  /** The session when it has not expired and the API key it was opened with is not revoked. */
  findLive(tokenHash: Buffer, now: string): DashboardSession | undefined;
  delete(tokenHash: Buffer): void;
  /** Removes expired sessions and those of revoked keys; returns how many. */
  deleteEnded(now: string): number;
}
