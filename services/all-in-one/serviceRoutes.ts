import type { RouteSpec } from '#shared/http/routeSpec';
import type { CommandDeps } from '#services/command-api/commandDeps';
import { commandRoutes } from '#services/command-api/commandRoutes';
import type { QueryDeps } from '#services/query-api/queryDeps';
import { queryRoutes } from '#services/query-api/queryRoutes';

export interface ServiceRoutes {
  readonly commands: readonly RouteSpec[];
  readonly queries: readonly RouteSpec[];
}

/** Every route of the service: the all-in-one serves them, and they make the API document. */
export function serviceRoutes(commandDeps: CommandDeps, queryDeps: QueryDeps): ServiceRoutes {
  return { commands: commandRoutes(commandDeps), queries: queryRoutes(queryDeps) };
}

/**
 * Dependencies for building routes only to document them: plain settings a route describes
 * (`values`) are there; services (stores, pools) are used only by handlers, and a handler run on
 * these fails loudly.
 */
export function documentationOnlyDeps<Deps extends object>(values: Partial<Deps> = {}): Deps {
  return new Proxy(values as Deps, {
    get(target, property) {
      if (Object.hasOwn(target, property)) return target[property as keyof Deps];
      throw new Error(`dependency ${String(property)} used by a route built only for documentation`);
    },
  });
}
