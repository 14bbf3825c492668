/**
 * Routes /v1 requests through openapi-backend: it matches the operation,
 * runs authentication, validates the request against the OpenAPI document
 * generated from the zod schemas, and calls the operation handler. Every
 * failure becomes a typed error for the one error middleware.
 */
import type { NextFunction, Request, Response } from 'express';
import { OpenAPIBackend, type Context, type Handler } from 'openapi-backend';
import addFormats from 'ajv-formats';
import type { ErrorObject } from 'ajv';
import { API_KEY_HEADER, type OpenApiDocument } from '../api/openapi.js';
import type { AccountsService, Principal } from '../app/accounts-service.js';
import { InvalidRequestError, RateLimitedError, UnauthenticatedError } from '../domain/errors.js';
import { HttpError } from './errors.js';
import { bracketFiltersAsJson } from './bracket-filters.js';
import type { RateLimiter } from './rate-limiter.js';
import type { RequestContext } from './request-context.js';

export interface OperationInput {
  context: Context;
  principal: Principal;
  params: Record<string, string>;
  query: Record<string, string | undefined>;
  body: unknown;
  req: Request;
  res: Response;
  /**
   * For operations that read their own body (multipart): checks the fields
   * they read against the document, as openapi-backend does for JSON bodies.
   */
  validateBody: (body: Record<string, unknown>) => void;
}

/**
 * An operation returns (or resolves to) the JSON body of its 200 response,
 * or undefined when it has written the response itself.
 */
export type Operation = (input: OperationInput) => unknown;

export interface ApiRouterOptions {
  document: OpenApiDocument;
  accounts: AccountsService;
  rateLimiter: RateLimiter;
  /** Failed authentications per client address; a valid key never takes from it. */
  authFailureLimiter: RateLimiter;
  operations: Record<string, Operation>;
  /** Operations that need no API key (the OpenAPI document itself). */
  publicOperations: Record<string, (req: Request, res: Response) => void>;
  /**
   * Operations that stream their own request body (multipart uploads): it is
   * read only after authentication, and checked with validateBody once read.
   */
  streamingOperations?: readonly string[];
  /**
   * Operations whose request validators are compiled at start-up; the others
   * compile on their first request (quick start-up). The first compile in a
   * process also compiles Ajv's meta-schema: ~100 ms the first request would
   * otherwise wait.
   */
  compiledAtStart?: readonly string[];
  /**
   * The other operations' validators compile after start-up, one per turn of
   * the event loop (`vigil serve`), so that no first request of an operation
   * holds the loop for its compile (16-54 ms each, all of them about 0.5 s);
   * tests, which start hundreds of apps, leave them to their first request.
   */
  compileRestInBackground?: boolean;
}

/**
 * What each handler gets after openapi-backend's context: the express request and response, and a refusal of the query's bracket-form filters to
 * raise once authenticated.
 */
type HandlerArgs = [Request, Response, InvalidRequestError | undefined];

export async function createApiRouter(options: ApiRouterOptions) {
  const streaming = new Set(options.streamingOperations ?? []);
  const api = new OpenAPIBackend({
    definition: options.document as never,
    strict: true,
    // Validators compile lazily per operation: start-up stays fast as the API
    // grows. The document itself is checked against the OpenAPI 3.0 schema by a test.
    quick: true,
    validate: (c) => !streaming.has(c.operation?.operationId ?? ''),
    // No coerceTypes here: it would turn a JSON body's 42 into "42". openapi-backend coerces query and path parameters itself.
    // unicode: false counts string lengths in UTF-16 code units, as zod and JavaScript do, so every length
    // check agrees (README, Security and limits). Ajv calls the option deprecated but honours it; its notice is dropped.
    // validateSchema: false: openapi-backend builds two Ajv instances per operation, and each compiled the JSON Schema meta-schema
    // to check the operation's schemas against it, most of each operation's compile (16-54 ms); the test of the document does that check once.
    ajvOpts: { allErrors: false, unicode: false, validateSchema: false, logger: { log: console.log, warn: warnUnlessUnicodeNotice, error: console.error } },
    customizeAjv: (ajv) => {
      addFormats.default(ajv);
      return ajv;
    },
  });
  const handlers: Record<string, Handler> = {
    notFound: (c) => {
      throw new HttpError(404, `No API operation at ${c.request.method.toUpperCase()} ${c.request.path}; see /v1/openapi.json for the operations that exist.`);
    },
    methodNotAllowed: (c) => {
      throw new HttpError(405, `${c.request.method.toUpperCase()} is not allowed on ${c.request.path}.`);
    },
    postRoutingHandler: (c, _req: Request, res: Response) => {
      if (c.operation?.operationId !== undefined) (res.locals as RequestContext).route = c.operation.operationId;
    },
    unauthorizedHandler: (c) => {
      const failure = (c.security as Record<string, { error?: unknown }> | undefined)?.ApiKeyAuth?.error;
      throw failure instanceof UnauthenticatedError || failure instanceof RateLimitedError ? failure : new UnauthenticatedError();
    },
    postSecurityHandler: (c, _req: Request, res: Response) => {
      const principal = (c.security as Record<string, unknown> | undefined)?.ApiKeyAuth as Principal | undefined;
      if (c.security?.authorized && principal !== undefined) {
        (res.locals as RequestContext).principal = principal;
        options.rateLimiter.take(principal.apiKeyId);
      }
    },
    validationFail: (c) => {
      throw new InvalidRequestError(describeValidationErrors(c.validation.errors ?? []));
    },
  };
  for (const [operationId, operation] of Object.entries(options.operations)) {
    handlers[operationId] = (c, req: Request, res: Response, queryProblem: InvalidRequestError | undefined) => {
      if (queryProblem !== undefined) throw queryProblem;
      return runOperation(operation, c, req, res);
    };
  }
  for (const [operationId, handler] of Object.entries(options.publicOperations)) {
    handlers[operationId] = (_c, req: Request, res: Response) => handler(req, res);
  }
  api.register(handlers);
  api.registerSecurityHandler('ApiKeyAuth', (c, req: Request) =>
    authenticateThrottled(options, headerValue(c.request.headers[API_KEY_HEADER.toLowerCase()]), req),
  );
  await api.init();
  // openapi-backend rebuilds its list of operations (lodash chains over the whole document) for every
  // request it routes, ~0.35 ms a request (bench/scans.ts); the document never changes after init.
  const operations = api.router.getOperations();
  api.router.getOperations = () => operations;
  for (const operationId of options.compiledAtStart ?? []) {
    if (api.getOperation(operationId) === undefined) throw new Error(`compiledAtStart names ${operationId}, which is not an operation of the API document`);
    api.validator.getRequestValidatorsForOperation(operationId);
  }
  if (options.compileRestInBackground === true) {
    const compiled = new Set([...(options.compiledAtStart ?? []), ...streaming]);
    compileOneByOne(
      api,
      operations.flatMap(({ operationId }: { operationId?: string }) => (operationId === undefined || compiled.has(operationId) ? [] : [operationId])),
    );
  }

  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    try {
      // originalUrl: under app.use('/v1'), req.path has the mount point removed.
      const queryStart = req.originalUrl.indexOf('?');
      const query = bracketFiltersAsJson(queryStart === -1 ? '' : req.originalUrl.slice(queryStart + 1));
      await api.handleRequest(
        {
          method: req.method,
          path: queryStart === -1 ? req.originalUrl : req.originalUrl.slice(0, queryStart),
          query: query.query,
          body: req.body,
          headers: req.headers as Record<string, string | string[]>,
        },
        ...([req, res, query.problem] satisfies HandlerArgs),
      );
    } catch (error) {
      next(error);
    }
  };
}

