import express, { type Express, type RequestHandler } from 'express';
import type { ApiAppOptions } from '#shared/http/index';
import { createApiApp } from '#shared/http/index';
import type { RouteSpec } from '#shared/http/routeSpec';
import { webCatalogue } from './web/webCatalogue';

/**
 * The query API: every read, from the read models; also /health/, /metrics/ and the API docs. In
 * front of it the web catalogue (pages and their assets), when built; everything else reaches the
 * API unchanged.
 */
export function createQueryApp(
  common: Omit<ApiAppOptions, 'serviceName' | 'routes'>,
  routes: readonly RouteSpec[],
  web: RequestHandler | undefined = webCatalogue(),
): Express {
  const api = createApiApp({ ...common, serviceName: 'query-api', routes });
  if (!web) return api;
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.use(web);
  app.use(api);
  return app;
}
