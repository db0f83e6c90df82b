import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { Authenticator } from '#shared/auth/principal';
import type { Logger } from '#shared/logging/logger';
import type { Metrics } from '#shared/metrics/metrics';
import { applyCors } from './corsMiddleware';
import { errorMiddleware } from './errorMiddleware';
import { HostPolicy } from './hostPolicy';
import { notFoundMiddleware } from './notFoundMiddleware';
import { type OpenApiDocument, type OpenApiInfo, buildOpenApiDocument } from './openapi/buildOpenApiDocument';
import { type PreparedRoute, prepareRoute } from './preparedRoute';
import type { RateLimiter } from './rateLimit/createRateLimiter';
import { requestObservation } from './requestObserver';
import { setSecurityHeaders } from './securityHeaders';
import { routeDispatcher } from './routeDispatcher';
import type { ConsistencyGate } from '#shared/projections/consistencyGate';
import type { RouteKey, RouteSpec } from './routeSpec';
import { RouteTable } from './routeTable';
import type { HealthCheck } from './system/healthChecks';
import { SYSTEM_ROUTE_PATHS, systemRoutes } from './system/systemRoutes';
import type { Idempotency } from './idempotency/idempotency';

export interface ApiAppOptions {
  readonly serviceName: string;
  /** Routes this app serves. */
  readonly routes: readonly RouteSpec[];
  /** Every route of the whole service (all apps): a path served elsewhere answers 405, not 404. Defaults to `routes`. */
  readonly knownRoutes?: readonly RouteKey[];
  readonly authenticator: Authenticator;
  /** Read-your-writes: waits for reply positions (writes) and X-Min-Position (reads). */
  readonly consistency?: ConsistencyGate;
  /** Bound of every consistency wait (default 5000 ms). */
  readonly consistencyTimeoutMs?: number;
  readonly metrics: Metrics;
  readonly logger: Logger;
  /** One log line per request (default true; the logger's level still applies). */
  readonly logRequests?: boolean;
  /** Default 1 MiB. Multipart bodies are not read here (their handlers enforce their own limits). */
  readonly jsonBodyLimitBytes?: number;
  /** Express "trust proxy": false (default: the socket address is the client), true, hop count, or addresses. */
  readonly trustProxy?: boolean | number | string | readonly string[];
  /** No rate limiting when absent. */
  readonly rateLimiter?: RateLimiter;
  /** Checks of /health/ by name; each resolves when its dependency answers. */
  readonly healthChecks?: Readonly<Record<string, HealthCheck>>;
  readonly healthCheckTimeoutMs?: number;
  readonly openApiInfo?: OpenApiInfo;
  /** Routes documented at /api/schema/ (default: `routes`). */
  readonly openApiRoutes?: readonly RouteSpec[];
  /** A ready document served at /api/schema/ instead (a service that does not hold every route). */
  readonly openApiDocument?: OpenApiDocument;
  /** Which system endpoints this app serves (all by default; the all-in-one serves them once). */
  readonly serve?: { readonly health?: boolean; readonly metrics?: boolean; readonly docs?: boolean };
  /** Base of links the service emits, when it sits behind a proxy that rewrites Host. */
  readonly publicBaseUrl?: string;
  /** Honours the Idempotency-Key header on writes; without it the header is ignored. */
  readonly idempotency?: Idempotency;
  /** Hosts the API answers to (others get 400) and links may name; see HostPolicy. */
  readonly allowedHosts?: readonly string[];
  /**
   * Handlers of raw requests under a path (the tus endpoint): after security headers, metrics,
   * CORS and the host check, before any route, authentication or body parsing.
   */
  readonly rawHandlers?: readonly RawRequestHandler[];
}

/** What a raw handler gets from the app: the cross-cutting pieces routes get from the dispatcher. */
export interface RawHandlerContext {
  readonly authenticator: Authenticator;
  readonly rateLimiter: RateLimiter | undefined;
  readonly consistency: ConsistencyGate | undefined;
  readonly consistencyTimeoutMs: number;
  /** Absolute base of the links emitted for this request. */
  readonly linkBase: (req: Request) => string;
  readonly logger: Logger;
}

