/**
 * The ports of the walk-through's local sinks (`make mail-sink`,
 * `make webhook-receiver`). Both lie outside nmap's top 1000 TCP ports, so a
 * scan of 127.0.0.1 neither finds them as new risks nor probes them; the
 * README test checks that against nmap's own list.
 */
export const MAIL_SINK_DEFAULT_PORT = 46025;
export const WEBHOOK_RECEIVER_DEFAULT_PORT = 46443;
