import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Authenticator, Principal } from '#shared/auth/principal';
import { AuthenticationError, ValidationError } from '#shared/errors/httpErrors';
import type { Logger } from '#shared/logging/logger';
import { ApiRequestContext } from './apiRequestContext';
import { asError } from '#shared/errors/asError';
import { type BodyReadResult, createBodyReader } from './bodyReader';
import { allowSlowBody } from './connectionTimeouts';
import { authorizationHeaderOf } from './credentialHeader';
import { canonicaliseUuidFields, withCanonicalUuids } from './ids';
import { requestedMinPosition } from './consistency';
import type { Idempotency } from './idempotency/idempotency';
import { readIdempotencyKey } from './idempotency/idempotencyKey';
import { requestIdentity } from './idempotency/requestIdentity';
import type { PreparedRoute } from './preparedRoute';
import { requestStateOf } from './requestState';
import type { RouteTable } from './routeTable';
import type { ConsistencyGate } from '#shared/projections/consistencyGate';
import type { Reply } from './routeSpec';
import type { Validator } from './schemaValidator';
import { unstorableTextErrors } from './storableText';
import { sendReply, type ReplyOptions } from './sendReply';
import { cacheControlOf } from './securityHeaders';

export interface DispatcherOptions {
  readonly authenticator: Authenticator;
  readonly consistency: ConsistencyGate | undefined;
  readonly consistencyTimeoutMs: number;
  readonly jsonBodyLimitBytes: number;
  /** Absolute base of the links a handler emits for this request. */
  readonly linkBase: (req: Request) => string;
  readonly logger: Logger;
  /** Honours Idempotency-Key on writes; without it the header is ignored. */
  readonly idempotency: Idempotency | undefined;
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const NO_BODY: BodyReadResult = { kind: 'none' };

function runMiddleware(middleware: RequestHandler, req: Request, res: Response): Promise<void> {
  return new Promise((resolve, reject) => {
    void middleware(req, res, (error?: unknown) => (error ? reject(asError(error)) : resolve()));
  });
}

/**
 * The answer's Cache-Control by the one rule of shared/http/securityHeaders, over what the handler
 * chose. The default set for every response (no-store) goes where nothing may be said instead.
 */
function withCachePolicy(route: PreparedRoute, credentialed: boolean, reply: Reply, res: Response): Reply {
  const headers = { ...reply.headers };
  const name = Object.keys(headers).find((h) => h.toLowerCase() === 'cache-control');
  const chosen = name === undefined ? undefined : headers[name];
  if (name !== undefined) delete headers[name];
  const cacheControl = cacheControlOf(route.publicRead, credentialed, chosen);
  if (route.publicRead) res.vary('Authorization');
  if (cacheControl === undefined) res.removeHeader('Cache-Control');
  else headers['Cache-Control'] = cacheControl;
  return { ...reply, headers };
}

/**
 * Every input (query, path, body) goes through here, with or without a schema: text PostgreSQL
 * cannot store is refused on its field whatever the route does with it.
 */
function validated(validator: Validator | undefined, data: unknown): unknown {
  const textErrors = unstorableTextErrors(data);
  const errors = validator?.(data);
  if (errors || textErrors) throw new ValidationError({ ...errors, ...textErrors });
  return data;
}

/**
 * Serves the app's routes: authenticate → rate-limit → validate Idempotency-Key, query and body →
 * wait for the caller's read-your-writes position → handler (at most once per Idempotency-Key) →
 * reply. Unmatched requests fall through.
 */
export function routeDispatcher(
  table: RouteTable<PreparedRoute>,
  options: DispatcherOptions,
): RequestHandler {
  const readBody = createBodyReader(options.jsonBodyLimitBytes);
  const replyOptions: ReplyOptions = {
    consistency: options.consistency,
    consistencyTimeoutMs: options.consistencyTimeoutMs,
    onConsistencyTimeout: (req) =>
      options.logger.warn('read side did not reach the write position in time', {
        request_id: requestStateOf(req)?.requestId,
      }),
  };

  const bodyOf = (route: PreparedRoute, read: BodyReadResult): unknown => {
    switch (read.kind) {
      case 'stream':
        return undefined; // multipart: its fields are checked as they are parsed (shared/multipart)
      case 'form':
        return validated(route.formValidator, read.body);
      case 'json':
        return validated(route.jsonValidator, read.body);
      case 'none':
        return route.jsonValidator ? validated(route.jsonValidator, {}) : undefined;
    }
  };

  const run = async (
    route: PreparedRoute,
    params: Record<string, string>,
    req: Request,
    res: Response,
  ): Promise<void> => {
    const state = requestStateOf(req)!;
    state.route = route.spec.path;
    const header = authorizationHeaderOf(req);
    let principal: Principal | undefined;
    let authError: Error | undefined;
    if (header !== undefined || route.spec.auth === 'required') {
      try {
        principal = await options.authenticator.authenticate(header);
      } catch (error) {
        authError = asError(error); // thrown after rate limiting, so bad-token guessing is counted too
      }
    }
    state.principal = principal;
    for (const limiter of route.limiters) await runMiddleware(limiter, req, res);
    if (authError) throw authError;
    if (!principal && route.spec.auth === 'required') throw new AuthenticationError();
    // Ids are compared in one form whatever the case they were sent in (shared/http/ids).
    const pathParams = validated(undefined, withCanonicalUuids(params)) as Record<string, string>;
    const key = options.idempotency && WRITE_METHODS.has(req.method) ? readIdempotencyKey(req) : undefined;
    const query = validated(route.queryValidator, req.query) as Record<string, unknown>;
    canonicaliseUuidFields(route.spec.query, query);
    const read = route.readsBody ? await readBody(req, res, route.bodyMode) : NO_BODY;
    // An upload streamed by its handler may take as long as it keeps sending (shared/http/connectionTimeouts).
    if (read.kind === 'stream') allowSlowBody(req);
    const body = route.readsBody ? bodyOf(route, read) : undefined;
    canonicaliseUuidFields(route.spec.body ?? route.spec.multipart, body);
    const minPosition = req.method === 'GET' || req.method === 'HEAD' ? requestedMinPosition(req) : undefined;
    if (minPosition && options.consistency)
      await options.consistency.waitFor(minPosition, options.consistencyTimeoutMs);
    const context = new ApiRequestContext(
      req,
      res,
      body,
      query,
      pathParams,
      principal,
      state.requestId,
      options.linkBase,
    );
    const handle = (): Promise<Reply> => route.spec.handler(context);
    const reply =
      key === undefined || !options.idempotency
        ? await handle()
        : await options.idempotency.execute(
            {
              key,
              scope: principal ? `user:${principal.userId}` : 'anonymous',
              request: requestIdentity(req, read, body),
            },
            handle,
          );
    await sendReply(req, res, withCachePolicy(route, Boolean(header), reply, res), replyOptions);
  };

  return (req: Request, res: Response, next: NextFunction) => {
    let match;
    try {
      match = table.match(req.method, req.path);
    } catch (error) {
      next(error);
      return;
    }
    if (!match) {
      next();
      return;
    }
    run(match.value, match.params, req, res).catch(next);
  };
}
