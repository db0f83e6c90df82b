import type { Express } from 'express';
import type { ApiAppOptions } from '#shared/http/index';
import { createApiApp } from '#shared/http/index';
import type { RouteSpec } from '#shared/http/routeSpec';

/** The command API: every write, appending events; it answers once the read models have its events. */
export function createCommandApp(
  common: Omit<ApiAppOptions, 'serviceName' | 'routes'>,
  routes: readonly RouteSpec[],
): Express {
  return createApiApp({ ...common, serviceName: 'command-api', routes });
}
