/** What the OpenVAS and Nessus drivers share: the polling contract and how to recognise an untrusted server certificate. */

/** Waits between polls and keeps the deadline (the CLI's --timeout); injected so that tests move time instead of sleeping. */
export interface ScanPolling {
  now(): Date;
  /** Throws once the deadline has passed; otherwise waits `delayMs`, never past the deadline. */
  waitBeforeNextPoll(delayMs: number, what: string): Promise<void>;
  /** Aborted when the command is asked to stop (SIGTERM); also cancels requests in flight. */
  signal?: AbortSignal;
}

/** TLS error codes that mean "the server's certificate does not chain to a CA we trust". */
export const UNTRUSTED_CERTIFICATE_CODES: ReadonlySet<string> = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
]);
