import type { RouteSpec } from '#shared/http/routeSpec';
import type { QueryDeps } from './queryDeps';
import { meRoute } from './features/accounts/meRoute';
import { profileRoute } from './features/accounts/profileRoute';
import { listTokensRoute } from './features/accounts/listTokensRoute';
import { avatarRoute } from './features/accounts/avatarRoute';
import { categoryImageRoute } from './features/categories/categoryImageRoute';
import { listCategoriesRoute } from './features/categories/listCategoriesRoute';
import { categoryRoute } from './features/categories/categoryRoute';
import { listSpeciesRoute } from './features/species/listSpeciesRoute';
import { speciesRoute } from './features/species/speciesRoute';
import { listAtlasesRoute } from './features/atlases/listAtlasesRoute';
import { atlasRoute } from './features/atlases/atlasRoute';
import { categoryHistoryRoute } from './features/audit/categoryHistoryRoute';
import { speciesHistoryRoute } from './features/audit/speciesHistoryRoute';
import { atlasHistoryRoute } from './features/audit/atlasHistoryRoute';
import { listBrainsRoute } from './features/brains/listBrainsRoute';
import { brainByReadableIdRoute } from './features/brains/brainByReadableIdRoute';
import { brainByAtlasSlugRoute } from './features/brains/brainByAtlasSlugRoute';
import { brainRoute } from './features/brains/brainRoute';
import { brainFileRoute } from './features/brains/brainFileRoute';
import { brainPreviewRoute } from './features/brains/brainPreviewRoute';
import { listFileUploadsRoute } from './features/uploads/listFileUploadsRoute';
import { fileUploadRoute } from './features/uploads/fileUploadRoute';
import { fileUploadDownloadRoute } from './features/uploads/fileUploadDownloadRoute';
import { fileUploadPreviewRoute } from './features/uploads/fileUploadPreviewRoute';
import { brainHistoryRoute } from './features/audit/brainHistoryRoute';
import { listCollaboratorsRoute } from './features/collaborators/listCollaboratorsRoute';
import { fileUploadHistoryRoute } from './features/audit/fileUploadHistoryRoute';
import { meHistoryRoute } from './features/audit/meHistoryRoute';
import { auditEventsRoute } from './features/audit/auditEventsRoute';
import { ledgerRoute } from './features/audit/ledgerRoute';

/** Every read the service answers. */
export function queryRoutes(deps: QueryDeps): RouteSpec[] {
  return [
    meRoute(deps),
    meHistoryRoute(deps),
    profileRoute(deps),
    listTokensRoute(deps),
    avatarRoute(deps),
    categoryImageRoute(deps),
    listCategoriesRoute(deps),
    categoryRoute(deps),
    categoryHistoryRoute(deps),
    listSpeciesRoute(deps),
    speciesRoute(deps),
    speciesHistoryRoute(deps),
    listAtlasesRoute(deps),
    atlasRoute(deps),
    atlasHistoryRoute(deps),
    listBrainsRoute(deps),
    // The fixed segments before {key}, which would otherwise take them as readable_ids.
    brainByReadableIdRoute(deps),
    brainByAtlasSlugRoute(deps),
    brainRoute(deps),
    brainFileRoute(deps),
    brainPreviewRoute(deps),
    brainHistoryRoute(deps),
    listCollaboratorsRoute(deps),
    listFileUploadsRoute(deps),
    fileUploadRoute(deps),
    fileUploadDownloadRoute(deps),
    fileUploadPreviewRoute(deps),
    fileUploadHistoryRoute(deps),
    auditEventsRoute(deps),
    ledgerRoute(deps),
  ];
}
