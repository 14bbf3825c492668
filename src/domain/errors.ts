/**
 * Typed errors of the inner ring. Each names what went wrong in one sentence a
 * user can act on; the HTTP edge maps the kind to a status code, nothing else
 * needs to know about HTTP.
 */
export type ErrorKind =
  | 'invalid' // 400: the request can be fixed by the caller
  | 'unauthenticated' // 401
  | 'forbidden' // 403: feature not enabled for the account
  | 'not_found' // 404: absent, or owned by another account
  | 'rate_limited' // 429
  | 'unavailable'; // 503: a dependency is down, retry later

export class VigilError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class InvalidRequestError extends VigilError {
  constructor(message: string) {
    super('invalid', message);
  }
}

export class UnauthenticatedError extends VigilError {
  constructor(message = 'A valid API key is required in the X-SERVICE-API-KEY header.') {
    super('unauthenticated', message);
  }
}

export class FeatureNotEnabledError extends VigilError {
  constructor(message: string) {
    super('forbidden', message);
  }
}

export class NotFoundError extends VigilError {
  constructor(resource: string, id: string) {
    super('not_found', `No ${resource} with id '${id}' exists in this account.`);
  }
}

export class RateLimitedError extends VigilError {
  constructor(readonly retryAfterSeconds: number) {
    super('rate_limited', `Rate limit exceeded; retry after ${retryAfterSeconds} seconds.`);
  }
}

/** A bounded resource (a queue, a worker) cannot take the request now: 503, try again later. */
export class ServiceBusyError extends VigilError {
  constructor(message: string) {
    super('unavailable', message);
  }
}

/** A scanner output file that cannot be read as the format it claims to be. */
export class MalformedResultError extends InvalidRequestError {}
