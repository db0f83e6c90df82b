import type { RequestListener } from 'node:http';
import type { ApiAppOptions } from '#shared/http/index';
import { createApiApp } from '#shared/http/index';
import type { RouteSpec } from '#shared/http/routeSpec';
import { type WebHandler, webCatalogue } from './web/webCatalogue';

/**
 * The query API: every read, from the read models; also /health/, /metrics/ and the API docs. In
 * front of it the web catalogue (pages and their assets), when built; everything else reaches the
 * API unchanged, through no second Express app (a whole router pass per API request).
 */
export function createQueryApp(
  common: Omit<ApiAppOptions, 'serviceName' | 'routes'>,
  routes: readonly RouteSpec[],
  web: WebHandler | undefined = webCatalogue(),
): RequestListener {
  const api = createApiApp({ ...common, serviceName: 'query-api', routes });
  if (!web) return api;
  return (req, res) => {
    web(req, res, () => {
      api(req, res);
    });
  };
}
