import type { RouteSpec } from '../../shared/http/routeSpec';
import type { QueryDeps } from './queryDeps';
import { meRoute } from './features/account/meRoute';
import { profileRoute } from './features/account/profileRoute';
import { listTokensRoute } from './features/tokens/listTokensRoute';
import { avatarRoute } from './features/media/avatarRoute';

/** Every read the service answers. */
export function queryRoutes(deps: QueryDeps): RouteSpec[] {
  return [meRoute(deps), profileRoute(deps), listTokensRoute(deps), avatarRoute(deps)];
}
