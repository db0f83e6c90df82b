import type { RouteSpec } from '#shared/http/routeSpec';
import type { CommandDeps } from './commandDeps';
import { registerRoute } from './features/account/registerRoute';
import { loginRoute } from './features/account/loginRoute';
import { logoutRoute } from './features/account/logoutRoute';
import { changePasswordRoute } from './features/account/changePasswordRoute';
import { updateProfileRoute } from './features/account/updateProfileRoute';
import { createTokenRoute } from './features/tokens/createTokenRoute';
import { revokeTokenRoute } from './features/tokens/revokeTokenRoute';
import { createCategoryRoute } from './features/categories/createCategoryRoute';
import { createSpeciesRoute } from './features/species/createSpeciesRoute';
import { createAtlasRoute } from './features/atlases/createAtlasRoute';
import { createBrainRoute } from './features/brains/createBrainRoute';
import { updateBrainRoute } from './features/brains/updateBrainRoute';
import { deleteBrainRoute } from './features/brains/deleteBrainRoute';
import { createFileUploadRoute } from './features/fileUploads/createFileUploadRoute';
import { deleteFileUploadRoute } from './features/fileUploads/deleteFileUploadRoute';

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
    createFileUploadRoute(deps),
    deleteFileUploadRoute(deps),
  ] as RouteSpec[];
}
