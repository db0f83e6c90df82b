import type { RouteSpec } from '#shared/http/routeSpec';
import type { CommandDeps } from './commandDeps';
import { registerRoute } from './features/accounts/registerRoute';
import { loginRoute } from './features/accounts/loginRoute';
import { logoutRoute } from './features/accounts/logoutRoute';
import { changePasswordRoute } from './features/accounts/changePasswordRoute';
import { updateProfileRoute } from './features/accounts/updateProfileRoute';
import { createTokenRoute } from './features/accounts/createTokenRoute';
import { revokeTokenRoute } from './features/accounts/revokeTokenRoute';
import { createCategoryRoute } from './features/categories/createCategoryRoute';
import { createSpeciesRoute } from './features/species/createSpeciesRoute';
import { createAtlasRoute } from './features/atlases/createAtlasRoute';
import { createBrainRoute } from './features/brains/createBrainRoute';
import { updateBrainRoute } from './features/brains/updateBrainRoute';
import { deleteBrainRoute } from './features/brains/deleteBrainRoute';
import { shareBrainRoute } from './features/collaborators/shareBrainRoute';
import { unshareBrainRoute } from './features/collaborators/unshareBrainRoute';
import { createFileUploadRoute } from './features/uploads/createFileUploadRoute';
import { deleteFileUploadRoute } from './features/uploads/deleteFileUploadRoute';
import { tusRouteDocs } from './features/tus/tusRouteDocs';

/** Every write the service accepts. */
export function commandRoutes(deps: CommandDeps): RouteSpec[] {
  return [
    registerRoute(deps),
    loginRoute(deps),
    logoutRoute(deps),
    changePasswordRoute(deps),
    updateProfileRoute(deps),
    createTokenRoute(deps),
    revokeTokenRoute(deps),
    createCategoryRoute(deps),
    createSpeciesRoute(deps),
    createAtlasRoute(deps),
    createBrainRoute(deps),
    updateBrainRoute(deps, 'put'),
    updateBrainRoute(deps, 'patch'),
    deleteBrainRoute(deps),
    shareBrainRoute(deps),
    unshareBrainRoute(deps),
    createFileUploadRoute(deps),
    deleteFileUploadRoute(deps),
    // Documentation only: the tus endpoint itself is mounted raw (features/tus/tusEndpoint).
    ...tusRouteDocs(),
  ] as RouteSpec[];
}
