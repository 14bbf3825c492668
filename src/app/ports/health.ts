/** One check /readyz runs (src/http/health.ts); the store and the runtimes provide them. */
export interface ReadinessCheck {
  name: string;
  ok: boolean;
  /** Why it is not ok, as a sentence saying what to look at. */
  message?: string;
}
