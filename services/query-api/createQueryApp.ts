import type { Express } from 'express';
import type { ApiAppOptions } from '#shared/http/index';
import { createApiApp } from '#shared/http/index';
import type { RouteSpec } from '#shared/http/routeSpec';

/** The query API: every read, from the read models; also /health/, /metrics/ and the API docs. */
export function createQueryApp(
  common: Omit<ApiAppOptions, 'serviceName' | 'routes'>,
  routes: readonly RouteSpec[],
): Express {
  return createApiApp({ ...common, serviceName: 'query-api', routes });
}
