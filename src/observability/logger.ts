/**
 * pino with fixed messages and structured fields. Secrets are redacted at
 * the logger so that no code path can print one by accident.
 */
import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

const REDACTED_PATHS = [
  'apiKey',
  'api_key',
  'secret',
  'signing_secret',
  'password',
  'token',
  '*.apiKey',
  '*.api_key',
  '*.secret',
  '*.signing_secret',
  '*.password',
  '*.token',
  'req.headers["x-service-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'headers["x-service-api-key"]',
  'headers.authorization',
  'headers.cookie',
  'headers["set-cookie"]',
];

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'vigil' },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}