/**
 * Wrong keys are throttled per client address (issue 16): past the limit an
 * address gets 429 before its key is even looked at, so a weak
 * VIGIL_BOOTSTRAP_API_KEY cannot be guessed at full speed. Only failures
 * take from the bucket, and a missing key is not a guess, so clients with a
 * valid key are never slowed by it unless they share an address with a guesser.
 */
function authenticateThrottled(options: ApiRouterOptions, key: string | undefined, req: Request): Principal {
  if (key === undefined) return options.accounts.authenticate(key);
  return options.authFailureLimiter.guardFailures(`api-key:${req.socket.remoteAddress ?? 'unknown'}`, () => options.accounts.authenticate(key));
}

function warnUnlessUnicodeNotice(...args: unknown[]): void {
  if (!String(args[0]).startsWith('DEPRECATED: option unicode')) console.warn(...args);
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

async function runOperation(operation: Operation, c: Context, req: Request, res: Response): Promise<void> {
  const principal = (res.locals as RequestContext).principal;
  if (principal === undefined) throw new UnauthenticatedError();
  const body = await operation({
    context: c,
    principal,
    params: c.request.params as Record<string, string>,
    query: c.request.query as Record<string, string | undefined>,
    body: c.request.requestBody,
    req,
    res,
    validateBody: (fields) => validateReadBody(c, fields),
  });
  if (body !== undefined && !res.headersSent) res.status(200).json(body);
}

function validateReadBody(c: Context, body: Record<string, unknown>): void {
  const result = c.api.validateRequest({ ...c.request, body }, c.operation);
  if (!result.valid) throw new InvalidRequestError(describeValidationErrors(result.errors ?? []));
}

/** Turns ajv's errors into one sentence that names the field and what to change. */
function describeValidationErrors(errors: readonly ErrorObject[]): string {
  const error = errors[0];
  if (error === undefined) return 'The request is not valid.';
  const [where, ...path] = error.instancePath.split('/').filter(Boolean);
  const location = where === 'query' ? ' (query parameter)' : where === 'params' ? ' (path parameter)' : where === 'headers' ? ' (header)' : '';
  if (error.keyword === 'required') {
    const missing = (error.params as { missingProperty: string }).missingProperty;
    if (missing === 'requestBody') return 'a JSON request body is required (Content-Type: application/json)';
    return [...path, missing].join('.') + `${location} is required`;
  }
  const field = path.length > 0 ? path.join('.') : where === 'requestBody' ? 'request body' : (where ?? 'request');
  const allowed = error.keyword === 'enum' ? `: ${(error.params as { allowedValues: unknown[] }).allowedValues.join(', ')}` : '';
  return `${field}${location} ${error.message ?? 'is not valid'}${allowed}`;
}

/** Compiles each operation's request validators in a turn of the event loop of its own; nothing waits for it. */
export function compileOneByOne(api: Pick<OpenAPIBackend, 'validator'>, operationIds: readonly string[]): void {
  const [next, ...rest] = operationIds;
  if (next === undefined) return;
  setImmediate(() => {
    api.validator.getRequestValidatorsForOperation(next);
    compileOneByOne(api, rest);
  }).unref();
}
