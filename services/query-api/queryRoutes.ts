import type { RouteSpec } from '../../shared/http/routeSpec';
import type { QueryDeps } from './queryDeps';
import { meRoute } from './features/account/meRoute';
import { profileRoute } from './features/account/profileRoute';
import { listTokensRoute } from './features/tokens/listTokensRoute';
import { avatarRoute } from './features/media/avatarRoute';
import { categoryImageRoute } from './features/media/categoryImageRoute';
import { listCategoriesRoute } from './features/categories/listCategoriesRoute';
import { categoryRoute } from './features/categories/categoryRoute';
import { listSpeciesRoute } from './features/species/listSpeciesRoute';
import { speciesRoute } from './features/species/speciesRoute';
import { listAtlasesRoute } from './features/atlases/listAtlasesRoute';
import { atlasRoute } from './features/atlases/atlasRoute';

/** Every read the service answers. */
export function queryRoutes(deps: QueryDeps): RouteSpec[] {
  return [
    meRoute(deps),
    profileRoute(deps),
    listTokensRoute(deps),
    avatarRoute(deps),
    categoryImageRoute(deps),
    listCategoriesRoute(deps),
    categoryRoute(deps),
    listSpeciesRoute(deps),
    speciesRoute(deps),
    listAtlasesRoute(deps),
    atlasRoute(deps),
  ];
}