export interface RawRequestHandler {
  /** Every request whose path starts with it, whatever its method. */
  readonly pathPrefix: string;
  /** Added to the CORS answer of an OPTIONS request under the prefix (tus discovery headers). */
  readonly optionsHeaders?: Readonly<Record<string, string>>;
  handle(req: Request, res: Response, next: NextFunction, context: RawHandlerContext): void;
}

const MIB = 1024 * 1024;

function knownTable(routes: readonly RouteKey[]): RouteTable<unknown> {
  const table = new RouteTable<unknown>();
  for (const route of routes) table.add(route.method, route.path, true);
  for (const path of SYSTEM_ROUTE_PATHS) table.add('GET', path, true);
  return table;
}

/** An Express app serving RouteSpecs with the cross-cutting behaviour of decisions.md. */
export function createApiApp(options: ApiAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('trust proxy', options.trustProxy ?? false);
  app.set('query parser', 'simple');

  const routes = new RouteTable<PreparedRoute>();
  for (const spec of options.routes)
    routes.add(spec.method, spec.path, prepareRoute(spec, options.rateLimiter));
  const info = options.openApiInfo ?? { title: options.serviceName, version: '1.0.0' };
  let openApiJson: string | undefined;

  // The steps every request takes before the system endpoints, as one middleware (each Express
  // layer costs a dispatch of its own on the hot path): security headers (also set by
  // createHttpServer: an app served by another server, in tests, answers the same), the request's
  // id, metrics and log line, the raw handlers' OPTIONS headers, then CORS (which answers preflights).
  const observe = requestObservation({
    metrics: options.metrics,
    logger: options.logger,
    logRequests: options.logRequests,
  });
  const optionsHeaders = (options.rawHandlers ?? []).flatMap((raw) =>
    raw.optionsHeaders ? [{ pathPrefix: raw.pathPrefix, headers: raw.optionsHeaders }] : [],
  );
  app.use((req, res, next) => {
    setSecurityHeaders(res);
    observe(req, res);
    if (req.method === 'OPTIONS')
      for (const { pathPrefix, headers } of optionsHeaders)
        if (req.path.startsWith(pathPrefix)) res.set(headers);
    if (!applyCors(req, res)) next();
  });
  app.use(
    systemRoutes({
      metrics: options.metrics,
      healthChecks: options.healthChecks ?? {},
      healthCheckTimeoutMs: options.healthCheckTimeoutMs ?? 3000,
      openApiJson: () =>
        (openApiJson ??= JSON.stringify(
          options.openApiDocument ?? buildOpenApiDocument(options.openApiRoutes ?? options.routes, info),
        )),
      title: info.title,
      serve: { health: true, metrics: true, docs: true, ...options.serve },
    }),
  );
  const hosts = new HostPolicy({ publicBaseUrl: options.publicBaseUrl, allowedHosts: options.allowedHosts });
  // After the system endpoints: health probes and scrapers often address the server by IP. Without
  // an allow-list every host is accepted: no layer.
  if (options.allowedHosts?.length) app.use(hosts.guard());
  const rawContext: RawHandlerContext = {
    authenticator: options.authenticator,
    rateLimiter: options.rateLimiter,
    consistency: options.consistency,
    consistencyTimeoutMs: options.consistencyTimeoutMs ?? 5000,
    linkBase: (req) => hosts.baseUrlOf(req),
    logger: options.logger,
  };
  for (const raw of options.rawHandlers ?? [])
    app.use((req, res, next) => {
      if (req.path.startsWith(raw.pathPrefix)) raw.handle(req, res, next, rawContext);
      else next();
    });
  app.use(
    routeDispatcher(routes, {
      authenticator: options.authenticator,
      consistency: options.consistency,
      consistencyTimeoutMs: options.consistencyTimeoutMs ?? 5000,
      jsonBodyLimitBytes: options.jsonBodyLimitBytes ?? MIB,
      linkBase: (req) => hosts.baseUrlOf(req),
      logger: options.logger,
      idempotency: options.idempotency,
    }),
  );
  app.use(notFoundMiddleware(knownTable(options.knownRoutes ?? options.routes)));
  app.use(errorMiddleware(options.logger));
  return app;
}
